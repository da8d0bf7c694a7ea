// The terminal table: one row per figure, median (min–max) per system, the
// redis-benchmark ceiling beside the figures it bounds, then the ratios.
import { CEILING_DEFS, type MetricDef, type Results } from "./model.js";
import { fmt, fmtRatio, fmtSummary } from "./format.js";
import { ratio, ratioColumns } from "./ratios.js";

/** `spread`: cells show median (min–max); otherwise the median alone. */
export function tableRows(
  results: Results,
  defs: MetricDef[],
  compact: boolean,
  spread = true,
): { header: string[]; rows: Array<{ section: string; cells: string[] }> } {
  const systems = results.systems.filter((s) => s.id !== "ceiling");
  const hasCeiling = results.systems.some((s) => s.id === "ceiling");
  const cols = ratioColumns(results);
  const header = [
    "figure",
    "unit",
    "",
    ...systems.map((s) => s.id),
    ...(hasCeiling ? ["ceiling"] : []),
    ...cols.map((c) => c.title),
  ];
  const rows: Array<{ section: string; cells: string[] }> = [];
  for (const def of defs) {
    const vals = systems.map((s) => results.summary(s.id, def.id));
    if (vals.every((v) => v === undefined)) continue;
    const ceil = def.ceiling ? results.summary("ceiling", def.ceiling) : undefined;
    rows.push({
      section: def.section,
      cells: [
        def.label,
        def.unit,
        def.better === "higher" ? "↑" : "↓",
        ...vals.map((v) => (spread ? fmtSummary(v, def, compact) : fmt(v?.median, def.digits, compact))),
        ...(hasCeiling ? [spread ? fmtSummary(ceil, def, compact) : fmt(ceil?.median, def.digits, compact)] : []),
        ...cols.map((c) => fmtRatio(ratio(results, def, c))),
      ],
    });
  }
  return { header, rows };
}

export function renderTable(results: Results, defs: MetricDef[]): string {
  const { header, rows } = tableRows(results, defs, true, false);
  const all = [header, ...rows.map((r) => r.cells)];
  const width = header.map((_, i) => Math.max(...all.map((r) => [...(r[i] ?? "")].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(width[i]!) : c.padStart(width[i]!))).join("  ");
  const out = [line(header), width.map((w) => "─".repeat(w)).join("  ")];
  let section = "";
  for (const r of rows) {
    if (r.section !== section) {
      section = r.section;
      out.push(`· ${section}`);
    }
    out.push(line(r.cells));
  }
  const ceilings = CEILING_DEFS.map((d) => [d, results.median("ceiling", d.id)] as const).filter(
    ([, v]) => v !== undefined,
  );
  if (ceilings.length)
    out.push(
      "",
      `ceiling (redis-benchmark): ${ceilings.map(([d, v]) => `${d.label} ${fmt(v, 0)} ${d.unit}`).join("; ")}`,
    );
  out.push(
    "↑ higher is better, ↓ lower is better; cells are medians of the measured runs (min–max in the Markdown report); ratios are ours / theirs on medians.",
  );
  return out.join("\n");
}
