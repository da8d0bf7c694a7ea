// The process bench/instructions-per-job.ts counts: one job at a time, either
// a worker draining at concurrency 1 (basic fetch: one fetch in flight) or a
// client pushing one job per round trip. After BENCH_WARMUP jobs and again
// after BENCH_JOBS more it reads process.ppid: callgrind, told to dump its
// counts on entering uv_os_getppid, then holds the measured jobs' count alone.
// Through the root entry, so the parent can swap in another tree's src/.
import { Client, Worker } from "../../src/index.js";

const warmup = Number(process.env.BENCH_WARMUP);
const n = Number(process.env.BENCH_JOBS);
const url = process.env.BENCH_REDIS_URL!;
const quiet = { debug() {}, info() {}, warn: console.error, error: console.error };
/** A mark for callgrind (--dump-before=uv_os_getppid). */
const mark = () => process.ppid;

if (process.env.BENCH_ROLE === "push") {
  const client = new Client({ redis: url, dialect: "8.1.7" });
  const Noop = client.job<[number]>("BenchNoopJob", { queue: "bench" });
  for (let i = 0; i < warmup; i++) await Noop.performAsync(i);
  mark();
  for (let i = 0; i < n; i++) await Noop.performAsync(i);
  mark();
  process.exit(0);
} else {
  let ran = 0;
  const w = new Worker({
    redis: url,
    dialect: "8.1.7",
    queues: ["bench"],
    concurrency: 1,
    fetch: "basic",
    // One lane throughout: basic fetch opens spare lanes once fetches are
    // slow, as they are under valgrind on a loaded machine, and the commands
    // a job would then depend on the load.
    fetchLanes: 1,
    scheduler: false,
    logger: quiet,
  });
  w.register<[number]>("BenchNoopJob", () => {
    ran++;
    if (ran === warmup) mark();
    if (ran === warmup + n) {
      mark();
      process.exit(0);
    }
  });
  await w.start();
}
