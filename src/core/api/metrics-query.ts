// Ruby's `Sidekiq::Metrics::Query` (metrics/query.rb): the execution metrics
// of the Metrics tab, read for a fleet of mixed releases. 7.x and 8.x write
// different keys for the same minute (wire/metrics-keys.ts), so both are read
// and added together: per bucket the 8.x one-minute (or ten-minute) rollup,
// then the 7.x one-minute hashes inside it. Like `Query#top_jobs`: pipelined
// reads, newest bucket first.
import {
  HISTOGRAM_BUCKETS,
  histogramCounter,
  histogramKey7,
  histogramKey8,
  METRIC_NAMES,
  METRICS_SHORT_TTL,
  metricField,
  minuteKey7,
  minuteKey8,
  parseMetricField,
  tenMinuteKey8,
  type MetricName,
} from "../wire/metrics-keys.js";
import type { ApiContext } from "./context.js";

/** A result's buckets: one minute (`minutely`) or ten minutes (`hourly`, Ruby's name for its 10-minute rollups). */
export type Granularity = "minutely" | "hourly";

/** Sidekiq 8's Web UI periods (7.x offers the first four). */
export const METRICS_PERIODS: Record<string, { minutes?: number; hours?: number }> = {
  "1h": { minutes: 60 },
  "2h": { minutes: 120 },
  "4h": { minutes: 240 },
  "8h": { minutes: 480 },
  "24h": { hours: 24 },
  "48h": { hours: 48 },
  "72h": { hours: 72 },
};

/** One class's metrics over a query's period (`Query::JobResult`). */
export interface JobMetrics {
  /** Executions (success + failure). */
  p: number;
  f: number;
  /** Milliseconds spent in successful executions. */
  ms: number;
  /** Per bucket (oldest first, aligned with `MetricsResult.buckets`). */
  series: { p: number[]; f: number[]; ms: number[] };
}

/** What a query found (`Query::Result`): per class, totals and a series of buckets. */
export interface MetricsResult {
  granularity: Granularity;
  /** Bucket start times, epoch ms, oldest first. */
  buckets: number[];
  startsAt: number;
  endsAt: number;
  jobs: Map<string, JobMetrics>;
}

/** 7.x keeps minute hashes and histograms 8 hours: older ones are not read. */
const SEVEN_MINUTES_KEPT = METRICS_SHORT_TTL / 60;

const FETCH = HISTOGRAM_BUCKETS.flatMap((_, i) => ["GET", ...histogramCounter(i)]);

function emptyJob(n: number): JobMetrics {
  return { p: 0, f: 0, ms: 0, series: { p: new Array(n).fill(0), f: new Array(n).fill(0), ms: new Array(n).fill(0) } };
}

/** `JobResult#total_avg("s")`: seconds per successful execution. */
export function averageSeconds(j: JobMetrics): number {
  const completed = j.p - j.f;
  return completed === 0 ? 0 : j.ms / 1000 / completed;
}

/** `Sidekiq::Metrics::Query`: execution metrics per class over a period ending at the query's time. */
export class MetricsQuery {
  /** The end of every period read, epoch ms (`Query.new(now:)`). */
  readonly now: number;

  constructor(
    private readonly ctx: ApiContext,
    opts: { now?: number } = {},
  ) {
    this.now = opts.now ?? ctx.now();
  }

  /**
   * `Query#top_jobs`: every class (or those whose name contains
   * `classFilter`, ignoring case) over `period` (a key of METRICS_PERIODS, default 1h).
   */
  topJobs(opts: { period?: string; classFilter?: string } = {}): Promise<MetricsResult> {
    return this.query(opts.period, { classFilter: opts.classFilter });
  }

  /** `Query#for_job`: one class over `period` (listed even when it has no data). */
  forJob(className: string, opts: { period?: string } = {}): Promise<MetricsResult> {
    return this.query(opts.period, { className });
  }

  private async query(
    periodName: string | undefined,
    only: { classFilter?: string | undefined; className?: string },
  ): Promise<MetricsResult> {
    const nowMs = this.now;
    const period = METRICS_PERIODS[periodName ?? "1h"] ?? METRICS_PERIODS["1h"]!;
    const granularity: Granularity = period.hours ? "hourly" : "minutely";
    const stride = granularity === "hourly" ? 600_000 : 60_000;
    const n = period.hours ? period.hours * 6 : period.minutes!;
    const end = nowMs - (nowMs % stride);
    // Reads per bucket i (0 = newest): the 8.x key, then the 7.x minute keys inside it.
    const reads: Array<{ bucket: number; key: string }> = [];
    for (let i = 0; i < n; i++) {
      const t = new Date(end - i * stride);
      reads.push({ bucket: i, key: granularity === "hourly" ? tenMinuteKey8(t) : minuteKey8(t) });
      const minutes = granularity === "hourly" ? 10 : 1;
      for (let m = 0; m < minutes; m++) {
        const mt = end - i * stride + m * 60_000;
        if (nowMs - mt >= SEVEN_MINUTES_KEPT * 60_000 || mt > nowMs) continue;
        reads.push({ bucket: i, key: minuteKey7(new Date(mt)) });
      }
    }
    const { className } = only;
    const pipe = this.ctx.redis.pipeline();
    const fields = className ? METRIC_NAMES.map((m) => metricField(className, m)) : undefined;
    for (const r of reads) {
      if (fields) pipe.hmget(r.key, ...fields);
      else pipe.hgetall(r.key);
    }
    const replies = (await pipe.exec()) ?? [];
    const jobs = new Map<string, JobMetrics>();
    const needle = only.classFilter?.toLowerCase();
    const add = (kls: string, metric: MetricName, bucket: number, value: number) => {
      if (needle && !kls.toLowerCase().includes(needle)) return;
      let j = jobs.get(kls);
      if (!j) jobs.set(kls, (j = emptyJob(n)));
      j[metric] += value;
      j.series[metric][n - 1 - bucket]! += value;
    };
    replies.forEach(([err, value], idx) => {
      if (err) throw err;
      const bucket = reads[idx]!.bucket;
      if (className) {
        (value as Array<string | null>).forEach((v, k) => {
          if (v !== null) add(className, METRIC_NAMES[k]!, bucket, parseInt(v, 10) || 0);
        });
        return;
      }
      for (const [k, v] of Object.entries(value as Record<string, string>)) {
        const field = parseMetricField(k);
        if (field) add(field.className, field.metric, bucket, parseInt(v, 10) || 0);
      }
    });
    if (className && !jobs.has(className)) jobs.set(className, emptyJob(n));
    const buckets = Array.from({ length: n }, (_, i) => end - (n - 1 - i) * stride);
    return { granularity, buckets, startsAt: end - n * stride, endsAt: nowMs, jobs };
  }

  /**
   * The execution-time histogram of one class over the last `minutes` (at
   * most 480, the keys' life): per minute, both releases' BITFIELD counters
   * (`Histogram#fetch`), added up; one count per bucket of HISTOGRAM_LABELS.
   */
  async histogram(className: string, minutes: number): Promise<number[]> {
    const totals = new Array<number>(HISTOGRAM_BUCKETS.length).fill(0);
    const pipe = this.ctx.redis.pipeline();
    for (let i = 0; i < Math.min(minutes, SEVEN_MINUTES_KEPT); i++) {
      const t = new Date(this.now - i * 60_000);
      pipe.call("BITFIELD_RO", histogramKey7(className, t), ...FETCH);
      pipe.call("BITFIELD_RO", histogramKey8(className, t), ...FETCH);
    }
    for (const [err, counts] of (await pipe.exec()) ?? []) {
      if (err) throw err;
      (counts as number[]).forEach((c, i) => (totals[i]! += c));
    }
    return totals;
  }
}
