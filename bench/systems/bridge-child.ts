// The process the harness measures for sidekiq-bridge: its Client (role
// "client") or its Worker (role "worker"), on queue `bench`, job class
// BenchNoopJob (the same name as ruby-fixtures/lib/bench_jobs.rb). Bundled by
// bench/lib/build.ts and run with plain `node`, pinned by the harness.
// Through the root entry, which every tree of the package has, so
// BENCH_BRIDGE_COMPARE can swap in a tree of another layout.
import { Client, Worker, type WorkerOptions } from "../../src/index.js";
import type { Logger } from "../../src/core/logging/logger.js";
import { JobCounter, runChild, serveClient, serveWorker } from "../lib/protocol.js";

const url = process.env.BENCH_REDIS_URL!;
const role = process.env.BENCH_ROLE;
const quiet: Logger = {
  debug() {},
  info() {},
  warn: (m) => console.error(`warn: ${m}`),
  error: (m) => console.error(`error: ${m}`),
};

async function client(): Promise<void> {
  const sidekiq = new Client({ redis: url, dialect: "8.1.7" });
  const Noop = sidekiq.job<[number]>("BenchNoopJob", { queue: "bench" });
  await sidekiq.profile("bench");
  await serveClient({
    bulk(n, batch) {
      const args = Array.from({ length: n }, (_, i) => [i]);
      return () => sidekiq.pushBulk({ class: "BenchNoopJob", queue: "bench", args, batchSize: batch });
    },
    one: (arg) => Noop.performAsync(arg),
  });
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
  await serveWorker(counter);
  await w.stop();
}

await runChild(role === "worker" ? worker : client);
