// What `npm run bench` measures, from the environment:
//   (default)                 counts sized so the whole run takes about 15 minutes on
//                             the project's 2-CPU machine (drains of 20,000 jobs)
//   BENCH_FULL=1              the full counts (drains of 100,000 jobs): about an hour there
//   BENCH_QUICK=1             smaller counts, one run, no warm-up (a smoke run)
//   BENCH_DRAIN_JOBS=n        override the drain size of whichever of the above
//   BENCH_SYSTEMS=a,b         systems by id or group (bridge, ruby, bullmq, ceiling); default all
//   BENCH_SCENARIOS=a,b       enqueue, drain, latency, scheduled, ceiling; default all
//   BENCH_RUNS, BENCH_WARMUPS measured runs (5) and warm-up runs (1) per figure
//   BENCH_OUT                 where latest.json / latest.md go (default bench/results; quick runs: a temp dir)
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BENCH_DIR } from "./lib/build.js";

export const SCENARIOS = ["ceiling", "enqueue", "drain", "latency", "scheduled"] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface Counts {
  /** Bulk enqueue: jobs per run, and jobs per round trip (Sidekiq's push_bulk default). */
  bulk: number;
  bulkBatch: number;
  /** Single enqueue with 1 and with 50 pushes in flight: jobs per run. */
  single1: number;
  single50: number;
  /** Drain: pre-enqueued jobs per run, and the worker concurrencies. */
  drain: number;
  drainConcurrency: number[];
  /** Latency: jobs per run at a fixed rate (jobs/s), worker concurrency. */
  latencyJobs: number;
  latencyRate: number;
  latencyConcurrency: number;
  /** Scheduled burst: jobs all due at once, worker concurrency, poll interval (s) for systems that poll. */
  scheduled: number;
  scheduledConcurrency: number;
  pollSeconds: number;
  /** redis-benchmark requests per run: single-element LPUSH/BRPOP at 1 client, at 10-50 clients, variadic LPUSH of `bulkBatch`. */
  ceilingOne: number;
  ceilingMany: number;
  ceilingBulk: number;
}

export interface BenchConfig {
  quick: boolean;
  /** Which counts: "quick", "standard" (default) or "full" (drains of 100,000). */
  size: "quick" | "standard" | "full";
  runs: number;
  warmups: number;
  /** Warm-up runs use this share of a measured run's job count (at least 1,000 jobs). */
  warmupScale: number;
  systems: string[] | "all";
  scenarios: ReadonlySet<ScenarioName>;
  counts: Counts;
  outDir: string;
  /** The report files are named after this (latest.json, latest.md). */
  outName: string;
}

/** The full counts: drains of 100,000 jobs. */
const FULL: Counts = {
  bulk: 100_000,
  bulkBatch: 1000,
  single1: 10_000,
  single50: 20_000,
  drain: 100_000,
  drainConcurrency: [1, 10, 50],
  // 12 s a run at 1,000 jobs/s: five measured runs are a minute of steady
  // state per system, after a warm-up run in the same worker process.
  latencyJobs: 12_000,
  latencyRate: 1000,
  latencyConcurrency: 10,
  scheduled: 10_000,
  scheduledConcurrency: 10,
  pollSeconds: 0.2,
  ceilingOne: 10_000,
  ceilingMany: 100_000,
  ceilingBulk: 200,
};

/** The default: the same figures with fewer jobs where a run would take longest. */
const STANDARD: Counts = {
  ...FULL,
  single1: 3_000,
  single50: 10_000,
  drain: 20_000,
};

const QUICK: Counts = {
  ...FULL,
  bulk: 10_000,
  single1: 1_000,
  single50: 2_000,
  drain: 5_000,
  latencyJobs: 1_000,
  scheduled: 2_000,
  ceilingOne: 2_000,
  ceilingMany: 10_000,
  ceilingBulk: 20,
};

function int(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === "") return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number, not "${v}"`);
  return n;
}

export function loadConfig(env = process.env): BenchConfig {
  const flag = (v: string | undefined) => v === "1" || v === "true";
  const quick = flag(env.BENCH_QUICK);
  const full = !quick && flag(env.BENCH_FULL);
  const list = (v: string | undefined) => (v ?? "").split(/[\s,]+/).filter(Boolean);
  const scenarios = list(env.BENCH_SCENARIOS);
  for (const s of scenarios)
    if (!(SCENARIOS as readonly string[]).includes(s))
      throw new Error(`BENCH_SCENARIOS: unknown scenario "${s}" (${SCENARIOS.join(", ")})`);
  const systems = list(env.BENCH_SYSTEMS);
  const outDir =
    env.BENCH_OUT ?? (quick ? mkdtempSync(join(tmpdir(), "sidekiq-bridge-bench-")) : join(BENCH_DIR, "results"));
  return {
    quick,
    size: quick ? "quick" : full ? "full" : "standard",
    runs: int("BENCH_RUNS", quick ? 1 : 5) || 1,
    warmups: int("BENCH_WARMUPS", quick ? 0 : 1),
    warmupScale: quick ? 1 : 0.2,
    systems: systems.length ? systems : "all",
    scenarios: new Set((scenarios.length ? scenarios : SCENARIOS) as ScenarioName[]),
    counts: {
      ...(quick ? QUICK : full ? FULL : STANDARD),
      ...(env.BENCH_DRAIN_JOBS ? { drain: int("BENCH_DRAIN_JOBS", 0) || 1 } : {}),
    },
    outDir,
    outName: "latest",
  };
}

/** Job count of run `i` (warm-ups first): warm-ups are scaled down to keep the whole run short. */
export function countFor(cfg: BenchConfig, n: number, warmup: boolean): number {
  return warmup ? Math.min(n, Math.max(1000, Math.round(n * cfg.warmupScale))) : n;
}
