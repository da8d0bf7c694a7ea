// The cost of observability on a drain: the same jobs through the public
// Worker with job logs (JSON lines to a file), Prometheus metrics (scraped
// every 100 ms during the drain) and OpenTelemetry tracing (a consumer span
// per job, batch-exported) all on, and all off. Runs alternate off/on on a
// fresh redis-server; the medians and their ratio are printed. Target: with
// all three on, throughput within 10% of all off.
//
//   npx tsx bench/observability.ts                  # 20,000 jobs, 1 warm-up + 5 runs each
//   BENCH_OBS_JOBS=100000 BENCH_OBS_RUNS=3 npx tsx bench/observability.ts
//   BENCH_OBS_PROFILE=/tmp/prof npx tsx bench/observability.ts   # a .cpuprofile of each measured drain
//   BENCH_OBS_SAMPLE=0.01 npx tsx bench/observability.ts         # tracing records 1% of jobs (a ratio sampler)
import { createWriteStream, mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as api from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { startRedis } from "../harness/redis-server.js";
import { Client } from "../src/core/client/client.js";
import { instrumentWorker } from "../src/tools/metrics/prometheus.js";
import { consoleLogger } from "../src/core/logging/logger.js";
import { Worker } from "../src/assembly/worker.js";
import { tracingClientMiddleware, tracingServerMiddleware } from "../src/tools/tracing/opentelemetry.js";
import { median } from "./measure/summary.js";

const JOBS = Number(process.env.BENCH_OBS_JOBS ?? 20_000);
const RUNS = Number(process.env.BENCH_OBS_RUNS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_OBS_CONCURRENCY ?? 10);
const QUEUE = "obs-bench";
/** What "on" turns on (default all three): e.g. BENCH_OBS_ON=tracing to see one part's cost. */
const PARTS = new Set((process.env.BENCH_OBS_ON ?? "logs,metrics,tracing").split(","));

/** A share of traces to record, as a production fleet of short jobs would (default: every span). */
const SAMPLE = process.env.BENCH_OBS_SAMPLE === undefined ? undefined : Number(process.env.BENCH_OBS_SAMPLE);
const tracer = new BasicTracerProvider({
  ...(SAMPLE === undefined ? {} : { sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(SAMPLE) }) }),
  // An exporter that drops spans: what is measured is the bridge's work, not a collector's.
  spanProcessors: [new BatchSpanProcessor({ export: (_s, done) => done({ code: 0 }), shutdown: async () => {} })],
});
const contextManager = new AsyncLocalStorageContextManager();
api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());

/** A folder for CPU profiles of the measured drains (off-N.cpuprofile, on-N.cpuprofile), for `chrome://inspect` or speedscope. */
const PROFILE = process.env.BENCH_OBS_PROFILE;
let profiled = 0;

/** The V8 CPU profiler over the drain window only (not the enqueue before it). */
async function startProfile(): Promise<{ stop(label: string): Promise<void> }> {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
  return {
    async stop(label) {
      const { profile } = await session.post("Profiler.stop");
      session.disconnect();
      mkdirSync(PROFILE!, { recursive: true });
      writeFileSync(join(PROFILE!, `${label}-${++profiled}.cpuprofile`), JSON.stringify(profile));
    },
  };
}

interface Figure {
  rate: number;
  /** This process's CPU per job over the drain, µs (steadier than the rate on a shared machine). */
  cpuUs: number;
}

async function drain(url: string, on: boolean): Promise<Figure> {
  const redis = new Redis(url);
  await redis.flushdb();
  // Enqueued where the worker cannot see them, then released at once (Sidekiq's sidekiqload method).
  const client = new Client({ redis: url, dialect: 8 });
  if (on && PARTS.has("tracing")) client.use(tracingClientMiddleware({ api, tracerProvider: tracer }));
  const hold = `${QUEUE}-hold`;
  for (let i = 0; i < JOBS; i += 1000) {
    const args = Array.from({ length: Math.min(1000, JOBS - i) }, (_, k) => [i + k]);
    if (on) for (const a of args) await client.push({ class: "NoopJob", queue: hold, args: a });
    else await client.pushBulk({ class: "NoopJob", queue: hold, args });
  }
  await client.close();

  const logFile = createWriteStream(join(tmpdir(), `obs-bench-${process.pid}.log`));
  const worker = new Worker({
    redis: url,
    dialect: 8,
    queues: [QUEUE],
    concurrency: CONCURRENCY,
    fetch: "basic",
    scheduler: false,
    ...(on && PARTS.has("logs")
      ? { logger: consoleLogger({ level: "info", format: "json", stream: logFile }) }
      : { logger: consoleLogger({ level: "warn", stream: logFile }), skipDefaultJobLogging: true }),
  });
  let ran = 0;
  let finished: () => void = () => {};
  const allDone = new Promise<void>((r) => (finished = r));
  worker.register("NoopJob", () => {
    if (++ran === JOBS) finished();
  });
  let scraper: NodeJS.Timeout | undefined;
  if (on && PARTS.has("tracing")) {
    // BENCH_OBS_NO_CONTEXT=1: spans without an async context manager, to see what it costs.
    if (!process.env.BENCH_OBS_NO_CONTEXT) {
      contextManager.enable();
      api.context.setGlobalContextManager(contextManager);
    }
    worker.use(tracingServerMiddleware({ api, tracerProvider: tracer }));
  }
  if (on && PARTS.has("metrics")) {
    const registry = await instrumentWorker(worker, { registry: new Registry() });
    scraper = setInterval(() => void registry.metrics(), 100);
  }
  await worker.start();
  const profiler = PROFILE ? await startProfile() : undefined;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await redis.rename(`queue:${hold}`, `queue:${QUEUE}`);
  await allDone;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  if (profiler) await profiler.stop(on ? "on" : "off");
  if (scraper) clearInterval(scraper);
  await worker.stop();
  if (on && PARTS.has("tracing")) {
    api.context.disable();
    contextManager.disable();
  }
  logFile.end();
  redis.disconnect();
  return { rate: JOBS / seconds, cpuUs: (cpu.user + cpu.system) / JOBS };
}

async function main(): Promise<void> {
  const server = await startRedis({});
  try {
    const off: Figure[] = [];
    const on: Figure[] = [];
    await drain(server.url, false); // warm-up
    await drain(server.url, true);
    for (let i = 0; i < RUNS; i++) {
      off.push(await drain(server.url, false));
      on.push(await drain(server.url, true));
      const f = (x: Figure) => `${x.rate.toFixed(0)} jobs/s ${x.cpuUs.toFixed(1)} µs CPU/job`;
      process.stderr.write(`run ${i + 1}: off ${f(off[i]!)}, on ${f(on[i]!)}\n`);
    }
    const rOff = median(off.map((x) => x.rate));
    const rOn = median(on.map((x) => x.rate));
    const cOff = median(off.map((x) => x.cpuUs));
    const cOn = median(on.map((x) => x.cpuUs));
    console.log(`drain of ${JOBS} jobs, concurrency ${CONCURRENCY}, basic fetch, ${RUNS} runs each (medians)`);
    console.log(`  all off:  ${rOff.toFixed(0)} jobs/s, ${cOff.toFixed(1)} µs CPU/job`);
    const sampled = PARTS.has("tracing") && SAMPLE !== undefined ? `, ${SAMPLE} of traces recorded` : "";
    console.log(`  on (${[...PARTS].join(", ")}${sampled}): ${rOn.toFixed(0)} jobs/s, ${cOn.toFixed(1)} µs CPU/job`);
    console.log(
      `  on / off: throughput ${(rOn / rOff).toFixed(3)} (target >= 0.90), CPU per job ${(cOn / cOff).toFixed(3)}`,
    );
  } finally {
    await server.stop();
  }
}

await main();
