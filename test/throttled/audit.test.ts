// `migrate audit` and sidekiq-throttled: a queue holding jobs of a class Ruby
// throttles (the gem's keys in Redis), which Node handles without a throttle,
// is BLOCKED with the fix; the handlers module's `throttled` export clears it.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type RedisServer } from "../../harness/redis-server.js";
import { auditQueues, collectHandlers } from "../../src/assembly/migration.js";

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await startRedis({ databases: 1 });
  redis = new Redis(server.url);
  const job = (cls: string) => JSON.stringify({ class: cls, args: [], queue: "partner", jid: `${cls}-1`, retry: true });
  await redis.lpush("queue:partner", job("PartnerApiJob"), job("PlainJob"));
  await redis.sadd("queues", "partner");
  // What Ruby's sidekiq_throttle leaves while the class runs.
  await redis.zadd("throttled:PartnerApiJob:concurrency.v2", Date.now() / 1000 + 900, "ruby-jid");
  await redis.lpush("throttled:PartnerApiJob:threshold:acme", String(Date.now() / 1000));
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

const handlers = (extra: Record<string, unknown> = {}) =>
  collectHandlers({
    ...extra,
    default: (w: { register: (c: string, f: () => void) => unknown }) => {
      w.register("PartnerApiJob", () => undefined);
      w.register("PlainJob", () => undefined);
    },
  });

describe("audit of queues with classes Ruby throttles", () => {
  it("BLOCKED, naming the gem's keys and the throttle to export, when Node would run the class unthrottled", async () => {
    const report = await auditQueues(redis, { queues: ["partner"], handlers: await handlers() });
    const q = report.queues[0]!;
    expect(q.verdict).toBe("BLOCKED");
    expect(q.missing).toEqual(["PartnerApiJob"]);
    expect(q.reasons).toHaveLength(1);
    expect(q.reasons[0]).toContain(
      "PartnerApiJob is throttled by sidekiq-throttled in Ruby (throttled:PartnerApiJob:concurrency.v2, throttled:PartnerApiJob:threshold:acme in Redis)",
    );
    expect(q.reasons[0]).toContain('export throttled = { classes: { "PartnerApiJob"');
  });

  it("READY once the handlers module exports a throttle for it", async () => {
    const h = await handlers({ throttled: { classes: { PartnerApiJob: { concurrency: { limit: 2 } } } } });
    const q = (await auditQueues(redis, { queues: ["partner"], handlers: h })).queues[0]!;
    expect(q.verdict).toBe("READY");
    expect(q.classes.find((c) => c.name === "PartnerApiJob")?.nodeThrottle).toBe(true);
  });

  it("a class Node has no handler for is left to the handler check (one reason, not two)", async () => {
    const h = await collectHandlers({
      default: (w: { register: (c: string, f: () => void) => unknown }) => w.register("PlainJob", () => undefined),
    });
    const q = (await auditQueues(redis, { queues: ["partner"], handlers: h })).queues[0]!;
    expect(q.verdict).toBe("BLOCKED");
    expect(q.reasons.filter((r) => r.includes("sidekiq-throttled"))).toEqual([]);
  });
});
