// Server time of the dashboard's Cron and Locks tabs on large add-on data:
// 100,000 unique-jobs locks (gem 8 layout: digest in `uniquejobs:digests`,
// `:LOCKED` hash, `:INFO`), 1,000 changelog entries (the gem's default
// max_history keeps no more) and 200 cron jobs in two namespaces, among
// 300,000 keys. Measured over HTTP on loopback, from request to the last
// byte, on a throwaway redis-server. Target: every page under 300 ms.
//
//   npx tsx bench/web-addons.ts          (BENCH_WEB_RUNS=N: measured runs per page, default 7)
import { Redis } from "ioredis";
import { startRedis } from "../harness/redis-server.js";
import { CronApi } from "../src/cron/cron-api.js";
import { startWebServer } from "../src/web/server.js";

const LOCKS = 100_000;
const CRON_JOBS = 200;
const CHANGELOG_ENTRIES = 1_000;
const TARGET_MS = 300;
const RUNS = Number(process.env.BENCH_WEB_RUNS ?? 7);

const digestOf = (i: number) => `uniquejobs:${i.toString(16).padStart(32, "0")}`;

async function seed(redis: Redis): Promise<void> {
  const now = Date.now() / 1000;
  for (let start = 0; start < LOCKS; start += 5_000) {
    const pipe = redis.pipeline();
    for (let i = start; i < start + 5_000; i++) {
      const d = digestOf(i);
      const at = now - LOCKS + i;
      pipe.zadd("uniquejobs:digests", at, d);
      pipe.hset(`${d}:LOCKED`, `jid${i}`, String(at));
      pipe.set(
        `${d}:INFO`,
        JSON.stringify({ worker: "UniqueJob", queue: "default", type: "until_executed", lock_args: [i] }),
      );
      if (i >= LOCKS - CHANGELOG_ENTRIES)
        pipe.zadd(
          "uniquejobs:changelog",
          at,
          JSON.stringify({ digest: d, job_id: `jid${i}`, script: "queue_and_lock.lua", message: "Locked", time: at }),
        );
    }
    await pipe.exec();
  }
  const cron = new CronApi({ redis });
  for (let i = 0; i < CRON_JOBS; i++)
    await cron.create({
      name: `job-${i}`,
      cron: `${i % 60} * * * *`,
      class: `CronJob${i % 20}`,
      namespace: i % 2 === 0 ? "default" : "reports",
      args: [i],
    });
}

async function main(): Promise<void> {
  const server = await startRedis({ databases: 1 });
  const redis = new Redis(server.url);
  try {
    const t0 = performance.now();
    await seed(redis);
    console.log(
      `seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${LOCKS.toLocaleString("en-US")} locks, ${CHANGELOG_ENTRIES} changelog entries, ${CRON_JOBS} cron jobs`,
    );
    const web = await startWebServer({ redis: server.url, port: 0 });
    // With the namespaces given (sidekiq-cron's available_namespaces as an Array): no keyspace SCAN.
    const named = await startWebServer({ redis: server.url, port: 0, cronNamespaces: ["default", "reports"] });
    const pages = [
      "/cron",
      "named:/cron",
      "/cron/namespaces/reports",
      "/cron/namespaces/default/jobs/job-0",
      "/locks",
      `/locks?page=${LOCKS / 100}`,
      `/locks?filter=${digestOf(LOCKS - 7).slice(-12)}`,
      "/locks?filter=no-such-digest",
      `/locks/${encodeURIComponent(digestOf(LOCKS - 5))}`,
      "/locks?expiring=1",
      "/locks/changelogs",
    ];
    const rows: Array<[string, number, number]> = [];
    for (const p of pages) {
      const times: number[] = [];
      for (let i = 0; i < RUNS + 1; i++) {
        const start = performance.now();
        const url = p.startsWith("named:")
          ? `${named.url.replace(/\/$/, "")}${p.slice(6)}`
          : `${web.url.replace(/\/$/, "")}${p}`;
        const res = await fetch(url);
        await res.text();
        if (i > 0) times.push(performance.now() - start);
        if (res.status !== 200) throw new Error(`${p}: HTTP ${res.status}`);
      }
      times.sort((a, b) => a - b);
      rows.push([p, times[Math.floor(times.length / 2)]!, times[times.length - 1]!]);
    }
    console.log(`\n${"page".padEnd(48)} ${"median ms".padStart(10)} ${"max ms".padStart(8)}  target ${TARGET_MS} ms`);
    for (const [p, med, max] of rows)
      console.log(
        `${p.padEnd(48)} ${med.toFixed(1).padStart(10)} ${max.toFixed(1).padStart(8)}  ${med < TARGET_MS ? "ok" : "OVER"}`,
      );
    await web.close();
    await named.close();
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

await main();
