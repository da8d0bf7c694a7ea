// bench/results/latest.json: every run of every figure (warm-ups flagged),
// the summaries, ratios and targets, and what it all ran on.
import type { BenchConfig } from "../config.js";
import type { Environment } from "./environment.js";
import { CEILING_DEFS, type MetricDef, type Results } from "./model.js";
import { ratio, ratioColumns } from "./ratios.js";
import type { TargetResult } from "./targets.js";

export function toJson(
  results: Results,
  defs: MetricDef[],
  cfg: BenchConfig,
  env: Environment,
  targets: TargetResult[],
  elapsedS: number,
): unknown {
  const cols = ratioColumns(results);
  const metric = (def: { id: string; label: string; unit: string }, extra: Record<string, unknown>) => {
    const bySystem: Record<string, unknown> = {};
    for (const [system, runs] of results.runs.get(def.id) ?? []) {
      const s = results.summary(system, def.id);
      bySystem[system] = { ...(s ? { median: s.median, min: s.min, max: s.max } : {}), runs };
    }
    return { ...def, ...extra, systems: bySystem };
  };
  return {
    generatedBy: "npm run bench",
    quick: cfg.quick,
    elapsedSeconds: Math.round(elapsedS),
    environment: env,
    method: { runs: cfg.runs, warmups: cfg.warmups, warmupScale: cfg.warmupScale, counts: cfg.counts },
    systems: results.systems,
    metrics: [
      ...defs.map((d) =>
        metric(d, {
          ratios: Object.fromEntries(cols.map((c) => [c.title, ratio(results, d, c) ?? null])),
        }),
      ),
      ...CEILING_DEFS.map((d) => metric(d, { better: "higher" })),
    ],
    targets,
    notes: results.notes,
    errors: results.errors,
  };
}
