// When one of the worker's connections goes silent, the fetch lanes with no
// fetch in flight take new connections at once: they share its path to
// Redis. Found on their next fetch instead, lanes went dead one after another,
// each a block plus a timeout (13 s to flow again after a 3 s silence, where
// the slots were held while the command connection was silent). A lane with
// a fetch in flight keeps its own bound.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFaultProxy } from "../../harness/fault-proxy.js";
import type { RedisServer } from "../../harness/redis-server.js";
import { startServer } from "../../harness/servers.js";
import { connectRedis } from "../../src/core/redis/connection.js";
import type { Fetcher } from "../../src/core/server/fetch/fetch.js";
import { FetchLanes } from "../../src/core/server/fetch/fetch-lanes.js";
import { quietLogger as logger } from "../support/use-redis.js";

/** A lane's fetcher that never fetches: the test holds its lane "in flight" by hand. */
const idleFetcher = (): Fetcher => ({
  retrieveWork: async () => [],
  acknowledge: async () => undefined,
  bulkRequeue: async () => undefined,
  handBack: async () => undefined,
  close: async () => undefined,
});

describe("fetch lanes when a connection goes silent", () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  it("idle lanes reconnect when the command connection times out; a lane with a fetch in flight does not", async () => {
    const proxy = await startFaultProxy(server.port);
    const { redis } = connectRedis({ url: proxy.url, networkTimeoutMs: 1000 });
    redis.on("error", () => undefined);
    const lanes = new FetchLanes(logger);
    const connections: Redis[] = [];
    try {
      const fetchers = await lanes.open(2, redis, undefined, (blocking) => {
        connections.push(blocking);
        return idleFetcher();
      });
      await Promise.all(connections.map((c) => c.ping()));
      const readies = connections.map((c) => {
        let n = 0;
        c.on("ready", () => n++);
        return () => n;
      });
      lanes.begin(fetchers[0]!);
      proxy.blackhole();
      // The command connection's next command finds the silence (its 1 s timeout).
      await expect(redis.ping()).resolves.toBe("PONG");
      await expect.poll(() => readies[1]!(), { timeout: 30_000 }).toBeGreaterThan(0);
      expect(readies[0]!()).toBe(0);
      expect(connections[0]!.status).toBe("ready");
      lanes.end(fetchers[0]!);
    } finally {
      lanes.disconnect();
      redis.disconnect();
      await proxy.close();
    }
  }, 60_000);
});
