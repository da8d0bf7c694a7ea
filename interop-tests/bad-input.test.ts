// A corpus of bad payloads. Each has a defined outcome, the worker
// keeps running, and nothing else is affected.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Worker } from "../src/assembly/worker.js";
import type { Logger } from "../src/core/logging/logger.js";
import { JobRecord } from "../src/core/wire/index.js";
import { startRedis, type RedisServer } from "../harness/redis-server.js";

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const JID = (n: number) => n.toString(16).padStart(24, "0");
const good = (n: number, extra = "") =>
  `{"retry":true,"queue":"bad","class":"GoodJob","args":[${n}],"jid":"${JID(n)}","created_at":1795000000.5${extra}}`;

describe("bad input: every case has a defined outcome and the worker survives", () => {
  let server: RedisServer;
  let redis: Redis;
  let worker: Worker;
  const ran: unknown[][] = [];

  beforeAll(async () => {
    server = await startRedis();
    redis = new Redis(`${server.url}/0`);
    worker = new Worker({
      redis: `${server.url}/0`,
      dialect: "7.3.2",
      queues: ["bad"],
      concurrency: 4,
      scheduler: false,
      timeout: 3,
      logger: quiet,
    });
    worker.register("GoodJob", (args) => {
      ran.push(args);
    });
    worker.register("FailingJob", () => {
      throw new Error("fails on purpose");
    });
    await worker.start();
  });
  afterAll(async () => {
    await worker.stop();
    redis.disconnect();
    await server.stop();
  });

  async function deliver(raw: string | Buffer): Promise<void> {
    const before = ran.length;
    const deadBefore = await redis.zcard("dead");
    const retryBefore = await redis.zcard("retry");
    await redis.lpush("queue:bad", raw);
    // Done when the queue and our working list are empty and something happened.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const left = (await redis.llen("queue:bad")) + worker.dump().length;
      const happened =
        ran.length > before || (await redis.zcard("dead")) > deadBefore || (await redis.zcard("retry")) > retryBefore;
      if (left === 0 && happened) return;
      if (Date.now() > deadline) throw new Error("no outcome within 20 s");
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async function deadHas(raw: string | Buffer): Promise<boolean> {
    const members = await redis.zrangeBuffer("dead", 0, -1);
    const want = Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
    return members.some((m) => m.equals(want));
  }

  it.each([
    ["malformed JSON", "{not json"],
    ["JSON that is not an object", "[1,2]"],
    ["null", "null"],
    ["no class", `{"args":[1],"jid":"${JID(1)}"}`],
    ["args not an array", `{"class":"GoodJob","args":"x","jid":"${JID(2)}"}`],
    ["args missing", `{"class":"GoodJob","jid":"${JID(3)}"}`],
  ])("%s: goes to the dead set exactly as it came", async (_name, raw) => {
    await deliver(raw);
    expect(await deadHas(raw)).toBe(true);
  });

  it("bytes that are not UTF-8: the dead set holds the very same bytes", async () => {
    const raw = Buffer.concat([
      Buffer.from('{"class":"GoodJob","args":["'),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from('"]}'),
    ]);
    await deliver(raw);
    expect(await deadHas(raw)).toBe(true);
  });

  it("a 10 MB payload runs", async () => {
    const big = "x".repeat(10 * 1024 * 1024);
    await deliver(
      `{"retry":true,"queue":"bad","class":"GoodJob","args":["${big}"],"jid":"${JID(10)}","created_at":1795000000.5}`,
    );
    expect((ran.at(-1)![0] as string).length).toBe(big.length);
  });

  it("10,000-deep nesting runs (the scanner is iterative)", async () => {
    await deliver(
      `{"retry":true,"queue":"bad","class":"GoodJob","args":[${"[".repeat(10_000)}1${"]".repeat(10_000)}],"jid":"${JID(11)}","created_at":1795000000.5}`,
    );
    let v: unknown = ran.at(-1)![0];
    let depth = 0;
    while (Array.isArray(v)) {
      v = v[0];
      depth++;
    }
    expect([depth, v]).toEqual([10_000, 1]);
  });

  it("unknown fields and odd time values run; a failure keeps every unknown byte", async () => {
    await deliver(good(20, ',"x_unknown":{"a":[1.0,18446744073709551617]},"enqueued_at":"yesterday"'));
    expect(ran.at(-1)).toEqual([20]);
    const raw = `{"retry":"5","queue":"bad","class":"FailingJob","args":[1.0],"jid":"${JID(21)}","created_at":-5,"x_unknown":{"a":[1.0,18446744073709551617]}}`;
    await deliver(raw);
    const entry = (await redis.zrange("retry", 0, -1)).find((m) => m.includes(JID(21)))!;
    const rec = JobRecord.parse(entry);
    expect(rec.raw("x_unknown")).toBe('{"a":[1.0,18446744073709551617]}');
    expect(rec.raw("args")).toBe("[1.0]");
    expect(rec.get("retry_count")).toBe(0); // "5" is not an Integer: Sidekiq's default of 25 applies
  });

  it("after all of it the worker still runs ordinary jobs", async () => {
    await deliver(good(99));
    expect(ran.at(-1)).toEqual([99]);
    expect(worker.quiet).toBe(false);
  });
});
