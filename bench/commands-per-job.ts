// Redis commands per job of a drain through the public Worker, from INFO
// commandstats (load-independent, unlike throughput): a fresh redis-server,
// N no-op jobs staged where the idle worker cannot see them, the counters
// reset, the jobs released with one RENAME, and the counters read once every
// job has run and been acknowledged (the working structures are empty).
//
//   npx tsx bench/commands-per-job.ts [jobs=20000]
//   BENCH_FETCH=reliable BENCH_CONCURRENCY=10 npx tsx bench/commands-per-job.ts
import { Redis } from "ioredis";
import { startRedis } from "../harness/redis-server.js";
import { Client } from "../src/core/client/client.js";
import { Worker } from "../src/assembly/worker.js";
import type { Logger } from "../src/core/logging/logger.js";
import { countCommands, readCommandStats, resetCommandStats } from "./measure/commandstats.js";

const n = Number(process.argv[2] ?? 20_000);
const fetches = (process.env.BENCH_FETCH ?? "basic,reliable").split(",") as Array<"basic" | "reliable">;
const concurrencies = (process.env.BENCH_CONCURRENCY ?? "1,10,50").split(",").map(Number);
// Fetch lanes (the Worker's fetchLanes): the default unless set.
const lanes = process.env.BENCH_LANES ? Number(process.env.BENCH_LANES) : undefined;
const quiet: Logger = { debug() {}, info() {}, warn: (m) => console.error(`warn: ${m}`), error: console.error };

const server = await startRedis();
const redis = new Redis(server.url);
const client = new Client({ redis: server.url, dialect: "8.1.7" });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Jobs still held by the worker's working structures (reliable fetch). */
async function held(): Promise<number> {
  let sum = 0;
  for (const k of await redis.keys("bridge:wip*:*")) {
    const type = await redis.type(k);
    sum += type === "list" ? await redis.llen(k) : type === "hash" ? await redis.hlen(k) : 0;
  }
  return sum;
}

// jobs/s is shown for orientation only: it depends on the machine's load, and
// this process runs Redis' client, the worker and the polling together.
console.log("| fetch | concurrency | jobs | commands/job | by command | jobs/s |");
console.log("| --- | --- | --- | --- | --- | --- |");
try {
  for (const fetch of fetches) {
    for (const concurrency of concurrencies) {
      await redis.flushdb();
      let ran = 0;
      const w = new Worker({
        redis: server.url,
        dialect: "8.1.7",
        queues: ["bench"],
        concurrency,
        fetch,
        scheduler: false,
        logger: quiet,
        ...(lanes ? { fetchLanes: lanes } : {}),
      });
      w.register("BenchNoopJob", () => void ran++);
      await w.start();
      await sleep(300);
      // Staged under another key (bulk pushes to queue:bench would be fetched at once).
      await client.pushBulk({ class: "BenchNoopJob", queue: "bench", args: Array.from({ length: n }, (_, i) => [i]) });
      await redis.rename("queue:bench", "bench:staged");
      await resetCommandStats(redis);
      const t0 = performance.now();
      await redis.rename("bench:staged", "queue:bench");
      while (ran < n) await new Promise((r) => setImmediate(r));
      const ms = performance.now() - t0;
      while (ran < n || (await redis.llen("queue:bench")) > 0 || (await held()) > 0) await sleep(20);
      const stats = countCommands(await readCommandStats(redis), ["keys", "type", "llen", "hlen"]);
      await w.stop();
      const by = Object.entries(stats.byCommand)
        .sort((a, b) => b[1] - a[1])
        .map(([c, k]) => `${c} ${(k / n).toFixed(3)}`)
        .join(", ");
      const rate = Math.round((n / ms) * 1000);
      console.log(`| ${fetch} | ${concurrency} | ${n} | ${(stats.total / n).toFixed(3)} | ${by} | ${rate} |`);
    }
  }
} finally {
  await client.close();
  redis.disconnect();
  await server.stop();
}
