// Server time per dashboard page on a large fleet: 200 processes (each with
// running jobs), 100,000 retries, 10,000 dead and scheduled jobs, 1,000
// queues, and an hour of metrics for 50 classes in both releases' keys.
// Measured over HTTP on loopback, from request to the last byte, on a
// throwaway redis-server. Target: every page under 300 ms.
//
//   npx tsx bench/web-pages.ts          (BENCH_WEB_RUNS=N: measured runs per page, default 7)
import type { Redis } from "ioredis";
import { minuteKey7, minuteKey8 } from "../src/core/wire/metrics-keys.js";
import { startWebServer } from "../src/assembly/web.js";
import { printPageTimes, withSeededRedis } from "./page-times.js";

const PROCESSES = 200;
const RETRIES = 100_000;
const QUEUES = 1_000;
const OTHER_SETS = 10_000;
const TARGET_MS = 300;
const RUNS = Number(process.env.BENCH_WEB_RUNS ?? 7);

function job(i: number, className: string, queue: string, extra: Record<string, unknown> = {}): string {
  const now = Date.now() / 1000;
  return JSON.stringify({
    class: className,
    args: [i, { user_id: i, note: "x".repeat(40) }],
    retry: true,
    queue,
    jid: `${i.toString(16).padStart(24, "0")}`,
    created_at: now - 3600,
    enqueued_at: now - 60,
    ...extra,
  });
}

async function seed(redis: Redis): Promise<void> {
  const now = Date.now() / 1000;
  let pipe = redis.pipeline();
  const flush = async () => {
    await pipe.exec();
    pipe = redis.pipeline();
  };
  for (let q = 0; q < QUEUES; q++) {
    pipe.sadd("queues", `queue-${q}`);
    for (let j = 0; j < 10; j++) pipe.lpush(`queue:queue-${q}`, job(q * 10 + j, `Job${q % 50}`, `queue-${q}`));
    if (q % 100 === 99) await flush();
  }
  for (let i = 0; i < RETRIES; i++) {
    pipe.zadd(
      "retry",
      String(now + i),
      job(i, `Job${i % 50}`, `queue-${i % QUEUES}`, {
        retry_count: i % 25,
        error_class: "RuntimeError",
        error_message: `failure number ${i}`,
        failed_at: now - 100,
      }),
    );
    if (i % 5000 === 4999) await flush();
  }
  for (let i = 0; i < OTHER_SETS; i++) {
    pipe.zadd("schedule", String(now + 60 + i), job(i, `Job${i % 50}`, "default"));
    pipe.zadd("dead", String(now - i), job(i, `Job${i % 50}`, "default", { error_class: "E", error_message: "dead" }));
    if (i % 5000 === 4999) await flush();
  }
  for (let p = 0; p < PROCESSES; p++) {
    const id = `host-${p}:${1000 + p}:${p.toString(16).padStart(12, "0")}`;
    const version = ["6.4.1", "7.3.2", "8.1.7", "8.1.7-sidekiq-bridge.0.1.0"][p % 4]!;
    pipe.sadd("processes", id);
    pipe.hset(id, {
      info: JSON.stringify({
        hostname: `host-${p}`,
        pid: 1000 + p,
        identity: id,
        started_at: now - 86_400,
        tag: "app",
        labels: ["web"],
        queues: ["default", `queue-${p % QUEUES}`],
        concurrency: 10,
        version,
      }),
      busy: "3",
      beat: String(now),
      quiet: "false",
      rss: "250000",
      rtt_us: "120",
      ...(version.startsWith("8") ? { concurrency: "10" } : {}),
    });
    for (let t = 0; t < 3; t++)
      pipe.hset(
        `${id}:work`,
        `tid-${t}`,
        JSON.stringify({ queue: "default", payload: job(p * 3 + t, "Busy", "default"), run_at: Math.floor(now - t) }),
      );
  }
  await flush();
  // An hour of metrics, 50 classes, in the 7.x and the 8.x keys.
  for (let m = 0; m < 60; m++) {
    const t = new Date(Date.now() - m * 60_000);
    for (const key of [minuteKey8(t), minuteKey7(t)])
      for (let c = 0; c < 50; c++) pipe.hset(key, `Job${c}|p`, 100, `Job${c}|f`, 2, `Job${c}|ms`, 12_345);
  }
  await flush();
}

async function main(): Promise<void> {
  await withSeededRedis(
    async (redis) => {
      await seed(redis);
      return `${PROCESSES} processes, ${RETRIES.toLocaleString("en-US")} retries, ${QUEUES} queues`;
    },
    async (url, redis) => {
      const web = await startWebServer({ redis: url, port: 0 });
      const [firstRetry] = await redis.zrevrange("retry", 0, 0, "WITHSCORES");
      const firstScore = (await redis.zscore("retry", firstRetry!))!;
      const firstJid = JSON.parse(firstRetry!).jid as string;
      const pages = [
        "/",
        "/busy",
        "/queues",
        "/queues/queue-7",
        "/retries",
        `/retries?page=${RETRIES / 25}`,
        `/retries/${encodeURIComponent(`${firstScore}-${firstJid}`)}`,
        "/retries?class=Job49",
        "/retries?class=NoSuchJob",
        "/retries?substr=failure%20number%2099999",
        "/scheduled",
        "/morgue",
        "/metrics",
        "/metrics?period=72h",
        "/metrics/Job7",
        "/stats.json",
      ];
      try {
        await printPageTimes(pages, (p) => `${web.url.replace(/\/$/, "")}${p}`, RUNS, TARGET_MS);
      } finally {
        await web.close();
      }
    },
  );
}

await main();
