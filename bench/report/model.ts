// The figures a run produces: one metric per row, runs per system, and which
// redis-benchmark figure bounds it.
import { summarize, type Summary } from "../measure/summary.js";

export type Better = "higher" | "lower";

export interface MetricDef {
  id: string;
  section: string;
  label: string;
  unit: string;
  better: Better;
  /** The redis-benchmark metric that bounds this one (ours / ceiling). */
  ceiling?: string;
  digits: number;
  /** Context, not a comparison: no ratios. */
  noRatio?: boolean;
}

const m = (
  id: string,
  section: string,
  label: string,
  unit: string,
  better: Better,
  digits: number,
  ceiling?: string,
): MetricDef => ({
  id,
  section,
  label,
  unit,
  better,
  digits,
  ...(ceiling ? { ceiling } : {}),
});

export function metricDefs(c: {
  bulk: number;
  drain: number;
  scheduled: number;
  latencyRate: number;
  bulkBatch: number;
  drainConcurrency: number[];
}): MetricDef[] {
  const k = (n: number) => n.toLocaleString("en-US");
  const defs: MetricDef[] = [
    m("enqueue.bulk", "Enqueue", `bulk enqueue, ${k(c.bulk)} jobs`, "jobs/s", "higher", 0, "ceiling.lpush.bulk"),
    m("enqueue.single1", "Enqueue", "single enqueue, 1 in flight", "jobs/s", "higher", 0, "ceiling.lpush.c1"),
    m("enqueue.single50", "Enqueue", "single enqueue, 50 in flight", "jobs/s", "higher", 0, "ceiling.lpush.c50"),
  ];
  for (const cc of c.drainConcurrency)
    defs.push(
      m(
        `drain.c${cc}`,
        "Drain",
        `drain ${k(c.drain)} jobs, concurrency ${cc}`,
        "jobs/s",
        "higher",
        0,
        `ceiling.brpop.c${cc}`,
      ),
    );
  defs.push(
    m("latency.p50", "Latency", `enqueue-to-start p50 at ${k(c.latencyRate)} jobs/s`, "ms", "lower", 3),
    m("latency.p99", "Latency", `enqueue-to-start p99 at ${k(c.latencyRate)} jobs/s`, "ms", "lower", 3),
    m("latency.p999", "Latency", `enqueue-to-start p99.9 at ${k(c.latencyRate)} jobs/s`, "ms", "lower", 3),
    m(
      "scheduled.burst",
      "Scheduled",
      `${k(c.scheduled)} scheduled jobs due at once: due to last run`,
      "ms",
      "lower",
      0,
    ),
  );
  const per = (id: string, label: string) => {
    defs.push(m(`cmds.${id}`, "Redis commands per job", label, "cmds/job", "lower", 3));
  };
  per("enqueue.bulk", "bulk enqueue");
  per("enqueue.single1", "single enqueue, 1 in flight");
  per("enqueue.single50", "single enqueue, 50 in flight");
  for (const cc of c.drainConcurrency) per(`drain.c${cc}`, `drain, concurrency ${cc}`);
  per("latency", "latency run (enqueue + work)");
  per("scheduled", "scheduled burst (promote + work)");
  const cpu = (id: string, label: string) => defs.push(m(`cpu.${id}`, "CPU per job", label, "µs/job", "lower", 1));
  cpu("enqueue.bulk", "client, bulk enqueue");
  cpu("enqueue.single1", "client, single enqueue, 1 in flight");
  cpu("enqueue.single50", "client, single enqueue, 50 in flight");
  for (const cc of c.drainConcurrency) cpu(`drain.c${cc}`, `worker, drain, concurrency ${cc}`);
  cpu("scheduled", "worker, scheduled burst");
  const rss = (id: string, label: string) => defs.push(m(`rss.${id}`, "Peak RSS (VmHWM)", label, "MB", "lower", 1));
  for (const cc of c.drainConcurrency) rss(`drain.c${cc}`, `worker, drain, concurrency ${cc}`);
  rss("latency", "worker, latency run");
  rss("scheduled", "worker, scheduled burst");
  rss("enqueue", "client, enqueue runs");
  defs.push({
    ...m("foreign", "Machine", "CPU used by other processes during measured windows", "% of all CPUs", "lower", 1),
    noRatio: true,
  });
  return defs;
}

/** redis-benchmark figures, shown beside the metric they bound. */
export const CEILING_DEFS: Array<{ id: string; label: string; unit: string }> = [
  { id: "ceiling.lpush.c1", label: "LPUSH, 1 client", unit: "jobs/s" },
  { id: "ceiling.lpush.c50", label: "LPUSH, 50 clients", unit: "jobs/s" },
  { id: "ceiling.lpush.bulk", label: "LPUSH of 1,000 elements, 1 client", unit: "elements/s" },
  { id: "ceiling.brpop.c1", label: "BRPOP, 1 client", unit: "jobs/s" },
  { id: "ceiling.brpop.c10", label: "BRPOP, 10 clients", unit: "jobs/s" },
  { id: "ceiling.brpop.c50", label: "BRPOP, 50 clients", unit: "jobs/s" },
];

export interface RunRecord {
  value: number;
  warmup: boolean;
  /** Whatever else this run measured (command breakdown, /proc CPU, counts). */
  detail?: Record<string, unknown>;
}

export interface SystemInfo {
  id: string;
  label: string;
  ours: boolean;
  /** Ours with Sidekiq's basic fetch (the 1.01 commands-per-job target applies). */
  basicFetch?: boolean;
  description: string;
}

export class Results {
  readonly runs = new Map<string, Map<string, RunRecord[]>>();
  readonly systems: SystemInfo[] = [];
  readonly notes: string[] = [];
  readonly errors: Array<{ system: string; scenario: string; message: string }> = [];

  add(system: string, metric: string, value: number, warmup: boolean, detail?: Record<string, unknown>): void {
    if (!Number.isFinite(value)) return;
    let bySystem = this.runs.get(metric);
    if (!bySystem) this.runs.set(metric, (bySystem = new Map()));
    let list = bySystem.get(system);
    if (!list) bySystem.set(system, (list = []));
    list.push({ value, warmup, ...(detail ? { detail } : {}) });
  }

  summary(system: string, metric: string): Summary | undefined {
    const list = this.runs
      .get(metric)
      ?.get(system)
      ?.filter((r) => !r.warmup);
    return list?.length ? summarize(list.map((r) => r.value)) : undefined;
  }

  median(system: string, metric: string): number | undefined {
    return this.summary(system, metric)?.median;
  }
}
