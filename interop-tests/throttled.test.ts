// sidekiq-throttled across both languages, against the real gem (1.5.2 on
// Sidekiq 7.3.2, 2.1.0 on 8.1.7): a class served by a real Ruby Sidekiq and a
// Node worker at once keeps its concurrency limit and its threshold, and a
// slot either side takes is one the other counts.
import { afterEach, expect, it } from "vitest";
import type { Worker } from "../src/assembly/worker.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";
import { captureLogger } from "./support/unique-jobs.js";
import {
  mostStartsWithin,
  nodeThrottledWorker,
  observed,
  rubyThrottles,
  THROTTLED_RELEASES,
  throttledRuby,
  useRubyThrottledServer,
} from "./support/throttled.js";

describeEachSidekiq(
  "sidekiq-throttled: Ruby and Node share the gem's throttles",
  (sk) => {
    const ruby = throttledRuby(sk);
    const workers: Worker[] = [];
    useRubyThrottledServer(sk);
    afterEach(async () => {
      await Promise.all(workers.splice(0).map((w) => w.stop()));
    });

    it("a class served by Ruby and Node at once never runs more than its concurrency limit (2)", async () => {
      await sk.redis.flushdb();
      // One slot of Node's own: it can hold at most one of the two, so two at
      // once means one each. With more, Node takes a freed slot back within
      // milliseconds while Ruby, refused once, waits out the gem's cooldown, and
      // Ruby may run none (as a second Ruby process may, beside one that refetches first).
      const w = nodeThrottledWorker(sk, { concurrency: 1 });
      workers.push(w);
      await w.start();
      await ruby(`12.times { ConcurrencyJob.perform_async(0.6) }`);
      await waitFor("the 12 jobs to run", async () => (await observed(sk.redis)).done === 12, 60_000);
      const o = await observed(sk.redis);
      console.log(
        `Sidekiq ${sk.target.version} concurrency: at most ${o.maxAtOnce} at once; ruby ran ${o.starts.filter((s) => s.by === "ruby").length}, node ${o.starts.filter((s) => s.by === "node").length}`,
      );
      expect(o.maxAtOnce).toBe(2);
      expect(o.starts.map((s) => s.by)).toContain("ruby");
      expect(o.starts.map((s) => s.by)).toContain("node");
      // Every slot was given back (the gem deletes an empty zset).
      await waitFor(
        "the slots to be given back",
        async () => (await sk.redis.zcard("throttled:ConcurrencyJob:concurrency.v2")) === 0,
      );
      expect(await sk.redis.llen("queue:thr")).toBe(0);
    }, 90_000);

    it("a class served by Ruby and Node at once never starts more than its threshold (3 per 3 s)", async () => {
      await sk.redis.flushdb();
      let refused = 0;
      const w = nodeThrottledWorker(sk, { throttled: rubyThrottles(900, () => refused++) });
      workers.push(w);
      await w.start();
      await ruby(`9.times { ThresholdJob.perform_async(0) }`);
      await waitFor("the 9 jobs to run", async () => (await observed(sk.redis)).done === 9, 60_000);
      const { starts } = await observed(sk.redis);
      const most = mostStartsWithin(starts, 3, 0.25);
      console.log(
        `Sidekiq ${sk.target.version} threshold: at most ${most} starts in 3 s; ruby ran ${starts.filter((s) => s.by === "ruby").length}, node ${starts.filter((s) => s.by === "node").length} (refused ${refused} times); first to last ${(starts.at(-1)!.at - starts[0]!.at).toFixed(2)} s`,
      );
      expect(most).toBeLessThanOrEqual(3);
      // Three periods: the seventh start is at least two periods after the first.
      expect(starts[6]!.at - starts[0]!.at).toBeGreaterThan(6 - 0.25);
      // Both took part: Ruby ran some, and Node ran some or was refused by the shared list.
      expect(starts.map((s) => s.by)).toContain("ruby");
      expect(starts.filter((s) => s.by === "node").length + refused).toBeGreaterThan(0);
    }, 90_000);

    it("a slot Node takes is one the gem counts and throttles by", async () => {
      await sk.redis.flushdb();
      const w = nodeThrottledWorker(sk, { queues: ["thrn"] });
      workers.push(w);
      await w.start();
      // 8 s jobs: the probe below boots a Ruby process, which takes seconds on a loaded machine.
      await ruby(`2.times { ConcurrencyJob.set(queue: "thrn").perform_async(8) }`);
      await waitFor("Node to start both", async () => (await observed(sk.redis)).starts.length === 2);
      const probe = `{"class" => "ConcurrencyJob", "jid" => "f" * 24, "args" => [0]}`;
      expect(
        await ruby<[number, boolean]>(
          `[ThrottledState.concurrency_count("ConcurrencyJob"), ThrottledState.throttled?(${probe})]`,
        ),
      ).toEqual([2, true]);
      await waitFor("both to finish", async () => (await observed(sk.redis)).done === 2, 20_000);
      expect(await ruby<number>(`ThrottledState.concurrency_count("ConcurrencyJob")`)).toBe(0);
    }, 60_000);

    it("a slot Ruby takes holds Node back until Ruby gives it back; a worker given no throttle runs past it and warns once", async () => {
      await sk.redis.flushdb();
      // Ruby's fetch takes both slots (the jids of jobs it runs).
      expect(
        await ruby<boolean[]>(
          `["a", "b"].map { |c| ThrottledState.throttled?({"class" => "ConcurrencyJob", "jid" => c * 24, "args" => [0]}) }`,
        ),
      ).toEqual([false, false]);
      const w = nodeThrottledWorker(sk, { queues: ["thrn"] });
      // A worker given no throttle runs the class past the limit, and says so once.
      const logger = captureLogger();
      const bare = nodeThrottledWorker(sk, { queues: ["thru"], throttled: true, logger });
      workers.push(w, bare);
      await Promise.all([w.start(), bare.start()]);
      await ruby(`
        ConcurrencyJob.set(queue: "thrn").perform_async(0)
        2.times { ConcurrencyJob.set(queue: "thru").perform_async(0) }
      `);
      await waitFor("the unthrottled worker to run its two", async () => (await observed(sk.redis)).done === 2);
      await new Promise((r) => setTimeout(r, 1500));
      expect((await observed(sk.redis)).done).toBe(2);
      const warned = logger.lines.filter((l) => l.includes("Ruby throttles ConcurrencyJob"));
      expect(warned).toHaveLength(1);
      expect(warned[0]).toContain("was given no throttle for it");
      await ruby(`ThrottledState.finalize!("ConcurrencyJob", "a" * 24)`);
      // Handed back as the gem's :enqueue does, never lost: it runs once the slot is free.
      await waitFor("Node to run it", async () => (await observed(sk.redis)).done === 3, 20_000);
      expect(await sk.redis.llen("queue:thrn")).toBe(0);
    }, 60_000);

    it("garbage in the gem's keys: both sides run the job unthrottled (throttled? rescues), and both fail it into the retry set when giving the slot back raises", async () => {
      await sk.redis.flushdb();
      await sk.redis.set("throttled:ConcurrencyJob:concurrency.v2", "not a zset");
      // Read only once the list holds the limit (3) of starts.
      await sk.redis.rpush("throttled:ThresholdJob:threshold", "yesterday", "yesterday", "yesterday");
      const logger = captureLogger();
      const w = nodeThrottledWorker(sk, { queues: ["thrn"], logger });
      workers.push(w);
      await w.start();
      await ruby(`
        ConcurrencyJob.perform_async(0); ThresholdJob.perform_async(0)
        ConcurrencyJob.set(queue: "thrn").perform_async(0); ThresholdJob.set(queue: "thrn").perform_async(0)
      `);
      await waitFor("the four jobs to run", async () => (await observed(sk.redis)).done === 4, 30_000);
      await waitFor("both ConcurrencyJob runs in the retry set", async () => (await sk.redis.zcard("retry")) === 2);
      const retried = (await sk.redis.zrange("retry", 0, -1)).map((r) => JSON.parse(r) as Record<string, string>);
      for (const r of retried) {
        expect(r.class).toBe("ConcurrencyJob");
        expect(r.error_message).toContain("WRONGTYPE");
      }
      expect(retried.map((r) => r.queue).sort()).toEqual(["thr", "thrn"]);
      const by = (await observed(sk.redis)).starts.map((s) => `${s.by} ${s.class}`).sort();
      expect(by).toEqual(["node ConcurrencyJob", "node ThresholdJob", "ruby ConcurrencyJob", "ruby ThresholdJob"]);
      // One line per class says why the job ran unthrottled.
      const lines = logger.lines.filter((l) => l.includes("could not check the throttle"));
      expect(lines).toHaveLength(2);
      expect(await sk.redis.get("throttled:ConcurrencyJob:concurrency.v2")).toBe("not a zset");
    }, 60_000);

    it("requeue :schedule: the job Node schedules for a throttled one is the job the gem's reschedule_throttled schedules", async () => {
      await sk.redis.flushdb();
      // The gem's fetch, twice: the first takes the period's one start, the second is throttled and scheduled.
      const rubyScheduled = await ruby<[string, number]>(`
        job = ScheduledThrottleJob.get_sidekiq_options.merge("class" => "ScheduledThrottleJob", "args" => [7], "jid" => "a" * 24)
        raise "first throttled" if ThrottledState.throttled?(job)
        raise "second not throttled" unless ThrottledState.throttled?(job.merge("jid" => "b" * 24))
        ThrottledState.requeue_throttled("thrs", job.merge("jid" => "b" * 24))
        e = Sidekiq::ScheduledSet.new.first
        [e.value, e.score]
      `);
      const w = nodeThrottledWorker(sk, {
        queues: ["thrs"],
        throttled: {
          classes: {
            ScheduledThrottleJob: { threshold: { limit: 1, period: 30 }, requeue: { with: "schedule" } },
          },
        },
      });
      workers.push(w);
      await w.start();
      const pushedJid = await ruby<string>(`ScheduledThrottleJob.perform_async(7)`);
      await waitFor("Node to schedule it", async () => (await sk.redis.zcard("schedule")) === 2);
      const entries = await sk.redis.zrange("schedule", 0, -1, "WITHSCORES");
      const scheduled = [0, 2].map((i) => ({
        job: JSON.parse(entries[i]!) as Record<string, unknown>,
        at: Number(entries[i + 1]),
      }));
      const fromRuby = scheduled.find((e) => JSON.stringify(e.job) === JSON.stringify(JSON.parse(rubyScheduled[0])))!;
      const fromNode = scheduled.find((e) => e !== fromRuby)!;
      // The same keys in the same order, the same values but the new jid and created_at.
      expect(Object.keys(fromNode.job)).toEqual(Object.keys(fromRuby.job));
      const same = (j: Record<string, unknown>) => ({ ...j, jid: undefined, created_at: undefined });
      expect(same(fromNode.job)).toEqual(same(fromRuby.job));
      expect(fromNode.job.jid).not.toBe(pushedJid);
      // For when the period ends (retry_in: 30 s after the one start, with up to a fifth of jitter).
      for (const e of scheduled) {
        expect(e.at - Date.now() / 1000).toBeGreaterThan(15);
        expect(e.at - Date.now() / 1000).toBeLessThan(36.5);
      }
      expect((await observed(sk.redis)).starts).toEqual([]);
      expect(await sk.redis.llen("queue:thrs")).toBe(0);
    }, 60_000);
  },
  THROTTLED_RELEASES,
);
