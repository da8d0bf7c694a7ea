// ours / Ruby Sidekiq, ours / BullMQ, ours / ceiling, on medians. Always in
// that direction: for "higher is better" figures above 1 is better, for
// "lower is better" figures (latency, commands, CPU, memory) below 1 is.
import type { MetricDef, Results } from "./model.js";

export interface RatioColumn {
  ours: string;
  against: "ruby" | "bullmq" | "ceiling";
  title: string;
}

export function ratioColumns(results: Results): RatioColumn[] {
  const ids = new Set(results.systems.map((s) => s.id));
  const cols: RatioColumn[] = [];
  for (const o of results.systems.filter((s) => s.ours)) {
    if (ids.has("ruby")) cols.push({ ours: o.id, against: "ruby", title: `${o.id}/ruby` });
    if (ids.has("bullmq")) cols.push({ ours: o.id, against: "bullmq", title: `${o.id}/bullmq` });
    if (ids.has("ceiling")) cols.push({ ours: o.id, against: "ceiling", title: `${o.id}/ceiling` });
  }
  return cols;
}

export function ratio(results: Results, def: MetricDef, col: RatioColumn): number | undefined {
  if (def.noRatio) return undefined;
  const ours = results.median(col.ours, def.id);
  const theirs =
    col.against === "ceiling"
      ? def.ceiling
        ? results.median("ceiling", def.ceiling)
        : undefined
      : results.median(col.against, def.id);
  if (ours === undefined || theirs === undefined || theirs === 0) return undefined;
  return ours / theirs;
}
