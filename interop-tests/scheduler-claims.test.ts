// Two Node schedulers on one Redis, as two processes of a fleet: the gem's
// claim makes each cron fire time and each `at` one push, while `every` is
// pushed by each scheduler on its own cadence. And a static schedule (the
// `:scheduler: :schedule:` section) is written over the Redis one at start,
// as sidekiq-scheduler 6.0.2 writes it without `dynamic`; with `dynamic`, or
// without a static schedule, Redis is left alone.
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startRedis, type RedisServer } from "../harness/redis-server.js";
import { Client } from "../src/core/client/client.js";
import type { Logger } from "../src/core/logging/logger.js";
import { SidekiqSchedulerPoller, type SchedulerPollerOptions } from "../src/addons/sidekiq-scheduler/poller.js";

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const utc = (ms: number) => new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " +0000";

describe("sidekiq-scheduler: claims between schedulers, and the static schedule", () => {
  let server: RedisServer;
  let redis: Redis;
  let client: Client;
  const poller = (o: Partial<SchedulerPollerOptions> = {}) =>
    new SidekiqSchedulerPoller({ redis, client, logger: quiet, tickMs: 100, dynamicEvery: "0.5s", ...o });

  beforeAll(async () => {
    server = await startRedis();
    redis = new Redis(`${server.url}/0`);
    client = new Client({ redis, dialect: 8 });
  });
  beforeEach(() => redis.flushdb());
  afterAll(async () => {
    await client.close();
    redis.disconnect();
    await server.stop();
  });

  it("two schedulers push each cron fire time and each at once, and every on each cadence", async () => {
    const at = Math.ceil(Date.now() / 1000) * 1000 + 2000;
    const job = (kind: string, value: string, marker: string) =>
      JSON.stringify({ [kind]: value, class: "ClaimJob", queue: "claims", args: [marker] });
    await redis.hset("schedules", {
      sec: job("cron", "* * * * * *", "sec"),
      at: job("at", utc(at), "at"),
      every: job("every", "1s", "every"),
    });
    const triggers: number[] = [];
    const listen = (p: SidekiqSchedulerPoller) => {
      p.onTrigger = (r) => {
        if (r.name === "every" && r.second !== null) triggers.push(r.second);
      };
      return p;
    };
    const a = listen(poller());
    await a.start();
    await sleep(400); // the second scheduler loads later: its every cadence is its own
    const b = listen(poller());
    await b.start();
    await sleep(3600);
    await Promise.all([a.stop(), b.stop()]);
    const jobs = (await redis.lrange("queue:claims", 0, -1)).map(
      (raw) => (JSON.parse(raw) as { args: string[] }).args[0],
    );
    const n = (m: string) => jobs.filter((x) => x === m).length;
    expect(n("sec")).toBe(await redis.zcard("sidekiq-scheduler:pushed:sec"));
    expect(n("sec")).toBeGreaterThanOrEqual(3);
    expect(a.enqueuedCount + b.enqueuedCount).toBe(jobs.length);
    expect(await redis.zrange("sidekiq-scheduler:pushed:at", 0, -1)).toEqual([String(at / 1000)]);
    expect(n("at")).toBe(1);
    // every 1s: each scheduler triggered on its own cadence, and each trigger pushed
    // unless the other had triggered in the same second.
    expect(triggers.length).toBeGreaterThanOrEqual(5);
    expect(n("every")).toBe(new Set(triggers).size);
    expect(n("every")).toBe(await redis.zcard("sidekiq-scheduler:pushed:every"));
  });

  it("a static schedule is written over Redis at start; with dynamic, or without one, Redis is left alone", async () => {
    await redis.hset("schedules", "only-in-redis", JSON.stringify({ every: "1h", class: "RedisJob" }));
    const dynamic = poller({ schedule: { StaticJob: { every: "1h" } }, dynamic: true });
    await dynamic.start();
    await dynamic.stop();
    expect(await redis.hkeys("schedules")).toEqual(["only-in-redis"]);
    expect(dynamic.loaded().map((l) => l.name)).toEqual(["only-in-redis"]);

    const plain = poller();
    await plain.start();
    await plain.stop();
    expect(await redis.hkeys("schedules")).toEqual(["only-in-redis"]);

    const stat = poller({ schedule: { StaticJob: { every: "1h", queue: "low" } } });
    await stat.start();
    await stat.stop();
    expect(await redis.hgetall("schedules")).toEqual({
      StaticJob: '{"every":"1h","queue":"low","class":"StaticJob"}',
    });
    expect(await redis.zrange("schedules_changed", 0, -1)).toEqual(["StaticJob", "only-in-redis"].sort());
    expect(stat.loaded().map((l) => l.name)).toEqual(["StaticJob"]);
    expect(await redis.hget("sidekiq-scheduler:next_times", "StaticJob")).toMatch(
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}$/,
    );
  });
});
