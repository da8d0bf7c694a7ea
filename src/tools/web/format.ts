// Numbers and times as Sidekiq's Web UI shows them.

// One formatter per precision: `toLocaleString` with options builds a new one on
// every call (about 40 µs), and Busy calls this for every process row.
const formatters = new Map<number, Intl.NumberFormat>();

/** `number_with_delimiter`: 1234567 -> "1,234,567"; with `precision`, fixed decimals. */
export function delimited(n: number, precision?: number): string {
  if (!Number.isFinite(n)) return "-";
  const digits = precision ?? 0;
  let f = formatters.get(digits);
  if (!f) {
    f = new Intl.NumberFormat("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
    formatters.set(digits, f);
  }
  return f.format(n);
}

/** Ruby's `relative_time`-like wording: "just now", "5 minutes ago", "in 3 hours". */
export function relativeTime(epochSeconds: number, nowMs: number): string {
  if (!Number.isFinite(epochSeconds)) return "-";
  const diff = nowMs / 1000 - epochSeconds;
  const future = diff < 0;
  const s = Math.abs(diff);
  let text: string;
  if (s < 10) return "just now";
  if (s < 60) text = `${Math.floor(s)} seconds`;
  else if (s < 3600) text = plural(Math.floor(s / 60), "minute");
  else if (s < 86400) text = plural(Math.floor(s / 3600), "hour");
  else if (s < 86400 * 30) text = plural(Math.floor(s / 86400), "day");
  else if (s < 86400 * 365) text = plural(Math.floor(s / (86400 * 30)), "month");
  else text = plural(Math.floor(s / (86400 * 365)), "year");
  return future ? `in ${text}` : `${text} ago`;
}

function plural(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? "" : "s"}`;
}

/** Epoch seconds as `2026-11-23 05:13:41 UTC`. */
export function utcTime(epochSeconds: number | undefined): string {
  if (epochSeconds === undefined || !Number.isFinite(epochSeconds)) return "-";
  const d = new Date(epochSeconds * 1000);
  if (Number.isNaN(d.getTime())) return "-";
  return `${d.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** RSS in KB as Sidekiq shows it: "123 MB", "1.2 GB". */
export function formatRss(kb: number): string {
  if (!kb) return "-";
  if (kb < 100_000) return `${delimited(Math.round(kb / 1024))} MB`;
  if (kb < 10_000_000) return `${(kb / 1024 / 1024).toFixed(1)} GB`;
  return `${delimited(Math.round(kb / 1024 / 1024))} GB`;
}

/** Queue latency in seconds, as the Queues page shows it (two decimals below a minute). */
export function formatLatency(seconds: number): string {
  if (!Number.isFinite(seconds)) return "-";
  if (Math.abs(seconds) < 60) return delimited(seconds, 2);
  return delimited(Math.round(seconds));
}
