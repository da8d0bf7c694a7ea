// What commands print: one JSON document (Ruby's spelling, so big integers
// and stored payloads come out exact), aligned tables, durations, times, and
// a job's usual fields.
import { type JobView, payloadSeconds } from "../../core/api/job-entry.js";
import { RawJson, type RubyJsonValue, toRubyJson } from "../../core/wire/ruby-json.js";

/** One JSON document on stdout (Ruby-style JSON: bigints exact, RawJson spliced verbatim). */
export function printJson(value: unknown): void {
  // toRubyJson refuses what is not JSON (undefined in an array, NaN) with a clear error.
  process.stdout.write(`${toRubyJson(value as RubyJsonValue)}\n`);
}

/** An aligned table: columns padded to the widest cell; `right` columns right-aligned. */
export function formatTable(headers: string[], rows: string[][], right: ReadonlySet<number> = new Set()): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) =>
        i === cells.length - 1 && !right.has(i) ? c : right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!),
      )
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n");
}

export function printTable(headers: string[], rows: string[][], right?: ReadonlySet<number>): void {
  process.stdout.write(`${formatTable(headers, rows, right)}\n`);
}

/** A duration in seconds as `42s`, `5m 03s`, `2h 07m`, `3d 04h`. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "-";
  const neg = seconds < 0;
  let s = Math.abs(seconds);
  let out: string;
  if (s < 60) out = s < 10 && s % 1 !== 0 ? `${s.toFixed(2)}s` : `${Math.floor(s)}s`;
  else if ((s = Math.floor(s)) < 3600) out = `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
  else if (s < 86400) out = `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
  else out = `${Math.floor(s / 86400)}d ${String(Math.floor((s % 86400) / 3600)).padStart(2, "0")}h`;
  return neg ? `-${out}` : out;
}

/** Epoch seconds as ISO 8601 (UTC), or "-". */
export function isoSeconds(s: number | undefined): string {
  if (s === undefined || !Number.isFinite(s)) return "-";
  try {
    return new Date(s * 1000).toISOString();
  } catch {
    return "-";
  }
}

/** Cuts a cell to `n` characters with an ellipsis. */
export function clip(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, Math.max(0, n - 1))}…`;
}

/** A job for --json output: the usual fields, then the stored payload verbatim under "job". */
export function jobJson(v: JobView): { [key: string]: RubyJsonValue } {
  const rec = v.record;
  const out: { [key: string]: RubyJsonValue } = {
    jid: v.jid ?? null,
    class: v.displayClass ?? null,
    queue: v.queue ?? null,
  };
  if (v.klass !== undefined && v.klass !== v.displayClass) out.wrapper = v.klass;
  for (const k of ["created_at", "enqueued_at", "failed_at", "retried_at"]) {
    const s = payloadSeconds(rec, k);
    if (s !== undefined) out[k] = s;
  }
  if (rec) {
    for (const k of ["retry_count", "error_class", "error_message"]) {
      const raw = rec.raw(k);
      if (raw !== undefined) out[k] = new RawJson(raw);
    }
  }
  // The stored string itself: spliced in as JSON when it is an object, else as a string.
  out.job = rec ? new RawJson(v.raw) : v.raw;
  return out;
}

/** A one-line preview of a job's arguments (the stored `args` text). */
export function argsPreview(v: JobView, n = 60): string {
  const raw = v.record?.raw("args");
  return clip(raw ?? (v.record ? "-" : `invalid JSON: ${v.raw}`), n);
}
