// Server time of the dashboard's Cron and Locks tabs on large add-on data:
// 100,000 unique-jobs locks (gem 8 layout: digest in `uniquejobs:digests`,
// `:LOCKED` hash, `:INFO`), 1,000 changelog entries (the gem's default
// max_history keeps no more) and 200 cron jobs in two namespaces, among
// 300,000 keys. Measured over HTTP on loopback, from request to the last
// byte, on a throwaway redis-server. Target: every page under 300 ms.
//
//   npx tsx bench/web-addons.ts          (BENCH_WEB_RUNS=N: measured runs per page, default 7)
import type { Redis } from "ioredis";
import { CronApi } from "../src/addons/sidekiq-cron/cron-api.js";
import { startWebServer } from "../src/assembly/web.js";
import { printPageTimes, withSeededRedis } from "./page-times.js";

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
  await withSeededRedis(
    async (redis) => {
      await seed(redis);
      return `${LOCKS.toLocaleString("en-US")} locks, ${CHANGELOG_ENTRIES} changelog entries, ${CRON_JOBS} cron jobs`;
    },
    async (url) => {
      const web = await startWebServer({ redis: url, port: 0 });
      // With the namespaces given (sidekiq-cron's available_namespaces as an Array): no keyspace SCAN.
      const named = await startWebServer({
        redis: url,
        port: 0,
        extensions: { cron: { namespaces: ["default", "reports"] } },
      });
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
      const urlOf = (p: string) =>
        p.startsWith("named:") ? `${named.url.replace(/\/$/, "")}${p.slice(6)}` : `${web.url.replace(/\/$/, "")}${p}`;
      try {
        await printPageTimes(pages, urlOf, RUNS, TARGET_MS);
      } finally {
        await web.close();
        await named.close();
      }
    },
  );
}

await main();
