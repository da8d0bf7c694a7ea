// How soon a new worker reaches full speed: one long-lived Worker drains
// rounds of jobs (released at once by a RENAME, as in timed-drain.ts), and
// each round's jobs/s and this process's CPU a job are printed, then the CPU
// the first half of the rounds took and the median CPU a job of the second
// half. V8 optimises a function once it has run enough, so code that runs
// once a fetch (every 10 jobs at concurrency 10) is the last to get fast.
// The worker is the compiled one in dist/ (run `npm run build` first), so
// what is measured is what `sidekiq-bridge worker` runs; BENCH_DIST names
// another build to compare (a checkout's dist/ with its node_modules).
//
//   node --max-semi-space-size=2 --heap-growing-percent=50 --import tsx bench/warm-up.ts
//   BENCH_FETCH=basic BENCH_CONCURRENCY=50 BENCH_ROUNDS=16 BENCH_JOBS=4000 ...
//   BENCH_DIST=/tmp/old/dist ...                       # the same, another build
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Redis } from "ioredis";
import { startRedis } from "../harness/redis-server.js";
import { stageJobs } from "./lib/timed-drain.js";
import { median } from "./measure/summary.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 16);
const JOBS = Number(process.env.BENCH_JOBS ?? 4_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 10);
const FETCH = process.env.BENCH_FETCH === "basic" ? "basic" : "reliable";
const DIST = resolve(process.env.BENCH_DIST ?? new URL("../dist", import.meta.url).pathname);

const load = (path: string) => import(pathToFileURL(`${DIST}/${path}`).href);
const { Client } = (await load("core/client/client.js")) as typeof import("../src/core/client/client.js");
const { Worker } = (await load("assembly/worker.js")) as typeof import("../src/assembly/worker.js");
const { consoleLogger } = (await load("core/logging/logger.js")) as typeof import("../src/core/logging/logger.js");

const server = await startRedis({});
try {
  const redis = new Redis(server.url);
  const client = new Client({ redis: server.url, dialect: 8 });
  const worker = new Worker({
    redis: server.url,
    dialect: 8,
    queues: ["warm"],
    concurrency: CONCURRENCY,
    fetch: FETCH,
    scheduler: false,
    logger: consoleLogger({ level: "warn" }),
    skipDefaultJobLogging: true,
  });
  let ran = 0;
  let target = 0;
  let finished: () => void = () => {};
  worker.register("WarmJob", () => {
    if (++ran === target) finished();
  });
  await worker.start();
  const cpus: number[] = [];
  const rates: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    await stageJobs(client, "WarmJob", "warm-hold", JOBS);
    target = ran + JOBS;
    const done = new Promise<void>((res) => (finished = res));
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await redis.rename("queue:warm-hold", "queue:warm");
    await done;
    const seconds = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    cpus.push((c.user + c.system) / JOBS);
    rates.push(JOBS / seconds);
    process.stderr.write(`round ${r + 1}: ${rates[r]!.toFixed(0)} jobs/s, ${cpus[r]!.toFixed(1)} µs CPU/job\n`);
  }
  await worker.stop();
  await client.close();
  redis.disconnect();
  const half = ROUNDS >> 1;
  const firstMs = (cpus.slice(0, half).reduce((a, b) => a + b, 0) * JOBS) / 1000;
  console.log(`${FETCH} fetch, concurrency ${CONCURRENCY}, ${ROUNDS} rounds of ${JOBS} jobs (${DIST})`);
  console.log(`  CPU for the first ${half * JOBS} jobs: ${firstMs.toFixed(0)} ms`);
  console.log(
    `  then (median of the rest): ${median(cpus.slice(half)).toFixed(1)} µs CPU/job, ${median(rates.slice(half)).toFixed(0)} jobs/s`,
  );
} finally {
  await server.stop();
}
