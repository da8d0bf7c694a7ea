// `OPS_ONLY=busy npm run bench:ops`: only Busy at 2,000 processes running
// 20,000 jobs (the rows with the 100 ms target), beside Ruby's /busy, in
// rounds: each round times our dashboard and, with OPS_COMPARE_DIST, a second
// dashboard built from another tree (an A/B of a change) request by request
// in turn, then Ruby's page. Each dashboard's CPU per request comes from
// /proc, and so does the share of the CPUs other processes used meanwhile,
// which moves wall times on a shared machine.
//
//   OPS_ROUNDS=3             rounds (medians per round, and the median of the rounds)
//   OPS_COMPARE_DIST=<dir>   a dist/ built from another tree (`npx tsc -p tsconfig.build.json` there)
import { cpus } from "node:os";
import type { Redis } from "ioredis";
import { Interference } from "../measure/interference.js";
import { procCpuUs } from "../measure/proc.js";
import { median } from "../measure/summary.js";
import { className, fleetSize, seedProcesses, seedQueues } from "./seed.js";
import { Dashboard, type RubySide, type Timing } from "./sides.js";

const BUSY_TARGET_MS = 100;
const RATIO_TARGET = 10;

interface Side {
  name: string;
  dash: Dashboard;
}

interface PageRound {
  ms: Record<string, number>;
  cpuMs: Record<string, number>;
  ruby: number;
  otherCpu?: number;
}

/** Median ms and CPU ms per request of each side over `runs` GETs taken in turn (after one warm-up each). */
async function interleaved(sides: Side[], path: string, runs: number) {
  const times = sides.map(() => [] as number[]);
  const cpu = sides.map(() => 0);
  for (const s of sides) await s.dash.get(path);
  for (let i = 0; i < runs; i++)
    for (const [k, s] of sides.entries()) {
      const c0 = procCpuUs(s.dash.pid) ?? 0;
      const t = performance.now();
      await s.dash.get(path);
      times[k]!.push(performance.now() - t);
      cpu[k]! += (procCpuUs(s.dash.pid) ?? 0) - c0;
    }
  return sides.map((_, k) => ({ ms: median(times[k]!), cpuMs: cpu[k]! / runs / 1000 }));
}

export async function busyOnly(
  redis: Redis,
  url: string,
  ruby: RubySide,
  opts: { scale: number; runs: number; rounds: number; rubyBudgetS: number; compareDist?: string },
): Promise<string> {
  const size = fleetSize(opts.scale);
  // The sorted sets' sizes are ZCARDs, whatever their length: only the queues and the fleet cost Busy's requests.
  await seedQueues(redis, size);
  await seedProcesses(redis, size.processes, size.jobsPerProcess, size.queues);
  const sides: Side[] = [{ name: "ours", dash: await Dashboard.start(url) }];
  if (opts.compareDist) sides.push({ name: "compare", dash: await Dashboard.start(url, opts.compareDist) });
  const paths = ["/busy", "/busy?only=jobs", "/busy?only=processes", `/busy?class=${encodeURIComponent(className(7))}`];
  const rubyOf = (p: string) => (p.startsWith("/busy?class=") ? "/busy" : p);
  const rounds = new Map<string, PageRound[]>(paths.map((p) => [p, []]));
  try {
    for (let r = 0; r < opts.rounds; r++) {
      for (const p of paths) {
        const others = new Interference([...sides.map((s) => s.dash.pid), process.pid]);
        const got = await interleaved(sides, p, opts.runs);
        const round: PageRound = { ms: {}, cpuMs: {}, ruby: NaN, otherCpu: others.foreignPercent() };
        sides.forEach((s, k) => {
          round.ms[s.name] = got[k]!.ms;
          round.cpuMs[s.name] = got[k]!.cpuMs;
        });
        rounds.get(p)!.push(round);
        console.log(
          `  round ${r + 1} ${p}: ${sides.map((s) => `${s.name} ${round.ms[s.name]!.toFixed(0)} ms (CPU ${round.cpuMs[s.name]!.toFixed(0)} ms)`).join(", ")}, other processes ${round.otherCpu?.toFixed(0)}% CPU`,
        );
      }
      const rubyPaths = [...new Set(paths.map(rubyOf))];
      const out = await ruby.run(url, {
        OPS_MODE: "pages",
        OPS_PATHS: JSON.stringify(rubyPaths),
        OPS_RUNS: String(opts.runs),
        OPS_PAGE_BUDGET_S: String(opts.rubyBudgetS),
      });
      for (const p of paths) {
        const t: Timing = out.pages![rubyOf(p)]!;
        rounds.get(p)!.at(-1)!.ruby = t.median_ms;
      }
      console.log(
        `  round ${r + 1} Ruby: ${rubyPaths.map((p) => `${p} ${out.pages![p]!.median_ms.toFixed(0)} ms`).join(", ")}`,
      );
    }
  } finally {
    for (const s of sides) await s.dash.stop();
  }
  const names = sides.map((s) => s.name);
  const head = `| page | round | ${names.map((n) => `${n} ms | ${n} CPU ms`).join(" | ")} | Ruby ms | Ruby ÷ ours |${opts.compareDist ? " Ruby ÷ compare | compare ÷ ours |" : ""} other processes' CPU |`;
  const rule = `|---|---|${names.map(() => "---:|---:").join("|")}|---:|---:|${opts.compareDist ? "---:|---:|" : ""}---:|`;
  const lines: string[] = [];
  for (const p of paths) {
    const rs = rounds.get(p)!;
    const row = (
      label: string,
      ms: Record<string, number>,
      cpu: Record<string, number>,
      rubyMs: number,
      other?: number,
    ) =>
      `| \`${p}\` | ${label} | ${names.map((n) => `${ms[n]!.toFixed(0)} | ${cpu[n]!.toFixed(0)}`).join(" | ")} | ${rubyMs.toFixed(0)} | ${(rubyMs / ms.ours!).toFixed(1)}× |${opts.compareDist ? ` ${(rubyMs / ms.compare!).toFixed(1)}× | ${(ms.compare! / ms.ours!).toFixed(2)} |` : ""} ${other === undefined ? "–" : `${other.toFixed(0)}%`} |`;
    rs.forEach((r, i) => lines.push(row(String(i + 1), r.ms, r.cpuMs, r.ruby, r.otherCpu)));
    const med = (f: (r: PageRound) => number) => median(rs.map(f));
    const ms = Object.fromEntries(names.map((n) => [n, med((r) => r.ms[n]!)]));
    const cpu = Object.fromEntries(names.map((n) => [n, med((r) => r.cpuMs[n]!)]));
    lines.push(
      row(
        "**median**",
        ms,
        cpu,
        med((r) => r.ruby),
        med((r) => r.otherCpu ?? 0),
      ),
    );
  }
  const verdict = paths
    .slice(0, 3)
    .map((p) => {
      const rs = rounds.get(p)!;
      const ours = median(rs.map((r) => r.ms.ours!));
      const ratio = median(rs.map((r) => r.ruby / r.ms.ours!));
      return `\`${p}\`: ${ours.toFixed(0)} ms (${ours <= BUSY_TARGET_MS ? `≤ ${BUSY_TARGET_MS} ms ok` : `> ${BUSY_TARGET_MS} ms MISSED`}), ${ratio.toFixed(1)}× Ruby (${ratio >= RATIO_TARGET ? "≥ 10× ok" : "≥ 10× MISSED"})`;
    })
    .join("; ");
  return [
    `### Busy at ${size.processes.toLocaleString("en-US")} processes running ${(size.processes * size.jobsPerProcess).toLocaleString("en-US")} jobs (${opts.rounds} rounds of ${opts.runs} requests per side, interleaved; ${cpus().length} CPUs)\n`,
    `${head}\n${rule}\n${lines.join("\n")}\n`,
    `ours: this tree's dist/${opts.compareDist ? "; compare: the dist/ of OPS_COMPARE_DIST" : ""}. CPU ms: the dashboard process's own CPU per request (/proc, GC threads included). Other processes' CPU: the share of all CPUs used by processes other than the dashboards and the bench during our requests. Ruby ÷ ours on the rounds' medians; the verdict takes the median of each round's ratio: ${verdict}.\n`,
  ].join("\n");
}
