// Basic fetch on a distant Redis (a fault proxy on 127.0.0.1 adds latency
// each way): like Sidekiq's one BRPOP per idle processor, more than one fetch
// is in flight, so the slots freed during a round trip need not wait for it;
// and still no more jobs are taken than there are free slots.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFaultProxy, type FaultProxy } from "../../harness/fault-proxy.js";
import type { RedisServer } from "../../harness/redis-server.js";
import { startServer } from "../../harness/servers.js";
import { Worker } from "../../src/assembly/worker.js";
import { quietLogger as logger } from "../support/use-redis.js";

describe("basic fetch through latency", () => {
  let server: RedisServer;
  let redis: Redis;
  let proxy: FaultProxy;

  beforeAll(async () => {
    server = await startServer();
    redis = new Redis(server.url);
    proxy = await startFaultProxy(server.port);
    proxy.latency(25);
  });
  afterAll(async () => {
    await proxy.close();
    redis.disconnect();
    await server.stop();
  });

  const job = (cls: string, n: number) =>
    JSON.stringify({ class: cls, queue: "lat", args: [n], jid: `lat${cls}${n}`.padEnd(24, "0"), retry: true });

  it("has fetches in flight side by side, and never takes more jobs than free slots", async () => {
    const w = new Worker({ redis: proxy.url, dialect: 8, queues: ["lat"], concurrency: 5, fetch: "basic", logger });
    // Each fetch's span, from its end and length: two that overlap were in flight together.
    const spans: Array<[number, number]> = [];
    w.on("fetch", ({ seconds, jobs }) => {
      const end = performance.now();
      if (jobs > 0) spans.push([end - seconds * 1000, end]);
    });
    const ran: number[] = [];
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    w.register("Quick", async ([n]) => {
      // Each job ends at its own time, as real jobs do, so slots free one by one.
      await new Promise((r) => setTimeout(r, 5 + (Number(n) % 7) * 4));
      ran.push(Number(n));
    });
    const gated: number[] = [];
    w.register("Gated", async ([n]) => {
      gated.push(Number(n));
      await gate;
    });
    await w.start();
    try {
      for (let n = 0; n < 200; n++) await redis.lpush("queue:lat", job("Quick", n));
      await expect.poll(() => ran.length, { timeout: 60_000 }).toBe(200);
      const overlapping = spans.some(([s, e], i) => spans.some(([s2, e2], j) => j !== i && s2 < e && s < e2));
      expect(overlapping).toBe(true);

      for (let n = 0; n < 20; n++) await redis.lpush("queue:lat", job("Gated", n));
      await expect.poll(() => gated.length, { timeout: 30_000 }).toBe(5);
      // Any fetch beyond the free slots would have come back by now.
      await new Promise((r) => setTimeout(r, 500));
      expect(gated).toHaveLength(5);
      expect(await redis.llen("queue:lat")).toBe(15);
    } finally {
      open();
      await w.stop();
    }
  }, 120_000);
});
