// Retry-all at scale: seeds N retries in Sidekiq 8's exact format (default
// 1,000,000, over 10 queues) on a throwaway redis-server, then runs
// `RetrySet#bulk("retry")` with a client middleware chain on (a pass-through
// link and a trace-propagation-like link that writes `traceparent` into every
// job) in a child process, so its peak RSS is the action's alone. Reports the
// wall time, jobs/s, peak RSS, and how long one batch held Redis (EVALSHA's
// mean from INFO commandstats, its worst from SLOWLOG).
// Targets: 1,000,000 in <= 13 s, peak RSS <= 150 MB.
//
//   npx tsx bench/bulk-actions.ts [N] [--batch B] [--no-middleware]
//
// For another bench (bench:ops) against its own Redis: seedRetries() and
// timeBulkAction().
import { fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { startRedis } from "../harness/redis-server.js";
import { SidekiqApi } from "../src/core/api/sidekiq-api.js";
import type { BulkSummary } from "../src/core/api/bulk-action.js";
import type { EntryAction, JobSetName } from "../src/core/api/sorted-entry.js";
import { Client } from "../src/core/client/client.js";
import type { ClientMiddleware } from "../src/core/client/middleware.js";

const TARGET_S = 13;
const TARGET_RSS_MB = 150;

/** What Sidekiq 8.1.7 writes for a failed job waiting in `retry` (times in integer ms). */
function retryPayload(i: number, nowMs: number, queue: string): string {
  return JSON.stringify({
    retry: true,
    queue,
    class: `HardJob${i % 20}`,
    args: [i, { user_id: i, note: "sidekiq-bridge bench" }],
    jid: randomBytes(12).toString("hex"),
    created_at: nowMs - 3_600_000,
    enqueued_at: nowMs - 600_000,
    failed_at: nowMs - 590_000,
    error_message: `undefined method 'name' for nil (job ${i})`,
    error_class: "NoMethodError",
    retry_count: i % 10,
    retried_at: nowMs - 60_000,
  });
}

/** Seeds `n` retries (10 queues, distinct scores from now on) in pipelines of 5,000 ZADDs. */
export async function seedRetries(redis: Redis, n: number, queues = 10): Promise<void> {
  const nowMs = Date.now();
  const nowS = nowMs / 1000;
  for (let start = 0; start < n; start += 5000) {
    const pipe = redis.pipeline();
    const args: string[] = [];
    for (let i = start; i < Math.min(n, start + 5000); i++)
      args.push(String(nowS + i / 1000), retryPayload(i, nowMs, `bench-${i % queues}`));
    pipe.zadd("retry", ...args);
    await pipe.exec();
  }
}

/** The chain the target is measured with: a pass-through link, and one that writes a trace context into each job. */
export function benchMiddleware(): ClientMiddleware[] {
  const passThrough: ClientMiddleware = (ctx, next) => (ctx.className === "" ? undefined : next());
  // Ids as OpenTelemetry's RandomIdGenerator makes them (Math.random, not the crypto pool).
  const hex = (n: number) => {
    let s = "";
    for (let i = 0; i < n; i += 8) s += ((Math.random() * 2 ** 32) >>> 0).toString(16).padStart(8, "0");
    return s;
  };
  const traceparent: ClientMiddleware = (ctx, next) => {
    ctx.job.traceparent = `00-${hex(32)}-${hex(16)}-01`;
    return next();
  };
  return [passThrough, traceparent];
}

/** Times one bulk action in this process; `peakRssMb` is this process's peak so far. */
export async function timeBulkAction(opts: {
  url: string;
  set?: JobSetName;
  action?: EntryAction;
  middleware?: boolean;
  batchSize?: number;
  onProgress?: (s: BulkSummary) => void;
}): Promise<{ summary: BulkSummary; seconds: number; cpuSeconds: number; peakRssMb: number }> {
  const client = new Client({
    redis: opts.url,
    dialect: 8,
    validate: false,
    middleware: opts.middleware === false ? [] : benchMiddleware(),
  });
  const api = new SidekiqApi({ redis: opts.url, client });
  try {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const summary = await api.set(opts.set ?? "retry").bulk(opts.action ?? "retry", {
      ...(opts.batchSize !== undefined ? { batchSize: opts.batchSize } : {}),
      ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
    });
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    return {
      summary,
      seconds,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
    };
  } finally {
    await api.close();
    await client.close();
  }
}

/** Redis's CPU seconds so far (INFO cpu: used_cpu_user + used_cpu_sys). */
async function redisCpu(redis: Redis): Promise<number> {
  const info = await redis.info("cpu");
  const f = (k: string) => Number((new RegExp(`${k}:([\\d.]+)`).exec(info) ?? [])[1] ?? 0);
  return f("used_cpu_user") + f("used_cpu_sys");
}

/** EVALSHA's calls and mean µs (INFO commandstats), and the slowest calls SLOWLOG kept. */
async function scriptHold(redis: Redis): Promise<{ calls: number; meanUs: number; maxUs: number; over5ms: number }> {
  const info = await redis.info("commandstats");
  const m = /cmdstat_evalsha:calls=(\d+),usec=\d+,usec_per_call=([\d.]+)/.exec(info);
  const log = (await redis.slowlog("GET", 100_000)) as Array<[number, number, number, string[]]>;
  const evals = log.filter((e) => /^eval/i.test(String(e[3]?.[0])));
  return {
    calls: m ? Number(m[1]) : 0,
    meanUs: m ? Number(m[2]) : 0,
    maxUs: Math.max(0, ...evals.map((e) => Number(e[2]))),
    over5ms: evals.filter((e) => Number(e[2]) > 5000).length,
  };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const n = Number(argv.find((a) => /^\d+$/.test(a)) ?? 1_000_000);
  const batchAt = argv.indexOf("--batch");
  const batchSize = batchAt >= 0 ? Number(argv[batchAt + 1]) : undefined;
  const middleware = !argv.includes("--no-middleware");
  const server = await startRedis({ databases: 1 });
  const redis = new Redis(server.url);
  try {
    let t0 = performance.now();
    await seedRetries(redis, n);
    const bytes = Number((/used_memory:(\d+)/.exec(await redis.info("memory")) ?? [])[1]);
    console.log(
      `seeded ${n.toLocaleString("en")} retries in ${((performance.now() - t0) / 1000).toFixed(1)} s (Redis ${(bytes / 2 ** 20).toFixed(0)} MB)`,
    );
    // Every script call slower than 1 ms is logged, to find the slowest batch.
    await redis.config("SET", "slowlog-log-slower-than", "1000");
    await redis.config("SET", "slowlog-max-len", "100000");
    await redis.slowlog("RESET");
    await redis.config("RESETSTAT");
    t0 = performance.now();
    const redisCpu0 = await redisCpu(redis);
    const child = fork(fileURLToPath(import.meta.url), ["--child"], {
      env: {
        ...process.env,
        BULK_URL: server.url,
        BULK_MW: middleware ? "1" : "0",
        BULK_BATCH: String(batchSize ?? ""),
      },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    type Result = Awaited<ReturnType<typeof timeBulkAction>>;
    const result = await new Promise<Result>((ok, bad) => {
      child.on("message", (m) => ok(m as Result));
      child.on("exit", (code) => (code === 0 ? undefined : bad(new Error(`child exited ${code}`))));
    });
    const redisCpuS = (await redisCpu(redis)) - redisCpu0;
    const hold = await scriptHold(redis);
    const queued = await Promise.all(Array.from({ length: 10 }, (_, q) => redis.llen(`queue:bench-${q}`)));
    const s = result.summary;
    const total = queued.reduce((a, b) => a + b, 0);
    console.log(
      [
        `retry-all of ${n.toLocaleString("en")} (middleware ${middleware ? "on: 2 links" : "off"}, batch ${batchSize ?? "default"}):`,
        `  ${result.seconds.toFixed(1)} s (${Math.round(n / result.seconds).toLocaleString("en")} jobs/s), target <= ${TARGET_S} s at 1,000,000`,
        `  peak RSS ${result.peakRssMb.toFixed(0)} MB, target <= ${TARGET_RSS_MB} MB`,
        `  moved ${s.moved}, gone ${s.gone}, refused ${s.refused}, failed ${s.failed}, in ${s.batches} batches; queues hold ${total}, retry holds ${await redis.zcard("retry")}`,
        `  CPU: Node ${result.cpuSeconds.toFixed(1)} s, Redis ${redisCpuS.toFixed(1)} s (${((1e6 * redisCpuS) / Math.max(1, hold.calls)).toFixed(0)} µs of Redis CPU a batch, reads included): on two idle cores the pipelined action takes about the larger`,
        `  one batch held Redis ${(hold.meanUs / 1000).toFixed(2)} ms on average (${hold.calls} EVALSHA, wall time inside Redis: grows when the machine is loaded), worst ${(hold.maxUs / 1000).toFixed(2)} ms, ${hold.over5ms} over 5 ms`,
        `  load average at the end: ${loadavg()
          .map((l) => l.toFixed(1))
          .join(" ")}`,
        `  wall time including the child's start: ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      ].join("\n"),
    );
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

async function child(): Promise<void> {
  const batch = process.env.BULK_BATCH ? Number(process.env.BULK_BATCH) : undefined;
  const r = await timeBulkAction({
    url: process.env.BULK_URL!,
    middleware: process.env.BULK_MW === "1",
    ...(batch !== undefined ? { batchSize: batch } : {}),
  });
  process.send!(r, () => process.exit(0));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  (process.argv.includes("--child") ? child() : main()).catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
