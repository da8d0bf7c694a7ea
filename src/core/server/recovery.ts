// Recovering what dead processes held: the working lists of reliable fetch, and
// the batches their scheduled poller had popped but not yet pushed (promoting
// sets). A process is dead when its heartbeat hash has expired, or, on this
// host, when its pid no longer exists. Recovery runs under a short lock, so one
// process does it.
import type { Redis } from "ioredis";
import { QUEUES_KEY, queueNameOf } from "../wire/keys.js";
import {
  isWorkingHashKey,
  parsePromotingKey,
  parseWipKey,
  PROMOTING_RECOVERY_LOCK,
  PROMOTING_REGISTRY,
  RECOVERY_LOCK,
  WORKING_REGISTRY,
} from "../wire/bridge-keys.js";
import { recoverPromotingSet, recoverWorkingHash, recoverWorkingList } from "../redis/scripts/index.js";
import type { Logger } from "../logging/logger.js";

/** Puts a promoting set back into its sorted set (atomically); returns how many jobs moved. */
export async function recoverPromotingKey(redis: Redis, key: string, set: string): Promise<number> {
  return recoverPromotingSet(redis, [key, set, PROMOTING_REGISTRY], []);
}

/** Moves the jobs of a dead process's working list or hash back to their queue. */
function recoverWorkingKey(redis: Redis, key: string, queue: string): Promise<number> {
  // Versions before the working hash left working lists only: both come back.
  const recover = isWorkingHashKey(key) ? recoverWorkingHash : recoverWorkingList;
  return recover(redis, [key, queue, QUEUES_KEY], [queueNameOf(queue)]);
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The host part of an identity (hostname:pid:12hex; a hostname may hold colons itself). */
export function identityHost(identity: string): string {
  return identity.split(":").slice(0, -2).join(":");
}

/** Its heartbeat hash is gone, or it ran on this host and its pid is gone. */
export async function processDead(redis: Redis, identity: string, hostname: string): Promise<boolean> {
  const parts = identity.split(":");
  const pid = parts[parts.length - 2];
  const alive =
    (await redis.exists(identity)) === 1 && !(identityHost(identity) === hostname && !pidAlive(Number(pid)));
  return !alive;
}

export interface RecoveryResult {
  lists: number;
  jobs: number;
}

/**
 * The one recovery loop: for each key of `registry` whose owner (parsed from
 * the key) is dead, `restore` it; returns how many keys and jobs came back.
 */
async function recoverDeadOwners(
  redis: Redis,
  hostname: string,
  registry: string,
  parse: (key: string) => [identity: string, target: string] | undefined,
  restore: (key: string, target: string) => Promise<number>,
  report: (n: number, identity: string, target: string) => void,
): Promise<RecoveryResult> {
  let lists = 0;
  let jobs = 0;
  for (const key of await redis.smembers(registry)) {
    const parsed = parse(key);
    if (!parsed) continue;
    const [identity, target] = parsed;
    if (!(await processDead(redis, identity, hostname))) continue;
    const n = await restore(key, target);
    lists++;
    jobs += n;
    if (n > 0) report(n, identity, target);
  }
  return { lists, jobs };
}

/**
 * Returns the promoting sets of dead processes to `retry` / `schedule`, at the
 * jobs' own scores, so a poller that died between its pop and its push loses
 * nothing. Without `lock` it runs unconditionally (the caller holds a lock).
 */
export async function recoverPromoting(
  redis: Redis,
  hostname: string,
  logger: Logger,
  lock = false,
): Promise<RecoveryResult> {
  if (lock && (await redis.set(PROMOTING_RECOVERY_LOCK, "1", "EX", 30, "NX")) !== "OK") return { lists: 0, jobs: 0 };
  return recoverDeadOwners(
    redis,
    hostname,
    PROMOTING_REGISTRY,
    parsePromotingKey,
    (key, set) => recoverPromotingKey(redis, key, set),
    (n, identity, set) => logger.warn(`Recovered ${n} jobs that dead process ${identity} was promoting back to ${set}`),
  );
}

/**
 * Recovers orphaned working lists and promoting sets. `force` skips the lock
 * (used at start-up, so a restarted worker gets its predecessor's jobs back at once).
 */
export async function recoverOrphans(
  redis: Redis,
  hostname: string,
  logger: Logger,
  force = false,
): Promise<RecoveryResult> {
  if (!force && (await redis.set(RECOVERY_LOCK, "1", "EX", 30, "NX")) !== "OK") return { lists: 0, jobs: 0 };
  const wip = await recoverDeadOwners(
    redis,
    hostname,
    WORKING_REGISTRY,
    parseWipKey,
    async (key, queue) => {
      const n = await recoverWorkingKey(redis, key, queue);
      await redis.srem(WORKING_REGISTRY, key);
      return n;
    },
    (n, identity, queue) => logger.warn(`Recovered ${n} jobs of dead process ${identity} back to ${queue}`),
  );
  const promoting = await recoverPromoting(redis, hostname, logger);
  return { lists: wip.lists + promoting.lists, jobs: wip.jobs + promoting.jobs };
}
