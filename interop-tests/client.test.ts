// Node enqueues, real Ruby Sidekiq workers perform.
import { expect, it } from "vitest";
import { Client } from "../src/core/client/client.js";
import { RubyFloat, JobRecord } from "../src/core/wire/index.js";
import { describeEachSidekiq, waitFor, type SidekiqContext } from "./support/harness.js";
import { between } from "./support/between.js";

interface Received {
  class: string;
  jid: string;
  args_typed: unknown;
  args_json: string;
  job: Record<string, unknown>;
  performed_at: number;
}

async function received(sk: SidekiqContext): Promise<Received[]> {
  return (await sk.redis.lrange("bridge:received", 0, -1)).map((s) => JSON.parse(s) as Received);
}

async function receivedJid(sk: SidekiqContext, jid: string, ms = 30_000): Promise<Received> {
  return waitFor(`job ${jid} to run in Ruby`, async () => (await received(sk)).find((r) => r.jid === jid), ms);
}

describeEachSidekiq("client: Node enqueues for Ruby workers", (sk) => {
  const client = () => new Client({ redis: sk.url, dialect: sk.target.version });

  it("every JSON-native argument shape arrives equal in value and Ruby class", async () => {
    await sk.startSidekiq({ queues: ["default", "critical"], concurrency: 5 });
    const c = client();
    const jid = await c
      .job("RecordJob")
      .performAsync(
        1,
        -2,
        1.5,
        new RubyFloat(2),
        "str",
        "é😀\u2028/",
        true,
        false,
        null,
        [],
        {},
        { a: [1, { b: null }], "k y": "v" },
        18446744073709551617n,
        9007199254740991,
        -0.25,
        1e-7,
      );
    const want =
      await sk.ruby(`Bridge.typed([1, -2, 1.5, 2.0, "str", "é😀\\u2028/", true, false, nil, [], {}, {"a" => [1, {"b" => nil}], "k y" => "v"},
      18446744073709551617, 9007199254740991, -0.25, 1.0e-7])`);
    const got = await receivedJid(sk, jid!);
    expect(got.args_typed).toEqual(want);
    await c.close();
  });

  it("Ruby's API sees created_at, enqueued_at and latency as now (not 1970, not 58860)", async () => {
    const c = client();
    // Bracketed by the push and the read, not by a margin of seconds: a loaded machine stretches both.
    const t0 = Date.now() / 1000;
    const jid = await c.job("RecordJob", { queue: "parked" }).performAsync("x");
    const seen = await sk.ruby<{ latency: number; created: number; enqueued: number; jid: string }>(`
      q = Sidekiq::Queue.new("parked")
      j = q.first
      {"latency" => q.latency, "created" => j.created_at.to_f, "enqueued" => j.enqueued_at.to_f, "jid" => j.jid}
    `);
    const t1 = Date.now() / 1000;
    const eps = 0.002; // a millisecond's rounding either way
    expect(seen.jid).toBe(jid);
    between(seen.created, t0, t1, "created_at", eps);
    between(seen.enqueued, seen.created, t1, "enqueued_at", eps);
    expect(seen.latency).toBeGreaterThanOrEqual(0);
    expect(seen.latency).toBeLessThanOrEqual(t1 - t0 + eps);
    // The stored bytes are in this release's unit.
    const raw = (await sk.redis.lindex("queue:parked", 0))!;
    const created = JobRecord.parse(raw).raw("created_at")!;
    if (sk.target.dialect === 8) expect(created).toMatch(/^\d{13}$/);
    else expect(created).toMatch(/^\d{10}\.\d+$/);
    await c.close();
  });

  it("perform_in(5) runs no earlier than 5 s after the call; a past time runs before it", async () => {
    const c = client();
    const job = c.job("RecordJob");
    const t0 = Date.now() / 1000;
    const later = await job.performIn(5, "later");
    expect(await sk.redis.zcard("schedule")).toBeGreaterThanOrEqual(1);
    const past = await job.performAt(new Date(Date.now() - 60_000), "past");
    // Ordered by events, not by a margin of seconds a loaded machine can exceed.
    const nowJob = await receivedJid(sk, past!, 30_000);
    const got = await receivedJid(sk, later!, 30_000);
    expect(nowJob.performed_at).toBeLessThan(got.performed_at);
    expect(got.performed_at).toBeGreaterThanOrEqual(t0 + 5);
    await c.close();
  });

  it("middleware adds a field the Ruby job sees; a middleware that stops the push stops it", async () => {
    const c = client();
    c.use(async (ctx, next) => {
      if (ctx.job.args && (ctx.job.args as unknown[])[0] === "stop") return; // no next(): halted
      ctx.job.trace_id = "abc-123";
      await next();
    });
    const jid = await c.job("RecordJob").performAsync("go");
    const got = await receivedJid(sk, jid!);
    expect(got.job.trace_id).toBe("abc-123");
    const before = await sk.redis.llen("queue:default");
    expect(await c.job("RecordJob").performAsync("stop")).toBeNull();
    expect(await sk.redis.llen("queue:default")).toBe(before);
    await c.close();
  });

  it("writes the keys, key order and time lexemes Ruby's own client writes", async () => {
    const c = client();
    const shape = (raw: string) => {
      const r = JobRecord.parse(raw);
      // Times compare by lexeme form (integer ms, or float s with a point), not by digits.
      return r
        .keys()
        .map((k) => `${k}=${/_at$/.test(k) ? r.raw(k)!.replace(/\d+/g, "9") : k === "jid" ? "" : r.raw(k)}`);
    };
    const pairs: Array<[string, () => Promise<unknown>]> = [
      [
        `Sidekiq::Client.push("class" => "RecordJob", "args" => [1], "queue" => "shape-a")`,
        () => c.push({ class: "RecordJob", args: [1], queue: "shape-b" }),
      ],
      [
        `RecordJob.set(queue: "shape-a").perform_async(1)`,
        () => c.job("RecordJob").set({ queue: "shape-b" }).performAsync(1),
      ],
      [
        `Sidekiq::Client.push_bulk("class" => "RecordJob", "args" => [[1], [2]], "queue" => "shape-a")`,
        () => c.pushBulk({ class: "RecordJob", args: [[1], [2]], queue: "shape-b" }),
      ],
    ];
    for (const [ruby, node] of pairs) {
      await sk.redis.del("queue:shape-a", "queue:shape-b");
      await sk.ruby(ruby);
      await node();
      const a = await sk.redis.lrange("queue:shape-a", 0, -1);
      const b = await sk.redis.lrange("queue:shape-b", 0, -1);
      expect(b.length).toBe(a.length);
      expect(b.map(shape).map((x) => x.join(",").replace(/shape-b/g, "shape-a"))).toEqual(
        a.map(shape).map((x) => x.join(",")),
      );
    }
    // Scheduled: same members shape, score in float seconds.
    await sk.redis.del("schedule");
    const t0 = Date.now() / 1000;
    await sk.ruby(`RecordJob.perform_in(600, "s")`);
    await c.job("RecordJob").performIn(600, "s");
    const t1 = Date.now() / 1000;
    const [ra, sa, rb, sb] = await sk.redis.zrange("schedule", 0, -1, "WITHSCORES");
    expect(shape(rb!)).toEqual(shape(ra!));
    between(Number(sa), t0 + 600, t1 + 600, "Ruby's score", 0.002);
    between(Number(sb), t0 + 600, t1 + 600, "Node's score", 0.002);
    await c.close();
  });

  it("pushBulk of 20,000 jobs: each runs exactly once", async () => {
    const c = client();
    await sk.redis.del("bridge:received");
    const args = Array.from({ length: 20_000 }, (_, i) => [i]);
    const jids = await c.job("RecordJob", { queue: "bulk" }).performBulk(args);
    expect(jids).toHaveLength(20_000);
    expect(new Set(jids).size).toBe(20_000);
    await sk.startSidekiq({ queues: ["bulk"], concurrency: 10 });
    await waitFor(
      "20,000 bulk jobs to run",
      async () => (await sk.redis.llen("bridge:received")) >= 20_000 || undefined,
      240_000,
    );
    await new Promise((r) => setTimeout(r, 1000)); // would a duplicate still arrive?
    const runs = await received(sk);
    expect(runs).toHaveLength(20_000);
    expect(new Set(runs.map((r) => r.jid))).toEqual(new Set(jids));
    expect(new Set(runs.map((r) => r.args_json))).toEqual(new Set(args.map((a) => JSON.stringify(a))));
    await c.close();
  }, 300_000);
});
