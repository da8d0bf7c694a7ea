// Sidekiq's start-up warning about maxmemory-policy, on a real redis-server.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { run as stats } from "../../src/tools/cli/stats-command.js";
import type { RedisServer } from "../../harness/redis-server.js";
import { startServer } from "../../harness/servers.js";
import { checkEvictionPolicy, evictionWarning, maxmemoryPolicy } from "../../src/core/redis/eviction-policy.js";
import { Worker } from "../../src/assembly/worker.js";

describe("maxmemory-policy: warned about as Sidekiq does at start", () => {
  let server: RedisServer;
  let redis: Redis;
  beforeAll(async () => {
    server = await startServer({ config: ["maxmemory-policy allkeys-lru"] });
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });

  it("reads the policy; noeviction and Redis Enterprise Cloud's empty answer are safe", async () => {
    expect(await maxmemoryPolicy(redis)).toBe("allkeys-lru");
    expect(evictionWarning("noeviction")).toBeUndefined();
    expect(evictionWarning("")).toBeUndefined();
    expect(evictionWarning("volatile-lru")).toContain("current policy: 'volatile-lru'");
  });

  it("the worker logs Sidekiq's warning at start, and none once the policy is noeviction", async () => {
    const lines: string[] = [];
    const log = (m: string) => lines.push(m);
    const logger = { debug: () => {}, info: () => {}, warn: log, error: log };
    const start = async () => {
      const w = new Worker({
        redis: server.url,
        dialect: 8,
        queues: ["eviction"],
        concurrency: 1,
        logger,
        scheduler: false,
      });
      await w.start();
      await w.stop();
    };
    await start();
    expect(lines.filter((l) => l.includes("maxmemory policy is recommended"))).toEqual([
      expect.stringContaining("current policy: 'allkeys-lru'"),
    ]);
    await redis.config("SET", "maxmemory-policy", "noeviction");
    lines.length = 0;
    await start();
    expect(lines.filter((l) => l.includes("evict"))).toEqual([]);
    expect(await checkEvictionPolicy(redis)).toBeUndefined();
  });

  it("sidekiq-bridge stats prints the warning on standard error, its figures unchanged", async () => {
    await redis.config("SET", "maxmemory-policy", "volatile-ttl");
    const err = vi.spyOn(console, "error").mockImplementation(() => {});
    const out = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    try {
      expect(await stats(["--redis", server.url, "--json"])).toBe(0);
      expect(err.mock.calls.map((c) => String(c[0]))).toEqual([expect.stringContaining("'volatile-ttl'")]);
      expect(JSON.parse(String(out.mock.calls[0]![0]))).toMatchObject({ processed: 0, failed: 0 });
    } finally {
      err.mockRestore();
      out.mockRestore();
      await redis.config("SET", "maxmemory-policy", "noeviction");
    }
  });
});
