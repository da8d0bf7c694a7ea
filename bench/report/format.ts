// Number formatting shared by the terminal table and the Markdown report.
import type { Summary } from "../measure/summary.js";
import type { MetricDef } from "./model.js";

export function fmt(v: number | undefined, digits: number, compact = false): string {
  if (v === undefined || !Number.isFinite(v)) return "–";
  if (compact && digits === 0 && Math.abs(v) >= 10_000) {
    return Math.abs(v) >= 1e6 ? `${(v / 1e6).toFixed(2)}M` : `${(v / 1e3).toFixed(1)}k`;
  }
  return v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function fmtSummary(s: Summary | undefined, def: Pick<MetricDef, "digits">, compact = false): string {
  if (!s) return "–";
  if (s.runs.length === 1) return fmt(s.median, def.digits, compact);
  return `${fmt(s.median, def.digits, compact)} (${fmt(s.min, def.digits, compact)}–${fmt(s.max, def.digits, compact)})`;
}

export function fmtRatio(r: number | undefined): string {
  return r === undefined || !Number.isFinite(r) ? "–" : `${r >= 10 ? r.toFixed(1) : r.toFixed(2)}x`;
}
