// The dead set's own writes, Ruby's `DeadSet#kill` and `DeadSet#trim`
// (api.rb), for every set that kills a job into it. By the API release's rule
// (`api.deadSetKill`): 7.3.5+ `ZADD dead <now> <message>`, then
// MULTI{ZREMRANGEBYSCORE dead -inf <now-timeout>; ZREMRANGEBYRANK dead 0 -<max>};
// before 7.3.5 the three in one MULTI. 7.0.0 - 7.3.4 trim by Sidekiq's default
// limits whatever is configured (`api.deadSetKillLimits`). Ruby's death
// handlers are not run: the API has none.
import type { ChainableCommander } from "ioredis";
import { execReplies } from "../redis/replies.js";
import { DEAD_KEY } from "../wire/keys.js";
import { releaseRules } from "../wire/release-rules.js";
import { rubyFloatToS } from "../wire/ruby-json.js";
import { DEFAULT_DEAD_MAX_JOBS, DEFAULT_DEAD_TIMEOUT_SECONDS } from "../wire/sidekiq-constants.js";
import type { ApiContext } from "./context.js";

/** The dead set's limits, as Sidekiq's configuration names them. */
export interface DeadSetConfig {
  /** `dead_timeout_in_seconds` (default 180 days). */
  deadTimeoutSeconds?: number;
  /** `dead_max_jobs` (default 10,000). */
  deadMaxJobs?: number;
}

/** The limits this API release's `DeadSet#kill` trims by (`api.deadSetKillLimits`). */
export function killLimits(ctx: ApiContext, config: DeadSetConfig): DeadSetConfig {
  return releaseRules(ctx.rules).api.deadSetKillLimits === "defaults" ? {} : config;
}

/** Queues the trim's two commands on `tx`. */
function queueTrim(tx: ChainableCommander, config: DeadSetConfig, nowS: number): ChainableCommander {
  const timeout = config.deadTimeoutSeconds ?? DEFAULT_DEAD_TIMEOUT_SECONDS;
  const maxJobs = config.deadMaxJobs ?? DEFAULT_DEAD_MAX_JOBS;
  return tx.zremrangebyscore(DEAD_KEY, "-inf", rubyFloatToS(nowS - timeout)).zremrangebyrank(DEAD_KEY, 0, -maxJobs);
}

/**
 * `DeadSet#kill(message)`: adds the member, bytes unchanged, scored now; then
 * trims, unless `trim: false` on a 7.3.5+ release (kill_all trims once at the end).
 */
export async function killIntoDeadSet(
  ctx: ApiContext,
  config: DeadSetConfig,
  raw: string,
  opts: { trim?: boolean } = {},
): Promise<void> {
  const nowS = ctx.now() / 1000;
  const limits = killLimits(ctx, config);
  if (releaseRules(ctx.rules).api.deadSetKill === "zadd-then-trim") {
    await ctx.redis.zadd(DEAD_KEY, rubyFloatToS(nowS), raw);
    if (opts.trim !== false) await trimDeadSet(ctx, limits);
    return;
  }
  const tx = ctx.redis.multi().zadd(DEAD_KEY, rubyFloatToS(nowS), raw);
  execReplies(await queueTrim(tx, limits, nowS).exec(), "kill");
}

/** `DeadSet#trim`: MULTI{ZREMRANGEBYSCORE dead -inf <now - timeout>; ZREMRANGEBYRANK dead 0 -<max>}. */
export async function trimDeadSet(ctx: ApiContext, config: DeadSetConfig): Promise<void> {
  execReplies(await queueTrim(ctx.redis.multi(), config, ctx.now() / 1000).exec(), "trim dead");
}
