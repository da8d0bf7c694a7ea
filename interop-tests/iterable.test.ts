// Sidekiq's IterableJob across languages: BridgeIterableJob is implemented in
// Ruby (ruby-fixtures/lib/iterable_jobs.rb) and in Node (support/iterable-twin.ts). A real
// `sidekiq` stopped mid-iteration hands the job back with its cursor in
// `it-<jid>` and Node resumes at that item, and the reverse; every item is
// processed exactly once. On Sidekiq 8, Ruby's `Sidekiq::Client#cancel!`
// stops a Node-run iteration and the Web UI's Busy page shows its progress.
import { expect, it } from "vitest";
import { emptyHandlers } from "../src/tools/migration/audit.js";
import { auditQueues } from "../src/assembly/migration.js";
import { cancelIterableJob, iterationProgress } from "../src/core/iterable/iterable-state.js";
import { describeEachSidekiq, type SidekiqContext, waitFor, beatNow } from "./support/harness.js";
import { hooks, iterated, nodeWorker as twinWorker, startRuby as twinRuby } from "./support/iterable-twin.js";

const QUEUE = "iter";
const nodeWorker = (sk: SidekiqContext) => twinWorker(sk, QUEUE);
const startRuby = (sk: SidekiqContext) => twinRuby(sk, QUEUE);
const enqueue = (sk: SidekiqContext, count: number, delayMs: number) =>
  sk.ruby<string>(
    `load File.join(File.dirname($0), "lib/iterable_jobs.rb"); BridgeIterableJob.set(queue: ${JSON.stringify(QUEUE)}).perform_async(${count}, ${delayMs})`,
  );

/** What `migrate audit -r` records from a handlers module. */
const handlersOf = (fn: (register: (c: string) => void, registerIterable: (c: string) => void) => void) => {
  const h = emptyHandlers();
  fn(
    (c) => h.classes.add(c),
    (c) => {
      h.classes.add(c);
      h.iterableClasses!.add(c);
    },
  );
  return h;
};

/** Each of 0...count exactly once, in order, the first `handedOver` by `first`, the rest by `second`. */
function expectHandedOver(items: string[], count: number, first: string, second: string): number {
  const handedOver = items.findIndex((x) => !x.startsWith(`${first}:`));
  expect(handedOver).toBeGreaterThan(0);
  expect(items).toEqual(Array.from({ length: count }, (_, i) => `${i < handedOver ? first : second}:${i}`));
  return handedOver;
}

/** The saved state as Ruby reads it, and the job's place in its queue. */
function rubyView(sk: SidekiqContext, jid: string) {
  return sk.ruby<{ state: Record<string, string>; ttl: number; queued: string[]; cursor: unknown }>(`
    state, ttl = Sidekiq.redis { |c| [c.hgetall("it-${jid}"), c.ttl("it-${jid}")] }
    {"state" => state, "ttl" => ttl, "queued" => Sidekiq::Queue.new(${JSON.stringify(QUEUE)}).map(&:jid),
     "cursor" => Sidekiq.load_json(state["c"])}`);
}

describeEachSidekiq(
  "IterableJob: cursor, resume and cancellation across Ruby and Node",
  (sk) => {
    it("a real sidekiq stopped mid-iteration hands the job back; Node resumes at the saved cursor", async () => {
      const ruby = await startRuby(sk);
      const jid = await enqueue(sk, 30, 150);
      await waitFor("Ruby to iterate a few items", async () =>
        (await iterated(sk, jid)).length >= 5 ? true : undefined,
      );
      await ruby.stop("SIGTERM");

      const saved = await rubyView(sk, jid);
      const ruby_done = (await iterated(sk, jid)).length;
      expect(saved.queued).toEqual([jid]);
      expect(saved.state.ex).toBe("1");
      expect(saved.cursor).toBe(ruby_done); // the next item, not yet processed
      expect(Number(saved.state.rt)).toBeGreaterThan(0);
      expect(saved.ttl).toBeGreaterThan(30 * 86400 - 60);

      // migrate audit sees the saved cursor: a plain Node handler blocks, an iterable one does not.
      const plain = await auditQueues(sk.redis, {
        queues: [QUEUE],
        handlers: handlersOf((register) => register("BridgeIterableJob")),
      });
      expect(plain.queues[0]!.classes[0]).toMatchObject({ name: "BridgeIterableJob", queued: 1, iterating: 1 });
      expect(plain.queues[0]!.verdict).toBe("BLOCKED");
      expect(plain.queues[0]!.reasons.join()).toMatch(/saved IterableJob cursor.*registerIterable/);
      const iterable = await auditQueues(sk.redis, {
        queues: [QUEUE],
        handlers: handlersOf((_, registerIterable) => registerIterable("BridgeIterableJob")),
      });
      expect(iterable.queues[0]!.verdict).toBe("READY");

      const w = nodeWorker(sk);
      await w.start();
      try {
        await waitFor("Node to complete the job", async () =>
          (await hooks(sk, jid)).includes("node:complete:2") ? true : undefined,
        );
      } finally {
        await w.stop();
      }
      expect(expectHandedOver(await iterated(sk, jid), 30, "ruby", "node")).toBe(ruby_done);
      expect(await hooks(sk, jid)).toEqual([
        "ruby:start:1",
        "ruby:stop:1",
        "node:resume:2",
        "node:stop:2",
        "node:complete:2",
      ]);
      expect(await sk.redis.exists(`it-${jid}`)).toBe(0);
      expect(await sk.redis.llen(`queue:${QUEUE}`)).toBe(0);
      expect(await sk.redis.zcard("retry")).toBe(0);
    }, 90_000);

    it("a Node worker stopped mid-iteration hands the job back; a real sidekiq resumes at the saved cursor", async () => {
      const w = nodeWorker(sk);
      await w.start();
      const jid = await enqueue(sk, 30, 150);
      try {
        await waitFor("Node to iterate a few items", async () =>
          (await iterated(sk, jid)).length >= 5 ? true : undefined,
        );
      } finally {
        await w.stop();
      }
      const saved = await rubyView(sk, jid);
      const node_done = (await iterated(sk, jid)).length;
      expect(saved.queued).toEqual([jid]);
      expect(saved.state.ex).toBe("1");
      expect(saved.cursor).toBe(node_done);
      expect(Number(saved.state.rt)).toBeGreaterThan(0);
      expect(saved.state.rt).toMatch(/^\d+\.\d+(e-\d+)?$/); // a Ruby Float's to_s
      expect(saved.ttl).toBeGreaterThan(30 * 86400 - 60);

      const ruby = await startRuby(sk);
      await waitFor("Ruby to complete the job", async () =>
        (await hooks(sk, jid)).includes("ruby:complete:2") ? true : undefined,
      );
      await ruby.stop();
      expect(expectHandedOver(await iterated(sk, jid), 30, "node", "ruby")).toBe(node_done);
      expect(await hooks(sk, jid)).toEqual([
        "node:start:1",
        "node:stop:1",
        "ruby:resume:2",
        "ruby:stop:2",
        "ruby:complete:2",
      ]);
      expect(await sk.redis.exists(`it-${jid}`)).toBe(0);
      expect(await sk.redis.zcard("retry")).toBe(0);
    }, 90_000);

    // Sidekiq 8 saves the failing item's cursor, so the retry resumes at it;
    // 7.3.2 saves nothing on an error (the job failed before its first 5-second
    // flush), so the retry starts over. Either way, the other side does the same.
    for (const [first, second] of [
      ["ruby", "node"],
      ["node", "ruby"],
    ] as const) {
      it(`an item raising on ${first}: the retry, run by ${second}, resumes where Sidekiq would`, async () => {
        const jid = await sk.ruby<string>(
          `Sidekiq::Client.push("class" => "BridgeIterableJob", "queue" => ${JSON.stringify(QUEUE)}, "args" => [10, 20])`,
        );
        await sk.redis.set(`bridge:fail-once:${jid}`, "4");
        const runOn = async (side: "ruby" | "node", until: () => Promise<boolean>) => {
          if (side === "ruby") {
            const ruby = await startRuby(sk);
            await waitFor(`Ruby's run of ${jid}`, async () => ((await until()) ? true : undefined));
            await ruby.stop();
          } else {
            const w = nodeWorker(sk);
            await w.start();
            try {
              await waitFor(`Node's run of ${jid}`, async () => ((await until()) ? true : undefined));
            } finally {
              await w.stop();
            }
          }
        };
        await runOn(first, async () => (await sk.redis.zcard("retry")) === 1);
        const state = await sk.redis.hgetall(`it-${jid}`);
        const sidekiq8 = sk.target.dialect >= 8;
        if (sidekiq8) expect(state).toMatchObject({ ex: "1", c: "4" });
        else expect(state).toEqual({});
        // Retry now, as the Web UI's "Retry Now" does.
        expect(
          await sk.ruby(`Sidekiq::RetrySet.new.each(&:retry); Sidekiq::Queue.new(${JSON.stringify(QUEUE)}).size`),
        ).toBe(1);
        await runOn(second, async () => (await hooks(sk, jid)).some((h) => h.startsWith(`${second}:complete:`)));

        const resumeAt = sidekiq8 ? 4 : 0;
        expect(await iterated(sk, jid)).toEqual([
          ...[0, 1, 2, 3].map((i) => `${first}:${i}`),
          ...Array.from({ length: 10 - resumeAt }, (_, i) => `${second}:${i + resumeAt}`),
        ]);
        expect(await hooks(sk, jid)).toEqual(
          sidekiq8
            ? [`${first}:start:1`, `${second}:resume:2`, `${second}:stop:2`, `${second}:complete:2`]
            : [`${first}:start:1`, `${second}:start:1`, `${second}:stop:1`, `${second}:complete:1`],
        );
        expect(await sk.redis.exists(`it-${jid}`)).toBe(0);
        expect(await sk.redis.zcard("retry")).toBe(0);
      }, 90_000);
    }
  },
  (t) => t.dialect >= 7,
);

describeEachSidekiq(
  "IterableJob on Sidekiq 8: cancellation both ways, progress in the Web UI",
  (sk) => {
    it("the Busy page shows the Node job's cursor; Sidekiq::Client#cancel! stops it at the next flush", async () => {
      const w = nodeWorker(sk);
      await w.start();
      try {
        const jid = await enqueue(sk, 400, 50);
        // The first flush comes 5 s into the iteration, as in Ruby.
        await waitFor(
          "the first state flush",
          async () => ((await sk.redis.hexists(`it-${jid}`, "c")) ? true : undefined),
          15_000,
        );
        await beatNow(w);
        // The state is read before and after the page: Node flushes every 5 s, so
        // the page may show a cursor between the two reads.
        const seen = await sk.ruby<{
          busy: string;
          before: Array<[string, unknown, number]>;
          after: Array<[string, unknown, number]>;
        }>(`
          require "sidekiq/web"
          require "rack/mock"
          jids = Sidekiq::WorkSet.new.map { |_, _, work| work.job.jid }
          states = -> { q = Sidekiq::IterableJobQuery.new(jids); jids.filter_map { |j| (s = q[j]) && [j, s.cursor, s.executions] } }
          before = states.call
          res = Rack::MockRequest.new(Sidekiq::Web.new).get("/busy", "rack.session" => {})
          {"busy" => res.body.to_s.force_encoding("UTF-8").scrub, "before" => before, "after" => states.call}`);
        expect(seen.before).toHaveLength(1);
        expect(seen.after).toHaveLength(1);
        const [stateJid, before, executions] = seen.before[0]!;
        const after = seen.after[0]![1];
        expect(stateJid).toBe(jid);
        expect(typeof before).toBe("number");
        expect(typeof after).toBe("number");
        expect(executions).toBe(1);
        // As Ruby shows its own: the runtime of earlier executions (none yet: 0.0).
        const shown = seen.busy.match(/cursor=(\d+); exec=1; rt=(<span[^>]*>)?0\.0(<\/span>)?s/);
        expect(shown, "the Busy page's iteration line").not.toBeNull();
        const cursor = Number(shown![1]);
        expect(cursor).toBeGreaterThanOrEqual(before as number);
        expect(cursor).toBeLessThanOrEqual(after as number);

        const cancelledAt = await sk.ruby<number>(`Sidekiq::Client.new.cancel!(${JSON.stringify(jid)})`);
        expect(cancelledAt).toBeGreaterThan(Date.now() / 1000 - 60);
        await waitFor(
          "Node to see the cancellation",
          async () => ((await hooks(sk, jid)).includes("node:complete:1") ? true : undefined),
          15_000,
        );
        expect(await hooks(sk, jid)).toEqual(["node:start:1", "node:cancel:1", "node:stop:1", "node:complete:1"]);
        const items = await iterated(sk, jid);
        expect(items.length).toBeLessThan(400);
        expect(items).toEqual(Array.from({ length: items.length }, (_, i) => `node:${i}`));
        // Cancelled means completed: the state is deleted, nothing requeued or retried.
        expect(await sk.redis.exists(`it-${jid}`)).toBe(0);
        expect(await sk.redis.llen(`queue:${QUEUE}`)).toBe(0);
        expect(await sk.redis.zcard("retry")).toBe(0);
      } finally {
        await w.stop();
      }
    }, 60_000);

    it("Node's cancelIterableJob stops a Ruby-run iteration; iterationProgress reads what Ruby's IterableJobQuery reads", async () => {
      const ruby = await startRuby(sk);
      try {
        const jid = await enqueue(sk, 400, 50);
        await waitFor(
          "Ruby's first state flush",
          async () => ((await sk.redis.hexists(`it-${jid}`, "c")) ? true : undefined),
          15_000,
        );
        const mine = (await iterationProgress(sk.redis, [jid, "not-a-jid"])).get(jid)!;
        const theirs = await sk.ruby<{ cursor: unknown; executions: number; runtime: number }>(
          `s = Sidekiq::IterableJobQuery.new([${JSON.stringify(jid)}])[${JSON.stringify(jid)}]
           {"cursor" => s.cursor, "executions" => s.executions, "runtime" => s.runtime}`,
        );
        // Ruby may flush again between the two reads: compare what cannot move in 5 s.
        expect(mine.executions).toBe(theirs.executions);
        expect(mine.runtime).toBe(theirs.runtime);
        expect(typeof mine.cursor).toBe("number");
        expect(mine.cancelled).toBeUndefined();

        const mark = await cancelIterableJob(sk.redis, jid);
        expect(mark).toBeGreaterThan(Date.now() / 1000 - 60);
        await waitFor(
          "Ruby to see the cancellation",
          async () => ((await hooks(sk, jid)).includes("ruby:complete:1") ? true : undefined),
          15_000,
        );
        expect(await hooks(sk, jid)).toEqual(["ruby:start:1", "ruby:cancel:1", "ruby:stop:1", "ruby:complete:1"]);
        expect((await iterated(sk, jid)).length).toBeLessThan(400);
        expect(await sk.redis.exists(`it-${jid}`)).toBe(0);

        // A second cancel keeps the first mark, as Ruby's HSETNX does. A job that
        // is not running: a running one may finish (and delete its state) first.
        const idle = "0123456789abcdef01234567";
        const first = await cancelIterableJob(sk.redis, idle);
        expect(await sk.ruby(`Sidekiq::Client.new.cancel!(${JSON.stringify(idle)})`)).toBe(first);
      } finally {
        await ruby.stop();
      }
    }, 60_000);
  },
  (t) => t.dialect >= 8,
);
