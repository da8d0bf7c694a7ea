// What the gem's keys say after a fault: which locks were held, which are
// left, who released each one held at the fault (from the gem's changelog),
// and queued until_executed jobs whose lock is gone (a duplicate push would
// be let in). Gem 8 keys: `<digest>[:RUN]:LOCKED`, `uniquejobs:digests`.
import type { Redis } from "ioredis";
import { CHANGELOG, DIGESTS, EXPIRING_DIGESTS } from "../src/addons/sidekiq-unique-jobs/locksmith.js";
import { WORKING_REGISTRY } from "../src/core/wire/bridge-keys.js";
import type { Ledger } from "./unique-lock-workload.js";

async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = "0";
  do {
    const [c, batch] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
    cursor = c;
    keys.push(...batch);
  } while (cursor !== "0");
  return keys;
}

/** Lock digest (`<digest>` or `<digest>:RUN`) → the jids holding it. */
export async function heldLocks(redis: Redis): Promise<Map<string, string[]>> {
  const held = new Map<string, string[]>();
  for (const key of await scanKeys(redis, "uniquejobs:*:LOCKED"))
    held.set(key.slice(0, -":LOCKED".length), await redis.hkeys(key));
  return held;
}

/** Not locks: the changelog is history; a Ruby server's start writes the gem's version markers. */
const NOT_LOCKS = [CHANGELOG, DIGESTS, EXPIRING_DIGESTS, "uniquejobs:live", "uniquejobs:dead"];

/**
 * The gem's keys still there that never expire (unlock.lua's `:QUEUED`
 * wake-up entry expires in 5 s), and the digests sets' sizes.
 */
export async function locksLeft(redis: Redis): Promise<{ keys: string[]; digests: number }> {
  const keys: string[] = [];
  for (const k of await scanKeys(redis, "uniquejobs:*"))
    if (!NOT_LOCKS.includes(k) && (await redis.pttl(k)) === -1) keys.push(k);
  const digests = (await redis.zcard(DIGESTS)) + (await redis.zcard(EXPIRING_DIGESTS));
  return { keys, digests };
}

export interface Cleanup {
  /** How many locks held at the fault each way went: by its job's own run, its re-run, someone else, or not at all. */
  byWhat: Record<string, number>;
  /** Seconds from the fault to the last release of a lock held at it. */
  lastSeconds: number;
}

/**
 * Who released each lock held at the fault: the gem's changelog records an
 * "Unlocked" entry per release with the job's id. A holder that started more
 * than once released it on its re-run (reliable-fetch recovery or a retry).
 */
export async function cleanup(
  redis: Redis,
  heldAtFault: Map<string, string[]>,
  faultAt: number,
  ledger: Ledger,
): Promise<Cleanup> {
  const now = await heldLocks(redis);
  const unlocks = (await redis.zrangebyscore(CHANGELOG, faultAt / 1000 - 1, "+inf"))
    .map((e) => JSON.parse(e) as { digest: string; job_id: string; message: string; time: number })
    .filter((e) => e.message === "Unlocked");
  const starts = new Map<string, number>();
  for (const s of ledger.starts) starts.set(s.jid, (starts.get(s.jid) ?? 0) + 1);
  const byWhat: Record<string, number> = {};
  let lastSeconds = 0;
  for (const [digest, jids] of heldAtFault)
    for (const jid of jids) {
      const by = unlocks.find((u) => u.digest === digest && u.job_id === jid);
      let what: string;
      if (now.get(digest)?.includes(jid)) what = "still held";
      else if (!by) what = "released by another job or expired";
      else what = (starts.get(jid) ?? 0) > 1 ? "its job's re-run" : "its job's own run";
      byWhat[what] = (byWhat[what] ?? 0) + 1;
      if (by) lastSeconds = Math.max(lastSeconds, by.time - faultAt / 1000);
    }
  return { byWhat, lastSeconds };
}

// Atomically: queued, scheduled or retried until_executed jobs whose lock
// does not name them (their lock was lost: a duplicate would be let in).
const UNLOCKED_JOBS = `
local checked, missing = 0, 0
local function check(payload)
  local ok, j = pcall(cjson.decode, payload)
  if not ok or j.lock ~= "until_executed" or not j.lock_digest then return end
  checked = checked + 1
  if redis.call("HEXISTS", j.lock_digest .. ":LOCKED", j.jid) == 0 then missing = missing + 1 end
end
for _, p in ipairs(redis.call("LRANGE", KEYS[1], 0, -1)) do check(p) end
for i = 2, 3 do for _, p in ipairs(redis.call("ZRANGE", KEYS[i], 0, -1)) do check(p) end end
return {checked, missing}`;

/**
 * until_executed jobs waiting in their queue, schedule or retry, and how many
 * of them have lost their lock (a job being worked on unlocks before its
 * acknowledgement, so the working hashes are left out).
 */
export async function unlockedJobs(redis: Redis, queue: string): Promise<{ checked: number; missing: number }> {
  const keys = [`queue:${queue}`, "schedule", "retry"];
  const [checked, missing] = (await redis.eval(UNLOCKED_JOBS, keys.length, ...keys)) as [number, number];
  return { checked, missing };
}

/** Jobs still waiting anywhere Sidekiq keeps them (queue, schedule, retry, working hashes and lists). */
export async function pending(redis: Redis, queue: string): Promise<number> {
  let n = (await redis.llen(`queue:${queue}`)) + (await redis.zcard("schedule")) + (await redis.zcard("retry"));
  for (const k of await redis.smembers(WORKING_REGISTRY))
    n += (await redis.type(k)) === "hash" ? await redis.hlen(k) : await redis.llen(k);
  return n;
}
