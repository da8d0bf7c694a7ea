// The pieces that keep an unreachable Redis to one clear line: telling
// connection failures from reply errors, naming the reason, and deadlines.
import { Redis } from "ioredis";
import { describe, expect, it, vi } from "vitest";
import {
  bounded,
  describeRedis,
  explain,
  isConnectionError,
  RedisUnavailableError,
  reasonOf,
  TIMED_OUT,
  whenReady,
} from "../../src/core/redis/availability.js";

describe("availability", () => {
  it("tells connection failures from reply errors", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), {
      code: "ECONNREFUSED",
      address: "127.0.0.1",
      port: 1,
    });
    const maxRetries = Object.assign(new Error("Reached the max retries per request limit (which is 20)."), {
      name: "MaxRetriesPerRequestError",
    });
    expect(isConnectionError(refused)).toBe(true);
    expect(isConnectionError(maxRetries)).toBe(true);
    expect(isConnectionError(new Error("Connection is closed."))).toBe(true);
    expect(isConnectionError(new Error("WRONGTYPE Operation against a key holding the wrong kind of value"))).toBe(
      false,
    );
    expect(reasonOf(refused)).toBe("ECONNREFUSED 127.0.0.1:1");
    expect(reasonOf(new Error("Connection is closed."))).toBe("Connection is closed.");
  });

  it("explains a connection failure with the host, never the password", async () => {
    const redis = new Redis("redis://user:s3cret@127.0.0.1:1/0", { lazyConnect: true });
    expect(describeRedis(redis)).toBe("127.0.0.1:1");
    const e = explain(redis, new Error("Connection is closed."));
    expect(e).toBeInstanceOf(RedisUnavailableError);
    expect((e as Error).message).toBe("Redis unreachable at 127.0.0.1:1 (Connection is closed.)");
    expect((e as Error).message).not.toContain("s3cret");
    const reply = new Error("ERR unknown command");
    expect(explain(redis, reply)).toBe(reply);
    redis.disconnect();
  });

  it("whenReady rejects at once on a closed connection", async () => {
    const redis = new Redis("redis://127.0.0.1:1/0", { lazyConnect: true });
    redis.disconnect();
    await expect(whenReady(redis, 10_000)).rejects.toBeInstanceOf(RedisUnavailableError);
  });

  it("whenReady: calls made while a connection is down share one wait (one listener pair, one error each)", async () => {
    const redis = new Redis("redis://127.0.0.1:1/0", { lazyConnect: true, retryStrategy: () => 50 });
    redis.on("error", () => undefined);
    const waits = Array.from({ length: 50 }, () => whenReady(redis, 300));
    // Taken at once: ioredis adds a 'ready' listener of its own for each
    // connection attempt, a tick later, and drops it when the attempt fails,
    // so counting every listener after the wait depends on where its
    // reconnect loop happens to be.
    const ours = { ready: redis.listeners("ready"), end: redis.listeners("end") };
    expect(ours.ready).toHaveLength(1);
    expect(ours.end).toHaveLength(1);
    const results = await Promise.allSettled(waits);
    expect(results.every((r) => r.status === "rejected" && r.reason instanceof RedisUnavailableError)).toBe(true);
    expect(redis.listeners("ready")).not.toContain(ours.ready[0]);
    expect(redis.listeners("end")).not.toContain(ours.end[0]);
    // A later call waits anew.
    await expect(whenReady(redis, 50)).rejects.toBeInstanceOf(RedisUnavailableError);
    redis.disconnect();
  });

  it("bounded gives up at the deadline and passes results and errors through before it", async () => {
    const never = new Promise<number>(() => {});
    // On a fake clock: settled at the deadline and not a millisecond before, however loaded the machine.
    vi.useFakeTimers({ now: 1_000_000 });
    try {
      let settled: unknown = "pending";
      void bounded(never, Date.now() + 50).then((v) => (settled = v));
      await vi.advanceTimersByTimeAsync(49);
      expect(settled).toBe("pending");
      await vi.advanceTimersByTimeAsync(1);
      expect(settled).toBe(TIMED_OUT);
    } finally {
      vi.useRealTimers();
    }
    expect(await bounded(never, Date.now() - 1)).toBe(TIMED_OUT);
    expect(await bounded(Promise.resolve(7), Date.now() + 1000)).toBe(7);
    await expect(bounded(Promise.reject(new Error("x")), Date.now() + 1000)).rejects.toThrow("x");
  });
});
