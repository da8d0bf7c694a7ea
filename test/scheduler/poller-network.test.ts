// sidekiq-scheduler's poller on a network that drops its flows silently: a
// trigger waiting on the dead connection does not hold the next fire times
// back, as rufus runs each trigger in a work thread of its own. The clock is
// the test's: it moves one second once the last second was triggered, and the
// network timeout is longer than the test waits for a trigger, so a trigger
// that waited for the one before could not be seen in time.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFaultProxy } from "../../harness/fault-proxy.js";
import type { RedisServer } from "../../harness/redis-server.js";
import { startServer } from "../../harness/servers.js";
import { Client } from "../../src/core/client/client.js";
import { connectRedis } from "../../src/core/redis/connection.js";
import { SchedulerApi } from "../../src/addons/sidekiq-scheduler/scheduler-api.js";
import { SidekiqSchedulerPoller } from "../../src/addons/sidekiq-scheduler/poller.js";
import { quietLogger as logger } from "../support/use-redis.js";

const NETWORK_TIMEOUT_MS = 60_000;
const TRIGGER_WAIT_MS = 20_000;

describe("sidekiq-scheduler's poller through a blackhole", () => {
  let server: RedisServer;
  let redis: Redis;
  beforeAll(async () => {
    server = await startServer();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });

  it("every fire time in the outage is claimed and pushed once", async () => {
    const name = "net-overlap";
    await new SchedulerApi({ redis }).set(name, { cron: "* * * * * *", class: "NetJob", queue: name });
    const proxy = await startFaultProxy(server.port);
    const { redis: via } = connectRedis({ url: proxy.url, networkTimeoutMs: NETWORK_TIMEOUT_MS });
    const client = new Client({ redis: via, dialect: 8 });
    let clock = Date.UTC(2026, 10, 29, 1, 0, 0, 100);
    const poller = new SidekiqSchedulerPoller({ redis: via, client, logger, now: () => clock, tickMs: 20 });
    const nextSecond = async () => {
      clock += 1000;
      await expect.poll(() => poller.loaded()[0]!.next! > clock, { timeout: TRIGGER_WAIT_MS }).toBe(true);
    };
    try {
      await poller.start();
      const first = Math.floor(clock / 1000) + 1;
      await nextSecond();
      await expect.poll(() => redis.llen(`queue:${name}`), { timeout: TRIGGER_WAIT_MS }).toBe(1);
      proxy.blackhole();
      // Four more seconds while each trigger after the fault waits on the silent flow.
      for (let i = 0; i < 4; i++) await nextSecond();
      // The flows are reset, as a load balancer does after a failover: what waited is sent on new connections.
      proxy.resetAll();
      const seconds = Array.from({ length: 5 }, (_, i) => String(first + i));
      await expect
        .poll(() => redis.zrange(`sidekiq-scheduler:pushed:${name}`, 0, -1), { timeout: 30_000 })
        .toEqual(seconds);
      await expect.poll(() => redis.llen(`queue:${name}`), { timeout: 30_000 }).toBe(5);
    } finally {
      await poller.stop();
      await client.close();
      via.disconnect();
      await proxy.close();
    }
  }, 120_000);
});
