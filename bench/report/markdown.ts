// bench/results/latest.md: the same table as the terminal, the targets, where
// each system's Redis commands go, and what it ran on.
import type { BenchConfig } from "../config.js";
import type { Environment } from "./environment.js";
import { fmt } from "./format.js";
import { CEILING_DEFS, type MetricDef, type Results } from "./model.js";
import { tableRows } from "./table.js";
import type { TargetResult } from "./targets.js";

const esc = (s: string) => s.replace(/\|/g, "\\|");

/** Median per-job calls of each Redis command during one figure's measured runs. */
function commandBreakdown(results: Results, metric: string, system: string, n: number): string {
  const runs = (results.runs.get(metric)?.get(system) ?? []).filter((r) => !r.warmup && r.detail?.commands);
  if (runs.length === 0) return "–";
  const totals = new Map<string, number[]>();
  for (const r of runs) {
    const jobs = Number(r.detail!.n ?? n);
    for (const [cmd, calls] of Object.entries(r.detail!.commands as Record<string, number>)) {
      let l = totals.get(cmd);
      if (!l) totals.set(cmd, (l = []));
      l.push(calls / jobs);
    }
  }
  const med = (l: number[]) => [...l].sort((a, b) => a - b)[Math.floor(l.length / 2)]!;
  return [...totals.entries()]
    .map(([cmd, l]) => [cmd, med(l)] as const)
    .filter(([, v]) => v >= 0.0005)
    .sort((a, b) => b[1] - a[1])
    .map(([cmd, v]) => `${cmd} ${v.toFixed(3)}`)
    .join(", ");
}

export function toMarkdown(
  results: Results,
  defs: MetricDef[],
  cfg: BenchConfig,
  env: Environment,
  targets: TargetResult[],
  elapsedS: number,
  /** bench/README.md as a link from the report's folder (results/, results/node24/, …). */
  readmeLink = "../README.md",
): string {
  const out: string[] = [];
  out.push(`# Benchmark results${cfg.quick ? " (BENCH_QUICK smoke run: not comparable)" : ""}`, "");
  out.push(
    `\`npm run bench\` on ${env.date.slice(0, 10)}${env.commit ? `, commit ${env.commit}` : ""}, ${Math.round(elapsedS / 60)} min. ` +
      `${cfg.warmups} warm-up run(s) (at ${Math.round(cfg.warmupScale * 100)}% of the job count) and ${cfg.runs} measured run(s) per figure; ` +
      `cells are **median (min–max)** of the measured runs. Method and how to read the figures: [bench/README.md](${readmeLink}).`,
    "",
  );
  out.push("## Systems", "");
  for (const s of results.systems) out.push(`- **${s.id}**: ${s.description}`);
  out.push("", "## Figures", "");
  const { header, rows } = tableRows(results, defs, false);
  out.push(`| ${header.map(esc).join(" | ")} |`, `| ${header.map((_, i) => (i < 2 ? "---" : "---:")).join(" | ")} |`);
  let section = "";
  for (const r of rows) {
    if (r.section !== section) {
      section = r.section;
      out.push(`| **${esc(section)}** |${" |".repeat(header.length - 1)}`);
    }
    out.push(`| ${r.cells.map(esc).join(" | ")} |`);
  }
  out.push(
    "",
    "↑ higher is better, ↓ lower is better. Ratios are ours / theirs on medians, always in that direction.",
    "",
  );
  const ceilings = CEILING_DEFS.map((d) => [d, results.summary("ceiling", d.id)] as const).filter(
    ([, v]) => v !== undefined,
  );
  if (ceilings.length) {
    out.push(
      "### Ceiling (redis-benchmark, same Redis build and placement)",
      "",
      "| test | median | min | max |",
      "| --- | ---: | ---: | ---: |",
    );
    for (const [d, s] of ceilings)
      out.push(`| ${d.label} | ${fmt(s!.median, 0)} ${d.unit} | ${fmt(s!.min, 0)} | ${fmt(s!.max, 0)} |`);
    out.push("");
  }
  if (targets.length) {
    out.push("## Targets", "", "| system | target | status | medians |", "| --- | --- | --- | --- |");
    for (const t of targets)
      out.push(
        `| ${t.system} | ${esc(t.target)} | ${t.status === "met" ? "met" : t.status === "missed" ? "**missed**" : t.status} | ${esc(t.detail)} |`,
      );
    out.push("");
  }
  const breakdown: Array<[string, string]> = [
    ...cfg.counts.drainConcurrency.map((c) => [`drain.c${c}`, `drain, concurrency ${c}`] as [string, string]),
    ["scheduled.burst", "scheduled burst"],
    ["enqueue.bulk", "bulk enqueue"],
    ["enqueue.single50", "single enqueue, 50 in flight"],
  ];
  out.push(
    "## Where the Redis commands go (per job, median run)",
    "",
    `| figure | ${results.systems
      .filter((s) => s.id !== "ceiling")
      .map((s) => s.id)
      .join(" | ")} |`,
    `| --- |${" --- |".repeat(results.systems.filter((s) => s.id !== "ceiling").length)}`,
  );
  for (const [metric, label] of breakdown) {
    out.push(
      `| ${label} | ${results.systems
        .filter((s) => s.id !== "ceiling")
        .map((s) => esc(commandBreakdown(results, metric, s.id, 0)))
        .join(" | ")} |`,
    );
  }
  out.push("");
  out.push("## Environment", "");
  out.push(`- CPU: ${env.cpu}, ${env.cpus} CPUs, ${env.memoryGiB} GiB; Linux ${env.kernel}`);
  out.push(`- Placement: ${env.placement}`);
  out.push(
    `- Node ${env.node}; Redis ${env.redis}${env.redisBenchmark ? `; ${env.redisBenchmark}` : ""}; a fresh redis-server (no persistence) per system`,
  );
  const c = cfg.counts;
  out.push(
    `- Counts: bulk ${fmt(c.bulk, 0)} (batches of ${c.bulkBatch}), single ${fmt(c.single1, 0)} (1 in flight) and ${fmt(c.single50, 0)} (50 in flight), drain ${fmt(c.drain, 0)} at concurrency ${c.drainConcurrency.join("/")}, ` +
      `latency ${fmt(c.latencyJobs, 0)} jobs at ${fmt(c.latencyRate, 0)}/s with concurrency ${c.latencyConcurrency}, scheduled ${fmt(c.scheduled, 0)} with concurrency ${c.scheduledConcurrency} and a ${c.pollSeconds} s poll interval for pollers`,
  );
  out.push(
    "",
    "## Optimisations",
    "",
    "Each optimisation with its before and after, measured as it was made: [optimisations.md](optimisations.md). `bridge-compare`, when present, is another tree's `src/` in this same run (its description says which).",
  );
  if (results.notes.length) out.push("", "## Notes", "", ...results.notes.map((n) => `- ${n}`));
  if (results.errors.length)
    out.push(
      "",
      "## Errors",
      "",
      ...results.errors.map((e) => `- ${e.system} / ${e.scenario}: ${e.message.split("\n")[0]}`),
    );
  out.push("");
  return out.join("\n");
}
