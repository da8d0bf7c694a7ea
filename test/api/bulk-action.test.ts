// Bulk actions on a throwaway redis-server: what each batch writes, how the
// walk gets past entries that stay (a middleware's refusal, a failure, a
// filter) even when they share a score, cancellation and re-running, the
// dead set's trim, and the same payload as the per-entry action.
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startRedis, type RedisServer } from "../../harness/redis-server.js";
import { BULK_BATCH_SIZE, type BulkSummary } from "../../src/core/api/bulk-action.js";
import { SidekiqApi } from "../../src/core/api/sidekiq-api.js";
import { Client } from "../../src/core/client/client.js";
import type { ClientMiddleware } from "../../src/core/client/middleware.js";

let server: RedisServer;
let redis: Redis;
const opened: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  server = await startRedis({ databases: 2 });
  redis = new Redis(`${server.url}/0`);
});
afterAll(async () => {
  for (const o of opened) await o.close();
  redis.disconnect();
  await server.stop();
});
beforeEach(async () => {
  await redis.flushdb();
});

function job(i: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    class: i % 3 === 0 ? "ThirdJob" : "HardJob",
    args: [i, "é"],
    jid: `jid${String(i).padStart(5, "0")}`,
    queue: `q${i % 2}`,
    retry: true,
    created_at: 1_795_000_000_000,
    enqueued_at: 1_795_000_000_000,
    retry_count: 2,
    ...extra,
  });
}

/** Seeds `n` retries; `score(i)` gives each one's score (ties allowed). */
async function seed(n: number, score: (i: number) => number = (i) => 1_800_000_000 + i, key = "retry"): Promise<void> {
  const args: string[] = [];
  for (let i = 0; i < n; i++) args.push(String(score(i)), job(i));
  if (n > 0) await redis.zadd(key, ...args);
}

function api(
  middleware: ClientMiddleware[] = [],
  extra: { deadMaxJobs?: number; now?: () => number } = {},
): SidekiqApi {
  const client = new Client({ redis: `${server.url}/0`, dialect: 8, validate: false, middleware });
  const a = new SidekiqApi({ redis: `${server.url}/0`, client, ...extra });
  opened.push(a, client);
  return a;
}

async function queued(): Promise<string[]> {
  return [...(await redis.lrange("queue:q0", 0, -1)), ...(await redis.lrange("queue:q1", 0, -1))];
}

const jidOf = (raw: string) => (JSON.parse(raw) as { jid: string }).jid;

describe("bulk actions", () => {
  it("retry-all moves every entry once, lowest score first, in batches, with the per-entry rewrite", async () => {
    await seed(250);
    const progress: BulkSummary[] = [];
    const s = await api().retries.bulk("retry", { batchSize: 60, onProgress: (p) => progress.push(p) });
    expect(s).toMatchObject({ scope: "all", total: 250, scanned: 250, moved: 250, gone: 0, refused: 0, failed: 0 });
    expect(s.batches).toBe(5);
    expect(progress.map((p) => p.moved)).toEqual([60, 120, 180, 240, 250]);
    expect(await redis.zcard("retry")).toBe(0);
    expect((await redis.smembers("queues")).sort()).toEqual(["q0", "q1"]);
    // As ZPOPMIN + LPUSH one at a time: the lowest score is at the tail (popped first).
    const q0 = await redis.lrange("queue:q0", 0, -1);
    expect(q0.map(jidOf)).toEqual(Array.from({ length: 125 }, (_, k) => `jid${String(248 - 2 * k).padStart(5, "0")}`));
    // retry_count - 1, a new enqueued_at (Sidekiq 8: integer ms); every other member's bytes kept.
    const rec = JSON.parse(q0[0]!) as Record<string, unknown>;
    expect(rec.retry_count).toBe(1);
    expect(Number.isInteger(rec.enqueued_at)).toBe(true);
    expect(q0[0]!.replace(/"enqueued_at":\d+/, '"enqueued_at":0')).toBe(
      job(248, { retry_count: 1 }).replace(/"enqueued_at":\d+/, '"enqueued_at":0'),
    );
  });

  it("writes what the per-entry retry writes, byte for byte but for enqueued_at", async () => {
    await seed(2);
    const a = api();
    expect(await a.retries.retry((await a.retries.find("jid00001"))!)).toBe(true);
    expect(await a.retries.bulk("retry")).toMatchObject({ moved: 1 });
    const strip = (s: string) => s.replace(/"enqueued_at":\d+/, '"enqueued_at":0');
    const expected = (i: number) => strip(JSON.stringify({ ...JSON.parse(job(i)), retry_count: 1 }));
    expect((await redis.lrange("queue:q1", 0, -1)).map(strip)).toEqual([expected(1)]);
    expect((await redis.lrange("queue:q0", 0, -1)).map(strip)).toEqual([expected(0)]);
  });

  it("middleware runs on each job; one that stops a job leaves it in the set, counted, and the walk goes past it", async () => {
    // Every entry has the same score: the walk skips what stays by its offset within the score.
    await seed(90, () => 1_800_000_000);
    const mw: ClientMiddleware[] = [
      (ctx, next) => (Number((ctx.job.args as number[])[0]) % 10 === 0 ? undefined : next()),
      (ctx, next) => {
        ctx.job.traceparent = `00-${String(ctx.job.jid)}`;
        return next();
      },
    ];
    const s = await api(mw).retries.bulk("retry", { batchSize: 7 });
    expect(s).toMatchObject({ moved: 81, refused: 9, failed: 0, gone: 0, scanned: 90 });
    const left = (await redis.zrange("retry", 0, -1)).map(jidOf).sort();
    expect(left).toEqual(Array.from({ length: 9 }, (_, k) => `jid${String(k * 10).padStart(5, "0")}`));
    const all = await queued();
    expect(all).toHaveLength(81);
    expect(new Set(all.map(jidOf)).size).toBe(81);
    for (const raw of all) expect(JSON.parse(raw).traceparent).toBe(`00-${jidOf(raw)}`);
    // Run again: the refused ones are refused again, nothing moves twice.
    expect(await api(mw).retries.bulk("retry", { batchSize: 7 })).toMatchObject({ moved: 0, refused: 9 });
  });

  it("entries that cannot be pushed stay, with the reason; the rest move", async () => {
    await seed(5);
    await redis.zadd("retry", "1800000002", "not json", "1800000003", job(99, { retry_count: "many" }));
    const s = await api().retries.bulk("retry", { batchSize: 2 });
    expect(s).toMatchObject({ moved: 5, failed: 2 });
    expect(s.failures.map((f) => f.raw)).toEqual(["not json", job(99, { retry_count: "many" })]);
    expect(s.failures[1]!.error).toContain("cannot decrement");
    expect((await redis.zrange("retry", 0, -1)).sort()).toEqual(["not json", job(99, { retry_count: "many" })]);
    // The older API reports the same through BulkResult.
    expect(await api().retries.retryAll()).toEqual({ done: 0, failed: s.failures });
  });

  it("filtered by class or queue, by text, or the selected members", async () => {
    await seed(30, (i) => 1_800_000_000 + (i % 4));
    const a = api();
    expect(await a.retries.bulk("add-to-queue", { filter: { className: "ThirdJob" }, batchSize: 4 })).toMatchObject({
      scope: "filtered",
      moved: 10,
      scanned: 30,
    });
    expect((await queued()).every((raw) => raw.includes("ThirdJob"))).toBe(true);
    // Args starting with 1 that were not ThirdJobs: 1, 10, 11, 13, 14, 16, 17, 19.
    expect(await a.retries.bulk("delete", { substr: '"args":[1', batchSize: 3 })).toMatchObject({ moved: 8 });
    const chosen = (await redis.zrange("retry", 0, 1)).map((raw) => ({ raw }));
    expect(await a.retries.bulk("kill", { entries: [...chosen, { raw: "never there" }] })).toMatchObject({
      scope: "selected",
      moved: 2,
      gone: 1,
    });
    expect(await redis.zrange("dead", 0, -1)).toEqual(expect.arrayContaining(chosen.map((c) => c.raw)));
    expect(await redis.zcard("retry")).toBe(30 - 10 - 8 - 2);
  });

  it("stops after the batch in flight when signalled, and a re-run finishes the job", async () => {
    await seed(100);
    const stop = new AbortController();
    const a = api();
    const first = await a.retries.bulk("retry", {
      batchSize: 10,
      signal: stop.signal,
      onProgress: (p) => (p.moved >= 30 ? stop.abort() : undefined),
    });
    // The signal came with the third batch's counts; the fourth was already on its way (pipelined).
    expect(first.interrupted).toBe(true);
    expect([30, 40]).toContain(first.moved);
    expect(await redis.zcard("retry")).toBe(100 - first.moved);
    const second = await a.retries.bulk("retry", { batchSize: 10 });
    expect(second).toMatchObject({ interrupted: false, moved: 100 - first.moved, total: 100 - first.moved });
    const all = await queued();
    expect(new Set(all.map(jidOf)).size).toBe(100);
    expect(all).toHaveLength(100);
  });

  it("kill trims the dead set as Sidekiq does; killing the dead set again rescores each entry once", async () => {
    await seed(40);
    // A clock a second on at each reading: each batch kills at a later time.
    let t = Date.now();
    const a = api([], { deadMaxJobs: 25, now: () => (t += 1000) });
    expect(await a.retries.bulk("kill", { batchSize: 8 })).toMatchObject({ moved: 40 });
    // ZREMRANGEBYRANK dead 0 -25 keeps the newest 24, as DeadSet#trim does.
    expect(await redis.zcard("dead")).toBe(24);
    const again = await a.dead.bulk("kill", { batchSize: 5 });
    expect(again).toMatchObject({ moved: 24, scanned: 24 });
  });

  it("a member that is not valid UTF-8 is killed with its exact bytes", async () => {
    const odd = Buffer.concat([Buffer.from('{"jid":"odd","x":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    await redis.zadd("retry", "1800000000", odd);
    expect(await api().retries.bulk("kill", { filter: { className: undefined } })).toMatchObject({ moved: 1 });
    expect(await redis.zrangeBuffer("dead", 0, -1)).toEqual([odd]);
    expect(await redis.zcard("retry")).toBe(0);
  });

  it("delete-all without a filter is Ruby's clear: one UNLINK", async () => {
    await seed(12);
    expect(await api().retries.bulk("delete")).toMatchObject({ moved: 12, batches: 1 });
    expect(await redis.exists("retry")).toBe(0);
  });

  it("refuses a batch size that would hold Redis too long, and a queue routed to another Redis", async () => {
    await expect(api().retries.bulk("retry", { batchSize: 0 })).rejects.toThrow(/batchSize/);
    await expect(api().retries.bulk("retry", { batchSize: 100_000 })).rejects.toThrow(/batchSize/);
    expect(BULK_BATCH_SIZE).toBe(1000);
    await seed(3);
    const client = new Client({
      redis: `${server.url}/0`,
      dialect: 8,
      validate: false,
      route: (q) => (q === "q1" ? `${server.url}/1` : `${server.url}/0`),
    });
    const a = new SidekiqApi({ redis: `${server.url}/0`, client });
    opened.push(a, client);
    const s = await a.retries.bulk("retry");
    expect(s).toMatchObject({ moved: 2, failed: 1 });
    expect(s.failures[0]!.error).toContain('queue "q1" is routed to another Redis');
    expect((await redis.zrange("retry", 0, -1)).map(jidOf)).toEqual(["jid00001"]);
  });
});
