// The worker fetches as many jobs as it has free slots in one round
// trip (BLMPOP for basic fetch, a Lua move into the working list for reliable
// fetch). What must not change: no more jobs taken than free slots while jobs
// are long (Ruby's API sees the rest waiting in the queue), Sidekiq's queue
// order, each job run once, and the one-job commands on servers without
// BLMPOP / RPOP count. Reliable fetch alone fetches one batch ahead while
// short jobs hold every slot; those jobs go back to the head of their queue
// when they wait too long or the worker quiets.
import { expect, it } from "vitest";
import { Worker } from "../src/assembly/worker.js";
import { makeCapsule } from "../src/core/server/capsule.js";
import { AckQueue } from "../src/core/server/fetch/ack-queue.js";
import { BasicFetch } from "../src/core/server/fetch/basic-fetch.js";
import { ReliableFetch } from "../src/core/server/fetch/reliable-fetch.js";
import { WORKING_REGISTRY, wipKey, workingHashKey } from "../src/core/wire/bridge-keys.js";
import { detectFeatures, featuresOf } from "../src/core/server/fetch/server-features.js";
import { describeEachSidekiq, itFirstPass, waitFor, type SidekiqContext } from "./support/harness.js";

const pushBulk = (sk: SidekiqContext, className: string, queue: string, n: number) =>
  sk.ruby<string[]>(
    `Sidekiq::Client.push_bulk("class" => ${JSON.stringify(className)}, "queue" => ${JSON.stringify(queue)}, "args" => (0...${n}).map { |i| [i] })`,
  );

/** Jobs held by a process's working list (one-job fetches) and working hash (batches) of a queue. */
const held = async (sk: SidekiqContext, identity: string, queue: string) =>
  (await sk.redis.llen(wipKey(identity, `queue:${queue}`))) +
  (await sk.redis.hlen(workingHashKey(identity, `queue:${queue}`)));

const rubyQueueSize = (sk: SidekiqContext, queue: string) =>
  sk.ruby<number>(`Sidekiq::Queue.new(${JSON.stringify(queue)}).size`);

/** A reliable fetch whose finished jobs wait `ackDelayMs` for a fetch to carry their acknowledgement. */
const reliableFetchWithAckDelay = async (
  sk: SidekiqContext,
  blocking: ReturnType<SidekiqContext["newRedis"]>,
  cap: ReturnType<typeof makeCapsule>,
  identity: string,
  ackDelayMs: number,
) =>
  new ReliableFetch(
    sk.redis,
    blocking,
    cap,
    identity,
    await detectFeatures(sk.redis),
    new AckQueue(),
    1000,
    ackDelayMs,
  );

describeEachSidekiq(
  "server: batched fetch",
  (sk) => {
    // Basic fetch keeps one lane unless told; two lanes share the free slots.
    const slotVariants = [
      { fetch: "basic", lanes: undefined },
      { fetch: "basic", lanes: 2 },
      { fetch: "reliable", lanes: undefined },
    ] as const;
    for (const { fetch, lanes } of slotVariants) {
      const named = lanes ? `${fetch} fetch with ${lanes} lanes` : `${fetch} fetch`;
      it(`${named} takes no more jobs than free slots, and runs each of Ruby's jobs once`, async () => {
        const queue = `batch-${fetch}-${lanes ?? "default"}`;
        const jids = await pushBulk(sk, "GateJob", queue, 40);
        const w = new Worker({
          redis: sk.url,
          dialect: sk.target.version,
          queues: [queue],
          concurrency: 7,
          fetch,
          ...(lanes ? { fetchLanes: lanes } : {}),
          scheduler: false,
          timeout: 5,
        });
        let open!: () => void;
        const gate = new Promise<void>((r) => (open = r));
        const ran: string[] = [];
        w.register("GateJob", async (_args, ctx) => {
          ran.push(ctx.jid);
          await gate;
        });
        await w.start();
        try {
          await waitFor("7 jobs to start", async () => (ran.length === 7 ? true : undefined));
          // Give a greedy fetch time to show itself: still 33 waiting, 7 in our hands.
          await new Promise((r) => setTimeout(r, 300));
          expect(ran).toHaveLength(7);
          expect(await rubyQueueSize(sk, queue)).toBe(33);
          if (fetch === "reliable") expect(await held(sk, w.identity, queue)).toBe(7);
          open();
          await waitFor("all 40 to run", async () =>
            ran.length === 40 && (await rubyQueueSize(sk, queue)) === 0 ? true : undefined,
          );
          await new Promise((r) => setTimeout(r, 200));
          expect(ran).toHaveLength(40);
          expect(new Set(ran)).toEqual(new Set(jids));
          if (fetch === "reliable") {
            await waitFor("the working list to empty", async () =>
              (await held(sk, w.identity, queue)) === 0 ? true : undefined,
            );
          }
        } finally {
          open();
          await w.stop();
        }
      });
    }

    for (const fetch of ["basic", "reliable"] as const) {
      it(`${fetch} fetch keeps Sidekiq's order: FIFO within a queue, strict queues first to last`, async () => {
        const [high, low] = [`order-high-${fetch}`, `order-low-${fetch}`];
        await pushBulk(sk, "OrderJob", low, 60);
        await pushBulk(sk, "OrderJob", high, 60);
        // One fetch lane: with two, their batches start in whichever order the replies
        // come, as Sidekiq's threads do; order is then kept within each batch only.
        const w = new Worker({
          redis: sk.url,
          dialect: sk.target.version,
          queues: [high, low],
          concurrency: 8,
          fetch,
          fetchLanes: 1,
          scheduler: false,
          timeout: 5,
        });
        const started: Array<[string, number]> = [];
        w.register("OrderJob", ([i], ctx) => {
          started.push([ctx.queue, i as number]);
        });
        await w.start();
        try {
          await waitFor("all 120 to run", async () => (started.length === 120 ? true : undefined));
        } finally {
          await w.stop();
        }
        // Every job of the first queue starts before any of the second, each queue in push order.
        expect(started.slice(0, 60)).toEqual(Array.from({ length: 60 }, (_, i) => [high, i]));
        expect(started.slice(60)).toEqual(Array.from({ length: 60 }, (_, i) => [low, i]));
      });
    }

    /**
     * Fetch-ahead happens only while jobs average under 5 ms in the processor,
     * which two passes side by side on 2 cores (and Docker's network for the
     * stats round trip) can push past: these run in the first pass only.
     *
     * 100 short jobs (the worker learns they are short and the queue has a
     * backlog), then 100 that wait for the gate, 5 slots: the gated ones
     * end up holding every slot. A fetch that brings jobs while all 5 slots
     * are gated is a batch fetched ahead; the worker's own "fetch" event
     * says when (not a poll of Redis, which under load can miss the 1 s for
     * which such a batch is held).
     */
    const startGated = async (
      queue: string,
      o: { fetchAhead?: boolean; fetchLanes?: number; onAhead?: (w: Worker) => void } = {},
    ) => {
      const jids = await pushBulk(sk, "AheadJob", queue, 200);
      const w = new Worker({
        redis: sk.url,
        dialect: sk.target.version,
        queues: [queue],
        concurrency: 5,
        ...(o.fetchAhead === undefined ? {} : { fetchAhead: o.fetchAhead }),
        ...(o.fetchLanes === undefined ? {} : { fetchLanes: o.fetchLanes }),
        scheduler: false,
        timeout: 5,
      });
      const run = { jids, w, ran: [] as string[], gated: 0, aheadJobs: 0, aheadAt: 0, open: () => {} };
      const gate = new Promise<void>((r) => (run.open = r));
      w.register("AheadJob", async ([i], ctx) => {
        run.ran.push(ctx.jid);
        if ((i as number) >= 100) {
          run.gated++;
          await gate;
        }
      });
      w.on("fetch", (e) => {
        if (run.gated < 5 || e.jobs === 0 || run.aheadAt > 0) return;
        run.aheadJobs = e.jobs;
        run.aheadAt = performance.now();
        o.onAhead?.(w);
      });
      await w.start();
      await waitFor("5 gated jobs to hold the slots", async () => (run.gated === 5 ? true : undefined));
      return run;
    };

    for (const ending of ["waiting too long", "quiet"] as const) {
      itFirstPass(
        `reliable fetch fetches a batch ahead while short jobs hold the slots; ${ending} puts it back at the head of the queue, in order`,
        async () => {
          const queue = `ahead-${ending === "quiet" ? "quiet" : "stale"}`;
          let quieted: Promise<void> | undefined;
          // Quiet in the turn after the batch arrives: it is then waiting for a slot.
          const onAhead =
            ending === "quiet"
              ? (w: Worker) =>
                  setImmediate(() => {
                    quieted = w.quietDown();
                  })
              : undefined;
          // One lane: one batch fetched ahead, whose place in the queue is known
          // (two lanes' batches may come back from Redis in either order).
          const run = await startGated(queue, { fetchLanes: 1, ...(onAhead ? { onAhead } : {}) });
          const { w } = run;
          try {
            // The next batch of 5 was fetched ahead: held by this process, not started.
            await waitFor("a batch fetched ahead", async () => (run.aheadAt > 0 ? true : undefined));
            expect(run.aheadJobs).toBe(5);
            expect(run.gated).toBe(5);
            // Quiet resolves once they are back; left alone, they go back after 1 s.
            if (ending === "quiet") {
              await waitFor("quiet to be asked", async () => (quieted ? true : undefined));
              await quieted;
            } else {
              await waitFor("the batch fetched ahead to go back", async () =>
                (await sk.redis.llen(`queue:${queue}`)) === 95 ? true : undefined,
              );
              expect(performance.now() - run.aheadAt).toBeGreaterThanOrEqual(950);
            }
            expect(await rubyQueueSize(sk, queue)).toBe(95);
            expect(await held(sk, w.identity, queue)).toBe(5);
            // Ruby's API lists the queue newest first: the job that runs next (105) is last.
            const args = await sk.ruby<number[]>(`Sidekiq::Queue.new(${JSON.stringify(queue)}).map { |j| j.args[0] }`);
            expect(args).toEqual(Array.from({ length: 95 }, (_, k) => 199 - k));
            expect(run.gated).toBe(5);
            if (ending === "quiet") return;
            run.open();
            await waitFor("all 200 to run", async () =>
              run.ran.length === 200 && (await rubyQueueSize(sk, queue)) === 0 ? true : undefined,
            );
            await new Promise((r) => setTimeout(r, 200));
            expect(run.ran).toHaveLength(200);
            expect(new Set(run.ran)).toEqual(new Set(run.jids));
          } finally {
            run.open();
            await w.stop();
          }
        },
      );
    }

    itFirstPass(
      "reliable fetch with two lanes (the default from concurrency 4) holds at most a batch per lane ahead; quiet returns them all, and every job runs once",
      async () => {
        const queue = "ahead-lanes";
        let quieted: Promise<void> | undefined;
        let most = 0;
        const run = await startGated(queue, {
          onAhead: (w) => {
            // Held now: 5 running, and what the lanes fetched ahead.
            void held(sk, w.identity, queue).then((n) => (most = Math.max(most, n)));
            setTimeout(() => {
              quieted = w.quietDown();
            }, 100);
          },
        });
        const { w } = run;
        try {
          await waitFor("quiet to be asked", async () => (quieted ? true : undefined));
          for (let i = 0; i < 5; i++) most = Math.max(most, await held(sk, w.identity, queue));
          await quieted;
          expect(run.aheadJobs).toBeGreaterThan(0);
          expect(most).toBeGreaterThan(5);
          expect(most).toBeLessThanOrEqual(15);
          // Back in the queue: every job not started, none twice.
          expect(await held(sk, w.identity, queue)).toBe(5);
          const args = await sk.ruby<number[]>(`Sidekiq::Queue.new(${JSON.stringify(queue)}).map { |j| j.args[0] }`);
          expect(args).toHaveLength(200 - run.ran.length);
          expect(new Set(args).size).toBe(args.length);
          expect(run.gated).toBe(5);
        } finally {
          run.open();
          await w.stop();
        }
        // A second worker runs the rest: all 200 ran exactly once.
        const rest = new Worker({
          redis: sk.url,
          dialect: sk.target.version,
          queues: [queue],
          concurrency: 5,
          scheduler: false,
        });
        rest.register("AheadJob", (_args, ctx) => void run.ran.push(ctx.jid));
        await rest.start();
        try {
          await waitFor("all 200 to run", async () => (run.ran.length === 200 ? true : undefined));
          await new Promise((r) => setTimeout(r, 200));
          expect(run.ran).toHaveLength(200);
          expect(new Set(run.ran)).toEqual(new Set(run.jids));
        } finally {
          await rest.stop();
        }
      },
    );

    it("reliable fetch with fetchAhead: false never holds more jobs than slots", async () => {
      const queue = "ahead-off";
      const run = await startGated(queue, { fetchAhead: false });
      try {
        await new Promise((r) => setTimeout(r, 300));
        expect(run.aheadAt).toBe(0);
        expect(await held(sk, run.w.identity, queue)).toBe(5);
        expect(await rubyQueueSize(sk, queue)).toBe(95);
      } finally {
        run.open();
        await run.w.stop();
      }
    });

    it("two fetch lanes: every slot busy with long jobs, stop() still ends within its timeout and requeues them", async () => {
      const queue = "batch-stuck";
      const jids = await pushBulk(sk, "StuckJob", queue, 6);
      const w = new Worker({
        redis: sk.url,
        dialect: sk.target.version,
        queues: [queue],
        concurrency: 4,
        fetchLanes: 2,
        scheduler: false,
        timeout: 1,
      });
      let started = 0;
      w.register("StuckJob", (_args, ctx) => {
        started++;
        return new Promise((_, reject) =>
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason as Error)),
        );
      });
      await w.start();
      await waitFor("4 jobs to start", async () => (started === 4 ? true : undefined));
      // The lanes share one working list and hash, announced for recovery while the process runs.
      const wip = wipKey(w.identity, `queue:${queue}`);
      const working = workingHashKey(w.identity, `queue:${queue}`);
      expect(await sk.redis.smembers(WORKING_REGISTRY)).toEqual(expect.arrayContaining([wip, working]));
      const t0 = Date.now();
      await w.stop();
      expect(Date.now() - t0).toBeLessThan(4000);
      const back = await sk.ruby<string[]>(`Sidekiq::Queue.new(${JSON.stringify(queue)}).map(&:jid)`);
      expect(new Set(back)).toEqual(new Set(jids));
      // Emptied by the requeue, they leave the registry at the clean stop.
      expect(await held(sk, w.identity, queue)).toBe(0);
      expect(await sk.redis.smembers(WORKING_REGISTRY)).not.toContain(wip);
      expect(await sk.redis.smembers(WORKING_REGISTRY)).not.toContain(working);
    });

    it("reliable fetch: a finished job's acknowledgement waits for the next fetch to carry it, even when an earlier one's flush timer comes due", async () => {
      const queue = "batch-acks";
      await pushBulk(sk, "AnyJob", queue, 20);
      const cap = makeCapsule({ name: "default", concurrency: 5, queues: [queue] });
      const blocking = sk.newRedis();
      const identity = `batch-acks:${process.pid}:feedfacecafe`;
      const hash = workingHashKey(identity, `queue:${queue}`);
      // A long flush delay, so the test's own pauses cannot decide the outcome.
      const delay = 2000;
      const rf = await reliableFetchWithAckDelay(sk, blocking, cap, identity, delay);
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
      try {
        const batch = await rf.retrieveWork(5);
        expect(await sk.redis.hlen(hash)).toBe(5);
        // The first job finishes: its flush timer starts; the next fetch carries it.
        const first = rf.acknowledge(batch[0]!);
        const t0 = performance.now();
        await rf.retrieveWork(5);
        await first;
        expect(await sk.redis.hexists(hash, batch[0]!.field!)).toBe(0);
        // The second finishes half a delay later. When the first one's timer
        // would have come due it is still held: it waits for a fetch.
        await sleep(delay / 2 - (performance.now() - t0));
        const second = rf.acknowledge(batch[1]!);
        await sleep(delay * 1.25 - (performance.now() - t0));
        expect(await sk.redis.hexists(hash, batch[1]!.field!)).toBe(1);
        await rf.retrieveWork(5);
        await second;
        expect(await sk.redis.hexists(hash, batch[1]!.field!)).toBe(0);
        expect(await sk.redis.hlen(hash)).toBe(13);
      } finally {
        blocking.disconnect();
      }
    });

    it("reliable fetch: one batch fetch carries the acknowledgements of a working list's job and of two queues' working hashes, and only those", async () => {
      const [qa, qb] = ["carry-a", "carry-b"];
      await pushBulk(sk, "AnyJob", qa, 3);
      await pushBulk(sk, "AnyJob", qb, 6);
      // Strict order: qa is emptied before qb is fetched from.
      const cap = makeCapsule({ name: "default", concurrency: 5, queues: [qa, qb] });
      const blocking = sk.newRedis();
      const identity = `carry-acks:${process.pid}:feedfacecafe`;
      const [wipA, hashA, hashB] = [
        wipKey(identity, `queue:${qa}`),
        workingHashKey(identity, `queue:${qa}`),
        workingHashKey(identity, `queue:${qb}`),
      ];
      // A flush delay no step of the test reaches: only a fetch can carry them.
      const rf = await reliableFetchWithAckDelay(sk, blocking, cap, identity, 60_000);
      // Jobs held in qa's working list, qa's working hash and qb's working hash.
      const heldBy = async () => [await sk.redis.llen(wipA), await sk.redis.hlen(hashA), await sk.redis.hlen(hashB)];
      try {
        const [one] = await rf.retrieveWork(1); // one free slot: the one-job move, into the working list
        const fromA = await rf.retrieveWork(5); // the 2 left in qa, into its working hash
        const fromB = await rf.retrieveWork(5); // 5 of qb's 6
        expect(await heldBy()).toEqual([1, 2, 5]);
        expect(one!.field).toBeUndefined();
        const finished = [one!, ...fromA, fromB[0]!, fromB[2]!, fromB[4]!];
        const acks = finished.map((u) => rf.acknowledge(u));
        expect(await heldBy()).toEqual([1, 2, 5]);
        const last = await rf.retrieveWork(5); // carries all six, fetches qb's last job
        await Promise.all(acks);
        expect(last).toHaveLength(1);
        expect(await heldBy()).toEqual([0, 0, 3]);
        // qb's unfinished two and the one just fetched, under their own field numbers.
        expect(new Set(await sk.redis.hkeys(hashB))).toEqual(
          new Set([fromB[1]!.field, fromB[3]!.field, last[0]!.field]),
        );
        expect([await rubyQueueSize(sk, qa), await rubyQueueSize(sk, qb)]).toEqual([0, 0]);
      } finally {
        blocking.disconnect();
      }
    });

    it("servers without BLMPOP / RPOP count get the one-job commands; with them, one round trip fills the free slots; a repeated requeue queues nothing twice", async () => {
      const queue = "batch-features";
      await pushBulk(sk, "AnyJob", queue, 20);
      const cap = makeCapsule({ name: "default", concurrency: 5, queues: [queue] });
      const blocking = sk.newRedis();
      const old = featuresOf("6.0.16");
      expect(old).toEqual({ lmpop: false, popCount: false });
      const live = await detectFeatures(sk.redis);
      const identity = `batch-test:${process.pid}:feedfacecafe`;
      const basicOld = new BasicFetch(sk.redis, blocking, cap, { ...old });
      const reliableOld = new ReliableFetch(sk.redis, blocking, cap, identity, { ...old });
      const basicNew = new BasicFetch(sk.redis, blocking, cap, { ...live });
      const reliableNew = new ReliableFetch(sk.redis, blocking, cap, identity, { ...live });
      expect(await basicOld.retrieveWork(5)).toHaveLength(1);
      expect(await reliableOld.retrieveWork(5)).toHaveLength(1);
      // Redis 7.0 and Valkey 8 (what these tests run on) have both.
      expect(live).toEqual({ lmpop: true, popCount: true });
      const a = await basicNew.retrieveWork(5);
      const b = await reliableNew.retrieveWork(5);
      expect([a.length, b.length]).toEqual([5, 5]);
      // FIFO: the args run 0, 1, 2, ... in the order the batches return them.
      const args = [...a, ...b].map((u) => (JSON.parse(u.job!) as { args: number[] }).args[0]);
      expect(args).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      // The one-job move went to the working list, the batch to the working hash.
      expect(await sk.redis.llen(wipKey(identity, `queue:${queue}`))).toBe(1);
      expect(await sk.redis.hlen(workingHashKey(identity, `queue:${queue}`))).toBe(5);
      // Requeued jobs go back to the BRPOP end, the first fetched first.
      await reliableNew.bulkRequeue(b);
      // Sent again (ioredis resends an unanswered command after a reconnect): nothing more is queued.
      const len = await sk.redis.llen(`queue:${queue}`);
      await reliableNew.bulkRequeue(b);
      expect(await sk.redis.llen(`queue:${queue}`)).toBe(len);
      await basicNew.bulkRequeue(a);
      const next = await basicNew.retrieveWork(10);
      expect(next.map((u) => (JSON.parse(u.job!) as { args: number[] }).args[0])).toEqual([
        2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
      ]);
      expect(await held(sk, identity, queue)).toBe(1);
      blocking.disconnect();
    });

    it("reliable fetch shuffles the queue order on every fetch when the weights say so, one job or a batch at a time; strict keeps it", async () => {
      const [a, b] = ["shuffle-a", "shuffle-b"];
      await pushBulk(sk, "AnyJob", a, 200);
      await pushBulk(sk, "AnyJob", b, 200);
      const blocking = sk.newRedis();
      const features = await detectFeatures(sk.redis);
      const fetchFrom = async (queues: string[], max: number) => {
        const rf = new ReliableFetch(
          sk.redis,
          blocking,
          makeCapsule({ name: "default", concurrency: 5, queues }),
          `shuffle:${process.pid}:${queues.join()}:${max}`,
          { ...features },
        );
        const seen: string[] = [];
        for (let i = 0; i < 24; i++) {
          const work = await rf.retrieveWork(max);
          seen.push(work[0]!.queueName);
          await rf.bulkRequeue(work);
        }
        return new Set(seen);
      };
      try {
        // Equal weights: Sidekiq's random order, drawn again for each fetch
        // (1 in 2^23 that one queue comes first every time by chance).
        expect(await fetchFrom([`${a},1`, `${b},1`], 5)).toEqual(new Set([a, b]));
        expect(await fetchFrom([`${a},1`, `${b},1`], 1)).toEqual(new Set([a, b]));
        // Strict: always the first.
        expect(await fetchFrom([a, b], 5)).toEqual(new Set([a]));
        expect(await fetchFrom([a, b], 1)).toEqual(new Set([a]));
      } finally {
        blocking.disconnect();
      }
    });
  },
  (t) => t.version.startsWith("8."),
);
