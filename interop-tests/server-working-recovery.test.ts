// What reliable fetch holds while jobs run: batches in a working hash
// (acknowledged many at a time by one HDEL), single jobs in a working list,
// which is also all that versions before the working hash left behind. Ruby's
// API never sees either as a queue; a dead process's jobs come back from both,
// each to run once; after a lost fetch reply the worker's own strays go back.
import { expect, it } from "vitest";
import { makeCapsule } from "../src/core/server/capsule.js";
import { ReliableFetch } from "../src/core/server/fetch/reliable-fetch.js";
import { WORKING_REGISTRY, wipKey, workingHashKey } from "../src/core/wire/bridge-keys.js";
import { Worker } from "../src/assembly/worker.js";
import type { Logger } from "../src/core/logging/logger.js";
import { detectFeatures } from "../src/core/server/fetch/server-features.js";
import { describeEachSidekiq, waitFor, type SidekiqContext } from "./support/harness.js";

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
/** A process with no heartbeat, on another host: dead for recovery. */
const DEAD_ID = "gone-host:4242:0123456789ab";

const pushBulk = (sk: SidekiqContext, queue: string, n: number) =>
  sk.ruby<string[]>(
    `Sidekiq::Client.push_bulk("class" => "HeldJob", "queue" => ${JSON.stringify(queue)}, "args" => (0...${n}).map { |i| [i] })`,
  );

const rubyQueue = (sk: SidekiqContext, queue: string) =>
  sk.ruby<{ size: number; jids: string[]; names: string[] }>(
    `q = Sidekiq::Queue.new(${JSON.stringify(queue)}); { "size" => q.size, "jids" => q.map(&:jid), "names" => Sidekiq::Queue.all.map(&:name) }`,
  );

describeEachSidekiq(
  "server: reliable fetch's working hash and list",
  (sk) => {
    it("a dead process's working hash and its older-format working list both go back to the queue; Ruby sees them there, never as queues; each runs once", async () => {
      const queue = "held-dead";
      const jids = await pushBulk(sk, queue, 10);
      // The dead process: a batch of 6 in its working hash (this version), then
      // 4 moved one by one into its working list, as versions before the hash did.
      const cap = makeCapsule({ name: "default", concurrency: 10, queues: [queue] });
      const blocking = sk.newRedis();
      const dead = new ReliableFetch(sk.redis, blocking, cap, DEAD_ID, await detectFeatures(sk.redis));
      await dead.register();
      expect(await dead.retrieveWork(6)).toHaveLength(6);
      for (let i = 0; i < 4; i++) await sk.redis.rpoplpush(`queue:${queue}`, wipKey(DEAD_ID, `queue:${queue}`));
      blocking.disconnect();
      expect(await sk.redis.hlen(workingHashKey(DEAD_ID, `queue:${queue}`))).toBe(6);
      expect(await sk.redis.llen(wipKey(DEAD_ID, `queue:${queue}`))).toBe(4);
      const during = await rubyQueue(sk, queue);
      expect(during.size).toBe(0);
      expect(during.names.some((n) => n.includes("bridge"))).toBe(false);

      // A new worker recovers both at start-up; Ruby sees the 10 jobs back in the queue first.
      const ran: string[] = [];
      let open!: () => void;
      const gate = new Promise<void>((r) => (open = r));
      const w = new Worker({
        redis: sk.url,
        dialect: sk.target.version,
        queues: [queue],
        concurrency: 5,
        scheduler: false,
        timeout: 5,
        logger: quiet,
      });
      w.register("HeldJob", async (_args, ctx) => {
        await gate;
        ran.push(ctx.jid);
      });
      await w.start();
      try {
        await waitFor("5 jobs to be held", async () =>
          (await sk.redis.hlen(workingHashKey(w.identity, `queue:${queue}`))) +
            (await sk.redis.llen(wipKey(w.identity, `queue:${queue}`))) ===
          5
            ? true
            : undefined,
        );
        const back = await rubyQueue(sk, queue);
        expect(back.size).toBe(5);
        expect(jids).toEqual(expect.arrayContaining(back.jids));
        expect(await sk.redis.exists(workingHashKey(DEAD_ID, `queue:${queue}`))).toBe(0);
        expect(await sk.redis.exists(wipKey(DEAD_ID, `queue:${queue}`))).toBe(0);
        const registry = await sk.redis.smembers(WORKING_REGISTRY);
        expect(registry.filter((k) => k.includes(DEAD_ID))).toEqual([]);
        open();
        await waitFor("all 10 to run", async () => (ran.length === 10 ? true : undefined));
        await new Promise((r) => setTimeout(r, 200));
        expect(ran.sort()).toEqual([...jids].sort());
        // Acknowledged: nothing held any more.
        await waitFor("the working hash to empty", async () =>
          (await sk.redis.hlen(workingHashKey(w.identity, `queue:${queue}`))) === 0 ? true : undefined,
        );
      } finally {
        open();
        await w.stop();
      }
    });

    it("acknowledgements ride on the next batch fetch (one HDEL), or go on their own when none comes; reclaim returns the strays of both structures", async () => {
      const queue = "held-acks";
      await pushBulk(sk, queue, 20);
      const cap = makeCapsule({ name: "default", concurrency: 5, queues: [queue] });
      const blocking = sk.newRedis();
      const identity = `held-test:${process.pid}:abcdefabcdef`;
      const hash = workingHashKey(identity, `queue:${queue}`);
      const f = new ReliableFetch(sk.redis, blocking, cap, identity, await detectFeatures(sk.redis));
      const a = await f.retrieveWork(5);
      expect(a.map((u) => u.field)).toEqual(a.map((_, j) => String(Number(a[0]!.field) + j)));
      expect(await sk.redis.hlen(hash)).toBe(5);
      // Three finish; the next fetch carries their acknowledgement.
      const acked = a.slice(0, 3).map((u) => f.acknowledge(u));
      const b = await f.retrieveWork(3);
      await Promise.all(acked);
      expect(b).toHaveLength(3);
      expect(await sk.redis.hlen(hash)).toBe(5);
      expect(await sk.redis.hmget(hash, ...a.slice(0, 3).map((u) => u.field!))).toEqual([null, null, null]);
      // No fetch follows: they go on their own, shortly.
      await Promise.all(a.slice(3).map((u) => f.acknowledge(u)));
      expect(await sk.redis.hlen(hash)).toBe(3);
      // A one-job move into the working list, then a lost reply: everything not
      // running goes back to the queue's BRPOP end, the first fetched first.
      const c = await f.retrieveWork(1);
      expect(c[0]!.field).toBeUndefined();
      expect(await sk.redis.llen(wipKey(identity, `queue:${queue}`))).toBe(1);
      const running = new Set([b[0]!.raw.toString("base64")]);
      expect(await f.recover(running)).toBe(3);
      expect(await sk.redis.hlen(hash)).toBe(1);
      expect(await sk.redis.llen(wipKey(identity, `queue:${queue}`))).toBe(0);
      const args = (await sk.redis.lrange(`queue:${queue}`, -3, -1)).map(
        (s) => (JSON.parse(s) as { args: number[] }).args[0],
      );
      // b[1], b[2] (args 6, 7) then c (8): 6 at the BRPOP end.
      expect(args).toEqual([8, 7, 6]);
      await f.bulkRequeue(b.slice(0, 1));
      expect(await sk.redis.hlen(hash)).toBe(0);
      await f.close();
      blocking.disconnect();
    });
  },
  (t) => t.version.startsWith("8."),
);
