// The job metrics and the fetch durations are counted in plain numbers and
// handed to prom-client at scrape time; a scrape must read exactly as if
// every job and fetch had gone through prom-client's own Counter#inc and
// Histogram#observe.
import * as prom from "prom-client";
import { describe, expect, it } from "vitest";
import { instrumentWorker, type MetricsOptions } from "../../src/tools/metrics/prometheus.js";
import { WorkerEvents } from "../../src/core/server/events.js";
import type { Worker } from "../../src/assembly/worker.js";

const JOB_METRICS = [
  "sidekiq_jobs_processed_total",
  "sidekiq_jobs_failed_total",
  "sidekiq_jobs_retried_total",
  "sidekiq_jobs_dead_total",
  "sidekiq_job_duration_seconds",
];
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

type Step =
  | { e: "job:success" | "job:failure"; className: string; queue: string; elapsed: number }
  | { e: "job:retry" | "job:dead"; className: string; queue: string };

/** The job metrics fed as they were before: prom-client children per class and queue, inc/observe per job. */
function reference(registry: prom.Registry, buckets = DURATION_BUCKETS): (steps: Step[]) => void {
  const registers = [registry];
  const labelNames = ["class", "queue"];
  const [processed, failed, retried, dead] = JOB_METRICS.slice(0, 4).map(
    (name) => new prom.Counter({ name, help: help(name), labelNames, registers }),
  );
  const name = JOB_METRICS[4]!;
  const duration = new prom.Histogram({ name, help: help(name), labelNames, buckets, registers });
  return (steps) => {
    for (const s of steps) {
      const l = { class: s.className, queue: s.queue };
      if (s.e === "job:success" || s.e === "job:failure") {
        processed!.labels(l).inc();
        if (s.e === "job:failure") failed!.labels(l).inc();
        duration.labels(l).observe(s.elapsed);
      } else (s.e === "job:retry" ? retried! : dead!).labels(l).inc();
    }
  };
}

const HELP: Record<string, string> = {
  sidekiq_jobs_processed_total: "Jobs this worker ran (succeeded or failed), by class and queue.",
  sidekiq_jobs_failed_total: "Jobs whose handler raised, by class and queue.",
  sidekiq_jobs_retried_total: "Failed jobs scheduled for a retry, by class and queue.",
  sidekiq_jobs_dead_total: "Failed jobs that died (dead set) or were discarded, by class and queue.",
  sidekiq_job_duration_seconds: "How long handlers (with their server middleware) ran, by class and queue.",
};
const help = (name: string) => HELP[name]!;

/** instrumentWorker on a stand-in worker; returns the events its listeners hear (a listener's error fails the test). */
async function instrument(registry: prom.Registry, opts: MetricsOptions): Promise<WorkerEvents> {
  const events = new WorkerEvents();
  events.onListenerError = (e) => {
    throw e;
  };
  const worker = { on: (e: never, fn: never) => events.on(e, fn), slots: () => [] } as unknown as Worker;
  await instrumentWorker(worker, { ...opts, registry });
  return events;
}

async function instrumented(registry: prom.Registry, buckets?: number[]) {
  const events = await instrument(registry, { durationBuckets: buckets });
  const feed = (steps: Step[]) => {
    for (const s of steps) events.emit(s.e, { jid: "j", tid: "t", record: undefined, error: undefined, ...s } as never);
  };
  return feed;
}

const scrape = (r: prom.Registry) => Promise.all(JOB_METRICS.map((n) => r.getSingleMetricAsString(n)));

/** Jobs over three classes and queues, failures first seen after successes, sums that round in floats. */
function steps(n: number, seed: number): Step[] {
  let x = seed;
  const rnd = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const classes = ["HardJob", 'Quote"Job', "Ünïcode::Job"];
  const queues = ["default", "low", "a,b:c"];
  const out: Step[] = [];
  for (let i = 0; i < n; i++) {
    const className = classes[Math.floor(rnd() * 3)]!;
    const queue = queues[Math.floor(rnd() * 3)]!;
    // Sidekiq's elapsed: ms rounded, in seconds; some on a bound exactly, some past the last.
    const elapsed = [0.005, 0.1, 300, 301.5, Math.round(rnd() * 2000) / 1000][Math.floor(rnd() * 5)]!;
    const r = rnd();
    if (r < 0.7) out.push({ e: "job:success", className, queue, elapsed });
    else if (r < 0.85) out.push({ e: "job:failure", className, queue, elapsed });
    else out.push({ e: r < 0.95 ? "job:retry" : "job:dead", className, queue });
  }
  return out;
}

describe("job metrics counted outside prom-client", () => {
  it("a scrape reads byte for byte as prom-client fed job by job (counters, buckets, sums, order)", async () => {
    for (const seed of [1, 2, 3]) {
      const jobs = steps(3000, seed);
      const ref = new prom.Registry();
      reference(ref)(jobs);
      const ours = new prom.Registry();
      (await instrumented(ours))(jobs);
      expect(await scrape(ours)).toEqual(await scrape(ref));
      expect(await ours.getMetricsAsJSON().then((m) => m.filter((x) => JOB_METRICS.includes(x.name)))).toEqual(
        await ref.getMetricsAsJSON(),
      );
    }
  });

  it("the metrics are registered in the same order, with the same HELP and TYPE, and nothing before a job", async () => {
    const ours = new prom.Registry();
    const feed = await instrumented(ours);
    const ref = new prom.Registry();
    reference(ref);
    expect(
      ours
        .getMetricsAsArray()
        .map((m) => (m as unknown as { name: string }).name)
        .slice(0, 5),
    ).toEqual(JOB_METRICS);
    expect(await scrape(ours)).toEqual(await scrape(ref));
    // Scrapes between jobs, then more jobs: still the same as prom-client's.
    const jobs = steps(500, 7);
    const ref2 = new prom.Registry();
    reference(ref2)(jobs);
    feed(jobs.slice(0, 200));
    await ours.metrics();
    feed(jobs.slice(200));
    expect(await scrape(ours)).toEqual(await scrape(ref2));
  });

  it("custom buckets (one given twice) and an OpenMetrics registry read the same", async () => {
    const buckets = [0.001, 0.1, 0.1, 2];
    const jobs = steps(1000, 11);
    // The typings leave out the constructor's content type.
    const openMetrics = () =>
      new (prom.Registry as unknown as new (t: string) => prom.Registry)(prom.Registry.OPENMETRICS_CONTENT_TYPE);
    const ref = openMetrics();
    reference(ref, buckets)(jobs);
    const ours = openMetrics();
    (await instrumented(ours, buckets))(jobs);
    const text = await ours.metrics();
    const refText = await ref.metrics();
    for (const name of JOB_METRICS) {
      const block = (t: string) => t.split("\n").filter((l) => l.includes(name.replace(/_total$/, "")));
      expect(block(text)).toEqual(block(refText));
    }
  });

  it("a registry's resetMetrics starts the job counts over, as prom-client's own metrics do", async () => {
    const jobs = steps(800, 5);
    const ours = new prom.Registry();
    const feed = await instrumented(ours);
    feed(jobs.slice(0, 300));
    ours.resetMetrics();
    feed(jobs.slice(300));
    const ref = new prom.Registry();
    const feedRef = reference(ref);
    feedRef(jobs.slice(0, 300));
    ref.resetMetrics();
    feedRef(jobs.slice(300));
    expect(await scrape(ours)).toEqual(await scrape(ref));
  });
});

const FETCH = "sidekiq_fetch_duration_seconds";
const FETCH_HELP = "Fetch round trips (a blocking fetch waits up to 2 s on empty queues), by capsule.";
const FETCH_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

interface Fetch {
  capsule: string;
  seconds: number;
}

/** Fetches over three capsules: some on a bound exactly, some past the last (a blocking fetch on empty queues). */
function fetches(n: number, seed: number): Fetch[] {
  let x = seed;
  const rnd = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const capsules = ["default", "critical", 'we"ird\\capsule'];
  const out: Fetch[] = [];
  for (let i = 0; i < n; i++) {
    const capsule = capsules[Math.floor(rnd() * 3)]!;
    const seconds = [0.0005, 0.1, 2.5, 2.0003, rnd() * 0.004, rnd() * 0.0004][Math.floor(rnd() * 6)]!;
    out.push({ capsule, seconds });
  }
  return out;
}

/** The fetch histogram fed as it was before: prom-client's observe per fetch. */
function fetchReference(registry: prom.Registry, buckets = FETCH_BUCKETS): (f: Fetch[]) => void {
  const h = new prom.Histogram({
    name: FETCH,
    help: FETCH_HELP,
    labelNames: ["capsule"],
    buckets,
    registers: [registry],
  });
  return (f) => {
    for (const { capsule, seconds } of f) h.observe({ capsule }, seconds);
  };
}

async function fetchInstrumented(registry: prom.Registry, buckets?: number[]): Promise<(f: Fetch[]) => void> {
  const events = await instrument(registry, { fetchBuckets: buckets });
  return (f) => {
    for (const { capsule, seconds } of f) events.emit("fetch", { capsule, seconds, jobs: 1 });
  };
}

describe("fetch durations counted outside prom-client", () => {
  it("a scrape reads byte for byte as prom-client fed fetch by fetch (buckets, sums, capsule order)", async () => {
    for (const seed of [1, 2, 3]) {
      const f = fetches(3000, seed);
      const ref = new prom.Registry();
      fetchReference(ref)(f);
      const ours = new prom.Registry();
      (await fetchInstrumented(ours))(f);
      expect(await ours.getSingleMetricAsString(FETCH)).toEqual(await ref.getSingleMetricAsString(FETCH));
      const json = async (r: prom.Registry) => (await r.getMetricsAsJSON()).filter((m) => m.name === FETCH);
      expect(await json(ours)).toEqual(await json(ref));
    }
  });

  it("reads the same before any fetch, between scrapes, with custom buckets, and after resetMetrics", async () => {
    const buckets = [0.001, 0.01, 0.01, 1];
    const f = fetches(900, 9);
    const ours = new prom.Registry();
    const feed = await fetchInstrumented(ours, buckets);
    const ref = new prom.Registry();
    const feedRef = fetchReference(ref, buckets);
    const same = async () =>
      expect(await ours.getSingleMetricAsString(FETCH)).toEqual(await ref.getSingleMetricAsString(FETCH));
    await same();
    feed(f.slice(0, 300));
    feedRef(f.slice(0, 300));
    await same();
    ours.resetMetrics();
    ref.resetMetrics();
    await same();
    feed(f.slice(300));
    feedRef(f.slice(300));
    await same();
  });
});
