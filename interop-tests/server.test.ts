// Ruby enqueues, a Node worker processes, as one more Sidekiq process.
import { expect, it } from "vitest";
import { Client } from "../src/core/client/client.js";
import { Worker, type WorkerOptions } from "../src/assembly/worker.js";
import { JobRecord } from "../src/core/wire/index.js";
import { describeEachSidekiq, waitFor, type SidekiqContext, beatNow } from "./support/harness.js";

interface Ran {
  jid: string;
  args_json: string;
  by: string;
}

/** A Node worker whose RecordJob handler records like the Ruby one does. */
function nodeWorker(sk: SidekiqContext, opts: Partial<WorkerOptions> = {}): Worker {
  const w = new Worker({
    redis: sk.url,
    dialect: sk.target.version,
    queues: ["node"],
    concurrency: 5,
    pollIntervalAverage: 1,
    timeout: 5,
    ...opts,
  });
  const rec = sk.newRedis();
  w.register("RecordJob", async (_args, ctx) => {
    await rec.lpush("bridge:received", JSON.stringify({ jid: ctx.jid, args_json: ctx.record.raw("args"), by: "node" }));
  });
  return w;
}

async function ranJobs(sk: SidekiqContext): Promise<Ran[]> {
  return (await sk.redis.lrange("bridge:received", 0, -1)).map((s) => JSON.parse(s) as Ran);
}

describeEachSidekiq("server: a Node worker in the Sidekiq fleet", (sk) => {
  it("runs Ruby's perform_async, perform_in and push_bulk jobs once each, with identical args", async () => {
    await sk.redis.del("bridge:received");
    const w = nodeWorker(sk);
    await w.start();
    try {
      const pushed = await sk.ruby<{ jids: string[]; args: string[] }>(`
        a = [2**64 + 1, 1.0, -0.5, "é\\u2028", {"a" => [], "b" => {}}, nil, true]
        jids = [RecordJob.set(queue: "node").perform_async(*a), RecordJob.set(queue: "node").perform_in(2, "later")]
        jids += Sidekiq::Client.push_bulk("class" => "RecordJob", "queue" => "node", "args" => [[1], [2], [3]])
        {"jids" => jids, "args" => [JSON.generate(a), JSON.generate(["later"]), "[1]", "[2]", "[3]"]}
      `);
      const ran = await waitFor("5 jobs to run in Node", async () => {
        const r = await ranJobs(sk);
        return r.length >= 5 ? r : undefined;
      });
      await new Promise((r) => setTimeout(r, 500));
      const all = await ranJobs(sk);
      expect(all).toHaveLength(5);
      expect(Object.fromEntries(ran.map((r) => [r.jid, r.args_json]))).toEqual(
        Object.fromEntries(pushed.jids.map((j, i) => [j, pushed.args[i]])),
      );
    } finally {
      await w.stop();
    }
  });

  it("runs Ruby's ActiveJob jobs with their arguments decoded (routed by wrapped)", async () => {
    const w = new Worker({
      redis: sk.url,
      dialect: sk.target.version,
      queues: ["aj"],
      concurrency: 2,
      scheduler: false,
      timeout: 3,
    });
    const got: unknown[][] = [];
    w.registerActiveJob("AjRecordJob", (args) => {
      got.push(args);
    });
    await w.start();
    try {
      await sk.ruby(
        `AjRecordJob.set(queue: "aj").perform_later(1, "s", {"str_key" => 1, :sym_key => :sym_val}, ts: Time.at(1_700_000_000, 123, :millisecond).utc, big: 1.5)`,
      );
      await waitFor("the ActiveJob to run in Node", async () => (got.length > 0 ? true : undefined));
      expect(got[0]).toEqual([
        1,
        "s",
        { str_key: 1, sym_key: "sym_val" },
        { ts: new Date(1_700_000_000_123), big: 1.5 },
      ]);
    } finally {
      await w.stop();
    }
  });

  it("server middleware wraps each job; a class without a handler fails as Sidekiq's NameError, or dies by policy", async () => {
    const seen: string[] = [];
    const w = new Worker({
      redis: sk.url,
      dialect: sk.target.version,
      queues: ["mw"],
      concurrency: 2,
      scheduler: false,
      timeout: 3,
    });
    w.use(async (ctx, next) => {
      seen.push(`before ${ctx.className}`);
      await next();
      seen.push(`after ${ctx.className}`);
    });
    w.register("KnownJob", () => {
      seen.push("perform");
    });
    await w.start();
    const d = new Worker({
      redis: sk.url,
      dialect: sk.target.version,
      queues: ["policy-dead"],
      concurrency: 1,
      scheduler: false,
      timeout: 3,
      unknownClass: "dead",
    });
    await d.start();
    try {
      const [unknown, doomed] = await sk.ruby<string[]>(`
        Sidekiq::Client.push("class" => "KnownJob", "queue" => "mw", "args" => [])
        [Sidekiq::Client.push("class" => "NoSuchJob", "queue" => "mw", "args" => [1]),
         Sidekiq::Client.push("class" => "NoSuchJob", "queue" => "policy-dead", "args" => [2])]`);
      const r = await waitFor("the NameError retry entry", async () =>
        sk
          .ruby<{ klass: string; msg: string } | null>(
            `e = Sidekiq::RetrySet.new.find_job(${JSON.stringify(unknown)}); e && {"klass" => e["error_class"], "msg" => e["error_message"]}`,
          )
          .then((x) => x ?? undefined),
      );
      expect(r).toEqual({ klass: "NameError", msg: "uninitialized constant NoSuchJob" });
      const dead = await waitFor("the dead entry", async () =>
        sk
          .ruby<string | null>(`Sidekiq::DeadSet.new.find_job(${JSON.stringify(doomed)})&.[]("error_class")`)
          .then((x) => x ?? undefined),
      );
      expect(dead).toBe("NameError");
      expect(seen).toEqual(["before KnownJob", "perform", "after KnownJob"]);
    } finally {
      await w.stop();
      await d.stop();
    }
  });

  it("several capsules: each takes its own queues with its own concurrency", async () => {
    const w = new Worker({
      redis: sk.url,
      dialect: sk.target.version,
      capsules: [
        { name: "default", concurrency: 3, queues: ["cap-a"] },
        { name: "single", concurrency: 1, queues: ["cap-b"] },
      ],
      scheduler: false,
      timeout: 3,
    });
    let active = 0;
    let maxB = 0;
    const ran: string[] = [];
    w.register("CapJob", async ([q]) => {
      if (q === "b") maxB = Math.max(maxB, ++active);
      await new Promise((r) => setTimeout(r, 50));
      if (q === "b") active--;
      ran.push(String(q));
    });
    await w.start();
    try {
      await sk.ruby(
        `Sidekiq::Client.push_bulk("class" => "CapJob", "queue" => "cap-a", "args" => [["a"]] * 6); Sidekiq::Client.push_bulk("class" => "CapJob", "queue" => "cap-b", "args" => [["b"]] * 4)`,
      );
      await waitFor("10 jobs", async () => (ran.length >= 10 ? true : undefined));
      expect(ran.filter((x) => x === "a")).toHaveLength(6);
      expect(ran.filter((x) => x === "b")).toHaveLength(4);
      expect(maxB).toBe(1);
      const caps = await sk.ruby<unknown>(`
        p = Sidekiq::ProcessSet.new.find { |x| x.identity == ${JSON.stringify(w.identity)} }
        [p["concurrency"], p["queues"].sort]`);
      expect(caps).toEqual([4, ["cap-a", "cap-b"]]);
    } finally {
      await w.stop();
    }
  });

  it("a failing Node job lands in Ruby's RetrySet; Ruby's retry runs it again; exhausted it is in the DeadSet", async () => {
    let attempts = 0;
    const w = new Worker({
      redis: sk.url,
      dialect: sk.target.version,
      queues: ["failing"],
      concurrency: 2,
      scheduler: false,
      timeout: 5,
    });
    w.register("FlakyJob", () => {
      attempts++;
      throw new TypeError(`nope ${attempts}`);
    });
    await w.start();
    try {
      // Before the push: the failure, and so the retry's base time, comes after it.
      const pushedBefore = Date.now() / 1000;
      const jid = await sk.ruby<string>(
        `Sidekiq::Client.push("class" => "FlakyJob", "queue" => "failing", "args" => [1], "retry" => 1, "backtrace" => true)`,
      );
      const entry = await waitFor("the retry entry", async () =>
        sk
          .ruby<{ count: number; klass: string; msg: string; at: number; bt: number } | null>(
            `
          e = Sidekiq::RetrySet.new.find_job(${JSON.stringify(jid)})
          e && {"count" => e["retry_count"], "klass" => e["error_class"], "msg" => e["error_message"], "at" => e.at.to_f, "bt" => e.error_backtrace.size}
        `,
          )
          .then((x) => x ?? undefined),
      );
      expect(entry).toMatchObject({ count: 0, klass: "TypeError", msg: "nope 1" });
      expect(entry.bt).toBeGreaterThan(0);
      // The first retry waits count**4 + 15 s plus jitter (count 0): at least 15 s after the failure.
      expect(entry.at - pushedBefore).toBeGreaterThanOrEqual(15);
      // Ruby's API retry: back to its queue with retry_count decremented; Node runs it again.
      await sk.ruby(`Sidekiq::RetrySet.new.find_job(${JSON.stringify(jid)}).retry`);
      await waitFor("the second attempt", async () => attempts >= 2 || undefined);
      // retry_count went -1 -> 0 (manual retries do not count), so one more try remains.
      const second = await waitFor("the second retry entry", async () =>
        sk
          .ruby<number | null>(`Sidekiq::RetrySet.new.find_job(${JSON.stringify(jid)})&.[]("retry_count")`)
          .then((x) => (x === null ? undefined : x)),
      );
      expect(second).toBe(0);
      await sk.ruby(`Sidekiq::RetrySet.new.find_job(${JSON.stringify(jid)}).add_to_queue`);
      const dead = await waitFor("the dead entry", async () =>
        sk
          .ruby<{ count: number; msg: string } | null>(
            `
          e = Sidekiq::DeadSet.new.find_job(${JSON.stringify(jid)})
          e && {"count" => e["retry_count"], "msg" => e["error_message"]}
        `,
          )
          .then((x) => x ?? undefined),
      );
      expect(dead).toEqual({ count: 1, msg: "nope 3" });
    } finally {
      await w.stop();
    }
  });

  it("pollers promote each other's retries: Ruby's poller runs Node-written ones, Node's poller Ruby-written ones", async () => {
    await sk.redis.del("bridge:received");
    // A Ruby server on queue "ruby-side"; a Node worker (with its poller) on "node".
    const ruby = await sk.startSidekiq({ queues: ["ruby-side"], concurrency: 2 });
    const w = nodeWorker(sk);
    await w.start();
    try {
      const now = (Date.now() / 1000).toFixed(6);
      // Node writes a due retry for Ruby's queue; Ruby writes a due retry for Node's queue.
      const nodeRetry = JobRecord.fromEntries([
        ["retry", true],
        ["queue", "ruby-side"],
        ["class", "RecordJob"],
        ["args", ["from-node"]],
        ["jid", "aaaaaaaaaaaaaaaaaaaaaaaa"],
        ["created_at", Date.now()],
        ["retry_count", 0],
      ]);
      await sk.redis.zadd("retry", now, nodeRetry.toString());
      const rubyJid = await sk.ruby<string>(`
        jid = SecureRandom.hex(12)
        Sidekiq.redis { |r| r.zadd("retry", Time.now.to_f.to_s, JSON.generate({"retry" => true, "queue" => "node", "class" => "RecordJob", "args" => ["from-ruby"], "jid" => jid, "created_at" => Time.now.to_f, "retry_count" => 0})) }
        jid
      `);
      const runs = await waitFor("both promoted jobs to run", async () => {
        const r = await ranJobs(sk);
        return r.some((x) => x.jid === rubyJid) && r.some((x) => x.jid === "aaaaaaaaaaaaaaaaaaaaaaaa") ? r : undefined;
      });
      expect(runs.find((x) => x.jid === rubyJid)?.by).toBe("node");
      const viaRuby = (await sk.redis.lrange("bridge:received", 0, -1))
        .map((s) => JSON.parse(s) as { jid: string; pid?: number })
        .find((x) => x.jid === "aaaaaaaaaaaaaaaaaaaaaaaa");
      expect(viaRuby?.pid).toBeTypeOf("number"); // Ruby's RecordJob records its pid
    } finally {
      await w.stop();
      await ruby.stop(); // so its stats are flushed before the next test counts
    }
  });

  it("ProcessSet lists it; WorkSet shows its running job; quiet! and stop! from Ruby take effect; Stats count its work", async () => {
    const w = new Worker({
      redis: sk.url,
      dialect: sk.target.version,
      queues: ["slow", "other,0"],
      concurrency: 3,
      tag: "node-tag",
      scheduler: false,
      timeout: 5,
    });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    w.register("SlowNodeJob", () => gate);
    const before = await sk.ruby<{ p: number; f: number }>(
      `s = Sidekiq::Stats.new; {"p" => s.processed, "f" => s.failed}`,
    );
    await w.start();
    try {
      const jid = await sk.ruby<string>(
        `Sidekiq::Client.push("class" => "SlowNodeJob", "queue" => "slow", "args" => [1])`,
      );
      // Started = the worker runs it (the queue may be empty a moment earlier).
      await waitFor("the job to start", async () => (w.dump().length === 1 ? true : undefined));
      // Sidekiq writes busy and work on the next beat.
      await beatNow(w);
      const seen = await sk.ruby<{
        procs: Array<Record<string, unknown>>;
        work: Array<{ queue: string; jid: string; klass: string }>;
      }>(`
        procs = Sidekiq::ProcessSet.new.map { |p| {"identity" => p.identity, "concurrency" => p["concurrency"], "queues" => p["queues"], "busy" => p["busy"], "quiet" => p["quiet"], "tag" => p["tag"], "labels" => p["labels"], "version" => p["version"]} }
        work = (defined?(Sidekiq::WorkSet) ? Sidekiq::WorkSet.new : Sidekiq::Workers.new).map { |pid, tid, w|
          payload = w.respond_to?(:payload) ? w.payload : w["payload"]
          payload = JSON.parse(payload) if payload.is_a?(String)
          q = w.respond_to?(:queue) ? w.queue : w["queue"]
          {"queue" => q, "jid" => payload["jid"], "klass" => payload["class"]}
        }
        {"procs" => procs, "work" => work}
      `);
      const me = seen.procs.find((p) => p.identity === w.identity);
      expect(me).toMatchObject({ concurrency: 3, busy: 1, quiet: "false", tag: "node-tag" });
      expect(me!.queues).toEqual(["slow", "other"]);
      expect(me!.labels).toContain("sidekiq-bridge");
      expect(seen.work).toContainEqual({ queue: "slow", jid, klass: "SlowNodeJob" });

      release();
      await waitFor("the job to finish", async () => (w.dump().length === 0 ? true : undefined));
      await sk.ruby(`Sidekiq::ProcessSet.new.find { |p| p.identity == ${JSON.stringify(w.identity)} }.quiet!`);
      await beatNow(w);
      // The beat that pops TSTP writes quiet "false" (its hash is built first); quietDown()
      // writes "true" in a beat of its own, not awaited by ours. A timer beat may also
      // have popped the signal and still be flushing metrics before acting on it.
      await waitFor("the quiet flag", async () =>
        (await sk.redis.hget(w.identity, "quiet")) === "true" ? true : undefined,
      );
      expect(w.quiet).toBe(true);
      const quietFlag = await sk.ruby<string>(`Sidekiq.redis { |r| r.hget(${JSON.stringify(w.identity)}, "quiet") }`);
      expect(quietFlag).toBe("true");
      await sk.ruby(`Sidekiq::ProcessSet.new.find { |p| p.identity == ${JSON.stringify(w.identity)} }.stop!`);
      // A timer beat may pop the TERM first: its stop then closes the connection under this beat.
      await beatNow(w).catch((e: Error) => {
        if (!/Connection is closed/.test(e.message)) throw e;
      });
      await waitFor("the worker to stop", async () =>
        (await sk.redis.sismember("processes", w.identity)) === 0 ? true : undefined,
      );
      const after = await sk.ruby<{ p: number; f: number }>(
        `s = Sidekiq::Stats.new; {"p" => s.processed, "f" => s.failed}`,
      );
      expect(after.p - before.p).toBe(1);
      expect(after.f - before.f).toBe(0);
    } finally {
      release();
      await w.stop();
    }
  });

  it("mixed fleet on the same queue: 5,000 jobs, each run exactly once by Ruby or Node", async () => {
    await sk.redis.del("bridge:received");
    // Both sides ready (Ruby's first heartbeat written) before any job exists, so they compete.
    const ruby = await sk.startSidekiq({ queues: ["shared"], concurrency: 10 });
    await waitFor("Ruby's heartbeat", async () => ((await sk.redis.scard("processes")) > 0 ? true : undefined));
    await new Promise((r) => setTimeout(r, 1000));
    const w = nodeWorker(sk, { queues: ["shared"], concurrency: 10, scheduler: false });
    await w.start();
    const c = new Client({ redis: sk.url, dialect: sk.target.version });
    const jids = await c.job("RecordJob", { queue: "shared" }).performBulk(Array.from({ length: 5000 }, (_, i) => [i]));
    await c.close();
    try {
      await waitFor(
        "5,000 jobs",
        async () => ((await sk.redis.llen("bridge:received")) >= 5000 ? true : undefined),
        180_000,
      );
      await new Promise((r) => setTimeout(r, 1000));
      const ran = (await sk.redis.lrange("bridge:received", 0, -1)).map(
        (s) => JSON.parse(s) as { jid: string; by?: string; pid?: number },
      );
      expect(ran).toHaveLength(5000);
      expect(new Set(ran.map((r) => r.jid))).toEqual(new Set(jids));
      const byNode = ran.filter((r) => r.by === "node").length;
      expect(byNode).toBeGreaterThan(0);
      expect(byNode).toBeLessThan(5000);
    } finally {
      await w.stop();
      await ruby.stop();
    }
  }, 240_000);

  it("with the requeue policy, a Ruby-only class fetched by Node is run by Ruby: none lost, none dead", async () => {
    await sk.redis.del("bridge:received");
    const w = new Worker({
      redis: sk.url,
      dialect: sk.target.version,
      queues: ["mixed"],
      concurrency: 5,
      unknownClass: "requeue",
      scheduler: false,
      timeout: 5,
    });
    await w.start();
    await new Promise((r) => setTimeout(r, 300)); // let Node reach BRPOP first
    const jids = await sk.ruby<string[]>(
      `Sidekiq::Client.push_bulk("class" => "RecordJob", "queue" => "mixed", "args" => (1..50).map { |i| [i] })`,
    );
    await new Promise((r) => setTimeout(r, 1000));
    await sk.startSidekiq({ queues: ["mixed"], concurrency: 5 });
    try {
      await waitFor(
        "50 jobs run by Ruby",
        async () => ((await sk.redis.llen("bridge:received")) >= 50 ? true : undefined),
        60_000,
      );
      await new Promise((r) => setTimeout(r, 500));
      const ran = (await sk.redis.lrange("bridge:received", 0, -1)).map(
        (s) => JSON.parse(s) as { jid: string; pid?: number },
      );
      expect(new Set(ran.map((r) => r.jid))).toEqual(new Set(jids));
      expect(ran).toHaveLength(50);
      expect(ran.every((r) => typeof r.pid === "number")).toBe(true);
      // None of them failed: no entry of theirs in the retry or dead set.
      const failed = [...(await sk.redis.zrange("retry", 0, -1)), ...(await sk.redis.zrange("dead", 0, -1))];
      expect(failed.filter((raw) => jids.some((j) => raw.includes(j)))).toEqual([]);
    } finally {
      await w.stop();
    }
  });
});
