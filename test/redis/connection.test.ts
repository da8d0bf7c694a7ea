import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { connectRedis } from "../../src/redis/connection.js";

describe("connectRedis", () => {
  it("uses an app's ioredis client as is, also one from another copy of the package", () => {
    const mine = new Redis({ lazyConnect: true });
    expect(connectRedis(mine)).toEqual({ redis: mine, owned: false });
    // What a second copy of ioredis looks like from here: the same methods, another class.
    const foreign = Object.assign(Object.create({ duplicate() {}, pipeline() {} }), { options: {} });
    expect(connectRedis(foreign).redis).toBe(foreign);
    expect(connectRedis(foreign).owned).toBe(false);
    mine.disconnect();
  });

  it("opens (and owns) a connection for a URL or options", () => {
    const { redis, owned } = connectRedis({ url: "redis://127.0.0.1:1/3", ioredis: { lazyConnect: true } });
    expect(owned).toBe(true);
    expect(redis.options.db).toBe(3);
    redis.disconnect();
  });
});
