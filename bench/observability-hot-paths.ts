// The two per-job observability paths alone, steadier than the whole
// processJob on a loaded machine: the job logger's start and done lines (JSON
// console logger into a sink, flushed each turn of the event loop, as in a
// drain) and the job metrics' job:success listener, each against the same
// loop with it off; and the JSON formatter per line. CPU time by
// process.cpuUsage, variants interleaved, medians.
//
//   npx tsx bench/observability-hot-paths.ts
// To compare trees, bundle it (bench/lib/build.ts `bundle`, BENCH_BRIDGE_SRC=<other>/src) and run the bundles in turn.
import { Writable } from "node:stream";
import { Registry } from "prom-client";
import { instrumentWorker } from "../src/tools/metrics/prometheus.js";
import { WorkerEvents } from "../src/core/server/events.js";
import { JobLogger } from "../src/core/logging/job-logger.js";
import { JobWatch } from "../src/core/server/job-watch.js";
import { consoleLogger, formatJson } from "../src/core/logging/logger.js";
import type { Worker } from "../src/assembly/worker.js";
import { JobRecord } from "../src/core/wire/job-record.js";
import { median } from "./measure/summary.js";

const JOBS = Number(process.env.BENCH_HOT_JOBS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_HOT_ROUNDS ?? 9);
const hex = (n: number, w: number) => n.toString(16).padStart(w, "0");
const sink = new Writable({ write: (_c, _e, cb) => cb() });
const cpu = (c: NodeJS.CpuUsage) => c.user + c.system;

const records = Array.from({ length: JOBS }, (_, i) =>
  JobRecord.parse(
    `{"retry":true,"queue":"obs-bench","class":"NoopJob","args":[${i}],"jid":"${hex(i, 24)}","created_at":1763880000000,"enqueued_at":1763880000001}`,
  ),
);

function jobLogger(on: boolean, format: "json" | "text" = "json"): JobWatch {
  const logger = consoleLogger({ level: on ? "info" : "warn", format, stream: sink });
  return new JobWatch({
    jobLogger: new JobLogger({ logger, skip: !on }),
    events: new WorkerEvents(),
    errorHandlers: [],
    logger,
  });
}

/** start + done per job, ten at a time then a turn of the event loop (the log flush). */
async function logs(jl: JobWatch): Promise<number> {
  const c0 = process.cpuUsage();
  for (let i = 0; i < JOBS; i += 10) {
    for (let k = i; k < i + 10 && k < JOBS; k++) {
      const run = jl.start({
        jid: hex(k, 24),
        className: "NoopJob",
        queue: "obs-bench",
        tid: "b4k1",
        record: records[k]!,
      });
      jl.success(run, (k % 50) * 0.37);
    }
    await new Promise((r) => setImmediate(r));
  }
  return cpu(process.cpuUsage(c0)) / JOBS;
}

async function metricsEvents(on: boolean): Promise<WorkerEvents> {
  const events = new WorkerEvents();
  const worker = { on: (e: never, fn: never) => events.on(e, fn), slots: () => [] } as unknown as Worker;
  if (on) await instrumentWorker(worker, { registry: new Registry() });
  return events;
}

const CLASSES = ["NoopJob", "HardJob", "MailerJob"];
/** job:success as the job logger emits it: built only when someone listens. */
function metrics(events: WorkerEvents): number {
  const c0 = process.cpuUsage();
  for (let k = 0; k < JOBS; k++) {
    if (events.has("job:success"))
      events.emit("job:success", {
        jid: "j",
        className: CLASSES[k % 3]!,
        queue: "default",
        tid: "t",
        record: records[k]!,
        elapsed: (k % 40) / 1000,
      });
  }
  return cpu(process.cpuUsage(c0)) / JOBS;
}

/** formatJson alone, on a start and a done line (µs per line). */
function format(): number {
  let bytes = 0;
  const c0 = process.cpuUsage();
  for (let k = 0; k < JOBS; k++) {
    const jid = records[k]!.getString("jid")!;
    bytes += formatJson("info", "start", { tid: "b4k1", class: "NoopJob", jid }).length;
    bytes += formatJson("info", "done", { tid: "b4k1", class: "NoopJob", jid, elapsed: k / 1000 }).length;
  }
  if (bytes === 0) throw new Error("no lines");
  return cpu(process.cpuUsage(c0)) / JOBS / 2;
}

const variants: Record<string, () => number | Promise<number>> = {};
const [logsOff, logsOn, textOn] = [jobLogger(false), jobLogger(true), jobLogger(true, "text")];
const [metOff, metOn] = [await metricsEvents(false), await metricsEvents(true)];
variants["logs off"] = () => logs(logsOff);
variants["logs on"] = () => logs(logsOn);
variants["text logs on"] = () => logs(textOn);
variants["metrics off"] = () => metrics(metOff);
variants["metrics on"] = () => metrics(metOn);
variants["formatJson"] = format;

const results = new Map<string, number[]>(Object.keys(variants).map((v) => [v, []]));
for (const v in variants) await variants[v]!(); // warm-up
for (let r = 0; r < ROUNDS; r++) for (const v in variants) results.get(v)!.push(await variants[v]!());
const m = (v: string) => median(results.get(v)!);
console.log(`${JOBS} jobs, ${ROUNDS} rounds (median CPU µs)`);
console.log(`  job logs (start + done)   ${(m("logs on") - m("logs off")).toFixed(2)} µs per job over off`);
console.log(`  the same in text          ${(m("text logs on") - m("logs off")).toFixed(2)} µs per job over off`);
console.log(`  job metrics (job:success) ${(m("metrics on") - m("metrics off")).toFixed(3)} µs per job over off`);
console.log(`  formatJson                ${m("formatJson").toFixed(3)} µs per line`);
