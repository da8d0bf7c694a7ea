// Where the cost of observability goes, without Redis: the worker's per-job
// path (processJob: parse, route, job logger, server middleware, handler,
// stats) run in-process on ready payloads, ten at a time (a fetch's worth,
// then a turn of the event loop, as in a drain at concurrency 10), with each
// part on in turn. CPU µs per job by process.cpuUsage, variants interleaved,
// medians. What it leaves out (fetch, acknowledgement, ioredis) is the same
// with observability on or off; bench/observability.ts measures the drain.
//
//   npx tsx bench/observability-parts.ts
//   BENCH_PARTS_JOBS=50000 BENCH_PARTS_ROUNDS=9 BENCH_PARTS=off,tracing npx tsx bench/observability-parts.ts
import { Writable } from "node:stream";
import * as api from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import { Registry } from "prom-client";
import { instrumentWorker } from "../src/tools/metrics/prometheus.js";
import { JobLogger } from "../src/core/logging/job-logger.js";
import { consoleLogger } from "../src/core/logging/logger.js";
import { processJob, type ProcessorDeps, type ServerMiddleware } from "../src/core/server/processor.js";
import type { Worker } from "../src/assembly/worker.js";
import { tracingServerMiddleware } from "../src/tools/tracing/opentelemetry.js";
import { offlineProcessorDeps, offlineWork } from "../harness/processor-deps.js";
import { median } from "./measure/summary.js";

const JOBS = Number(process.env.BENCH_PARTS_JOBS ?? 30_000);
const ROUNDS = Number(process.env.BENCH_PARTS_ROUNDS ?? 7);
const BATCH = 10;
const VARIANTS = (process.env.BENCH_PARTS ?? "off,logs,metrics,tracing,tracing-no-context,tracing-sampled,all").split(
  ",",
);

// An exporter that drops spans: what is measured is the bridge's work, not a collector's.
const dropSpans = () => [new BatchSpanProcessor({ export: (_s, done) => done({ code: 0 }), shutdown: async () => {} })];
const tracer = new BasicTracerProvider({ spanProcessors: dropSpans() });
/** "tracing-sampled": 1% of the jobs' traces recorded, as a fleet of short jobs would sample. */
const sampledTracer = new BasicTracerProvider({
  sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.01) }),
  spanProcessors: dropSpans(),
});
const contextManager = new AsyncLocalStorageContextManager();
api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());

/** Jobs as Ruby's 8.1.7 client writes them; with `traced`, as one pushed inside a span (traceparent before enqueued_at). */
function payloads(traced: boolean): string[] {
  const hex = (n: number, w: number) => n.toString(16).padStart(w, "0");
  return Array.from({ length: JOBS }, (_, i) => {
    const jid = hex(i, 24);
    const tp = traced ? `"traceparent":"00-${hex(i + 1, 32)}-${hex(i + 1, 16)}-01",` : "";
    return `{"retry":true,"queue":"obs-bench","class":"NoopJob","args":[${i}],"jid":"${jid}","created_at":1763880000000,${tp}"enqueued_at":1763880000001}`;
  });
}

/** A stream that keeps nothing (the cost measured is making the lines, not the disk). */
const sink = new Writable({ write: (_c, _e, cb) => cb() });

async function variant(name: string): Promise<{ deps: ProcessorDeps; done: () => void; traced: boolean }> {
  const on = (part: string) => name === "all" || name.startsWith(part);
  const logger = consoleLogger({ level: on("logs") ? "info" : "warn", format: "json", stream: sink });
  const middleware: ServerMiddleware[] = [];
  let done = () => {};
  if (on("tracing")) {
    if (name !== "tracing-no-context") {
      contextManager.enable();
      api.context.setGlobalContextManager(contextManager);
      done = () => {
        api.context.disable();
        contextManager.disable();
      };
    }
    middleware.push(
      tracingServerMiddleware({ api, tracerProvider: name === "tracing-sampled" ? sampledTracer : tracer }),
    );
  }
  const deps = offlineProcessorDeps({
    handlers: { NoopJob: () => {} },
    logger,
    middleware,
    lines: new JobLogger({ logger, skip: !on("logs") }),
  });
  if (on("metrics")) {
    const { events } = deps.config;
    const fake = { on: (e: never, fn: never) => events.on(e, fn), slots: () => [] } as unknown as Worker;
    await instrumentWorker(fake, { registry: new Registry() });
  }
  return { deps, done, traced: on("tracing") };
}

const plain = payloads(false);
const traced = payloads(true);

async function run(name: string): Promise<number> {
  const { deps, done, traced: t } = await variant(name);
  const jobs = t ? traced : plain;
  let tid = 0;
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < JOBS; i += BATCH) {
    const batch: Array<Promise<unknown>> = [];
    for (let k = i; k < i + BATCH && k < JOBS; k++) {
      const job = jobs[k]!;
      const uow = { queue: "queue:obs-bench", queueName: "obs-bench", job, raw: Buffer.from(job), field: undefined };
      batch.push(processJob(offlineWork(uow, (++tid).toString(36)), deps));
    }
    await Promise.all(batch);
    // A fetch round trip: timers and setImmediate (the log flush, span export) get their turn.
    await new Promise((r) => setImmediate(r));
  }
  const cpu = process.cpuUsage(cpu0);
  done();
  return (cpu.user + cpu.system) / JOBS;
}

const results = new Map<string, number[]>(VARIANTS.map((v) => [v, []]));
for (const v of VARIANTS) await run(v); // warm-up
for (let r = 0; r < ROUNDS; r++) for (const v of VARIANTS) results.get(v)!.push(await run(v));
const base = median(results.get("off") ?? [0]);
console.log(`processJob, ${JOBS} jobs, ${BATCH} at a time, ${ROUNDS} rounds (median CPU µs per job)`);
for (const [v, xs] of results) {
  const m = median(xs);
  console.log(`  ${v.padEnd(20)} ${m.toFixed(2).padStart(7)} µs  (+${(m - base).toFixed(2)} over off)`);
}
