// A Node worker while Redis is at maxmemory (noeviction): writes are refused
// (fetching into the working hash, the retry set, stats, the heartbeat), so
// every job must stay where Redis last had it, and once memory is freed each
// job runs to success or sits in the retry set: lost 0. On the run's server
// kind (Redis or Valkey), with reliable and basic fetch.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RedisServer } from "../../harness/redis-server.js";
import { startServer } from "../../harness/servers.js";
import { Client } from "../../src/core/client/client.js";
import { Worker } from "../../src/assembly/worker.js";

const JOBS = 300;

describe("a Node worker when Redis reaches maxmemory under noeviction", () => {
  let server: RedisServer;
  let redis: Redis;
  beforeAll(async () => {
    server = await startServer({ config: ["maxmemory-policy noeviction"] });
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });
  const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await redis.info("memory"))![1]);

  for (const fetch of ["reliable", "basic"] as const) {
    it(`${fetch} fetch: jobs finish or wait in the retry set once memory is freed; none is lost`, async () => {
      await redis.config("SET", "maxmemory", "0");
      await redis.flushdb();
      const queue = `oom-${fetch}`;
      const client = new Client({ redis: server.url, dialect: 8 });
      const jids = (
        await client.pushBulk({ class: "OomJob", queue, args: Array.from({ length: JOBS }, (_, i) => [i]) })
      ).map(String);
      await client.close();

      const succeeded = new Set<string>();
      const errors: string[] = [];
      const log = (m: string, c?: unknown) => errors.push(`${m} ${JSON.stringify(c ?? {})}`);
      const w = new Worker({
        redis: server.url,
        dialect: 8,
        queues: [queue],
        concurrency: 5,
        fetch,
        timeout: 2,
        scheduler: false,
        logger: { debug: () => {}, info: () => {}, warn: log, error: log },
      });
      let ran = 0;
      w.register("OomJob", async ([i], ctx) => {
        ran++;
        // Memory runs out after a few dozen jobs, while jobs are in flight.
        if (ran === 40) {
          await redis.setrange("filler", 2 * 1024 * 1024 - 1, "x");
          await redis.config("SET", "maxmemory", String((await usedMemory()) - 64 * 1024));
        }
        await new Promise((r) => setTimeout(r, 5));
        if ((i as number) % 7 === 0) throw new Error("fails, to be retried");
        succeeded.add(ctx.jid);
      });
      await w.start();
      try {
        // Out of memory for 3 s: refused writes, logged; the worker keeps going.
        await new Promise((r) => setTimeout(r, 3000));
        expect(errors.some((e) => /OOM|out of memory/i.test(e))).toBe(true);
        await redis.del("filler");
        await redis.config("SET", "maxmemory", "0");
        const deadline = Date.now() + 30_000;
        for (;;) {
          const retrying = await redis.zrange("retry", 0, -1);
          const inRetry = new Set(retrying.map((j) => JSON.parse(j).jid as string));
          const accounted = jids.filter((j) => succeeded.has(j) || inRetry.has(j)).length;
          if (accounted === JOBS) break;
          if (Date.now() > deadline) {
            const missing = jids.filter((j) => !succeeded.has(j) && !inRetry.has(j));
            throw new Error(
              `${missing.length} of ${JOBS} jobs neither succeeded nor wait in the retry set; queue ${await redis.llen(`queue:${queue}`)}; log: ${errors.slice(0, 5).join(" | ")}`,
            );
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      } finally {
        await w.stop();
      }
      // Each retry entry once; nothing left in the queue.
      const retrying = (await redis.zrange("retry", 0, -1)).map((j) => JSON.parse(j).jid as string);
      expect(new Set(retrying).size).toBe(retrying.length);
      expect(await redis.llen(`queue:${queue}`)).toBe(0);
    }, 60_000);
  }

  it("the scheduled poller moves no half batch: each due job is in the schedule or its queue, once, and all arrive once memory is freed", async () => {
    await redis.config("SET", "maxmemory", "0");
    await redis.flushdb();
    const client = new Client({ redis: server.url, dialect: 8 });
    const due = Date.now() / 1000 - 1;
    const jids = (
      await client.pushBulk({
        class: "LaterJob",
        queue: "oom-later",
        args: Array.from({ length: 500 }, (_, i) => [i]),
        at: due,
      })
    ).map(String);
    await client.close();
    await redis.setrange("filler", 2 * 1024 * 1024 - 1, "x");
    await redis.config("SET", "maxmemory", String((await usedMemory()) - 64 * 1024));
    const errors: string[] = [];
    const log = (m: string) => errors.push(m);
    // Its own queue stays empty: it is here for the poller.
    const w = new Worker({
      redis: server.url,
      dialect: 8,
      queues: ["oom-idle"],
      concurrency: 1,
      pollIntervalAverage: 0.2,
      logger: { debug: () => {}, info: () => {}, warn: log, error: log },
    });
    // One snapshot of both (a read-only script, which Redis runs at maxmemory):
    // read one after the other, a batch the poller moves in between shows in both.
    const where = async () => {
      const [s, q] = (await redis.eval(
        "#!lua flags=no-writes\nreturn {redis.call('ZRANGE', KEYS[1], 0, -1), redis.call('LRANGE', KEYS[2], 0, -1)}",
        2,
        "schedule",
        "queue:oom-later",
      )) as [string[], string[]];
      const jidsOf = (list: string[]) => list.map((j) => JSON.parse(j).jid as string);
      return { scheduled: jidsOf(s), queued: jidsOf(q) };
    };
    // The worker's own start-up writes may be refused too: it starts once memory is back if so.
    const started = w.start().catch((e: unknown) => e);
    try {
      await new Promise((r) => setTimeout(r, 2000));
      const during = await where();
      expect([...during.scheduled, ...during.queued].sort()).toEqual([...jids].sort());
      await redis.del("filler");
      await redis.config("SET", "maxmemory", "0");
      const deadline = Date.now() + 20_000;
      for (;;) {
        const after = await where();
        if (after.queued.length === 500) {
          expect(after.scheduled).toEqual([]);
          expect([...after.queued].sort()).toEqual([...jids].sort());
          break;
        }
        if (Date.now() > deadline)
          throw new Error(`only ${after.queued.length} of 500 promoted; log: ${errors.slice(0, 3).join(" | ")}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      if (!((await started) instanceof Error)) await w.stop();
    }
  }, 60_000);
});
