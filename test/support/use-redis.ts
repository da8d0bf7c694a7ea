// One Redis server for a test file: started before its tests, stopped after,
// with a connection to it; and a logger that keeps quiet.
import { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { startRedis, type RedisServer } from "../../harness/redis-server.js";

export interface TestRedis {
  server: RedisServer;
  redis: Redis;
}

/** Read its fields inside tests (they are set in beforeAll). */
export function useRedis(): TestRedis {
  const t = {} as TestRedis;
  beforeAll(async () => {
    t.server = await startRedis({ databases: 1 });
    t.redis = new Redis(t.server.url);
  });
  afterAll(async () => {
    t.redis.disconnect();
    await t.server.stop();
  });
  return t;
}

const noop = () => {};
export const quietLogger = { debug: noop, info: noop, warn: noop, error: noop };
