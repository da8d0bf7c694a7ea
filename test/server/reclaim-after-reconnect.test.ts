// A worker whose connections drop and come back may be talking to another
// server (a Sentinel failover) with an older copy of its working hash: a job
// it already acknowledged is back there, held by a live process, so recovery
// never returns it. After a reconnect the worker reclaims it, with no fetch
// in flight at the drop (every slot busy, so no failed fetch to trigger it).
import { describe, expect, it } from "vitest";
import { WORKING_REGISTRY, workingHashKey } from "../../src/core/wire/bridge-keys.js";
import { Worker } from "../../src/assembly/worker.js";
import { quietLogger as logger, useRedis } from "../support/use-redis.js";

describe("reclaim after a reconnect", () => {
  const t = useRedis();

  it("a job left in a live worker's working hash by an older copy runs again", async () => {
    const { server, redis } = t;
    const ran: string[] = [];
    const w = new Worker({ redis: server.url, dialect: 8, queues: ["rc"], concurrency: 1, logger, scheduler: false });
    w.register("Slow", async ([ms]) => {
      await new Promise((r) => setTimeout(r, Number(ms)));
      ran.push(`slow ${ms}`);
    });
    w.register("Stray", async () => void ran.push("stray"));
    await w.start();
    try {
      const job = (cls: string, args: unknown[]) =>
        JSON.stringify({ class: cls, queue: "rc", args, jid: cls.toLowerCase().padEnd(24, "0"), retry: true });
      // Its one slot busy for 1.5 s: the fetch loop waits for room, no fetch in flight.
      await redis.lpush("queue:rc", job("Slow", [1500]));
      await expect.poll(() => redis.llen("queue:rc")).toBe(0);
      await new Promise((r) => setTimeout(r, 100));
      // The older copy: a job acknowledged long ago, back in this worker's working hash.
      const key = workingHashKey(w.identity, "queue:rc");
      await redis.hset(key, "900", job("Stray", []));
      await redis.sadd(WORKING_REGISTRY, key);
      await redis.client("KILL", "TYPE", "normal");
      await expect.poll(() => ran, { timeout: 10_000 }).toEqual(["slow 1500", "stray"]);
      await expect.poll(() => redis.hlen(key)).toBe(0);
    } finally {
      await w.stop();
    }
  }, 30_000);
});
