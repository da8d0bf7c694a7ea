// The poller promotes due jobs in batches (a Lua pop into this
// process's promoting set, then one atomic commit), in score order, with the
// bytes Sidekiq would write, and without widening what a crash can lose.
import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Redis } from "ioredis";
import { Client } from "../src/core/client/client.js";
import { ScheduledPoller } from "../src/core/server/scheduled.js";
import { Worker } from "../src/assembly/worker.js";
import type { Logger } from "../src/core/logging/logger.js";
import { recoverOrphans, recoverPromoting, recoverPromotingKey } from "../src/core/server/recovery.js";
import { PROMOTING_REGISTRY, promotingKey } from "../src/core/wire/bridge-keys.js";
import { JobRecord, profileForVersion } from "../src/core/wire/index.js";
import { allocateDb, describeEachSidekiq, waitFor } from "./support/harness.js";

/** The first argument of a payload. */
const arg0 = (raw: string): number => (JobRecord.parse(raw).get("args") as number[])[0]!;
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const DEAD_ID = "gone-host:4242:0123456789ab";

function poller(
  redis: Redis,
  client: Client,
  identity: string,
  extra: { batchSize?: number; logger?: Logger } = {},
): ScheduledPoller {
  return new ScheduledPoller({
    redis,
    client,
    identity,
    profile: () => profileForVersion("8.1.7"),
    retry: () => ({ profile: profileForVersion("8.1.7") }),
    logger: quiet,
    ...extra,
  });
}

/** A payload with what must survive byte for byte: big integers, 1.0, escapes, unknown keys, `at`. */
function payload(i: number, queue: string, createdAt: number): string {
  return JobRecord.parse(
    `{"retry":true,"queue":"${queue}","class":"HardJob","args":[${i},18446744073709551617,1.0,-0.5,"é\\u2028\\/x",{"a":[]},null],` +
      `"jid":"${i.toString(16).padStart(24, "0")}","created_at":${createdAt},"at":${(createdAt / 1000).toFixed(3)},"custom":{"k":"v"}}`,
  ).toString();
}

describe("scheduled poller: batched promotion against a real Redis", () => {
  let redis: Redis;
  let url: string;
  const conns: Redis[] = [];
  const conn = () => {
    const c = new Redis(url);
    conns.push(c);
    return c;
  };

  beforeAll(async () => {
    url = `${inject("harness").redisUrl}/${await allocateDb()}`;
    redis = conn();
  });
  afterAll(() => {
    for (const c of conns) c.disconnect();
  });

  it("1,000 due jobs land in their queues in score order, bytes unchanged apart from enqueued_at and at", async () => {
    await redis.flushdb();
    const now = Date.now();
    const queues = ["pa", "pb", "pc"];
    // Inserted in a shuffled order; the scores decide. A few future jobs stay.
    const order = Array.from({ length: 1000 }, (_, i) => i).sort(() => Math.random() - 0.5);
    const byJid = new Map<string, { raw: string; score: number }>();
    const pipe = redis.pipeline();
    for (const i of order) {
      const raw = payload(i, queues[i % 3]!, now - 60_000);
      const score = now / 1000 - 30 + i / 100;
      byJid.set(JobRecord.parse(raw).getString("jid")!, { raw, score });
      pipe.zadd(i % 2 ? "schedule" : "retry", score.toFixed(6), raw);
    }
    pipe.zadd("schedule", (now / 1000 + 3600).toFixed(6), payload(5000, "pa", now));
    await pipe.exec();

    const client = new Client({ redis, dialect: "8.1.7", validate: false });
    const p = poller(redis, client, `${hostname()}:${process.pid}:aaaaaaaaaaaa`);
    const before = Date.now();
    expect(await p.enqueue()).toBe(1000);
    const after = Date.now();

    expect(await redis.zcard("retry")).toBe(0);
    expect(await redis.zcard("schedule")).toBe(1);
    expect((await redis.smembers("queues")).sort()).toEqual(queues);
    expect(await redis.exists(p.promotingKey("retry"), p.promotingKey("schedule"))).toBe(0);
    expect(await redis.smembers(PROMOTING_REGISTRY)).toEqual([]);
    for (const q of queues) {
      // LPUSH: BRPOP takes from the right, so the list read backwards is run order.
      const list = (await redis.lrange(`queue:${q}`, 0, -1)).reverse();
      const got = list.map((s) => JobRecord.parse(s));
      // Retry first (all of it), then schedule, each in score order: Sidekiq's order.
      const expected = [...byJid.values()]
        .filter((v) => JobRecord.parse(v.raw).getString("queue") === q)
        .sort((a, b) => {
          const sa = Number(arg0(a.raw)) % 2;
          const sb = Number(arg0(b.raw)) % 2;
          return sa - sb || a.score - b.score;
        });
      expect(got.map((r) => r.getString("jid"))).toEqual(expected.map((e) => JobRecord.parse(e.raw).getString("jid")));
      for (const [k, rec] of got.entries()) {
        const enq = rec.get("enqueued_at") as number;
        expect(enq).toBeGreaterThanOrEqual(before);
        expect(enq).toBeLessThanOrEqual(after);
        const want = JobRecord.parse(expected[k]!.raw).delete("at").set("enqueued_at", enq).toString();
        expect(list[k]).toBe(want);
      }
    }
  });

  it("a crash between pop and push: recovery returns the dead process's promoting sets at their scores; each job then runs once", async () => {
    await redis.flushdb();
    const now = Date.now() / 1000;
    const pipe = redis.pipeline();
    const scores = new Map<string, string>();
    for (let i = 0; i < 300; i++) {
      const set = i < 100 ? "retry" : "schedule";
      const raw = payload(i, "crash", Date.now() - 1000);
      const score = (now - 400 + i).toFixed(6);
      scores.set(raw, score);
      pipe.zadd(promotingKey(DEAD_ID, set), score, raw);
    }
    // A live process (this one: heartbeat and pid) mid-batch: left alone.
    const live = `${hostname()}:${process.pid}:bbbbbbbbbbbb`;
    pipe.hset(live, "beat", String(now)).expire(live, 60);
    pipe.zadd(promotingKey(live, "schedule"), now.toFixed(6), payload(999, "crash", Date.now()));
    // A process of this host whose heartbeat is still there but whose pid is gone.
    const gonePid = `${hostname()}:999999:cccccccccccc`;
    pipe.hset(gonePid, "beat", String(now)).expire(gonePid, 60);
    pipe.zadd(promotingKey(gonePid, "retry"), (now - 500).toFixed(6), payload(1000, "crash", Date.now()));
    pipe.sadd(
      PROMOTING_REGISTRY,
      promotingKey(DEAD_ID, "retry"),
      promotingKey(DEAD_ID, "schedule"),
      promotingKey(live, "schedule"),
      promotingKey(gonePid, "retry"),
    );
    await pipe.exec();

    const r = await recoverOrphans(redis, hostname(), quiet, true);
    expect(r).toEqual({ lists: 3, jobs: 301 });
    expect(await redis.zcard("retry")).toBe(101);
    expect(await redis.zcard("schedule")).toBe(200);
    // Back at their own scores, not at "now": the order is as if never popped.
    for (const [raw, score] of scores) {
      const set = Number(arg0(raw)) < 100 ? "retry" : "schedule";
      expect(Number(await redis.zscore(set, raw))).toBeCloseTo(Number(score), 5);
    }
    expect(await redis.smembers(PROMOTING_REGISTRY)).toEqual([promotingKey(live, "schedule")]);
    expect(await redis.zcard(promotingKey(live, "schedule"))).toBe(1);
    // The poller's own pass (under its lock) finds nothing more to do.
    expect(await recoverPromoting(redis, hostname(), quiet, true)).toEqual({ lists: 0, jobs: 0 });

    const client = new Client({ redis, dialect: "8.1.7", validate: false });
    expect(await poller(redis, client, `${hostname()}:${process.pid}:dddddddddddd`).enqueue()).toBe(301);
    const jids = (await redis.lrange("queue:crash", 0, -1)).map((s) => JobRecord.parse(s).getString("jid"));
    expect(jids).toHaveLength(301);
    expect(new Set(jids).size).toBe(301);
    await redis.del(live);
  });

  it("a commit after recovery took the batch back pushes nothing; the jobs are promoted once, later", async () => {
    await redis.flushdb();
    const identity = `${hostname()}:${process.pid}:eeeeeeeeeeee`;
    for (let i = 0; i < 10; i++)
      await redis.zadd("schedule", (Date.now() / 1000 - 10 + i).toFixed(6), payload(i, "late", Date.now()));
    const client = new Client({ redis, dialect: "8.1.7", validate: false });
    let stolen = false;
    // While the batch is being prepared, "recovery" (as for a process whose heartbeat lapsed) takes it back.
    client.use(async (_ctx, next) => {
      if (!stolen) {
        stolen = true;
        expect(await recoverPromotingKey(redis, promotingKey(identity, "schedule"), "schedule")).toBe(10);
      }
      await next();
    });
    const p = poller(redis, client, identity);
    expect(await p.enqueue()).toBe(0);
    expect(await redis.llen("queue:late")).toBe(0);
    expect(await redis.zcard("schedule")).toBe(10);
    expect(await p.enqueue()).toBe(10);
    expect(await redis.llen("queue:late")).toBe(10);
    expect(await redis.zcard("schedule")).toBe(0);
  });

  it("failures: a middleware error or a queue key of another type sends those jobs back and stops the pass; the rest are pushed", async () => {
    await redis.flushdb();
    const now = Date.now() / 1000;
    const jobs = Array.from({ length: 6 }, (_, i) => payload(i, i === 4 ? "wrongtype" : "ok", Date.now()));
    for (const [i, j] of jobs.entries()) await redis.zadd("schedule", (now - 100 + i).toFixed(6), j);
    await redis.set("queue:wrongtype", "not a list");
    const client = new Client({ redis, dialect: "8.1.7", validate: false });
    client.use(async (ctx, next) => {
      if ((ctx.job.args as unknown[])[0] === 2) throw new Error("middleware refuses 2");
      await next();
    });
    const p = poller(redis, client, `${hostname()}:${process.pid}:ffffffffffff`);
    await expect(p.enqueue()).rejects.toThrow(/middleware refuses 2/);
    const pushed = (await redis.lrange("queue:ok", 0, -1)).map((s) => arg0(s)).reverse();
    expect(pushed).toEqual([0, 1, 3, 5]);
    // Both went back, untouched, behind the other due jobs (scored "now").
    const back = await redis.zrange("schedule", 0, -1, "WITHSCORES");
    expect(back.filter((_, i) => i % 2 === 0).sort()).toEqual([jobs[2], jobs[4]].sort());
    expect(Number(back[1])).toBeGreaterThan(now - 1);
    expect(await redis.exists(p.promotingKey("schedule"))).toBe(0);
    expect(await redis.smembers(PROMOTING_REGISTRY)).toEqual([]);
  });

  it("a real crash (kill -9) between the pop and the push: recovery returns the batch; each job is then promoted once", async () => {
    await redis.flushdb();
    const pipe = redis.pipeline();
    for (let i = 0; i < 250; i++)
      pipe.zadd("schedule", (Date.now() / 1000 - 300 + i).toFixed(6), payload(i, "killed", Date.now()));
    await pipe.exec();
    // A child process (the built package) pops a batch of 100, then dies with SIGKILL while preparing it.
    // ScheduledPoller is internal, so its module is imported directly rather than through the package entry.
    const built = (m: string) => JSON.stringify(fileURLToPath(new URL(`../dist/${m}`, import.meta.url)));
    const child = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `
      import { hostname } from "node:os";
      import { Redis } from "ioredis";
      import { Client } from ${built("core/client/client.js")};
      import { ScheduledPoller } from ${built("core/server/scheduled.js")};
      import { profileForVersion } from ${built("core/wire/dialect.js")};
      const redis = new Redis(${JSON.stringify(url)});
      const client = new Client({ redis, dialect: "8.1.7", validate: false });
      client.use(async () => { process.kill(process.pid, "SIGKILL"); await new Promise(() => {}); });
      const quiet = { debug() {}, info() {}, warn() {}, error() {} };
      await new ScheduledPoller({ redis, client, identity: hostname() + ":" + process.pid + ":0a0a0a0a0a0a", profile: () => profileForVersion("8.1.7"),
        retry: () => ({ profile: profileForVersion("8.1.7") }), logger: quiet }).enqueue();
    `,
      ],
      { cwd: fileURLToPath(new URL("..", import.meta.url)), encoding: "utf8", timeout: 60_000 },
    );
    expect(child.signal).toBe("SIGKILL");
    const [orphan] = await redis.smembers(PROMOTING_REGISTRY);
    expect(orphan).toBe(promotingKey(`${hostname()}:${child.pid}:0a0a0a0a0a0a`, "schedule"));
    expect(await redis.zcard(orphan!)).toBe(100);
    expect(await redis.zcard("schedule")).toBe(150);
    expect(await redis.exists("queue:killed")).toBe(0);

    expect(await recoverOrphans(redis, hostname(), quiet, true)).toEqual({ lists: 1, jobs: 100 });
    expect(await redis.zcard("schedule")).toBe(250);
    const client = new Client({ redis, dialect: "8.1.7", validate: false });
    expect(await poller(redis, client, `${hostname()}:${process.pid}:0b0b0b0b0b0b`).enqueue()).toBe(250);
    const args = (await redis.lrange("queue:killed", 0, -1)).reverse().map((s) => arg0(s));
    expect(args).toEqual(Array.from({ length: 250 }, (_, i) => i)); // each once, in score order
  });

  it("a queue routed to another Redis (sharding) is pushed there, the rest in the commit", async () => {
    await redis.flushdb();
    const farUrl = `${inject("harness").redisUrl}/${await allocateDb()}`;
    const farRedis = new Redis(farUrl);
    conns.push(farRedis);
    for (let i = 0; i < 40; i++)
      await redis.zadd(
        "retry",
        (Date.now() / 1000 - 100 + i).toFixed(6),
        payload(i, i % 4 === 0 ? "far" : "near", Date.now()),
      );
    const client = new Client({
      redis,
      dialect: "8.1.7",
      validate: false,
      route: (q) => (q === "far" ? farRedis : redis),
    });
    expect(await poller(redis, client, `${hostname()}:${process.pid}:0c0c0c0c0c0c`).enqueue()).toBe(40);
    const argsOf = async (r: Redis, q: string) => (await r.lrange(`queue:${q}`, 0, -1)).reverse().map((s) => arg0(s));
    expect(await argsOf(farRedis, "far")).toEqual([0, 4, 8, 12, 16, 20, 24, 28, 32, 36]);
    expect(await argsOf(redis, "near")).toHaveLength(30);
    expect(await farRedis.smembers("queues")).toEqual(["far"]);
    expect(await redis.smembers("queues")).toEqual(["near"]);
    expect(await redis.exists("queue:far")).toBe(0);
    expect(await redis.zcard("retry")).toBe(0);
  });

  it("two pollers racing over 5,000 due jobs promote each exactly once", async () => {
    await redis.flushdb();
    const now = Date.now();
    const pipe = redis.pipeline();
    for (let i = 0; i < 5000; i++)
      pipe.zadd(i % 5 ? "schedule" : "retry", (now / 1000 - 50 + i / 1000).toFixed(6), payload(i, `race${i % 2}`, now));
    await pipe.exec();
    const mk = (id: string) => {
      const c = conn();
      return poller(
        c,
        new Client({ redis: c, dialect: "8.1.7", validate: false }),
        `${hostname()}:${process.pid}:${id}`,
        { batchSize: 50 },
      );
    };
    const [a, b] = await Promise.all([mk("111111111111").enqueue(), mk("222222222222").enqueue()]);
    expect(a + b).toBe(5000);
    expect(a).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(0);
    const jids = [...(await redis.lrange("queue:race0", 0, -1)), ...(await redis.lrange("queue:race1", 0, -1))].map(
      (s) => JobRecord.parse(s).getString("jid"),
    );
    expect(jids).toHaveLength(5000);
    expect(new Set(jids).size).toBe(5000);
    expect(await redis.zcard("schedule")).toBe(0);
    expect(await redis.zcard("retry")).toBe(0);
  });

  it("malformed JSON goes to the dead set as-is; a batch larger than Lua's unpack limit moves in one pop", async () => {
    await redis.flushdb();
    const pipe = redis.pipeline();
    for (let i = 0; i < 12_000; i++)
      pipe.zadd("schedule", (Date.now() / 1000 - 100 + i / 1000).toFixed(6), payload(i, "big", Date.now()));
    pipe.zadd("schedule", (Date.now() / 1000 - 200).toFixed(6), '{"class":"Broken","args":[1,');
    await pipe.exec();
    const client = new Client({ redis, dialect: "8.1.7", validate: false });
    const p = poller(redis, client, `${hostname()}:${process.pid}:0d0d0d0d0d0d`, { batchSize: 20_000 });
    expect(await p.enqueue()).toBe(12_000);
    expect(await redis.zrange("dead", 0, -1)).toEqual(['{"class":"Broken","args":[1,']);
    const args = (await redis.lrange("queue:big", 0, -1)).reverse().map((s) => arg0(s));
    expect(args).toEqual(Array.from({ length: 12_000 }, (_, i) => i));
  });

  it("a batch left in its own promoting set (push and put-back both failed) goes back at the next pop", async () => {
    await redis.flushdb();
    const identity = `${hostname()}:${process.pid}:0e0e0e0e0e0e`;
    const now = Date.now() / 1000;
    await redis.zadd(
      promotingKey(identity, "retry"),
      (now - 50).toFixed(6),
      payload(1, "left", Date.now()),
      (now - 40).toFixed(6),
      payload(2, "left", Date.now()),
    );
    await redis.zadd("retry", (now - 45).toFixed(6), payload(3, "left", Date.now()));
    await redis.sadd(PROMOTING_REGISTRY, promotingKey(identity, "retry"));
    const client = new Client({ redis, dialect: "8.1.7", validate: false });
    expect(await poller(redis, client, identity).enqueue()).toBe(3);
    const args = (await redis.lrange("queue:left", 0, -1)).reverse().map((s) => arg0(s));
    expect(args).toEqual([1, 3, 2]); // score order across the leftovers and the set
    expect(await redis.smembers(PROMOTING_REGISTRY)).toEqual([]);
  });

  it("two passes of the same identity at once (a manual enqueue() beside the loop) run one after the other", async () => {
    await redis.flushdb();
    const pipe = redis.pipeline();
    for (let i = 0; i < 2000; i++)
      pipe.zadd("schedule", (Date.now() / 1000 - 100 + i / 100).toFixed(6), payload(i, "same", Date.now()));
    await pipe.exec();
    const id = `${hostname()}:${process.pid}:0f0f0f0f0f0f`;
    const a = poller(redis, new Client({ redis, dialect: "8.1.7", validate: false }), id, { batchSize: 30 });
    const c2 = conn();
    const b = poller(c2, new Client({ redis: c2, dialect: "8.1.7", validate: false }), id, { batchSize: 70 });
    const [x, y, z] = await Promise.all([a.enqueue(), b.enqueue(), a.enqueue()]);
    expect(x + y + z).toBe(2000);
    const args = (await redis.lrange("queue:same", 0, -1)).reverse().map((s) => arg0(s));
    expect(args).toEqual(Array.from({ length: 2000 }, (_, i) => i));
  });

  it("stops promptly: a stopped poller takes no further batch", async () => {
    await redis.flushdb();
    const pipe = redis.pipeline();
    for (let i = 0; i < 1000; i++)
      pipe.zadd("schedule", (Date.now() / 1000 - 10).toFixed(6), payload(i, "stop", Date.now()));
    await pipe.exec();
    const client = new Client({ redis, dialect: "8.1.7", validate: false });
    const p = poller(redis, client, `${hostname()}:${process.pid}:999999999999`, { batchSize: 10 });
    let stopping: Promise<void> | undefined;
    client.use(async (_ctx, next) => {
      stopping ??= p.stop();
      await next();
    });
    expect(await p.enqueue()).toBe(10);
    await stopping;
    expect(await redis.zcard("schedule")).toBe(990);
  });
});

describeEachSidekiq("scheduled poller: Ruby reads and runs what Node's batched poller promoted", (sk) => {
  it("200 jobs Ruby scheduled: Node's poller promotes them; Sidekiq::API sees them in the queue; a real Ruby worker runs each once", async () => {
    await sk.redis.del("bridge:received", "queue:sched-ruby");
    const made = await sk.ruby<{ jids: string[]; size: number }>(`
      jids = Sidekiq::Client.push_bulk("class" => "RecordJob", "queue" => "sched-ruby", "args" => (1..200).map { |i| [i, "x" * i, 2**64] }, "at" => Time.now.to_f + 1)
      {"jids" => jids, "size" => Sidekiq::ScheduledSet.new.size}
    `);
    expect(made.size).toBe(200);
    // A Node worker with its poller, fetching another queue: only the promotion is Node's.
    const w = new Worker({
      redis: sk.url,
      dialect: sk.target.version,
      queues: ["sched-none"],
      concurrency: 1,
      pollIntervalAverage: 1,
      timeout: 3,
      logger: quiet,
    });
    await w.start();
    try {
      await waitFor(
        "Node's poller to promote all 200",
        async () => ((await sk.redis.llen("queue:sched-ruby")) === 200 ? true : undefined),
        30_000,
      );
    } finally {
      await w.stop();
    }
    const seen = await sk.ruby<{
      size: number;
      scheduled: number;
      jids: string[];
      args_ok: boolean;
      at: boolean;
      enq: boolean;
    }>(`
      q = Sidekiq::Queue.new("sched-ruby")
      jobs = q.to_a
      {"size" => q.size, "scheduled" => Sidekiq::ScheduledSet.new.size, "jids" => jobs.map(&:jid),
       "args_ok" => jobs.all? { |j| j.args == [j.args[0], "x" * j.args[0], 2**64] },
       "at" => jobs.any? { |j| j.item.key?("at") }, "enq" => jobs.all? { |j| j.enqueued_at.is_a?(Time) && (Time.now - j.enqueued_at).abs < 60 }}
    `);
    expect(seen).toMatchObject({ size: 200, scheduled: 0, args_ok: true, at: false, enq: true });
    expect([...seen.jids].sort()).toEqual([...made.jids].sort());
    expect(await sk.redis.smembers(PROMOTING_REGISTRY)).toEqual([]);

    const ruby = await sk.startSidekiq({ queues: ["sched-ruby"], concurrency: 5 });
    try {
      const ran = await waitFor(
        "Ruby to run all 200",
        async () => {
          const r = (await sk.redis.lrange("bridge:received", 0, -1)).map(
            (s) => JSON.parse(s) as { jid: string; pid: number },
          );
          return r.length >= 200 ? r : undefined;
        },
        60_000,
      );
      await new Promise((r) => setTimeout(r, 500));
      expect(await sk.redis.llen("bridge:received")).toBe(200);
      expect(ran.map((r) => r.jid).sort()).toEqual([...made.jids].sort());
      expect(ran.every((r) => typeof r.pid === "number")).toBe(true);
    } finally {
      await ruby.stop();
    }
  });
});
