// Counters and execution metrics between heartbeats: Sidekiq's
// Processor::PROCESSED / FAILURE (flushed by Launcher#flush_stats) and
// Metrics::ExecutionTracker (flushed on every beat, the Metrics tab).
//
// Ruby ground truth:
//   launcher.rb  flush_stats (7.x/8.x), ❤ (6.x: the INCRBYs ride in a MULTI)
//   processor.rb stats: every executed job is PROCESSED, failures also FAILURE
//   metrics/tracking.rb  ExecutionTracker#track / #flush, metrics/shared.rb Histogram#persist
import type { ChainableCommander, Redis } from "ioredis";
import type { WireProfile } from "../wire/dialect.js";
import { releaseRules } from "../wire/release-rules.js";
import { execReplies } from "../redis/replies.js";
import { dailyStatKeys, statsDate, STAT_FAILED_KEY, STAT_PROCESSED_KEY } from "../wire/keys.js";
import {
  HISTOGRAM_BUCKETS,
  histogramCounter,
  METRICS_KEY_FORMATS,
  METRICS_SHORT_TTL,
  metricField,
  type RollupKey,
} from "../wire/metrics-keys.js";

/** Launcher::STATS_TTL: 5 years. */
export const STATS_TTL = 5 * 365 * 24 * 60 * 60;

export interface StatCounts {
  processed: number;
  failed: number;
}

/** What the execution tracker gathered since its last flush. */
export interface MetricsSnapshot {
  /** `"<Class>|p"`, `"<Class>|f"`, `"<Class>|ms"` in first-recorded order (Ruby's Hash order). */
  jobs: Map<string, number>;
  /** class -> 26 bucket counters (successful executions only). */
  grams: Map<string, number[]>;
  totals: { p: number; f: number; ms: number };
}

function asDate(now: number | Date): Date {
  return now instanceof Date ? now : new Date(now);
}

/** Sidekiq's daily stat keys for a time (UTC date). */
export function statKeys(now: number | Date): { processed: string; failed: string } {
  return dailyStatKeys(statsDate(now));
}

/** Whether the profile's Sidekiq tracks execution metrics (`metrics.enabled` of its release rules). */
export function hasMetrics(profile: WireProfile): boolean {
  return releaseRules(profile).metrics.enabled;
}

export interface MetricsKeys {
  /** The BITFIELD histogram key of the class for this minute. */
  histogram: string;
  /** The `j|…` rollup hashes with their TTLs, in the order Ruby writes them. */
  rollups: RollupKey[];
}

/** Metric key names for a class at a time (UTC), in the format of the profile's release (wire/metrics-keys.ts). */
export function metricsKeys(profile: WireProfile, className: string, now: number | Date): MetricsKeys {
  const d = asDate(now);
  const format = METRICS_KEY_FORMATS[releaseRules(profile).metrics.keys];
  return { histogram: format.histogram(className, d), rollups: format.rollups(d) };
}

/** Histogram#record_time: the first bucket whose bound exceeds `ms`. */
export function histogramBucket(ms: number): number {
  for (let i = 0; i < HISTOGRAM_BUCKETS.length; i++) if (ms < HISTOGRAM_BUCKETS[i]!) return i;
  return HISTOGRAM_BUCKETS.length - 1;
}

/** A class's three metrics fields, built once rather than per job. */
interface ClassKeys {
  p: string;
  f: string;
  ms: string;
}

/** Queues the six stat commands of Launcher#flush_stats (and 6.x ❤) on a pipeline or MULTI. */
export function queueStatCommands(tx: ChainableCommander, counts: StatCounts, now: number | Date): void {
  const keys = statKeys(now);
  tx.incrby(STAT_PROCESSED_KEY, counts.processed);
  tx.incrby(keys.processed, counts.processed);
  tx.expire(keys.processed, STATS_TTL);
  tx.incrby(STAT_FAILED_KEY, counts.failed);
  tx.incrby(keys.failed, counts.failed);
  tx.expire(keys.failed, STATS_TTL);
}

/**
 * Counts executed jobs between heartbeats, as Sidekiq's Processor and
 * Metrics::ExecutionTracker do, and writes them with Ruby's commands.
 */
export class ExecutionStats {
  private processed = 0;
  private failed = 0;
  private metrics: MetricsSnapshot = emptyMetrics();
  private readonly classKeys = new Map<string, ClassKeys>();

  /**
   * One executed job. Every job counts as processed; a failure (`ok` false) also
   * as failed. Metrics: `<Class>|p` always, `<Class>|f` on failure, and the
   * duration (`<Class>|ms` plus the histogram) for successful jobs only.
   * Use the class Ruby's metrics use: `wrapped || class`.
   */
  record(className: string, ms: number, ok: boolean): void {
    this.processed++;
    if (!ok) this.failed++;
    const m = this.metrics;
    let keys = this.classKeys.get(className);
    if (!keys) {
      // Bounded: unknown classes come from payloads, so their names are not.
      if (this.classKeys.size >= 1000) this.classKeys.clear();
      keys = { p: metricField(className, "p"), f: metricField(className, "f"), ms: metricField(className, "ms") };
      this.classKeys.set(className, keys);
    }
    if (ok) {
      // track_time: histogram, then "|ms" (Ruby's integer milliseconds).
      const t = Math.max(0, Math.round(ms));
      let gram = m.grams.get(className);
      if (!gram) m.grams.set(className, (gram = new Array<number>(HISTOGRAM_BUCKETS.length).fill(0)));
      gram[histogramBucket(t)]!++;
      add(m.jobs, keys.ms, t);
      m.totals.ms += t;
    } else {
      add(m.jobs, keys.f, 1);
      m.totals.f++;
    }
    add(m.jobs, keys.p, 1); // the `ensure` of ExecutionTracker#track
    m.totals.p++;
  }

  /** Sidekiq::JobRetry::Skip (an interrupted iterable job): failed in the process stats, timed in metrics. */
  recordSkip(className: string, ms: number): void {
    this.record(className, ms, true);
    this.failed++;
  }

  /** Counts not yet flushed. */
  pending(): StatCounts {
    return { processed: this.processed, failed: this.failed };
  }

  /** Takes the counters (Processor::PROCESSED.reset / FAILURE.reset). */
  takeCounts(): StatCounts {
    const c = { processed: this.processed, failed: this.failed };
    this.processed = 0;
    this.failed = 0;
    return c;
  }

  /** Puts counters back after a failed write ("don't lose the counts if there was a network issue"). */
  restoreCounts(c: StatCounts): void {
    this.processed += c.processed;
    this.failed += c.failed;
  }

  /** Takes the metrics gathered since the last flush (ExecutionTracker#reset). */
  takeMetrics(): MetricsSnapshot {
    const m = this.metrics;
    this.metrics = emptyMetrics();
    return m;
  }

  /**
   * Launcher#flush_stats (7.0+, and 6.x's at_exit flush): nothing when both
   * counters are 0, else one pipeline of INCRBY stat:processed,
   * INCRBY/EXPIRE stat:processed:<UTC date>, and the same for failed.
   * On error the counts are kept for the next flush and the error is thrown.
   */
  async flushCounters(redis: Redis, now: number | Date = Date.now()): Promise<void> {
    const counts = this.takeCounts();
    if (counts.processed + counts.failed === 0) return;
    try {
      const pipe = redis.pipeline();
      queueStatCommands(pipe, counts, now);
      execReplies(await pipe.exec(), "flush stats");
    } catch (e) {
      this.restoreCounts(counts);
      throw e;
    }
  }

  /**
   * Metrics::ExecutionTracker#flush for the profile's release (nothing for
   * 6.x, whose metrics were absent or opt-in). Nothing when no job ran. Then:
   * one pipeline with, per class that succeeded, `BITFIELD <hist> OVERFLOW SAT
   * INCRBY u16 #<bucket> <n> …` and `EXPIRE <hist> 28800`; then one pipeline
   * per rollup (8.x: ten-minute then one-minute; 7.x: one-minute) of
   * `HINCRBY <j|…> "<Class>|<p|f|ms>" n` … and `EXPIRE`.
   * As in Ruby, metrics whose write fails are dropped (the error is thrown).
   */
  async flushMetrics(redis: Redis, profile: WireProfile, now: number | Date = Date.now()): Promise<void> {
    const m = this.takeMetrics();
    if (!hasMetrics(profile)) return;
    if (m.totals.p === 0 && m.totals.f === 0) return;
    if (m.grams.size > 0) {
      const pipe = redis.pipeline();
      for (const [klass, buckets] of m.grams) {
        const key = metricsKeys(profile, klass, now).histogram;
        const cmd: Array<string> = [key, "OVERFLOW", "SAT"];
        buckets.forEach((n, i) => {
          if (n > 0) cmd.push("INCRBY", ...histogramCounter(i), String(n));
        });
        if (cmd.length > 3) pipe.call("bitfield", ...cmd);
        pipe.expire(key, METRICS_SHORT_TTL);
      }
      execReplies(await pipe.exec(), "flush metrics histograms");
    }
    for (const { key, ttl } of metricsKeys(profile, "", now).rollups) {
      const pipe = redis.pipeline();
      for (const [field, n] of m.jobs) pipe.hincrby(key, field, n);
      pipe.expire(key, ttl);
      execReplies(await pipe.exec(), "flush metrics");
    }
  }

  /** Both flushes: counters (as flush_stats) then metrics (as ExecutionTracker#flush). */
  async flush(redis: Redis, profile: WireProfile, now: number | Date = Date.now()): Promise<void> {
    await this.flushCounters(redis, now);
    await this.flushMetrics(redis, profile, now);
  }
}

function add(jobs: Map<string, number>, key: string, n: number): void {
  jobs.set(key, (jobs.get(key) ?? 0) + n);
}

function emptyMetrics(): MetricsSnapshot {
  return { jobs: new Map(), grams: new Map(), totals: { p: 0, f: 0, ms: 0 } };
}
