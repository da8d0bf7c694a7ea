// The gem's two checks, run through the project's EVALSHA-then-EVAL helper
// with the arguments the gem's strategies pass (strategy/concurrency.rb and
// strategy/threshold.rb#throttled?). The scripts' texts are the gem's, so
// their SHA1s are the ones Ruby's RedisPrescription sends.
import type { Redis } from "ioredis";
import { evalBySha, scriptSha } from "../../core/redis/scripts/define-script.js";
import { CONCURRENCY_LUA_1_5, CONCURRENCY_LUA_2_1, THRESHOLD_LUA } from "./lua.js";

/**
 * The gem line the fleet runs: 1 (1.5.x, 2.0.x: the concurrency zset alone)
 * or 2 (2.1.x: the zset and its backlog hash, and the backlog-based delay).
 */
export type GemLine = 1 | 2;

/** sidekiq-throttled 2.x requires Sidekiq 8, 1.x runs on 6.5 to 7.x: the line a fleet's release implies. */
export function gemLineFor(dialect: number): GemLine {
  return dialect >= 8 ? 2 : 1;
}

const SCRIPTS = {
  concurrency1: { lua: CONCURRENCY_LUA_1_5, sha: scriptSha(CONCURRENCY_LUA_1_5) },
  concurrency2: { lua: CONCURRENCY_LUA_2_1, sha: scriptSha(CONCURRENCY_LUA_2_1) },
  threshold: { lua: THRESHOLD_LUA, sha: scriptSha(THRESHOLD_LUA) },
} as const;

export interface ConcurrencyCall {
  /** The `concurrency.v2` zset. */
  key: string;
  /** Its `.backlog_info` hash (line 2 only). */
  backlogKey: string;
  jid: string;
  limit: number;
  /** lost_job_threshold (1.5: ttl), seconds. */
  lostJobThreshold: number;
  now: number;
}

/** The concurrency script: true when the job is throttled, false when its jid now holds a slot. */
export async function concurrencyThrottled(redis: Redis, line: GemLine, c: ConcurrencyCall): Promise<boolean> {
  const s = line === 2 ? SCRIPTS.concurrency2 : SCRIPTS.concurrency1;
  const keys = line === 2 ? [c.key, c.backlogKey] : [c.key];
  const r = await evalBySha(redis, s.sha, s.lua, keys, [c.jid, c.limit, c.lostJobThreshold, c.now]);
  return r === 1;
}

/** The threshold script: true when the job is throttled, false when its start was counted. */
export async function thresholdThrottled(
  redis: Redis,
  key: string,
  limit: number,
  period: number,
  now: number,
): Promise<boolean> {
  const s = SCRIPTS.threshold;
  return (await evalBySha(redis, s.sha, s.lua, [key], [limit, period, now])) === 1;
}

/** The SHA1 of each of the gem's scripts, as RedisPrescription names them. */
export function throttledScriptShas(): Record<keyof typeof SCRIPTS, string> {
  return {
    concurrency1: SCRIPTS.concurrency1.sha,
    concurrency2: SCRIPTS.concurrency2.sha,
    threshold: SCRIPTS.threshold.sha,
  };
}
