// The process the harness measures for sidekiq-bridge: its Client (role
// "client") or its Worker (role "worker"), on queue `bench`, job class
// BenchNoopJob (the same name as ruby-fixtures/lib/bench_jobs.rb). Bundled by
// bench/lib/build.ts and run with plain `node`, pinned by the harness.
import { Client } from "../../src/client/client.js";
import { Worker, type WorkerOptions } from "../../src/server/worker.js";
import type { Logger } from "../../src/server/logger.js";
import { commands, cpuUs, emit, JobCounter, nowMs, paced, withInflight } from "../lib/protocol.js";

const url = process.env.BENCH_REDIS_URL!;
const role = process.env.BENCH_ROLE;
const quiet: Logger = { debug() {}, info() {}, warn: (m) => console.error(`warn: ${m}`), error: (m) => console.error(`error: ${m}`) };

async function client(): Promise<void> {
  const sidekiq = new Client({ redis: url, dialect: "8.1.7" });
  const Noop = sidekiq.job<[number]>("BenchNoopJob", { queue: "bench" });
  await sidekiq.profile("bench");
  emit({ type: "ready", pid: process.pid, runtime: `node ${process.version}` });
  for await (const cmd of commands()) {
    if (cmd.op === "exit") break;
    const c0 = cpuUs();
    if (cmd.op === "bulk") {
      const args = Array.from({ length: cmd.n }, (_, i) => [i]);
      const t0 = nowMs();
      await sidekiq.pushBulk({ class: "BenchNoopJob", queue: "bench", args, batchSize: cmd.batch });
      emit({ type: "result", ms: nowMs() - t0, n: cmd.n, cpuUs: cpuUs() - c0 });
    } else if (cmd.op === "single") {
      const t0 = nowMs();
      await withInflight(cmd.n, cmd.inflight, (i) => Noop.performAsync(i));
      emit({ type: "result", ms: nowMs() - t0, n: cmd.n, cpuUs: cpuUs() - c0 });
    } else if (cmd.op === "paced") {
      const t0 = nowMs();
      const lateMs = await paced(cmd.n, cmd.rate, (t) => Noop.performAsync(t));
      emit({ type: "result", ms: nowMs() - t0, n: cmd.n, cpuUs: cpuUs() - c0, lateMs });
    }
  }
  await sidekiq.close();
}

async function worker(): Promise<void> {
  const counter = new JobCounter();
  const extra = JSON.parse(process.env.BENCH_WORKER_OPTIONS ?? "{}") as Partial<WorkerOptions>;
  const poll = process.env.BENCH_POLL;
  const w = new Worker({
    redis: url,
    dialect: "8.1.7",
    queues: ["bench"],
    concurrency: Number(process.env.BENCH_CONCURRENCY ?? 10),
    logger: quiet,
    ...(poll ? { pollIntervalAverage: Number(poll) } : {}),
    ...extra,
  });
  w.register<[unknown]>("BenchNoopJob", (args) => counter.tick(args[0]));
  await w.start();
  emit({ type: "ready", pid: process.pid, runtime: `node ${process.version}` });
  for await (const cmd of commands()) {
    if (cmd.op === "exit") break;
    if (cmd.op === "expect") counter.arm(cmd.n, cmd.latency);
  }
  await w.stop();
}

try {
  await (role === "worker" ? worker() : client());
  process.exit(0);
} catch (e) {
  emit({ type: "error", message: (e as Error).stack ?? String(e) });
  process.exit(1);
}
