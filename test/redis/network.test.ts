// Every connection the bridge opens bounds its silence: the settings come
// from one place (a source's networkTimeoutMs, else the environment, else
// Sidekiq 8's 3 s), fetch connections get their 2 s block on top, and an
// ioredis instance passed in is used as it is, with one warning when nothing
// bounds it.
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { takeNetworkTimeout } from "../../src/tools/cli/network-flag.js";
import { UsageError } from "../../src/tools/cli/errors.js";
import { Client } from "../../src/core/client/client.js";
import { resolveOptions } from "../../src/core/config/resolve.js";
import { connectRedis, networkTimeoutFor } from "../../src/core/redis/connection.js";
import {
  blockingOptions,
  DEFAULT_NETWORK_TIMEOUT_MS,
  KEEPALIVE_IDLE_MS,
  NETWORK_TIMEOUT_ENV,
  NetworkTimeoutError,
  resolveNetworkTimeout,
  warnIfUntimed,
} from "../../src/core/redis/network.js";
import { isConnectionError } from "../../src/core/redis/availability.js";
import { useRedis } from "../support/use-redis.js";

describe("network timeouts", () => {
  const t = useRedis();

  it("a connection dropped with a command in flight is made again once, not dropped again by the old socket's timer", async () => {
    const { redis } = connectRedis({ url: t.server.url, networkTimeoutMs: 1000 });
    try {
      await redis.ping();
      let closes = 0;
      redis.on("close", () => closes++);
      redis.on("error", () => undefined);
      // In flight (it blocks 0.5 s, under the 1 s bound) when its socket is killed; sent again on the new one.
      const pop = redis.blpop("nothing-here", 0.5);
      await t.redis.client("KILL", "TYPE", "normal", "SKIPME", "yes");
      expect(await pop).toBeNull();
      // Past the moment the first socket's timer would have fired (1 s after the first write).
      await new Promise((r) => setTimeout(r, 1500));
      expect(await redis.ping()).toBe("PONG");
      expect(closes).toBe(1);
    } finally {
      redis.disconnect();
    }
  });

  it("resolve from the option, else the environment (seconds), else 3 s", () => {
    expect(resolveNetworkTimeout(undefined, {})).toBe(DEFAULT_NETWORK_TIMEOUT_MS);
    expect(DEFAULT_NETWORK_TIMEOUT_MS).toBe(3000);
    expect(resolveNetworkTimeout(undefined, { [NETWORK_TIMEOUT_ENV]: "1.5" })).toBe(1500);
    expect(resolveNetworkTimeout(700, { [NETWORK_TIMEOUT_ENV]: "1.5" })).toBe(700);
    expect(() => resolveNetworkTimeout(0, {})).toThrow(NetworkTimeoutError);
    expect(() => resolveNetworkTimeout(undefined, { [NETWORK_TIMEOUT_ENV]: "soon" })).toThrow(
      /SIDEKIQ_BRIDGE_NETWORK_TIMEOUT \(seconds\) must be a positive number/,
    );
  });

  it("every connection we open bounds connect and reply, with keepalive on", () => {
    for (const source of ["redis://127.0.0.1:1/0", { url: "redis://127.0.0.1:1/0" }]) {
      const { redis } = connectRedis(source as string);
      expect(redis.options.socketTimeout).toBe(3000);
      expect(redis.options.connectTimeout).toBe(3000);
      expect(redis.options.keepAlive).toBe(KEEPALIVE_IDLE_MS);
      redis.disconnect();
    }
    const { redis } = connectRedis({ url: "redis://127.0.0.1:1/0", networkTimeoutMs: 1200 });
    expect([redis.options.socketTimeout, redis.options.connectTimeout]).toEqual([1200, 1200]);
    // A fetch connection's silence may last its 2 s block on top, as Sidekiq's blocking_call.
    expect(blockingOptions(1200, 2).socketTimeout).toBe(3200);
    redis.disconnect();
    // The source's own ioredis options win.
    const own = connectRedis({ url: "redis://127.0.0.1:1/0", ioredis: { socketTimeout: 9000 } });
    expect(own.redis.options.socketTimeout).toBe(9000);
    own.redis.disconnect();
  });

  it("the worker's resolved config names the timeout of its source", () => {
    expect(resolveOptions({ redis: { url: "redis://x", networkTimeoutMs: 800 } }).networkTimeoutMs).toBe(800);
    const mine = new Redis({ lazyConnect: true, socketTimeout: 4000 });
    expect(networkTimeoutFor(mine)).toBe(4000);
    expect(resolveOptions({ redis: "redis://x" }).networkTimeoutMs).toBe(resolveNetworkTimeout());
    mine.disconnect();
  });

  it("an ioredis instance passed in is used as is, with one warning when nothing bounds it", async () => {
    const bare = new Redis({ lazyConnect: true });
    const warned: string[] = [];
    const c1 = new Client({ redis: bare, dialect: 8, warn: (m) => warned.push(m) });
    const c2 = new Client({ redis: bare, dialect: 8, warn: (m) => warned.push(m) });
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(/no socketTimeout.*Set socketTimeout/);
    expect(bare.options.socketTimeout).toBeUndefined();
    const timed = new Redis({ lazyConnect: true, socketTimeout: 3000 });
    warnIfUntimed(timed, (m) => warned.push(m));
    expect(warned).toHaveLength(1);
    await Promise.all([c1.close(), c2.close()]);
    bare.disconnect();
    timed.disconnect();
  });

  it("ioredis's socket timeout is a connection failure", () => {
    expect(isConnectionError(new Error("Socket timeout. Expecting data, but didn't receive any in 3000ms."))).toBe(
      true,
    );
    // A pipeline half answered when its socket closed: ioredis aborts the rest rather than send it again.
    expect(isConnectionError(new Error("Command aborted due to connection close"))).toBe(true);
  });

  it("--network-timeout is taken from any command's flags and set for the whole process", () => {
    const env: NodeJS.ProcessEnv = {};
    expect(takeNetworkTimeout(["--redis", "u", "--network-timeout", "2.5", "x"], env)).toEqual(["--redis", "u", "x"]);
    expect(env[NETWORK_TIMEOUT_ENV]).toBe("2.5");
    expect(takeNetworkTimeout(["--network-timeout=4"], env)).toEqual([]);
    expect(env[NETWORK_TIMEOUT_ENV]).toBe("4");
    expect(() => takeNetworkTimeout(["--network-timeout", "0"], env)).toThrow(UsageError);
    expect(() => takeNetworkTimeout(["--network-timeout"], env)).toThrow(/needs a number of seconds/);
    expect(() => takeNetworkTimeout(["--network-timeout="], env)).toThrow(/positive number of seconds/);
  });
});
