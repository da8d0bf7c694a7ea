// Dialect "auto" writes what the live fleet reads, proven by the stored bytes.
import { describe, expect, it } from "vitest";
import { Client } from "../src/core/client/client.js";
import { DialectDetectionError } from "../src/core/client/errors.js";
import { JobRecord } from "../src/core/wire/index.js";
import { allocateDb, backend, describeEachSidekiq, selected, waitFor } from "./support/harness.js";
import { inject } from "vitest";
import { Redis } from "ioredis";

const FLOAT_SECONDS = /^\d{10}\.\d+$/;
const INT_MILLIS = /^\d{13}$/;

async function storedCreatedAt(redis: Redis, queue: string): Promise<string> {
  const raw = (await redis.lindex(`queue:${queue}`, 0))!;
  return JobRecord.parse(raw).raw("created_at")!;
}

describeEachSidekiq("client: dialect auto", (sk) => {
  it("with no live Ruby process it refuses, or uses autoFallback", async () => {
    const c = new Client({ redis: sk.url });
    await expect(c.job("RecordJob", { queue: "none" }).performAsync(1)).rejects.toThrow(DialectDetectionError);
    const f = new Client({ redis: sk.url, autoFallback: 8 });
    await f.job("RecordJob", { queue: "fallback" }).performAsync(1);
    expect(await storedCreatedAt(sk.redis, "fallback")).toMatch(INT_MILLIS);
    await c.close();
    await f.close();
  });

  it("with this release live, writes its unit", async () => {
    await sk.startSidekiq({ queues: ["unused"], concurrency: 1 });
    await waitFor("the Ruby heartbeat", async () => (await sk.redis.scard("processes")) > 0 || undefined);
    const c = new Client({ redis: sk.url });
    expect((await c.profile()).version).toBe(sk.target.dialect === 6 ? "6.4.1" : sk.target.version);
    await c.job("RecordJob", { queue: "auto" }).performAsync(1);
    expect(await storedCreatedAt(sk.redis, "auto")).toMatch(sk.target.dialect === 8 ? INT_MILLIS : FLOAT_SECONDS);
    await c.close();
  });
});

const v7 = selected().find((t) => t.dialect === 7);
const v8 = selected().find((t) => t.dialect === 8);
describe(`client: dialect auto · mixed fleet Sidekiq ${v7?.version ?? "7 (not selected)"} + ${v8?.version ?? "8 (not selected)"}`, () => {
  it("writes float seconds, which both read", async (ctx) => {
    if (!v7 || !v8) {
      // Only reachable when SIDEKIQ_VERSIONS leaves one out; say so rather than pass.
      ctx.skip();
      return;
    }
    const db = await allocateDb();
    const url = `${inject("harness").redisUrl}/${db}`;
    const redis = new Redis(url);
    const env = { REDIS_URL: backend().rubyRedisUrl(db) };
    const servers = await Promise.all(
      [v7, v8].map((t) => backend().startSidekiq(t, { queues: ["unused"], concurrency: 1, env })),
    );
    try {
      await waitFor("both heartbeats", async () => (await redis.scard("processes")) >= 2 || undefined);
      const c = new Client({ redis: url });
      expect((await c.profile()).dialect).toBe(7);
      await c.job("RecordJob", { queue: "mixed" }).performAsync(1);
      expect(await storedCreatedAt(redis, "mixed")).toMatch(FLOAT_SECONDS);
      await c.close();
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      redis.disconnect();
    }
  });
});
