// One fetch lane or two, with jobs that do something: drains through the
// public Worker on a fresh Redis, each lane count in turn in rounds in one
// process (the first round is a warm-up), for one kind of job:
//   noop    returns at once
//   sleep1  awaits a 1 ms timer (a job waiting on I/O)
//   spin50  computes for 50 µs
//   io      awaits one Redis GET on a connection of its own
//   mixed   a quarter await a 0-2 ms timer, the rest compute for 20 µs
// Per lane count: jobs/s and CPU µs a job (process.cpuUsage, so Redis's own
// CPU is not in it), medians of the measured rounds.
//
//   npx tsx bench/fetch-lanes.ts                               # basic fetch, no-op jobs, c10, lanes 1 and 2
//   BENCH_JOB=mixed BENCH_CONCURRENCY=50 npx tsx bench/fetch-lanes.ts
//   BENCH_FETCH=reliable BENCH_LANES=1,2 BENCH_JOBS=40000 BENCH_ROUNDS=5 ...
import type { Redis } from "ioredis";
import { startRedis } from "../harness/redis-server.js";
import { timedDrain, type TimedDrain } from "./lib/timed-drain.js";
import { median } from "./measure/summary.js";

const JOBS = Number(process.env.BENCH_JOBS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 10);
const JOB = process.env.BENCH_JOB ?? "noop";
const FETCH = process.env.BENCH_FETCH === "reliable" ? "reliable" : "basic";
const LANES = (process.env.BENCH_LANES ?? "1,2").split(",").map(Number);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const spin = (us: number) => {
  const until = performance.now() + us / 1000;
  while (performance.now() < until);
};

type Job = (i: number, redis: Redis) => unknown;
const JOBS_BY_KIND: Record<string, Job> = {
  noop: () => {},
  sleep1: () => sleep(1),
  spin50: () => spin(50),
  io: (_i, redis) => redis.get("bench:io"),
  mixed: (i) => (i % 4 === 0 ? sleep(i % 3) : spin(20)),
};
const chosen = JOBS_BY_KIND[JOB];
if (!chosen) throw new Error(`BENCH_JOB must be one of ${Object.keys(JOBS_BY_KIND).join(", ")}, not ${JOB}`);
const job: Job = chosen;

const drain = (url: string, lanes: number): Promise<TimedDrain> =>
  timedDrain({
    url,
    jobs: JOBS,
    queue: "lanes-bench",
    worker: { concurrency: CONCURRENCY, fetch: FETCH, fetchLanes: lanes },
    ...(JOB === "noop" ? {} : { job }),
  });

const server = await startRedis();
const url = `${server.url}/0`;
const figures = new Map<number, TimedDrain[]>(LANES.map((l) => [l, []]));
try {
  for (let round = 0; round <= ROUNDS; round++)
    for (const lanes of LANES) {
      const f = await drain(url, lanes);
      if (round > 0) figures.get(lanes)!.push(f);
    }
} finally {
  await server.stop();
}
console.log(
  `Node ${process.version}, ${FETCH} fetch, ${JOBS.toLocaleString()} ${JOB} jobs, concurrency ${CONCURRENCY}, ` +
    `${ROUNDS} rounds after a warm-up, medians: ` +
    LANES.map((l) => {
      const fs = figures.get(l)!;
      return `${l} lane${l === 1 ? "" : "s"} ${Math.round(median(fs.map((f) => f.rate)))} jobs/s, ${median(fs.map((f) => f.cpuUs)).toFixed(1)} µs CPU a job`;
    }).join(" | "),
);
