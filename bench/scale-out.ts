// What one Redis can feed: drains of no-op jobs by the real CLI,
// `sidekiq-bridge worker --processes P` (P = 1: the plain single process),
// on one fresh Redis, with basic and reliable fetch. Per configuration:
// jobs/s, the worker processes' CPU per job (/proc, every worker process),
// Redis's own CPU per job (INFO cpu: used_cpu_sys + used_cpu_user, and the
// main thread's alone) and Redis commands per job (INFO commandstats). CPU
// time per job holds on a loaded machine where jobs/s does not: bench/README.md
// turns it into the model for larger machines. Nothing is pinned: the worker
// processes and Redis share the machine's cores, as they would on one box.
//
//   npm run build && npx tsx bench/scale-out.ts        # 50,000 jobs, 1 warm-up + 3 runs per configuration
//   BENCH_JOBS=20000 BENCH_RUNS=1 BENCH_PROCESSES=1,2 BENCH_FETCH=basic BENCH_CONCURRENCY=10 npx tsx bench/scale-out.ts
//   BENCH_OUT=/tmp/x npx tsx bench/scale-out.ts       # where scale-out.md / .json go (default bench/results)
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { type RedisServer, startRedis } from "../harness/redis-server.js";
import { REPO_ROOT } from "../harness/local-backend.js";
import { Client } from "../src/core/client/client.js";
import { WORKER_NODE_FLAGS } from "../src/tools/cli/node-flags.js";
import { countCommands, readCommandStats, resetCommandStats } from "./measure/commandstats.js";
import { Interference } from "./measure/interference.js";
import { procCpuUs } from "./measure/proc.js";
import { median } from "./measure/summary.js";

const JOBS = Number(process.env.BENCH_JOBS ?? 50_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const PUSH_JOBS = Math.min(JOBS, 20_000);
const WARMUP_JOBS = Math.max(1000, Math.round(JOBS / 5));
const PROCESSES = (process.env.BENCH_PROCESSES ?? "1,2").split(",").map(Number);
const FETCHES = (process.env.BENCH_FETCH ?? "basic,reliable").split(",");
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 10);
const OUT = process.env.BENCH_OUT ?? join(REPO_ROOT, "bench", "results");
const MAIN = join(REPO_ROOT, "dist", "assembly", "main.js");
const HANDLERS = join(REPO_ROOT, "bench", "lib", "scale-out-handlers.mjs");
// Commands this script sends inside a window (besides commandstats' own).
const OWN_COMMANDS = ["keys", "type", "llen", "hlen", "exists"];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Run {
  jobs: number;
  seconds: number;
  jobsPerSec: number;
  workerCpuUsPerJob: number;
  redisCpuUsPerJob: number;
  redisMainThreadCpuUsPerJob: number | undefined;
  commandsPerJob: number;
  /** Redis's CPU for the bulk push of the jobs (Client#pushBulk), before the drain. */
  redisEnqueueCpuUsPerJob: number;
  byCommand: Record<string, number>;
  load1: number;
  /** Share of all CPUs that processes other than the workers and Redis used during the drain. */
  otherCpuPercent: number | undefined;
}

interface Config {
  fetch: string;
  processes: number;
  concurrency: number;
  runs: Run[];
}

async function redisCpu(redis: Redis): Promise<{ total: number; main: number | undefined }> {
  const info = await redis.info("cpu");
  const f = (k: string) => {
    const m = new RegExp(`^${k}:([\\d.]+)`, "m").exec(info);
    return m ? Number(m[1]) * 1e6 : undefined;
  };
  const main =
    f("used_cpu_sys_main_thread") !== undefined
      ? f("used_cpu_sys_main_thread")! + f("used_cpu_user_main_thread")!
      : undefined;
  return { total: f("used_cpu_sys")! + f("used_cpu_user")!, main };
}

/** Jobs still in a working list or hash of reliable fetch. */
async function held(redis: Redis): Promise<number> {
  let sum = 0;
  for (const k of await redis.keys("bridge:w*:*")) {
    const type = await redis.type(k);
    sum += type === "list" ? await redis.llen(k) : type === "hash" ? await redis.hlen(k) : 0;
  }
  return sum;
}

function doneCount(dir: string): number {
  let sum = 0;
  for (const f of readdirSync(dir)) sum += Number(readFileSync(join(dir, f), "utf8")) || 0;
  return sum;
}

function workerPids(identities: string[]): number[] {
  return identities.map((id) => Number(id.split(":").at(-2)));
}

async function drain(
  redis: Redis,
  client: Client,
  doneDir: string,
  pids: number[],
  /** Redis, this script and the supervisor: not "other" processes. */
  ourPids: number[],
  n: number,
): Promise<Run> {
  // Staged in another queue, where the idle workers cannot see them, then released with one RENAME.
  const e0 = await redisCpu(redis);
  for (let i = 0; i < n; i += 10_000) {
    const size = Math.min(10_000, n - i);
    await client.pushBulk({
      class: "BenchNoopJob",
      queue: "staged",
      args: Array.from({ length: size }, (_, j) => [i + j]),
    });
  }
  const e1 = await redisCpu(redis);
  await sleep(300);
  const base = doneCount(doneDir);
  const cpu0 = pids.map((p) => procCpuUs(p) ?? NaN);
  await resetCommandStats(redis);
  const r0 = await redisCpu(redis);
  const others = new Interference([...pids, ...ourPids]);
  const t0 = performance.now();
  await redis.rename("queue:staged", "queue:bench");
  while (doneCount(doneDir) < base + n) await sleep(5);
  const seconds = (performance.now() - t0) / 1000;
  const otherCpuPercent = others.foreignPercent();
  // The window closes once the last acknowledgements are in (reliable fetch).
  while ((await redis.exists("queue:bench")) || (await held(redis)) > 0) await sleep(10);
  const stats = countCommands(await readCommandStats(redis), OWN_COMMANDS);
  const r1 = await redisCpu(redis);
  const cpu1 = pids.map((p) => procCpuUs(p) ?? NaN);
  const workerUs = cpu1.reduce((s, c, i) => s + c - cpu0[i]!, 0);
  const byCommand: Record<string, number> = {};
  for (const [c, k] of Object.entries(stats.byCommand)) byCommand[c] = k / n;
  return {
    jobs: n,
    seconds,
    jobsPerSec: n / seconds,
    workerCpuUsPerJob: workerUs / n,
    redisCpuUsPerJob: (r1.total - r0.total) / n,
    redisMainThreadCpuUsPerJob: r1.main !== undefined && r0.main !== undefined ? (r1.main - r0.main) / n : undefined,
    commandsPerJob: stats.total / n,
    redisEnqueueCpuUsPerJob: (e1.total - e0.total) / n,
    byCommand,
    load1: loadavg()[0]!,
    otherCpuPercent,
  };
}

interface PushCost {
  how: string;
  redisCpuUsPerJob: number;
  commandsPerJob: number;
}

/**
 * Redis's side of enqueueing, which a steady state pays besides the drain:
 * bulk pushes, and single pushes (Client#push, what performAsync calls) one at
 * a time and 50 in flight (the client sends one tick's pushes together).
 */
async function pushCosts(redis: Redis, client: Client, n: number): Promise<PushCost[]> {
  const item = (i: number) => ({ class: "BenchNoopJob", queue: "staged", args: [i] });
  const ways: Array<[string, () => Promise<unknown>]> = [
    [
      "pushBulk, 1,000 a call",
      async () => {
        for (let i = 0; i < n; i += 1000)
          await client.pushBulk({
            class: "BenchNoopJob",
            queue: "staged",
            args: Array.from({ length: 1000 }, (_, j) => [i + j]),
          });
      },
    ],
    [
      "push, 1 in flight",
      async () => {
        for (let i = 0; i < n; i++) await client.push(item(i));
      },
    ],
    [
      "push, 50 in flight",
      async () => {
        for (let i = 0; i < n; i += 50)
          await Promise.all(Array.from({ length: 50 }, (_, j) => client.push(item(i + j))));
      },
    ],
  ];
  const out: PushCost[] = [];
  for (const [how, push] of ways) {
    await redis.flushall();
    await resetCommandStats(redis);
    const r0 = await redisCpu(redis);
    await push();
    const r1 = await redisCpu(redis);
    const stats = countCommands(await readCommandStats(redis), OWN_COMMANDS);
    out.push({
      how,
      redisCpuUsPerJob: ((r1.main ?? r1.total) - (r0.main ?? r0.total)) / n,
      commandsPerJob: stats.total / n,
    });
    console.error(
      `${how}: Redis ${out.at(-1)!.redisCpuUsPerJob.toFixed(1)} µs/job, ${out.at(-1)!.commandsPerJob.toFixed(3)} cmds/job`,
    );
  }
  return out;
}

async function measure(
  server: RedisServer,
  redis: Redis,
  client: Client,
  fetch: string,
  processes: number,
): Promise<Config> {
  const url = server.url;
  await redis.flushall();
  const doneDir = mkdtempSync(join(tmpdir(), "scale-out-done-"));
  const args = ["worker", "-q", "bench", "-c", String(CONCURRENCY), "--fetch", fetch, "--dialect", "8.1.7"];
  args.push("-r", HANDLERS, "--log-level", "warn");
  if (processes > 1) args.push("--processes", String(processes));
  const cli: ChildProcess = spawn(process.execPath, [...WORKER_NODE_FLAGS, MAIN, ...args], {
    env: { ...process.env, REDIS_URL: url, BENCH_DONE_DIR: doneDir },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const exited = new Promise<number | null>((r) => cli.on("exit", (c) => r(c)));
  try {
    let identities: string[] = [];
    for (let i = 0; identities.length < processes; i++) {
      if (i > 300) throw new Error(`${processes} worker processes did not start`);
      await sleep(100);
      identities = await redis.smembers("processes");
    }
    const pids = workerPids(identities);
    const runs: Run[] = [];
    for (let i = 0; i <= RUNS; i++) {
      const ours = [server.pid, process.pid, cli.pid!];
      const run = await drain(redis, client, doneDir, pids, ours, i === 0 ? WARMUP_JOBS : JOBS);
      if (i > 0) runs.push(run);
      const tag = i === 0 ? "warm-up" : `run ${i}`;
      console.error(
        `${fetch} P=${processes} ${tag}: ${Math.round(run.jobsPerSec)} jobs/s, worker ${run.workerCpuUsPerJob.toFixed(1)} µs/job, Redis ${run.redisCpuUsPerJob.toFixed(1)} µs/job, ${run.commandsPerJob.toFixed(3)} cmds/job, other processes ${run.otherCpuPercent?.toFixed(0)}% CPU, load ${run.load1.toFixed(2)}`,
      );
    }
    return { fetch, processes, concurrency: CONCURRENCY, runs };
  } finally {
    cli.kill("SIGTERM");
    await exited;
    rmSync(doneDir, { recursive: true, force: true });
  }
}

function report(configs: Config[], pushes: PushCost[], redisVersion: string): string {
  const m = (c: Config, f: (r: Run) => number | undefined) => {
    const xs = c.runs.map(f).filter((x): x is number => x !== undefined);
    return xs.length ? median(xs) : NaN;
  };
  const range = (c: Config, f: (r: Run) => number, d = 0) =>
    `${m(c, f).toFixed(d)} (${Math.min(...c.runs.map(f)).toFixed(d)}–${Math.max(...c.runs.map(f)).toFixed(d)})`;
  const lines = [
    "| fetch | processes × concurrency | jobs/s | worker CPU µs/job | Redis CPU µs/job (main thread) | Redis commands/job | top commands/job | other processes' CPU | load (1 min) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const c of configs) {
    const top = Object.entries(c.runs[0]!.byCommand)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4)
      .map(([k, v]) => `${k} ${v.toFixed(3)}`)
      .join(", ");
    lines.push(
      `| ${c.fetch} | ${c.processes} × ${c.concurrency} | ${range(c, (r) => r.jobsPerSec)} | ${range(c, (r) => r.workerCpuUsPerJob, 1)} | ${range(c, (r) => r.redisCpuUsPerJob, 1)} (${m(c, (r) => r.redisMainThreadCpuUsPerJob).toFixed(1)}) | ${m(c, (r) => r.commandsPerJob).toFixed(3)} | ${top} | ${m(c, (r) => r.otherCpuPercent).toFixed(0)}% | ${m(c, (r) => r.load1).toFixed(2)} |`,
    );
  }
  lines.push(
    "",
    "Model inputs (medians): one worker core runs 1e6 / worker µs per job; one Redis core (its main thread) at most",
    "1e6 / Redis µs per job, for the drain alone and with the bulk push of the same jobs (a steady state pays both).",
    "",
    "| fetch | processes | jobs/s per worker core | Redis µs/job: drain + bulk push | one Redis core's limit, jobs/s: drain only / with the push | worker cores that saturate it (with the push) |",
    "| --- | --- | --- | --- | --- | --- |",
  );
  for (const c of configs) {
    const perCore = 1e6 / m(c, (r) => r.workerCpuUsPerJob);
    const drainUs = m(c, (r) => r.redisMainThreadCpuUsPerJob ?? r.redisCpuUsPerJob);
    const pushUs = m(c, (r) => r.redisEnqueueCpuUsPerJob);
    const limit = 1e6 / (drainUs + pushUs);
    lines.push(
      `| ${c.fetch} | ${c.processes} | ${Math.round(perCore)} | ${drainUs.toFixed(1)} + ${pushUs.toFixed(1)} | ${Math.round(1e6 / drainUs)} / ${Math.round(limit)} | ${(limit / perCore).toFixed(1)} |`,
    );
  }
  lines.push(
    "",
    `Redis's side of the push, ${PUSH_JOBS} jobs each (one run):`,
    "",
    "| push | Redis CPU µs/job (main thread) | Redis commands/job |",
    "| --- | --- | --- |",
    ...pushes.map((p) => `| ${p.how} | ${p.redisCpuUsPerJob.toFixed(1)} | ${p.commandsPerJob.toFixed(3)} |`),
  );
  lines.push(
    "",
    `${JOBS} no-op jobs per run, ${RUNS} measured runs after a warm-up of ${WARMUP_JOBS}; median (min–max).`,
    `Machine: ${cpus().length} CPUs (${cpus()[0]?.model ?? "?"}), shared with other work, nothing pinned; Node ${process.version}; Redis ${redisVersion}; ${new Date().toISOString()}.`,
  );
  return lines.join("\n");
}

if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);
const server = await startRedis();
const redis = new Redis(server.url);
const client = new Client({ redis: server.url, dialect: "8.1.7" });
const configs: Config[] = [];
try {
  const redisVersion = /redis_version:(\S+)/.exec(await redis.info("server"))?.[1] ?? "?";
  const pushes = await pushCosts(redis, client, PUSH_JOBS);
  for (const fetch of FETCHES) for (const p of PROCESSES) configs.push(await measure(server, redis, client, fetch, p));
  const md = report(configs, pushes, redisVersion);
  console.log(md);
  mkdirSync(OUT, { recursive: true });
  writeFileSync(
    join(OUT, "scale-out.json"),
    JSON.stringify({ jobs: JOBS, runs: RUNS, pushes, configs }, null, 2) + "\n",
  );
  writeFileSync(join(OUT, "scale-out.md"), `# Scale-out: worker processes on one Redis\n\n${md}\n`);
} finally {
  await client.close();
  redis.disconnect();
  await server.stop();
}
