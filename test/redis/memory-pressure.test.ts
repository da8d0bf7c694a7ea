// Redis at maxmemory with the noeviction policy refuses writes ("OOM command
// not allowed"). A push then fails with an error naming the cause and writes
// nothing; a bulk push says exactly which jobs are in Redis; once memory is
// freed, pushing goes on. On the run's server kind (Redis or Valkey).
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { RedisServer } from "../../harness/redis-server.js";
import { startServer } from "../../harness/servers.js";
import { Client } from "../../src/core/client/client.js";
import { BulkPushError } from "../../src/core/client/errors.js";
import { RedisOutOfMemoryError } from "../../src/core/redis/availability.js";

describe("a push when Redis is out of memory (maxmemory, noeviction)", () => {
  let server: RedisServer;
  let redis: Redis;
  let client: Client;
  const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await redis.info("memory"))![1]);
  // 2 MB written by a small command: no large query buffer to be freed later.
  const fill = () => redis.setrange("filler", 2 * 1024 * 1024 - 1, "x");
  /** Sets maxmemory to what is used now plus `headroom` bytes. */
  // A limit meant to refuse the next write sits a whole megabyte under what is
  // used: the server shrinks an idle client's query buffer later, on its own
  // timer (the bulk test before leaves 200 KB ones), so a limit 64 KB under
  // could end up above the memory used by the time the push came.
  const REFUSING = -1024 * 1024;
  const limitTo = async (headroom: number) => redis.config("SET", "maxmemory", String((await usedMemory()) + headroom));

  beforeAll(async () => {
    server = await startServer({ config: ["maxmemory-policy noeviction"] });
    redis = new Redis(server.url);
    client = new Client({ redis: server.url, dialect: 8 });
  });
  afterAll(async () => {
    await client.close();
    redis.disconnect();
    await server.stop();
  });
  beforeEach(async () => {
    await redis.config("SET", "maxmemory", "0");
    await redis.flushdb();
  });

  it("push fails with RedisOutOfMemoryError and writes nothing; after memory is freed it goes through", async () => {
    await fill();
    await limitTo(REFUSING);
    const err = await client.push({ class: "HardJob", queue: "oom", args: [1] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedisOutOfMemoryError);
    expect((err as Error).message).toMatch(/out of memory .*noeviction.* nothing of the refused command was written/);
    expect(await redis.llen("queue:oom")).toBe(0);
    expect(await redis.sismember("queues", "oom")).toBe(0);
    // A scheduled push is refused the same way.
    await expect(
      client.push({ class: "HardJob", queue: "oom", args: [1], at: Date.now() / 1000 + 60 }),
    ).rejects.toThrow(RedisOutOfMemoryError);
    expect(await redis.zcard("schedule")).toBe(0);

    await redis.del("filler");
    const jid = await client.push({ class: "HardJob", queue: "oom", args: [2] });
    expect(JSON.parse((await redis.lindex("queue:oom", 0))!).jid).toBe(jid);
  });

  it("pushBulk that meets maxmemory part-way says which jobs are in Redis; pushing the rest finishes it", async () => {
    const args = Array.from({ length: 600 }, (_, i) => [i, "p".repeat(2000)]);
    // Room for a little over one batch of 100 (about 200 KB each): Redis
    // accepts a write while under the limit, so one or two batches go in.
    await limitTo(300 * 1024);
    const err = await client.pushBulk({ class: "HardJob", queue: "bulk-oom", args, batchSize: 100 }).catch((e) => e);
    expect(err).toBeInstanceOf(BulkPushError);
    const e = err as BulkPushError;
    expect(e.cause).toBeInstanceOf(RedisOutOfMemoryError);
    expect(e.uncertain).toEqual([]);
    expect(e.firstUnwritten % 100).toBe(0);
    expect(e.firstUnwritten).toBeGreaterThan(0);
    expect(e.firstUnwritten).toBeLessThan(600);
    expect(e.message).toContain(`push_bulk wrote ${e.firstUnwritten} of 600 jobs`);
    expect(e.written).toHaveLength(e.firstUnwritten);
    // Exactly the jobs it names are in the queue (LPUSH: newest at the head).
    const inRedis = (await redis.lrange("queue:bulk-oom", 0, -1)).map((j) => JSON.parse(j).jid as string).reverse();
    expect(inRedis).toEqual(e.written);

    await redis.config("SET", "maxmemory", "0");
    const rest = await client.pushBulk({ class: "HardJob", queue: "bulk-oom", args: args.slice(e.firstUnwritten) });
    const all = (await redis.lrange("queue:bulk-oom", 0, -1)).map((j) => JSON.parse(j).args[0] as number).reverse();
    expect(all).toEqual(args.map((a) => a[0]));
    expect(rest).toHaveLength(600 - e.firstUnwritten);
  });

  it("a bulk refused at its first batch fails with the cause alone: nothing was written", async () => {
    await fill();
    await limitTo(REFUSING);
    await expect(
      client.pushBulk({ class: "HardJob", queue: "bulk-none", args: [[1], [2]], batchSize: 1 }),
    ).rejects.toThrow(RedisOutOfMemoryError);
    expect(await redis.llen("queue:bulk-none")).toBe(0);
  });
});
