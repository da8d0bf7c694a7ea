// Bad sidekiq-scheduler entries: each problem gets one clear log line, the
// scheduler keeps running, the good schedules still fire, and the bad
// entries stay as they were. (The gem's own scheduler loses every schedule to
// one `schedules` value that is not JSON; Node skips that one.) A schedule
// without a class is handled as Ruby handles it: each trigger is claimed and
// nothing is pushed (Sidekiq::Client.push refuses it).
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type RedisServer } from "../harness/redis-server.js";
import { Client } from "../src/core/client/client.js";
import type { Logger } from "../src/core/logging/logger.js";
import { SidekiqSchedulerPoller } from "../src/addons/sidekiq-scheduler/poller.js";

describe("sidekiq-scheduler: bad input", () => {
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

  it("logs each bad entry once, keeps firing the good ones and leaves the bad ones untouched", async () => {
    const q = "bad-in";
    const bad: Record<string, string> = {
      "not-json": "{nope",
      "not-object": '"every 1m"',
      "bad-cron": JSON.stringify({ cron: "61 * * * *", class: "FixedJob", queue: q }),
      "bad-every": JSON.stringify({ every: "often", class: "X", queue: q }),
      "no-kind": JSON.stringify({ class: "X", queue: q }),
    };
    await redis.hset("schedules", {
      good: JSON.stringify({ cron: "* * * * * *", class: "GoodJob", queue: q, args: ["good"] }),
      "no-class": JSON.stringify({ every: "1s", queue: q }),
      "bad-state": JSON.stringify({ every: "1s", class: "StateJob", queue: q }),
      ...bad,
    });
    await redis.hset("sidekiq-scheduler:states", "bad-state", "{oops");
    const p = new SidekiqSchedulerPoller({ redis, client, logger, dynamicEvery: "0.5s", tickMs: 100 });
    await p.start();
    await new Promise((r) => setTimeout(r, 3200));
    // A bad entry arriving later, and a bad one fixed: read from schedules_changed.
    await redis.hset("schedules", "late", "[1,2");
    await redis.hset("schedules", "bad-cron", JSON.stringify({ cron: "* * * * * *", class: "FixedJob", queue: q }));
    const changed = String(Date.now() / 1000);
    await redis.zadd("schedules_changed", changed, "late", changed, "bad-cron");
    await new Promise((r) => setTimeout(r, 2600));
    await p.stop();

    const warned = lines.filter((l) => l.startsWith("WARN"));
    const about = (name: string) => warned.filter((l) => l.includes(`"${name}"`));
    for (const name of ["not-json", "not-object", "bad-cron", "bad-every", "no-kind", "no-class", "bad-state", "late"])
      expect(about(name), `${name}: ${warned.join("\n")}`).toHaveLength(1);
    expect(about("not-json")[0]).toMatch(
      /cannot be read, skipped \(other schedules still run\): its value is not JSON/,
    );
    expect(about("bad-cron")[0]).toMatch(/is invalid, skipped .*invalid cron line "61 \* \* \* \*"/);
    expect(about("no-kind")[0]).toMatch(/no cron \/ every \/ at \/ in \/ interval found/);
    expect(about("no-class")[0]).toMatch(/has no class/);
    expect(about("bad-state")[0]).toMatch(/state of schedule "bad-state" is not JSON/);
    expect(lines).toContainEqual('INFO sidekiq-scheduler: schedule "bad-cron" is readable again');
    expect(lines.filter((l) => l.startsWith("ERROR"))).toEqual([]);

    const jobs = (await redis.lrange(`queue:${q}`, 0, -1)).map((raw) => JSON.parse(raw) as { class: string });
    expect(jobs.filter((j) => j.class === "GoodJob").length).toBeGreaterThanOrEqual(5);
    expect(jobs.filter((j) => j.class === "FixedJob").length).toBeGreaterThanOrEqual(2);
    expect(jobs.filter((j) => !["GoodJob", "FixedJob"].includes(j.class))).toEqual([]);
    // No class: each trigger claimed, as Ruby claims before its push fails.
    expect(await redis.zcard("sidekiq-scheduler:pushed:no-class")).toBeGreaterThanOrEqual(4);
    // The bad entries are left as they were.
    for (const [name, value] of Object.entries(bad))
      if (name !== "bad-cron") expect(await redis.hget("schedules", name)).toBe(value);
    expect(await redis.hget("sidekiq-scheduler:states", "bad-state")).toBe("{oops");
  });
});
