// Recovering the working lists of dead processes (reliable fetch). A process
// is dead when its heartbeat hash has expired, or, on this host, when its pid
// no longer exists. Recovery runs under a short lock, so one process does it.
import type { Redis } from "ioredis";
import { WIP_REGISTRY } from "./fetch.js";
import type { Logger } from "./logger.js";

export const RECOVERY_LOCK = "bridge:wip-recovery";

// Moves every job of a working list back to its queue's BRPOP end (they run
// next) and registers the queue, as a push would. Declares all its keys.
const LUA_RESTORE = `
local n = 0
while true do
  local job = redis.call("rpop", KEYS[1])
  if not job then break end
  redis.call("rpush", KEYS[2], job)
  n = n + 1
end
if n > 0 then redis.call("sadd", KEYS[3], ARGV[1]) end
return n`;

type RecoveryRedis = Redis & { bridgeRestoreWip(wip: string, queue: string, queues: string, name: string): Promise<number> };

/** `bridge:wip:<identity>|queue:<name>` -> [identity, "queue:<name>"]. */
export function parseWipKey(key: string): [string, string] | undefined {
  const m = /^bridge:wip:(.+)\|(queue:.+)$/.exec(key);
  return m ? [m[1]!, m[2]!] : undefined;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

export interface RecoveryResult {
  lists: number;
  jobs: number;
}

/**
 * Recovers orphaned working lists. `force` skips the lock (used at start-up,
 * so a restarted worker gets its predecessor's jobs back at once).
 */
export async function recoverOrphans(redis: Redis, hostname: string, logger: Logger, force = false): Promise<RecoveryResult> {
  if (!force && (await redis.set(RECOVERY_LOCK, "1", "EX", 30, "NX")) !== "OK") return { lists: 0, jobs: 0 };
  const r = redis as RecoveryRedis;
  if (!(redis as unknown as { bridgeRestoreWip?: unknown }).bridgeRestoreWip) redis.defineCommand("bridgeRestoreWip", { numberOfKeys: 3, lua: LUA_RESTORE });
  const keys = await redis.smembers(WIP_REGISTRY);
  let lists = 0;
  let jobs = 0;
  for (const key of keys) {
    const parsed = parseWipKey(key);
    if (!parsed) continue;
    const [identity, queue] = parsed;
    // identity = hostname:pid:12hex (a hostname may hold colons itself).
    const parts = identity.split(":");
    const pid = parts[parts.length - 2];
    const host = parts.slice(0, -2).join(":");
    const alive = (await redis.exists(identity)) === 1 && !(host === hostname && !pidAlive(Number(pid)));
    if (alive) continue;
    const n = await r.bridgeRestoreWip(key, queue, "queues", queue.slice("queue:".length));
    await redis.srem(WIP_REGISTRY, key);
    lists++;
    jobs += n;
    if (n > 0) logger.warn(`Recovered ${n} jobs of dead process ${identity} back to ${queue}`);
  }
  return { lists, jobs };
}
