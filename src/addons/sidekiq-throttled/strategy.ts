// One throttle, as the gem's Strategy couples its Concurrency and Threshold
// strategies (strategy.rb, strategy_collection.rb, strategy/*.rb): whether a
// job is throttled, how long until it may run (for `requeue: :schedule`), and
// giving back its slot. Each method follows the Ruby method it names.
import type { Redis } from "ioredis";
import type { JsonValue } from "../../core/wire/json-scan.js";
import { backlogInfoKey, concurrencyKey, thresholdKey } from "./keys.js";
import type { Dynamic, ResolvedConcurrency, ResolvedStrategy, ThresholdOptions } from "./options.js";
import { nowSecondsF } from "../../core/wire/timestamps.js";
import { concurrencyThrottled, type GemLine, thresholdThrottled } from "./scripts.js";

function call<T>(v: Dynamic<T>, args: readonly JsonValue[]): T {
  return typeof v === "function" ? (v as (...a: JsonValue[]) => T)(...args) : v;
}

/** Ruby's `"#{x}"` of what key_suffix gives (nil is ""). */
function suffixText(v: unknown): string {
  return v === null || v === undefined ? "" : String(v);
}

export class Strategy {
  constructor(
    readonly spec: ResolvedStrategy,
    private readonly line: GemLine,
  ) {}

  /** strategy/base.rb#key_suffix: undefined without one. */
  private suffix(args: readonly JsonValue[]): string | undefined {
    return this.spec.keySuffix === undefined ? undefined : suffixText(call(this.spec.keySuffix, args));
  }

  /** strategy/base.rb#limit: a number, or null (no limit). */
  private limit(l: Dynamic<number | null>, args: readonly JsonValue[]): number | null {
    const v = call(l, args);
    return v === null || v === undefined ? null : Number(v);
  }

  /**
   * strategy.rb#throttled?: the concurrency strategies first (the first that
   * throttles stops the rest, as Ruby's `any?`), then the thresholds; a job
   * throttled by a threshold gives back the concurrency slot it just took.
   */
  async throttled(redis: Redis, jid: string, args: readonly JsonValue[]): Promise<boolean> {
    for (const c of this.spec.concurrency) {
      if (await this.concurrencyThrottled(redis, c, jid, args)) {
        this.spec.observer?.("concurrency", ...args);
        return true;
      }
    }
    for (const t of this.spec.threshold) {
      if (await this.thresholdThrottled(redis, t, args)) {
        this.spec.observer?.("threshold", ...args);
        await this.finalize(redis, jid, args);
        return true;
      }
    }
    return false;
  }

  /** strategy/concurrency.rb#throttled? */
  private async concurrencyThrottled(
    redis: Redis,
    c: ResolvedConcurrency,
    jid: string,
    args: readonly JsonValue[],
  ): Promise<boolean> {
    const limit = this.limit(c.limit, args);
    if (limit === null) return false;
    if (limit <= 0) return true;
    const suffix = this.suffix(args);
    return concurrencyThrottled(redis, this.line, {
      key: concurrencyKey(this.spec.name, suffix),
      backlogKey: backlogInfoKey(this.spec.name, suffix),
      jid,
      limit,
      lostJobThreshold: c.lostJobThreshold,
      now: nowSecondsF(),
    });
  }

  /** strategy/threshold.rb#throttled? */
  private async thresholdThrottled(redis: Redis, t: ThresholdOptions, args: readonly JsonValue[]): Promise<boolean> {
    const limit = this.limit(t.limit, args);
    if (limit === null) return false;
    if (limit <= 0) return true;
    const period = Number(call(t.period, args));
    return thresholdThrottled(redis, thresholdKey(this.spec.name, this.suffix(args)), limit, period, nowSecondsF());
  }

  /** strategy.rb#finalize!: the job's jid leaves every concurrency zset (the server middleware's `ensure`). */
  async finalize(redis: Redis, jid: string, args: readonly JsonValue[]): Promise<void> {
    if (this.spec.concurrency.length === 0) return;
    // Every concurrency strategy of a throttle shares its one zset (strategy_collection.rb#make_strategy).
    await redis.zrem(concurrencyKey(this.spec.name, this.suffix(args)), jid);
  }

  /**
   * strategy.rb#retry_in: seconds until the job may run, the longest of its
   * strategies' answers, plus up to a fifth more of jitter when over 10 s.
   */
  async retryIn(redis: Redis, args: readonly JsonValue[]): Promise<number> {
    const intervals: number[] = [];
    for (const c of this.spec.concurrency) intervals.push(await this.concurrencyRetryIn(redis, c, args));
    for (const t of this.spec.threshold) intervals.push(await this.thresholdRetryIn(redis, t, args));
    let interval = Math.max(0, ...intervals);
    // Ruby's rand(interval / 5): a float in [0, interval / 5).
    if (interval > 10) interval += Math.random() * (interval / 5);
    return interval;
  }

  /** strategy/concurrency.rb#retry_in (2.1: from the backlog estimate; 1.5: until the oldest slot expires). */
  private async concurrencyRetryIn(redis: Redis, c: ResolvedConcurrency, args: readonly JsonValue[]): Promise<number> {
    const limit = this.limit(c.limit, args);
    const suffix = this.suffix(args);
    const key = concurrencyKey(this.spec.name, suffix);
    if (limit === null || (await redis.zcard(key)) < limit) return 0;
    if (this.line === 1) {
      const oldest = await redis.zrange(key, 0, 0, "WITHSCORES");
      return Number(oldest[1] ?? 0) - nowSecondsF();
    }
    const [size, timestamp] = await redis.hmget(backlogInfoKey(this.spec.name, suffix), "size", "timestamp");
    const now = nowSecondsF();
    const oldSize = Number(size ?? 0);
    const lost = ((now - Number(timestamp ?? now)) / c.lostJobThreshold) * limit;
    const backlog = Math.max(oldSize - lost, 0);
    const delay = (backlog * c.avgJobDuration) / limit;
    return c.maxDelay * (1 - Math.exp(-delay / c.maxDelay));
  }

  /** strategy/threshold.rb#retry_in */
  private async thresholdRetryIn(redis: Redis, t: ThresholdOptions, args: readonly JsonValue[]): Promise<number> {
    const limit = this.limit(t.limit, args);
    const key = thresholdKey(this.spec.name, this.suffix(args));
    if (limit === null || (await redis.llen(key)) < limit) return 0;
    const period = Number(call(t.period, args));
    const sinceOldest = nowSecondsF() - Number((await redis.lindex(key, -1)) ?? 0);
    return sinceOldest > period ? 0 : period - sinceOldest;
  }
}
