// Bad cron entries: each gets one clear log line, the poller keeps running,
// the good jobs still fire, and the bad entries stay as they were. (The gem's
// own poller loses the whole poll to one unreadable entry; Node skips it.)
// Also the poller's rules on a controlled clock: disabled jobs, the grace
// period, last_enqueue_time, and the once-per-fire-time lock.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "../src/core/client/client.js";
import { CronApi, CronPoller } from "../src/addons/sidekiq-cron/index.js";
import { Worker } from "../src/assembly/worker.js";
import type { Logger } from "../src/core/logging/logger.js";
import { startRedis, type RedisServer } from "../harness/redis-server.js";

describe("cron poller: bad input and the poller's rules", () => {
  let server: RedisServer;
  let redis: Redis;
  let client: Client;
  const lines: string[] = [];
  const logger: Logger = {
    debug() {},
    info: (m) => lines.push(`INFO ${m}`),
    warn: (m) => lines.push(`WARN ${m}`),
    error: (m) => lines.push(`ERROR ${m}`),
  };
  const poller = (extra: Partial<ConstructorParameters<typeof CronPoller>[0]> = {}) =>
    new CronPoller({ redis, client, logger, namespaces: ["default", "other"], ...extra });

  beforeAll(async () => {
    server = await startRedis();
    redis = new Redis(`${server.url}/0`);
    client = new Client({ redis, dialect: 7 });
  });
  afterAll(async () => {
    await client.close();
    redis.disconnect();
    await server.stop();
  });

  it("logs each bad entry once, keeps polling, fires the good job and leaves the bad ones untouched", async () => {
    const api = new CronApi({ redis });
    await api.create({ name: "good", cron: "* * * * * *", class: "GoodJob", queue: "cron-bad" });
    const bad: Record<string, Record<string, string>> = {
      "cron_job:default:bad-cron": { name: "bad-cron", klass: "X", cron: "61 * * * *", message: '{"class":"X"}' },
      "cron_job:default:no-cron": { name: "no-cron", klass: "X", message: '{"class":"X"}' },
      "cron_job:default:no-class": { name: "no-class", cron: "* * * * *", message: '{"queue":"q"}' },
      "cron_job:default:bad-json": { name: "bad-json", klass: "X", cron: "* * * * *", message: "{not json" },
      "cron_job:default:natural": { name: "natural", klass: "X", cron: "every day at noon", message: '{"class":"X"}' },
      "cron_job:default:random": { name: "random", klass: "X", cron: "0~10 * * * *", message: '{"class":"X"}' },
    };
    for (const [key, h] of Object.entries(bad)) {
      await redis.hset(key, h);
      await redis.sadd("cron_jobs:default", key);
    }
    await redis.set("cron_job:default:not-a-hash", "oops");
    await redis.sadd("cron_jobs:default", "cron_job:default:not-a-hash", "cron_job:default:gone");
    const before = await Promise.all(Object.keys(bad).map((k) => redis.hgetall(k)));

    const p = poller();
    // A save may record the coming fire time as done: wait two seconds, so a
    // later one is due whatever part of a second the save fell in (a poll
    // enqueues only the latest due fire time, as the gem's does).
    await new Promise((r) => setTimeout(r, 2100));
    const first = await p.pollOnce();
    await new Promise((r) => setTimeout(r, 2100));
    const second = await p.pollOnce();
    expect(first.enqueued.map((e) => e.name)).toEqual(["good"]);
    expect(second.enqueued.map((e) => e.name)).toEqual(["good"]);
    expect(await redis.llen("queue:cron-bad")).toBe(2);

    const warnings = lines.filter((l) => l.startsWith("WARN"));
    // One line per bad entry, not one per poll; each names the key and the reason.
    expect(warnings).toHaveLength(7);
    const about = (key: string) => warnings.filter((w) => w.includes(key));
    expect(about("cron_job:default:bad-cron")[0]).toMatch(/invalid, skipped.*'cron' -> "61 \* \* \* \*"/);
    expect(about("cron_job:default:no-cron")[0]).toMatch(/'cron' must be set/);
    expect(about("cron_job:default:no-class")[0]).toMatch(/'klass' \(or class\) must be set/);
    expect(about("cron_job:default:bad-json")[0]).toMatch(/cannot be read.*message is not JSON/);
    expect(about("cron_job:default:natural")[0]).toMatch(/invalid, skipped/);
    expect(about("cron_job:default:random")[0]).toMatch(/"~"/);
    expect(about("cron_job:default:not-a-hash")[0]).toMatch(/cannot be read.*WRONGTYPE/);
    for (const w of warnings) expect(w).toContain("other cron jobs still run");
    expect(await Promise.all(Object.keys(bad).map((k) => redis.hgetall(k)))).toEqual(before);
    expect(await redis.get("cron_job:default:not-a-hash")).toBe("oops");
    expect(await redis.scard("cron_jobs:default")).toBe(9);

    // The running poller (timer-driven) keeps going past the bad entries.
    const running = poller({ pollInterval: 0.2, initialWait: 0 });
    running.start();
    await new Promise((r) => setTimeout(r, 2500));
    await running.stop();
    expect(running.enqueuedCount).toBeGreaterThan(0);
    expect(lines.filter((l) => l.startsWith("ERROR"))).toEqual([]);
  });

  it("the Worker runs the cron poller by default, and not with cron: false", async () => {
    const api = new CronApi({ redis });
    await api.create({ name: "w", namespace: "worker", cron: "* * * * * *", class: "W", queue: "cron-worker" });
    const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
    const common = {
      redis: `${server.url}/0`,
      dialect: 7 as const,
      queues: ["cron-none"],
      scheduler: false,
      timeout: 1,
      logger: quiet,
    };
    const off = new Worker({ ...common, cron: false });
    await off.start();
    await new Promise((r) => setTimeout(r, 2500));
    await off.stop();
    expect(await redis.llen("queue:cron-worker")).toBe(0);
    const on = new Worker({ ...common, cron: { pollInterval: 0.3, initialWait: 0, namespaces: ["worker"] } });
    await on.start();
    await new Promise((r) => setTimeout(r, 2500));
    await on.stop();
    expect(await redis.llen("queue:cron-worker")).toBeGreaterThan(0);
  });

  it("skips disabled jobs and fire times past the grace period; one push per fire time", async () => {
    const api = new CronApi({ redis, now: () => Date.parse("2030-01-01T10:00:30Z") });
    await api.create({ name: "hourly", namespace: "other", cron: "0 * * * *", class: "H", queue: "cron-rules" });
    await api.create({
      name: "off",
      namespace: "other",
      cron: "* * * * *",
      class: "H",
      queue: "cron-rules",
      status: "disabled",
    });
    const at = (iso: string) => new Date(Date.parse(iso));
    const p = poller({ namespaces: ["other"] });
    // 10:00:30: the 10:00 fire time was recorded at save (a new job does not fire at once).
    expect((await p.pollOnce(at("2030-01-01T10:00:30Z"))).enqueued).toEqual([]);
    // 11:00:59: the 11:00 fire time, 59 s old: enqueued once, by the first poll only.
    const r1 = await p.pollOnce(at("2030-01-01T11:00:59Z"));
    expect(r1.enqueued.map((e) => [e.name, e.fireTime])).toEqual([["hourly", "2030-01-01T11:00:00Z"]]);
    expect((await poller({ namespaces: ["other"] }).pollOnce(at("2030-01-01T11:00:59.5Z"))).enqueued).toEqual([]);
    // 12:01:05: 65 s late, past the 60 s grace period: skipped (as the gem skips it).
    expect((await p.pollOnce(at("2030-01-01T12:01:05Z"))).enqueued).toEqual([]);
    expect(await redis.llen("queue:cron-rules")).toBe(1);
    const members = await redis.zrange("cron_job:other:hourly:enqueued", 0, -1);
    expect(members).toEqual(["2030-01-01T10:00:00Z", "2030-01-01T11:00:00Z"]);
    expect(await redis.zrange("cron_job:other:off:enqueued", 0, -1)).toHaveLength(1);
  });
});
