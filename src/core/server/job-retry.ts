// Sidekiq's JobRetry (`lib/sidekiq/job_retry.rb`) for Node: what happens to a
// job whose handler failed. The payload is rewritten through JobRecord and
// applyFailure (lossless), then stored in `retry` (one ZADD), in `dead`
// (MULTI ZADD + trims) or nowhere, exactly as the Sidekiq release of the wire
// profile does. What moved between releases (jitter, sidekiq_retry_in answers,
// retry_for, :discard, discarded_at, the death handlers' place) is read from
// the `retry` rules of wire/release-rules.ts, which say when each changed.
import type { Redis } from "ioredis";
import { execReplies } from "../redis/replies.js";
import type { WireProfile } from "../wire/dialect.js";
import { isFloatLexeme, type JsonValue } from "../wire/json-scan.js";
import type { JobRecord } from "../wire/job-record.js";
import { releaseRules } from "../wire/release-rules.js";
import { applyFailure } from "../wire/retry-fields.js";
import { DEAD_KEY, RETRY_KEY } from "../wire/keys.js";
import { RawJson, RubyFloat, rubyFloatToS } from "../wire/ruby-json.js";
import {
  DEFAULT_DEAD_MAX_JOBS,
  DEFAULT_DEAD_TIMEOUT_SECONDS,
  DEFAULT_MAX_RETRY_ATTEMPTS,
  truthy,
} from "../wire/sidekiq-constants.js";
import { nowMs as currentMs } from "../wire/timestamps.js";
import { describeError, type DeathHandler, type HandlerOptions, type RetryInResult } from "./types.js";

export interface RetryConfig {
  profile: WireProfile;
  /** `max_retries`, used when the job's `retry` is not an Integer. Default 25. */
  maxRetries?: number;
  /** `dead_timeout_in_seconds`. Default 180 days. */
  deadTimeoutSeconds?: number;
  /** `dead_max_jobs`. Default 10,000. */
  deadMaxJobs?: number;
  /** Sidekiq's `death_handlers`, called `(job, error)` in order; their errors are reported, not raised. */
  deathHandlers?: DeathHandler[];
  /** A float in [0, 1), for tests. Default Math.random. */
  random?: () => number;
  /**
   * Sidekiq's `handle_exception` for errors raised by retryIn, retriesExhausted and
   * death handlers (which never stop the retry logic). Default: console.error.
   */
  onHandlerError?: (error: unknown, context: { context: string; job: JobRecord }) => void;
}

/** retry: queued in `retry`; dead: stored in `dead`; discarded: dropped by :discard or `dead: false`; dropped: `retry` false or absent. */
export type RetryOutcome = "retry" | "dead" | "discarded" | "dropped";

export interface FailureResult {
  outcome: RetryOutcome;
  /** Epoch seconds of the retry (the ZADD score), when outcome is "retry". */
  retryAt?: number;
}

export interface HandleFailureOptions {
  /** The queue the job was fetched from (without the `queue:` prefix). */
  queue: string;
  handler?: HandlerOptions;
  config: RetryConfig;
  /** Epoch ms; default now. */
  now?: number;
}

/** Ruby's `Kernel#rand(n)`: an Integer in [0, |n|), or a Float in [0, 1) when n is 0. */
function rubyRand(n: number, random: () => number): number {
  const max = Math.abs(Math.trunc(n));
  const r = random();
  if (max === 0) return r;
  return Math.min(max - 1, Math.floor(r * max));
}

/** The jitter added to a retry delay (`count` is the new retry_count). */
export function retryJitter(profile: WireProfile, count: number, random: () => number = Math.random): number {
  switch (releaseRules(profile).retry.jitter) {
    case "rand(10*(count+1))":
      return rubyRand(10 * (count + 1), random);
    case "rand(10)*(count+1)":
      return rubyRand(10, random) * (count + 1);
    case "rand(30)*(count+1)":
      return rubyRand(30, random) * (count + 1);
  }
}

/** The default delay in seconds, jitter included: `count**4 + 15 + jitter`. */
export function retryDelay(profile: WireProfile, count: number, random: () => number = Math.random): number {
  return count ** 4 + 15 + retryJitter(profile, count, random);
}

/**
 * `retry_attempts_from`: the job's `retry` when it is a Ruby Integer, else
 * `max_retries` (25). A RubyFloat (a `5.0` lexeme) is not an Integer.
 */
export function maxAttemptsFor(retryValue: unknown, config: Pick<RetryConfig, "maxRetries">): number {
  if (typeof retryValue === "number" && Number.isInteger(retryValue)) return retryValue;
  if (typeof retryValue === "bigint") return Number(retryValue);
  return config.maxRetries ?? DEFAULT_MAX_RETRY_ATTEMPTS;
}

/** A member as Ruby's JSON.parse types it: float lexemes become RubyFloat. */
function rubyValue(rec: JobRecord, key: string): JsonValue | RubyFloat | undefined {
  const raw = rec.raw(key);
  if (raw !== undefined && /^-?\d/.test(raw) && isFloatLexeme(raw)) return new RubyFloat(Number(raw));
  return rec.get(key);
}

function numeric(v: JsonValue | RubyFloat | undefined): number | undefined {
  if (v instanceof RubyFloat) return v.value;
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  return undefined;
}

/**
 * Whether `failed_at + retry_for < now`. 7.x adds the raw number to float
 * seconds (an 8.x ms value never expires there); 8.x reads failed_at with
 * `time_for`. A missing failed_at (Ruby would raise) never expires.
 */
export function retryForExpired(profile: WireProfile, rec: JobRecord, retryFor: number, nowMs: number): boolean {
  const failed = rubyValue(rec, "failed_at");
  const n = numeric(failed);
  if (n === undefined) return false;
  const nowS = nowMs / 1000;
  const clock = releaseRules(profile).retry.retryForClock;
  // Ruby reads the clock again after writing failed_at (`failed_at + rf <
  // Time.now`), so a later instant; here `now` is the one failed_at was
  // written with, hence <=: `retry_for: 0` is exhausted at once, as in Ruby.
  if (clock === "seconds" || failed instanceof RubyFloat) return n + retryFor <= nowS;
  // Time.at(item / 1000, item % 1000[, :millisecond]): integer division floors.
  const whole = Math.floor(n / 1000);
  const rest = n - whole * 1000;
  const seconds = whole + (clock === "time_for" ? rest / 1000 : rest / 1_000_000);
  return seconds + retryFor <= nowS;
}

type Strategy = { kind: "default"; delay: number; custom: boolean } | { kind: "discard" } | { kind: "kill" };

/** `delay_for`: what a handler's retryIn answer means in this release. */
export function interpretRetryIn(profile: WireProfile, count: number, rv: RetryInResult): Strategy {
  const base = count ** 4 + 15;
  const rule = releaseRules(profile).retry.retryIn;
  if (rule === "to_i") {
    // `retry_in(...).to_i`; `custom > 0` wins. A String ("kill") is 0 there.
    const n = typeof rv === "number" && Number.isFinite(rv) ? Math.trunc(rv) : 0;
    return n > 0 ? { kind: "default", delay: n, custom: true } : { kind: "default", delay: base, custom: false };
  }
  let v: RetryInResult = rv;
  // 7.0.7+: `rv = rv.to_i if rv.respond_to?(:to_i)` (Symbols do not).
  if (rule === "strategy-to_i" && typeof v === "number" && Number.isFinite(v)) v = Math.trunc(v);
  if (typeof v === "number" && Number.isInteger(v) && v > 0) return { kind: "default", delay: v, custom: true };
  if (v === "discard") return { kind: "discard" };
  if (v === "kill") return { kind: "kill" };
  return { kind: "default", delay: base, custom: false };
}

function report(config: RetryConfig, error: unknown, context: string, job: JobRecord): void {
  const fn =
    config.onHandlerError ?? ((e: unknown, c: { context: string }) => console.error(`sidekiq-bridge: ${c.context}`, e));
  try {
    fn(error, { context, job });
  } catch {
    // A failing reporter must not change what happens to the job.
  }
}

async function runDeathHandlers(redis: Redis, config: RetryConfig, job: JobRecord, error: unknown): Promise<void> {
  for (const handler of config.deathHandlers ?? []) {
    try {
      await handler(job, error, redis);
    } catch (e) {
      report(config, e, "Error calling death handler", job);
    }
  }
}

/**
 * Sidekiq's `send_to_morgue` (and the processor's path for malformed JSON):
 * `MULTI; ZADD dead <now> payload; ZREMRANGEBYSCORE dead -inf <now - timeout>;
 * ZREMRANGEBYRANK dead 0 -<max>; EXEC`, numbers spelled as Ruby's Float#to_s.
 */
export async function sendToDead(
  redis: Redis,
  payload: string | Buffer,
  config: RetryConfig,
  nowMs: number = currentMs(),
): Promise<void> {
  const nowS = nowMs / 1000;
  const timeout = config.deadTimeoutSeconds ?? DEFAULT_DEAD_TIMEOUT_SECONDS;
  const max = config.deadMaxJobs ?? DEFAULT_DEAD_MAX_JOBS;
  const results = await redis
    .multi()
    .zadd(DEAD_KEY, rubyFloatToS(nowS), payload)
    .zremrangebyscore(DEAD_KEY, "-inf", rubyFloatToS(nowS - timeout))
    .zremrangebyrank(DEAD_KEY, 0, String(-max))
    .exec();
  execReplies(results, "send to dead");
}

/** `retries_exhausted`: the handler's hook, then the dead set and the death handlers, per release. */
async function retriesExhausted(
  redis: Redis,
  rec: JobRecord,
  error: unknown,
  handler: HandlerOptions | undefined,
  config: RetryConfig,
  now: number,
): Promise<FailureResult> {
  const rules = releaseRules(config.profile).retry;
  let rv: unknown;
  if (handler?.retriesExhausted) {
    try {
      rv = await handler.retriesExhausted(rec, error);
    } catch (e) {
      report(config, e, "Error calling retries_exhausted", rec);
    }
  }
  const discardReturned = rules.exhaustedDiscard && rv === "discard";
  // 7.2.0 - 8.0.6: `return if rv == :discard` skips the dead set and the handlers.
  if (discardReturned && !rules.discardRunsDeathHandlers) return { outcome: "discarded" };
  const toMorgue = !(rec.get("dead") === false || discardReturned);
  if (!rules.deathHandlersAfterMorgue) await runDeathHandlers(redis, config, rec, error);
  if (toMorgue) await sendToDead(redis, rec.toString(), config, now);
  else if (rules.discardedAt) rec.set("discarded_at", Math.floor(now));
  if (rules.deathHandlersAfterMorgue) await runDeathHandlers(redis, config, rec, error);
  return { outcome: toMorgue ? "dead" : "discarded" };
}

/**
 * What Sidekiq's global/local JobRetry does with a failed job. `record` is not
 * modified: like Ruby, which reloads the job string, this works on a copy.
 */
export async function handleFailure(
  redis: Redis,
  record: JobRecord,
  error: unknown,
  opts: HandleFailureOptions,
): Promise<FailureResult> {
  const { config, handler } = opts;
  const p = config.profile;
  const rules = releaseRules(p).retry;
  const now = opts.now ?? currentMs();
  const random = config.random ?? Math.random;
  const rec = record.clone();

  const retry = rubyValue(rec, "retry");
  if (!truthy(retry)) {
    // `raise e unless msg["retry"]`: the global handler runs the death handlers only.
    await runDeathHandlers(redis, config, rec, error);
    return { outcome: "dropped" };
  }
  const max = maxAttemptsFor(retry, config);

  // msg["queue"] = (msg["retry_queue"] || queue): the fetched queue, any truthy retry_queue wins.
  // The value is copied as its raw text, so its lexeme survives.
  const retryQueue = rec.raw("retry_queue");
  rec.set("queue", retryQueue !== undefined && truthy(rec.get("retry_queue")) ? new RawJson(retryQueue) : opts.queue);
  const failure = describeError(error);
  const count = applyFailure(rec, failure, p, now);

  const rf = numeric(truthy(rec.get("retry_for")) ? rubyValue(rec, "retry_for") : undefined);
  let exhausted: boolean;
  if (rules.retryFor === "instead-of-count" && rf !== undefined) exhausted = retryForExpired(p, rec, rf, now);
  else {
    exhausted = count >= max;
    if (!exhausted && rf !== undefined && rules.retryFor === "or-count") exhausted = retryForExpired(p, rec, rf, now);
  }
  if (exhausted) return retriesExhausted(redis, rec, error, handler, config, now);

  let rv: RetryInResult;
  if (handler?.retryIn) {
    try {
      rv = await handler.retryIn(count, error, rec);
    } catch (e) {
      report(config, e, "Failure scheduling retry using the defined `sidekiq_retry_in`, falling back to default", rec);
      rv = undefined;
    }
  }
  const strategy = interpretRetryIn(p, count, rv);
  if (strategy.kind === "discard") {
    if (rules.discardedAt) rec.set("discarded_at", Math.floor(now));
    if (rules.discardRunsDeathHandlers) await runDeathHandlers(redis, config, rec, error);
    return { outcome: "discarded" };
  }
  if (strategy.kind === "kill") return retriesExhausted(redis, rec, error, handler, config, now);

  const nowS = now / 1000;
  let retryAt: number;
  if (rules.retryAt === "jitter-on-default-only") {
    // Before 6.2.2 jitter belonged to the default delay only.
    retryAt = nowS + (strategy.custom ? strategy.delay : retryDelay(p, count, random));
  } else if (rules.retryAt === "now+(delay+jitter)") {
    // 6.2.2 - 6.5.1: delay_for returns delay + jitter.
    retryAt = nowS + (strategy.delay + retryJitter(p, count, random));
  } else {
    // 6.5.2+: Time.now.to_f + delay + jitter.
    retryAt = nowS + strategy.delay + retryJitter(p, count, random);
  }
  await redis.zadd(RETRY_KEY, rubyFloatToS(retryAt), rec.toString());
  return { outcome: "retry", retryAt };
}
