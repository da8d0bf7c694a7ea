// The gate and the server middleware on a real Redis, with the gem's scripts:
// what a fetched job's verdict is, where a throttled job goes, and what the
// gem's keys hold after each step.
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startRedis, type RedisServer } from "../../harness/redis-server.js";
import { Client } from "../../src/core/client/client.js";
import type { Logger } from "../../src/core/logging/logger.js";
import type { GateContext } from "../../src/core/server/job-gate.js";
import { resolveThrottled, type ThrottledOptions } from "../../src/addons/sidekiq-throttled/options.js";
import type { GemLine } from "../../src/addons/sidekiq-throttled/scripts.js";
import { Throttles } from "../../src/addons/sidekiq-throttled/throttles.js";
import { JobRecord } from "../../src/core/wire/job-record.js";
import { Worker } from "../../src/assembly/worker.js";

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await startRedis({ databases: 1 });
  redis = new Redis(server.url);
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});
beforeEach(async () => {
  await redis.flushdb();
});

function capture(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const line = (lvl: string) => (m: string) => void lines.push(`${lvl} ${m}`);
  return { lines, debug: line("DEBUG"), info: line("INFO"), warn: line("WARN"), error: line("ERROR") };
}

function throttles(o: ThrottledOptions, line: GemLine = 2, client?: Client, logger = capture()) {
  const t = new Throttles(resolveThrottled(o), logger);
  t.start(line, client, redis);
  return Object.assign(t, { lines: logger.lines });
}

let n = 0;
function job(cls: string, args: unknown[] = [], queue = "default", extra: Record<string, unknown> = {}): GateContext {
  const raw = JSON.stringify({ class: cls, args, queue, jid: `jid${++n}`, retry: true, ...extra });
  const record = JobRecord.parse(raw);
  return { jid: record.getString("jid")!, className: cls, queue, record, job: raw, redis };
}

/** Runs the job through the middleware (the slot comes back in its finally). */
async function run(t: Throttles, j: GateContext, body: () => Promise<void> = async () => {}) {
  await t.middleware({ jid: j.jid, className: j.className, queue: j.queue, job: j.record, redis }, body);
}

describe("the throttle gate and middleware (the gem's scripts on a real Redis)", () => {
  it("concurrency: the limit's jids hold slots in the gem's zset, the next is handed back, a finished job frees its slot", async () => {
    const t = throttles({ classes: { PartnerApiJob: { concurrency: { limit: 2 } } } });
    const [a, b, c] = [job("PartnerApiJob"), job("PartnerApiJob"), job("PartnerApiJob")];
    expect(await t.gate.admit(a)).toBe("run");
    expect(await t.gate.admit(b)).toBe("run");
    expect(await t.gate.admit(c)).toBe("hand-back");
    const slots = await redis.zrange("throttled:PartnerApiJob:concurrency.v2", 0, -1, "WITHSCORES");
    expect(slots.filter((_, i) => i % 2 === 0).sort()).toEqual([a.jid, b.jid].sort());
    // Each slot expires lost_job_threshold (900 s) from now, and so does the key.
    expect(Number(slots[1]) - Date.now() / 1000).toBeGreaterThan(895);
    expect(await redis.ttl("throttled:PartnerApiJob:concurrency.v2")).toBeGreaterThan(895);
    // 2.1's backlog hash counts the throttled one.
    expect(await redis.hget("throttled:PartnerApiJob:concurrency.v2.backlog_info", "size")).toBe("1");
    await run(t, a);
    expect(await redis.zrange("throttled:PartnerApiJob:concurrency.v2", 0, -1)).toEqual([b.jid]);
    expect(await t.gate.admit(c)).toBe("run");
    // A job that throws gives its slot back too.
    await expect(run(t, b, () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await redis.zrange("throttled:PartnerApiJob:concurrency.v2", 0, -1)).toEqual([c.jid]);
  });

  it("gem line 1 runs 1.5's script: the same zset, no backlog hash", async () => {
    const t = throttles({ classes: { J: { concurrency: { limit: 1, ttl: 60 } } } }, 1);
    expect(await t.gate.admit(job("J"))).toBe("run");
    expect(await t.gate.admit(job("J"))).toBe("hand-back");
    expect(await redis.keys("throttled:*")).toEqual(["throttled:J:concurrency.v2"]);
    expect(await redis.ttl("throttled:J:concurrency.v2")).toBeLessThanOrEqual(60);
  });

  it("threshold: limit starts per period in the gem's list; a job throttled by it gives back the concurrency slot it took", async () => {
    const t = throttles({ classes: { J: { concurrency: { limit: 10 }, threshold: { limit: 2, period: 30 } } } });
    const jobs = [job("J"), job("J"), job("J")];
    expect([await t.gate.admit(jobs[0]!), await t.gate.admit(jobs[1]!), await t.gate.admit(jobs[2]!)]).toEqual([
      "run",
      "run",
      "hand-back",
    ]);
    expect(await redis.llen("throttled:J:threshold")).toBe(2);
    expect(await redis.ttl("throttled:J:threshold")).toBeGreaterThan(25);
    expect((await redis.zrange("throttled:J:concurrency.v2", 0, -1)).sort()).toEqual(
      [jobs[0]!.jid, jobs[1]!.jid].sort(),
    );
  });

  it("dynamic limits and periods are functions of the job's arguments; key_suffix splits the counters", async () => {
    const t = throttles({
      classes: {
        J: {
          concurrency: { limit: (tier) => (tier === "gold" ? 2 : 1) },
          threshold: { limit: () => null, period: () => 5 },
          keySuffix: (tier) => String(tier),
        },
      },
    });
    expect(await t.gate.admit(job("J", ["gold"]))).toBe("run");
    expect(await t.gate.admit(job("J", ["gold"]))).toBe("run");
    expect(await t.gate.admit(job("J", ["gold"]))).toBe("hand-back");
    expect(await t.gate.admit(job("J", ["free"]))).toBe("run");
    expect(await t.gate.admit(job("J", ["free"]))).toBe("hand-back");
    expect(await redis.zcard("throttled:J:concurrency.v2:gold")).toBe(2);
    expect(await redis.zcard("throttled:J:concurrency.v2:free")).toBe(1);
    // A null limit: that strategy does not throttle (and writes nothing).
    expect(await redis.exists("throttled:J:threshold:gold")).toBe(0);
  });

  it("a limit of 0 always throttles; ActiveJob jobs are throttled by their wrapped class and inner arguments", async () => {
    const t = throttles({ classes: { AjJob: { concurrency: { limit: (n) => Number(n) } } } });
    const aj = (arg: number) =>
      job("Sidekiq::ActiveJob::Wrapper", [{ job_class: "AjJob", arguments: [arg] }], "default", { wrapped: "AjJob" });
    expect(await t.gate.admit(aj(0))).toBe("hand-back");
    expect(await t.gate.admit(aj(1))).toBe("run");
    expect(await t.gate.admit(aj(1))).toBe("hand-back");
    expect(await redis.zcard("throttled:AjJob:concurrency.v2")).toBe(1);
  });

  it("requeue to another queue: the job as fetched goes to the far end of that queue, and the fetch is done", async () => {
    const t = throttles({ classes: { J: { concurrency: { limit: 1 }, requeue: { to: "later" } } } });
    await t.gate.admit(job("J"));
    const j = job("J");
    expect(await t.gate.admit(j)).toBe("done");
    expect(await redis.lrange("queue:later", 0, -1)).toEqual([j.job]);
  });

  it("requeue :schedule: a new job for the same class and arguments in the schedule set, when a slot is expected", async () => {
    const client = new Client({ redis, dialect: 8 });
    const t = throttles(
      { classes: { J: { threshold: { limit: 1, period: 20 }, requeue: { with: "schedule" } } } },
      2,
      client,
    );
    await t.gate.admit(job("J", [1]));
    const j = job("J", [7], "default", { tags: ["x"], retry_count: 2, error_message: "old" });
    expect(await t.gate.admit(j)).toBe("done");
    const [payload, score] = await redis.zrange("schedule", 0, -1, "WITHSCORES");
    const pushed = JSON.parse(payload!) as Record<string, unknown>;
    expect(pushed).toMatchObject({ class: "J", args: [7], queue: "default", tags: ["x"], retry: true });
    expect(pushed.jid).not.toBe(j.jid);
    expect(pushed).not.toHaveProperty("retry_count");
    expect(pushed).not.toHaveProperty("error_message");
    // About the period (threshold#retry_in: 20 s since the oldest start), plus up to a fifth of jitter.
    const wait = Number(score) - Date.now() / 1000;
    expect(wait).toBeGreaterThan(18);
    expect(wait).toBeLessThan(24.5);
    await client.close();
  });

  it("cooldown: after the threshold of throttled jobs in a row the queue rests; a job from a resting queue goes back unchecked", async () => {
    const t = throttles({ classes: { J: { concurrency: { limit: 0 } } }, cooldownThreshold: 2, cooldownPeriod: 0.3 });
    expect(await t.gate.admit(job("J"))).toBe("hand-back");
    expect(await t.gate.admit(job("Other"))).toBe("run"); // resets the count
    expect(await t.gate.admit(job("J"))).toBe("hand-back");
    expect(await t.gate.admit(job("J"))).toBe("hand-back"); // second in a row: the queue rests
    expect(await t.gate.admit(job("Other"))).toBe("hand-back");
    expect(await t.gate.admit(job("Other", [], "elsewhere"))).toBe("run");
    await new Promise((r) => setTimeout(r, 350));
    expect(await t.gate.admit(job("Other"))).toBe("run");
  });

  it("garbage in the gem's keys: one log line per class, the job runs unthrottled (the gem's throttled? rescues), nothing lost", async () => {
    const t = throttles({ classes: { J: { concurrency: { limit: 1 } }, K: { threshold: { limit: 1, period: 10 } } } });
    await redis.set("throttled:J:concurrency.v2", "not a zset");
    await redis.rpush("throttled:K:threshold", "yesterday");
    expect(await t.gate.admit(job("J"))).toBe("run");
    expect(await t.gate.admit(job("J"))).toBe("run");
    expect(await t.gate.admit(job("K"))).toBe("run");
    expect(t.lines.filter((l) => l.includes("could not check the throttle of J"))).toHaveLength(1);
    expect(t.lines.filter((l) => l.includes("could not check the throttle of K"))).toHaveLength(1);
    expect(t.lines.find((l) => l.includes("of J"))).toContain("WRONGTYPE");
    expect(t.lines.find((l) => l.includes("of K"))).toContain("arithmetic");
    expect(await redis.get("throttled:J:concurrency.v2")).toBe("not a zset");
  });

  it("a job whose middleware never ran (one before it did not call next, no handler) gives its slot back when it ends", async () => {
    const t = throttles({ classes: { J: { concurrency: { limit: 2 } } } });
    const [a, b] = [job("J"), job("J")];
    expect(await t.gate.admit(a)).toBe("run");
    expect(await t.gate.admit(b)).toBe("run");
    // a ran through the middleware: its end has nothing more to give back.
    await run(t, a);
    t.jobEnded({ jid: a.jid });
    // b never reached it.
    t.jobEnded({ jid: b.jid });
    await new Promise((r) => setTimeout(r, 50));
    expect(await redis.exists("throttled:J:concurrency.v2")).toBe(0);
    expect(t.lines).toEqual([]);
  });

  it("on a worker: a throttled class without a handler fails into the retry set and its slot is given back", async () => {
    const logger = capture();
    const w = new Worker({
      redis: server.url,
      dialect: "8.1.7",
      queues: ["nohandler"],
      pollIntervalAverage: 1,
      timeout: 1,
      logger,
      throttled: { classes: { MissingJob: { concurrency: { limit: 1 } } } },
    });
    await w.start();
    try {
      await redis.lpush(
        "queue:nohandler",
        JSON.stringify({ class: "MissingJob", args: [], jid: "m".repeat(24), retry: true, queue: "nohandler" }),
      );
      for (let i = 0; i < 100 && (await redis.zcard("retry")) === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await redis.zcard("retry")).toBe(1);
      await new Promise((r) => setTimeout(r, 50));
      expect(await redis.exists("throttled:MissingJob:concurrency.v2")).toBe(0);
    } finally {
      await w.stop();
    }
  });

  it("a class Ruby throttles and Node was given no throttle for: one warning, from the gem's keys", async () => {
    const t = throttles({});
    await redis.zadd("throttled:RubyOnlyJob:concurrency.v2", Date.now() / 1000 + 900, "ruby-jid");
    for (let i = 0; i < 3; i++) expect(await t.gate.admit(job("RubyOnlyJob"))).toBe("run");
    expect(await t.gate.admit(job("PlainJob"))).toBe("run");
    await new Promise((r) => setTimeout(r, 100));
    const warned = t.lines.filter((l) => l.startsWith("WARN"));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain("Ruby throttles RubyOnlyJob");
  });

  // A worker with more slots than the throttle allows hands the extra jobs
  // back and pauses its fetch; a batch's hand-backs double the pause once
  // each (6 of them: 3.2 s). It must end once an admitted job has run, or the
  // throttle's slots sit idle: 2 jobs of 50 ms ran every 3.2 s (10 of 40 in 15 s).
  it("on a worker: handed-back jobs are fetched again once an admitted job ends, keeping the limit busy", async () => {
    const [limit, jobs] = [2, 40];
    const w = new Worker({
      redis: server.url,
      dialect: "8.1.7",
      queues: ["thr-backoff"],
      concurrency: 8,
      timeout: 1,
      logger: capture(),
      throttled: { classes: { SlowApiJob: { concurrency: { limit } } } },
    });
    let [running, most, done] = [0, 0, 0];
    w.register("SlowApiJob", async () => {
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 50));
      running--;
      done++;
    });
    const client = new Client({ redis: server.url, dialect: "8.1.7" });
    await client.job("SlowApiJob", { queue: "thr-backoff" }).performBulk(Array.from({ length: jobs }, () => []));
    await client.close();
    const started = Date.now();
    await w.start();
    try {
      // 1 s at the limit.
      while (done < jobs && Date.now() - started < 15_000) await new Promise((r) => setTimeout(r, 50));
      expect(done).toBe(jobs);
      expect(Date.now() - started).toBeLessThan(8_000);
      expect(most).toBeLessThanOrEqual(limit);
    } finally {
      await w.stop();
    }
  }, 30_000);
});
