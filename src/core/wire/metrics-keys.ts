// Sidekiq's execution-metrics keys, spelled once for the writer
// (server/execution-stats.ts, as metrics/tracking.rb) and the reader
// (api/metrics-query.ts, as metrics/query.rb). Two formats, by release
// (`metrics.keys` of wire/release-rules.ts), all times UTC:
//
//   7.x  one-minute rollup hashes `j|%Y%m%d|%-H:%-M` (8 h),
//        histograms `<Class>-%d-%H:%-M` (8 h)
//   8.x  ten-minute rollups `j|%y%m%d|%-H:%M` minus its last digit (3 days,
//        Query::ROLLUPS[:hourly]) and one-minute `j|%y%m%d|%-H:%M` (8 h),
//        histograms `h|<Class>-%-d-%-H:%-M` (8 h)
//
// A rollup hash holds `<Class>|p` (executed), `<Class>|f` (failed) and
// `<Class>|ms` (time of the successful ones). A histogram is a BITFIELD of 26
// u16 counters, `#0` to `#25`, one per bucket of Histogram::BUCKET_INTERVALS.
import type { MetricsRules } from "./release-rules.js";

/** ExecutionTracker::SHORT_TERM and Histogram::HISTOGRAM_TTL: 8 hours (one-minute rollups, histograms). */
export const METRICS_SHORT_TTL = 8 * 60 * 60;
/** ExecutionTracker::MID_TERM (8.x ten-minute rollups): 3 days. */
export const METRICS_MID_TTL = 3 * 24 * 60 * 60;

/** Histogram::BUCKET_INTERVALS (ms upper bounds, exclusive); the last is "Slow". */
export const HISTOGRAM_BUCKETS: readonly number[] = [
  20, 30, 45, 65, 100, 150, 225, 335, 500, 750, 1100, 1700, 2500, 3800, 5750, 8500, 13000, 20000, 30000, 45000, 65000,
  100000, 150000, 225000, 335000, 1e20,
];

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

/** The BITFIELD type and offset of histogram bucket `i`: `u16`, `#<i>`. */
export function histogramCounter(i: number): [type: string, offset: string] {
  return ["u16", `#${i}`];
}

/** A metric of a rollup hash: executed, failed, milliseconds of the successful ones. */
export type MetricName = "p" | "f" | "ms";
export const METRIC_NAMES: readonly MetricName[] = ["p", "f", "ms"];

/** `<Class>|<metric>`: a field of a rollup hash. */
export function metricField(className: string, metric: MetricName): string {
  return `${className}|${metric}`;
}

/** A rollup field back to its class and metric (split at the last `|`); undefined for any other field. */
export function parseMetricField(field: string): { className: string; metric: MetricName } | undefined {
  const bar = field.lastIndexOf("|");
  if (bar < 0) return undefined;
  const metric = field.slice(bar + 1);
  if (metric !== "p" && metric !== "f" && metric !== "ms") return undefined;
  return { className: field.slice(0, bar), metric };
}

const pad2 = (n: number) => String(n).padStart(2, "0");

/** 8.x one-minute rollup: `j|%y%m%d|%-H:%M`. */
export function minuteKey8(t: Date): string {
  return `j|${pad2(t.getUTCFullYear() % 100)}${pad2(t.getUTCMonth() + 1)}${pad2(t.getUTCDate())}|${t.getUTCHours()}:${pad2(t.getUTCMinutes())}`;
}

/** 8.x ten-minute rollup: the one-minute key minus its last digit. */
export function tenMinuteKey8(t: Date): string {
  return minuteKey8(t).slice(0, -1);
}

/** 7.x one-minute rollup: `j|%Y%m%d|%-H:%-M`. */
export function minuteKey7(t: Date): string {
  return `j|${t.getUTCFullYear()}${pad2(t.getUTCMonth() + 1)}${pad2(t.getUTCDate())}|${t.getUTCHours()}:${t.getUTCMinutes()}`;
}

/** 8.x histogram: `h|<Class>-%-d-%-H:%-M`. */
export function histogramKey8(className: string, t: Date): string {
  return `h|${className}-${t.getUTCDate()}-${t.getUTCHours()}:${t.getUTCMinutes()}`;
}

/** 7.x histogram: `<Class>-%d-%H:%-M`. */
export function histogramKey7(className: string, t: Date): string {
  return `${className}-${pad2(t.getUTCDate())}-${pad2(t.getUTCHours())}:${t.getUTCMinutes()}`;
}

/** A rollup hash and how long its writer keeps it (seconds). */
export interface RollupKey {
  key: string;
  ttl: number;
}

/** One release format's keys. */
export interface MetricsKeyFormat {
  /** The rollup hashes a flush at `t` writes, with their TTLs, in the order Ruby writes them. */
  rollups(t: Date): RollupKey[];
  /** The class's histogram for the minute of `t`. */
  histogram(className: string, t: Date): string;
}

/** The key formats by `metrics.keys` of the release rules. */
export const METRICS_KEY_FORMATS: Readonly<Record<MetricsRules["keys"], MetricsKeyFormat>> = {
  v7: {
    rollups: (t) => [{ key: minuteKey7(t), ttl: METRICS_SHORT_TTL }],
    histogram: histogramKey7,
  },
  v8: {
    rollups: (t) => [
      { key: tenMinuteKey8(t), ttl: METRICS_MID_TTL },
      { key: minuteKey8(t), ttl: METRICS_SHORT_TTL },
    ],
    histogram: histogramKey8,
  },
};
