// sidekiq-unique-jobs across languages, against the real gem (8.1.0 on
// Sidekiq 7.3.2 and 8.1.7, 9.0.0.alpha2 on 8.1.7): each scenario runs once
// with a Node worker (or client) and once all in Ruby, and the gem's own view
// of its keys and changelog must be the same afterwards.
import { describe, expect, it } from "vitest";
import { Client } from "../src/core/client/client.js";
import type { Worker } from "../src/assembly/worker.js";
import { uniqueJobsClient, UniqueJobsConflict } from "../src/addons/sidekiq-unique-jobs/index.js";
import { describeEachSidekiq, waitFor, type SidekiqContext } from "./support/harness.js";
import {
  captureLogger,
  gemsFor,
  nodeUniqueWorker,
  normalize,
  received,
  type Snapshot,
  uniqueRuby,
  useRubyUniqueServer,
} from "./support/unique-jobs.js";

interface Scenario {
  name: string;
  cls: string;
  args: unknown[];
  /** What is in Redis when the job is done with (ran, retried or dead). */
  settled: (sk: SidekiqContext) => Promise<boolean>;
}

const ran = (n: number) => async (sk: SidekiqContext) => (await sk.redis.llen("bridge:received")) >= n;
const inSet = (set: string) => async (sk: SidekiqContext) => (await sk.redis.zcard(set)) >= 1;

const SCENARIOS: Scenario[] = [
  { name: "until_executed", cls: "UntilExecutedJob", args: ["a", 1], settled: ran(1) },
  { name: "until_executing", cls: "UntilExecutingJob", args: ["a", 2], settled: ran(1) },
  { name: "while_executing", cls: "WhileExecutingJob", args: ["a", 3], settled: ran(1) },
  { name: "until_and_while_executing", cls: "UntilAndWhileExecutingJob", args: ["a", 4], settled: ran(1) },
  { name: "until_expired", cls: "UntilExpiredJob", args: ["a", 5], settled: ran(1) },
  { name: "until_executed, failing (retried)", cls: "UntilExecutedJob", args: ["fail"], settled: inSet("retry") },
  { name: "until_executing, failing (relocked)", cls: "UntilExecutingJob", args: ["fail"], settled: inSet("retry") },
  {
    name: "until_and_while_executing, failing (relocked)",
    cls: "UntilAndWhileExecutingJob",
    args: ["fail"],
    settled: inSet("retry"),
  },
  { name: "while_executing, failing", cls: "WhileExecutingJob", args: ["fail"], settled: inSet("retry") },
  { name: "until_executed, retries exhausted (dead)", cls: "DyingUniqueJob", args: ["fail"], settled: inSet("dead") },
  {
    name: "until_executed, retry: false (dropped)",
    cls: "DroppedUniqueJob",
    args: ["fail"],
    // Nothing to wait for in Redis: the job just goes away.
    settled: async (sk) => (await sk.redis.llen("queue:uq")) + (await sk.redis.llen("queue:uqr")) === 0,
  },
];

describeEachSidekiq(
  "unique jobs: Node and Ruby workers leave the gem's locks alike",
  (sk) => {
    for (const { gem, folder } of gemsFor(sk.target)) {
      describe(folder, () => {
        const ruby = uniqueRuby(sk, folder);
        const workers: Worker[] = [];
        useRubyUniqueServer(sk, folder, workers);

        async function runOn(queue: "uq" | "uqr", sc: Scenario): Promise<Snapshot> {
          await sk.redis.flushdb();
          const jid = await ruby<string | null>(
            `${sc.cls}.set(queue: "${queue}").perform_async(*${JSON.stringify(sc.args)})`,
          );
          expect(jid).toMatch(/^[0-9a-f]{24}$/);
          await waitFor(`${sc.name} on ${queue}`, () => sc.settled(sk), 30_000);
          // A moment for the last unlock after the job's own write.
          await new Promise((r) => setTimeout(r, 500));
          return ruby<Snapshot>("UniqueState.snapshot");
        }

        for (const sc of SCENARIOS) {
          it(`${sc.name}: the Node worker leaves what the Ruby worker leaves`, async () => {
            const [dNode, dRuby] = await ruby<[string, string]>(
              `[UniqueState.digest_of("${sc.cls}", ${JSON.stringify(sc.args)}, queue: "uq"), UniqueState.digest_of("${sc.cls}", ${JSON.stringify(sc.args)}, queue: "uqr")]`,
            );
            const w = nodeUniqueWorker(sk, { gem, queues: ["uq"] });
            workers.push(w);
            await w.start();
            const node = normalize(await runOn("uq", sc), { D: dNode });
            const rb = normalize(await runOn("uqr", sc), { D: dRuby });
            expect(node).toEqual(rb);
          }, 90_000);
        }

        it("until_executed: after the Node run the same arguments can be pushed again", async () => {
          await sk.redis.flushdb();
          const w = nodeUniqueWorker(sk, { gem, queues: ["uq"] });
          workers.push(w);
          await w.start();
          // The job sleeps a second, so the second push meets its lock.
          const [j1, j2] = await ruby<[string, string | null]>(
            `[UntilExecutedJob.perform_async("sleep:1"), UntilExecutedJob.perform_async("sleep:1")]`,
          );
          expect(j1).toMatch(/^[0-9a-f]{24}$/);
          expect(j2).toBeNull();
          await waitFor("the first to run", ran(1).bind(null, sk));
          await waitFor("the lock to go", async () => (await ruby<string[]>("UniqueState.digests")).length === 0);
          const j3 = await ruby<string | null>(`UntilExecutedJob.perform_async("sleep:1")`);
          expect(j3).toMatch(/^[0-9a-f]{24}$/);
          await waitFor("the second to run", ran(2).bind(null, sk));
        }, 60_000);

        it("without uniqueJobs a Node worker hands locked jobs back to their queue, one line per class; with runWithout it runs them and the lock stays", async () => {
          await sk.redis.flushdb();
          const logger = captureLogger();
          const w = nodeUniqueWorker(sk, { gem, queues: ["uq"], unique: false, logger });
          workers.push(w);
          await w.start();
          await ruby(`UntilExecutedJob.perform_async("nolock", 1); UntilExecutedJob.perform_async("nolock", 2)`);
          const handedBack = () => logger.lines.filter((l) => l.includes("Handed back to its queue"));
          await waitFor("the hand-back line", async () => handedBack().length > 0);
          // Let both be fetched and handed back a few times: neither runs, both stay queued with their locks.
          await new Promise((r) => setTimeout(r, 1500));
          await w.stop();
          expect(await sk.redis.llen("bridge:received")).toBe(0);
          expect(await sk.redis.llen("queue:uq")).toBe(2);
          expect(handedBack()).toHaveLength(1);
          expect(handedBack()[0]).toContain("UntilExecutedJob");
          expect(handedBack()[0]).toContain("--unique-jobs");
          expect(logger.lines.some((l) => l.startsWith("INFO add-ons:") && l.includes("sidekiq-unique-jobs"))).toBe(
            true,
          );

          // Opting out runs them, says once what breaks, and the gem still holds both locks.
          const runLogger = captureLogger();
          const r = nodeUniqueWorker(sk, {
            gem,
            queues: ["uq"],
            unique: false,
            logger: runLogger,
            runWithout: ["uniqueJobs"],
          });
          workers.push(r);
          await r.start();
          await waitFor("both to run", ran(2).bind(null, sk));
          const warnings = runLogger.lines.filter((l) => l.includes("carries a sidekiq-unique-jobs lock"));
          expect(warnings).toHaveLength(1);
          expect(warnings[0]).toContain("Run anyway");
          expect(await ruby<string[]>("UniqueState.digests")).toHaveLength(2);
          expect(await ruby(`UntilExecutedJob.perform_async("nolock", 1)`)).toBeNull();
        }, 60_000);

        it("both workers on one queue: every unique job runs once, no lock is left", async () => {
          await sk.redis.flushdb();
          // The middleware added by hand, as handlers modules written before the uniqueJobs option do.
          const w = nodeUniqueWorker(sk, { gem, queues: ["uqr"], unique: "use" });
          workers.push(w);
          await w.start();
          const jids = await ruby<Array<string | null>>(`
            (1..10).map { |i| UntilExecutedJob.set(queue: "uqr").perform_async("both", i) } +
            (1..10).map { |i| UntilExecutedJob.set(queue: "uqr").perform_async("both", i) } +
            (1..10).map { |i| UntilAndWhileExecutingJob.set(queue: "uqr").perform_async("both", i) } +
            (1..10).map { |i| UntilExecutingJob.set(queue: "uqr").perform_async("both", i) }
          `);
          const pushed = jids.filter((j) => j !== null);
          expect(pushed.length).toBeGreaterThanOrEqual(30);
          await waitFor("all pushed jobs to run", ran(pushed.length).bind(null, sk), 60_000);
          await waitFor("every lock to go", async () => (await ruby<string[]>("UniqueState.digests")).length === 0);
          const all = await received(sk);
          expect(new Set(all.map((r) => r.jid))).toEqual(new Set(pushed));
          const byNode = await sk.redis.lrange("bridge:received", 0, -1);
          expect(byNode.some((x) => !x.includes('"pid"'))).toBe(true); // Node ran some
          expect(byNode.some((x) => x.includes('"pid"'))).toBe(true); // Ruby ran some
          expect((await ruby<Snapshot>("UniqueState.snapshot")).keys).not.toHaveProperty("uniquejobs:digests");
        }, 120_000);

        it("Node client: the gem's payload fields, digest and lock; Ruby sees the duplicate, a Ruby worker unlocks", async () => {
          await sk.redis.flushdb();
          const client = new Client({ redis: sk.url, dialect: sk.target.version });
          client.use(uniqueJobsClient({ gem }));
          const job = client.job("UntilExecutedTtlJob", { queue: "uqx", lock: "until_executed", lock_ttl: 120 });
          const jid = await job.performAsync("client", 1.5, { k: [1, 2n ** 70n] });
          expect(jid).toMatch(/^[0-9a-f]{24}$/);
          const nodePayload = JSON.parse((await sk.redis.lindex("queue:uqx", 0))!);
          const nodeState = await ruby<Snapshot>("UniqueState.snapshot");
          expect(await job.performAsync("client", 1.5, { k: [1, 2n ** 70n] })).toBeNull();
          // Ruby's client finds the same lock: nil.
          expect(
            await ruby(`UntilExecutedTtlJob.set(queue: "uqx").perform_async("client", 1.5, {"k" => [1, 2**70]})`),
          ).toBeNull();
          await sk.redis.flushdb();
          await ruby(`UntilExecutedTtlJob.set(queue: "uqx").perform_async("client", 1.5, {"k" => [1, 2**70]})`);
          const rubyPayload = JSON.parse((await sk.redis.lindex("queue:uqx", 0))!);
          const rubyState = await ruby<Snapshot>("UniqueState.snapshot");
          const fields = ["lock", "lock_timeout", "lock_ttl", "lock_prefix", "lock_args", "lock_digest"];
          const pick = (p: Record<string, unknown>) => Object.fromEntries(fields.map((f) => [f, p[f]]));
          expect(pick(nodePayload)).toEqual(pick(rubyPayload));
          expect(nodeState).toEqual(rubyState);
          // A Ruby worker runs a Node-pushed job and releases its lock.
          await sk.redis.flushdb();
          const jid2 = await client
            .job("UntilExecutedJob", { queue: "uqr", lock: "until_executed" })
            .performAsync("to-ruby");
          await waitFor("Ruby to run it", ran(1).bind(null, sk));
          expect((await received(sk))[0]!.jid).toBe(jid2);
          await waitFor("the lock to go", async () => (await ruby<string[]>("UniqueState.digests")).length === 0);
          await client.close();
        }, 60_000);

        it("Node client conflicts: log and reject return null (reject fills the dead set), raise throws", async () => {
          await sk.redis.flushdb();
          const logger = captureLogger();
          const client = new Client({ redis: sk.url, dialect: sk.target.version });
          client.use(uniqueJobsClient({ gem, logger }));
          const opts = (lock: string, on_conflict: string) => ({ queue: "uqx", lock, on_conflict });
          const log = client.job("UntilExecutedLogJob", opts("until_executed", "log"));
          expect(await log.performAsync(1)).not.toBeNull();
          expect(await log.performAsync(1)).toBeNull();
          expect(logger.lines.some((l) => l.includes("Skipping job with id") && l.includes("already exists"))).toBe(
            true,
          );
          const reject = client.job("UntilExecutedRejectJob", opts("until_executed", "reject"));
          expect(await reject.performAsync(2)).not.toBeNull();
          expect(await reject.performAsync(2)).toBeNull();
          expect(await ruby(`Sidekiq::DeadSet.new.map { |e| e.klass }`)).toEqual(["UntilExecutedRejectJob"]);
          const raise = client.job("UntilExecutedRaiseJob", opts("until_executed", "raise"));
          expect(await raise.performAsync(3)).not.toBeNull();
          await expect(raise.performAsync(3)).rejects.toBeInstanceOf(UniqueJobsConflict);
          // Ruby's client answers the Node-taken locks the same way.
          expect(await ruby(`UntilExecutedLogJob.set(queue: "uqx").perform_async(1)`)).toBeNull();
          expect(
            await ruby(
              `begin; UntilExecutedRaiseJob.set(queue: "uqx").perform_async(3); "pushed"; rescue SidekiqUniqueJobs::Conflict => e; e.class.name; end`,
            ),
          ).toBe("SidekiqUniqueJobs::Conflict");
          await client.close();
        }, 60_000);
      });
    }
  },
  (t) => t.version === "7.3.2" || t.version === "8.1.7",
);
