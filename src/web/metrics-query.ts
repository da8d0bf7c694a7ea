// Sidekiq's execution metrics (the Metrics tab), read for a fleet of mixed
// releases: 7.x writes one-minute hashes `j|%Y%m%d|%-H:%-M`, 8.x one-minute
// hashes `j|%y%m%d|%-H:%M` and ten-minute rollups `j|%y%m%d|%-H:<tens digit>`
// (Metrics::Query::ROLLUPS). The date formats differ, so both releases'
// keys for the same minute are read and added together. Each hash holds
// `<Class>|p` (executed), `<Class>|f` (failed) and `<Class>|ms` (time of the
// successful ones). Like `Query#top_jobs`: pipelined reads, newest bucket first.
import type { Redis } from "ioredis";

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

export interface JobMetrics {
  /** Executions (success + failure). */
  p: number;
  f: number;
  /** Milliseconds spent in successful executions. */
  ms: number;
  /** Per bucket (oldest first, aligned with `MetricsResult.buckets`). */
  series: { p: number[]; f: number[]; ms: number[] };
}

export interface MetricsResult {
  granularity: Granularity;
  /** Bucket start times, epoch ms, oldest first. */
  buckets: number[];
  startsAt: number;
  endsAt: number;
  jobs: Map<string, JobMetrics>;
}

const pad2 = (n: number) => String(n).padStart(2, "0");

/** 8.x one-minute key: `j|%y%m%d|%-H:%M`. */
export function minuteKey8(t: Date): string {
  return `j|${pad2(t.getUTCFullYear() % 100)}${pad2(t.getUTCMonth() + 1)}${pad2(t.getUTCDate())}|${t.getUTCHours()}:${pad2(t.getUTCMinutes())}`;
}

/** 8.x ten-minute key: the one-minute key minus its last digit. */
export function tenMinuteKey8(t: Date): string {
  return minuteKey8(t).slice(0, -1);
}

/** 7.x one-minute key: `j|%Y%m%d|%-H:%-M`. */
export function minuteKey7(t: Date): string {
  return `j|${t.getUTCFullYear()}${pad2(t.getUTCMonth() + 1)}${pad2(t.getUTCDate())}|${t.getUTCHours()}:${t.getUTCMinutes()}`;
}

/** 7.x keeps minute hashes 8 hours: older ones are not read. */
const SEVEN_MINUTES_KEPT = 480;

function emptyJob(n: number): JobMetrics {
  return { p: 0, f: 0, ms: 0, series: { p: new Array(n).fill(0), f: new Array(n).fill(0), ms: new Array(n).fill(0) } };
}

/**
 * The metrics of every class (or those whose name contains `classFilter`,
 * ignoring case) over `period`, ending at `nowMs`.
 */
export async function queryMetrics(
  redis: Redis,
  opts: { period?: string; nowMs: number; classFilter?: string; className?: string },
): Promise<MetricsResult> {
  const period = METRICS_PERIODS[opts.period ?? "1h"] ?? METRICS_PERIODS["1h"]!;
  const granularity: Granularity = period.hours ? "hourly" : "minutely";
  const stride = granularity === "hourly" ? 600_000 : 60_000;
  const n = period.hours ? period.hours * 6 : period.minutes!;
  const end = opts.nowMs - (opts.nowMs % stride);
  // Reads per bucket i (0 = newest): the 8.x key, then the 7.x minute keys inside it.
  const reads: Array<{ bucket: number; key: string }> = [];
  for (let i = 0; i < n; i++) {
    const t = new Date(end - i * stride);
    reads.push({ bucket: i, key: granularity === "hourly" ? tenMinuteKey8(t) : minuteKey8(t) });
    const minutes = granularity === "hourly" ? 10 : 1;
    for (let m = 0; m < minutes; m++) {
      const mt = end - i * stride + m * 60_000;
      if (opts.nowMs - mt >= SEVEN_MINUTES_KEPT * 60_000 || mt > opts.nowMs) continue;
      reads.push({ bucket: i, key: minuteKey7(new Date(mt)) });
    }
  }
  const pipe = redis.pipeline();
  const fields = opts.className ? [`${opts.className}|p`, `${opts.className}|f`, `${opts.className}|ms`] : undefined;
  for (const r of reads) {
    if (fields) pipe.hmget(r.key, ...fields);
    else pipe.hgetall(r.key);
  }
  const replies = (await pipe.exec()) ?? [];
  const jobs = new Map<string, JobMetrics>();
  const needle = opts.classFilter?.toLowerCase();
  const add = (kls: string, metric: string, bucket: number, value: number) => {
    if (metric !== "p" && metric !== "f" && metric !== "ms") return;
    if (needle && !kls.toLowerCase().includes(needle)) return;
    let j = jobs.get(kls);
    if (!j) jobs.set(kls, (j = emptyJob(n)));
    j[metric] += value;
    j.series[metric][n - 1 - bucket]! += value;
  };
  replies.forEach(([err, value], idx) => {
    if (err) throw err;
    const bucket = reads[idx]!.bucket;
    if (fields) {
      const vals = value as Array<string | null>;
      vals.forEach((v, k) => {
        if (v !== null) add(opts.className!, ["p", "f", "ms"][k]!, bucket, parseInt(v, 10) || 0);
      });
      return;
    }
    for (const [k, v] of Object.entries(value as Record<string, string>)) {
      const bar = k.lastIndexOf("|");
      if (bar < 0) continue;
      add(k.slice(0, bar), k.slice(bar + 1), bucket, parseInt(v, 10) || 0);
    }
  });
  if (opts.className && !jobs.has(opts.className)) jobs.set(opts.className, emptyJob(n));
  const buckets = Array.from({ length: n }, (_, i) => end - (n - 1 - i) * stride);
  return { granularity, buckets, startsAt: end - n * stride, endsAt: opts.nowMs, jobs };
}

/** `JobResult#total_avg("s")`: seconds per successful execution. */
export function averageSeconds(j: JobMetrics): number {
  const completed = j.p - j.f;
  return completed === 0 ? 0 : j.ms / 1000 / completed;
}

/** `Histogram::LABELS`: the upper bound of each of the 26 execution-time buckets. */
export const HISTOGRAM_LABELS: readonly string[] = [
  "20ms",
  "30ms",
  "45ms",
  "65ms",
  "100ms",
  "150ms",
  "225ms",
  "335ms",
  "500ms",
  "750ms",
  "1.1s",
  "1.7s",
  "2.5s",
  "3.8s",
  "5.75s",
  "8.5s",
  "13s",
  "20s",
  "30s",
  "45s",
  "65s",
  "100s",
  "150s",
  "225s",
  "335s",
  "Slow",
];

const FETCH = HISTOGRAM_LABELS.flatMap((_, i) => ["GET", "u16", `#${i}`]);

/**
 * The execution-time histogram of one class over the last `minutes` (at most
 * 480, the keys' life): per minute, 7.x's `<Class>-%d-%H:%-M` and 8.x's
 * `h|<Class>-%-d-%-H:%-M` (BITFIELD u16 counters), added up.
 */
export async function queryHistogram(
  redis: Redis,
  className: string,
  minutes: number,
  nowMs: number,
): Promise<number[]> {
  const totals = new Array<number>(HISTOGRAM_LABELS.length).fill(0);
  const pipe = redis.pipeline();
  for (let i = 0; i < Math.min(minutes, SEVEN_MINUTES_KEPT); i++) {
    const t = new Date(nowMs - i * 60_000);
    const d = t.getUTCDate();
    const h = t.getUTCHours();
    const m = t.getUTCMinutes();
    pipe.call("BITFIELD_RO", `${className}-${pad2(d)}-${pad2(h)}:${m}`, ...FETCH);
    pipe.call("BITFIELD_RO", `h|${className}-${d}-${h}:${m}`, ...FETCH);
  }
  for (const [err, counts] of (await pipe.exec()) ?? []) {
    if (err) throw err;
    (counts as number[]).forEach((c, i) => (totals[i]! += c));
  }
  return totals;
}
