// Prometheus metrics with prom-client (an optional peer dependency, loaded
// only when metrics are asked for): what this worker does (jobs, durations,
// slots, fetch round trips) and what the fleet's Redis holds (queues, sets,
// processes), read through the Sidekiq API at scrape time.
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type * as Prom from "prom-client";
import type { SidekiqApi } from "../../core/api/sidekiq-api.js";
import type { WorkerEventName, WorkerListener } from "../../core/server/events.js";
import { type JobCount, JobTallies } from "./job-tally.js";
import { KeyedHistogram } from "./plain-histogram.js";
import { loadPromClient } from "./prom-client.js";

/** Options of the Prometheus metrics: the registry, a name prefix, the fleet gauges' Redis. */
export interface MetricsOptions {
  /** Where the metrics go (default: a new Registry). Pass prom-client's `register` to share the app's. */
  registry?: Prom.Registry;
  /** Buckets of sidekiq_job_duration_seconds, in seconds. */
  durationBuckets?: number[];
  /** Buckets of sidekiq_fetch_duration_seconds, in seconds. */
  fetchBuckets?: number[];
}

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** The job counters, per class and queue: what each counts, its name and help. */
const JOB_COUNTERS: ReadonlyArray<[JobCount, string, string]> = [
  ["processed", "sidekiq_jobs_processed_total", "Jobs this worker ran (succeeded or failed), by class and queue."],
  ["failed", "sidekiq_jobs_failed_total", "Jobs whose handler raised, by class and queue."],
  ["retried", "sidekiq_jobs_retried_total", "Failed jobs scheduled for a retry, by class and queue."],
  ["dead", "sidekiq_jobs_dead_total", "Failed jobs that died (dead set) or were discarded, by class and queue."],
];
const FETCH_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * What the metrics read of a worker: its events and its slots. A Worker is
 * one; naming only these keeps the metrics tool below the layer that
 * assembles a worker with its add-ons.
 */
interface MeteredWorker {
  on<E extends WorkerEventName>(event: E, fn: WorkerListener<E>): unknown;
  slots(): Array<{ capsule: string; busy: number; concurrency: number }>;
}

/**
 * Counts what `worker` does from its events: jobs processed, failed, retried
 * and dead per class and queue, their duration, busy and free slots, fetch
 * round trips and errors, and whether Redis is connected. Returns the registry.
 */
export async function instrumentWorker(worker: MeteredWorker, opts: MetricsOptions = {}): Promise<Prom.Registry> {
  const prom = await loadPromClient();
  const registers = [opts.registry ?? new prom.Registry()];
  // Per class and queue in plain numbers, handed to prom-client at scrape time.
  const jobs = new JobTallies(opts.durationBuckets ?? DURATION_BUCKETS);
  for (const [what, name, help] of JOB_COUNTERS) jobs.counter(prom, what, { name, help, registers });
  jobs.histogram(prom, {
    name: "sidekiq_job_duration_seconds",
    help: "How long handlers (with their server middleware) ran, by class and queue.",
    registers,
  });
  // Per capsule in plain numbers too: a busy worker fetches thousands of times a second.
  const fetches = new KeyedHistogram("capsule", opts.fetchBuckets ?? FETCH_BUCKETS);
  fetches.histogram(prom, {
    name: "sidekiq_fetch_duration_seconds",
    help: "Fetch round trips (a blocking fetch waits up to 2 s on empty queues), by capsule.",
    registers,
  });
  const fetchErrors = new prom.Counter({
    name: "sidekiq_fetch_errors_total",
    help: "Fetches that failed (Redis unreachable or a lost reply), by capsule.",
    labelNames: ["capsule"],
    registers,
  });
  const slotsGauge = (name: string, help: string, busy: boolean) =>
    new prom.Gauge({
      name,
      help,
      labelNames: ["capsule"],
      registers,
      collect() {
        this.reset();
        for (const s of worker.slots()) this.set({ capsule: s.capsule }, busy ? s.busy : s.concurrency - s.busy);
      },
    });
  slotsGauge("sidekiq_busy_slots", "Slots running a job now, by capsule.", true);
  slotsGauge("sidekiq_free_slots", "Slots free for a job now, by capsule.", false);
  const connected = new prom.Gauge({
    name: "sidekiq_redis_connected",
    help: "1 while the worker's Redis connection is up, 0 after it was lost.",
    registers,
  });
  connected.set(1);

  worker.on("job:success", (e) => {
    const t = jobs.get(e.className, e.queue);
    jobs.inc(t, "processed");
    jobs.observe(t, e.elapsed);
  });
  worker.on("job:failure", (e) => {
    const t = jobs.get(e.className, e.queue);
    jobs.inc(t, "processed");
    jobs.inc(t, "failed");
    jobs.observe(t, e.elapsed);
  });
  worker.on("job:retry", (e) => jobs.inc(jobs.get(e.className, e.queue), "retried"));
  worker.on("job:dead", (e) => jobs.inc(jobs.get(e.className, e.queue), "dead"));
  worker.on("fetch", (e) => fetches.observe(e.capsule, e.seconds));
  worker.on("fetch:error", (e) => fetchErrors.inc({ capsule: e.capsule }));
  worker.on("redis:lost", () => connected.set(0));
  worker.on("redis:regained", () => connected.set(1));
  return registers[0]!;
}

/**
 * The fleet as Redis holds it, read through the Sidekiq API once per scrape:
 * queue sizes and latencies, the retry, scheduled and dead set sizes, and
 * live processes by version and runtime. A scrape while Redis is down reports
 * sidekiq_redis_up 0 instead of failing.
 */
export async function registerFleetMetrics(api: SidekiqApi, opts: MetricsOptions = {}): Promise<Prom.Registry> {
  const prom = await loadPromClient();
  const registers = [opts.registry ?? new prom.Registry()];
  type Snapshot = Awaited<ReturnType<typeof read>> | undefined;
  const read = async () => {
    const [stats, queues, processes] = await Promise.all([api.stats(), api.queueSummaries(), api.processes.list()]);
    return { stats, queues, processes };
  };
  // One read per scrape, shared by every gauge below.
  let current: { at: number; value: Promise<Snapshot> } | undefined;
  const snapshot = (): Promise<Snapshot> => {
    const now = Date.now();
    if (!current || now - current.at > 500) current = { at: now, value: read().catch(() => undefined) };
    return current.value;
  };
  const gauge = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    fill: (g: Prom.Gauge<L>, s: NonNullable<Snapshot>) => void,
    whenDown?: (g: Prom.Gauge<L>) => void,
  ) =>
    new prom.Gauge<L>({
      name,
      help,
      labelNames,
      registers,
      async collect() {
        const s = await snapshot();
        this.reset();
        if (s) fill(this, s);
        else whenDown?.(this);
      },
    });
  gauge(
    "sidekiq_redis_up",
    "1 when this scrape could read Redis, else 0 (the other fleet gauges are then absent).",
    [],
    (g) => g.set(1),
    (g) => g.set(0),
  );
  gauge("sidekiq_queue_size", "Jobs waiting in each queue (LLEN queue:<name>).", ["queue"], (g, s) => {
    for (const q of s.queues) g.set({ queue: q.name }, q.size);
  });
  gauge(
    "sidekiq_queue_latency_seconds",
    "Age of the oldest job in each queue, as Sidekiq's Queue#latency.",
    ["queue"],
    (g, s) => {
      for (const q of s.queues) g.set({ queue: q.name }, q.latency);
    },
  );
  gauge("sidekiq_retry_set_size", "Jobs in the retry set.", [], (g, s) => g.set(s.stats.retrySize));
  gauge("sidekiq_scheduled_set_size", "Jobs in the scheduled set.", [], (g, s) => g.set(s.stats.scheduledSize));
  gauge("sidekiq_dead_set_size", "Jobs in the dead set.", [], (g, s) => g.set(s.stats.deadSize));
  gauge("sidekiq_busy_workers", "Jobs running now across the fleet (sum of every process's busy).", [], (g, s) =>
    g.set(s.stats.workersSize),
  );
  gauge(
    "sidekiq_processes",
    "Live Sidekiq processes by version and runtime (ruby or node).",
    ["version", "runtime"],
    (g, s) => {
      for (const p of s.processes) g.inc({ version: p.version ?? "unknown", runtime: p.side });
    },
  );
  gauge(
    "sidekiq_stats_processed",
    "Sidekiq's stat:processed (every process's jobs since the stats were reset).",
    [],
    (g, s) => g.set(s.stats.processed),
  );
  gauge("sidekiq_stats_failed", "Sidekiq's stat:failed.", [], (g, s) => g.set(s.stats.failed));
  return registers[0]!;
}

/** A request handler for node:http (or Express): the registry in Prometheus text format. */
export function metricsHandler(...registries: Prom.Registry[]): (req: IncomingMessage, res: ServerResponse) => void {
  return (_req, res) => {
    void (async () => {
      try {
        const texts = await Promise.all(registries.map((r) => r.metrics()));
        res.writeHead(200, { "content-type": registries[0]?.contentType ?? "text/plain; version=0.0.4" });
        res.end(texts.join("\n"));
      } catch (e) {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(`metrics failed: ${(e as Error).message}\n`);
      }
    })();
  };
}

/** Where `serveMetrics` listens: port and host (127.0.0.1 unless told otherwise). */
export interface ServeOptions {
  port: number;
  /** Default 127.0.0.1: metrics are not meant for the open network. */
  host?: string;
}

/** An HTTP server answering GET /metrics (404 elsewhere). */
export async function serveMetrics(opts: ServeOptions, ...registries: Prom.Registry[]): Promise<Server> {
  const { createServer } = await import("node:http");
  const handle = metricsHandler(...registries);
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && (path === "/metrics" || path === "/")) handle(req, res);
    else {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found: try /metrics\n");
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host ?? "127.0.0.1", () => resolve());
  });
  return server;
}
