// Orphaned unique-jobs locks and bad lock state, against the real gem: a Node
// worker killed while its job holds a lock leaves nothing the gem's reaper
// cannot clean (its busy entry shows the lock as in use while it lives), and
// corrupt or jobless locks are handled as the gem's own worker handles them.
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../harness/local-backend.js";
import type { Worker } from "../src/assembly/worker.js";
import { JobRecord } from "../src/core/wire/index.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";
import { captureLogger, gemsFor, nodeUniqueWorker, uniqueRuby, useRubyUniqueServer } from "./support/unique-jobs.js";

describeEachSidekiq(
  "unique jobs: orphaned and bad locks",
  (sk) => {
    for (const { gem, folder } of gemsFor(sk.target)) {
      describe(folder, () => {
        const ruby = uniqueRuby(sk, folder);
        const workers: Worker[] = [];
        useRubyUniqueServer(sk, folder, workers);

        // A job with these arguments ran (the orphan test's Ruby job may still
        // finish and record during later tests, so look for the arguments).
        const ranWith = async (arg: string) =>
          (await sk.redis.lrange("bridge:received", 0, -1)).some(
            (r) => (JSON.parse(r) as { args_json: string }).args_json === JSON.stringify([arg]),
          );

        // The gem's reaper (8: the Ruby reaper it defaults to; 9: Orphans::Reaper).
        const reap = () =>
          ruby<number>(
            gem === 8
              ? `SidekiqUniqueJobs.config.reaper = :ruby; SidekiqUniqueJobs::Orphans::Reaper.call; UniqueState.digests.size`
              : `SidekiqUniqueJobs::Orphans::Reaper.call; UniqueState.digests.size`,
          );

        it("a Node worker killed mid-job: the reaper keeps its lock while the process lives, cleans it after", async () => {
          await sk.redis.flushdb();
          const child = spawn(
            process.execPath,
            [
              "dist/assembly/main.js",
              "worker",
              "-q",
              "orphanq",
              "-c",
              "2",
              "-r",
              "interop-tests/fixtures/unique-handlers.mjs",
              "--dialect",
              sk.target.version,
            ],
            {
              cwd: REPO_ROOT,
              env: { ...process.env, REDIS_URL: sk.url, BRIDGE_UJ_GEM: String(gem) },
              stdio: ["ignore", "pipe", "pipe"],
            },
          );
          let log = "";
          child.stdout.on("data", (d) => (log += d));
          child.stderr.on("data", (d) => (log += d));
          try {
            // An hour-old created_at: the v8 reaper counts any busy job created
            // in the last 20 s as active, so only the lock_digest can save it.
            const created =
              sk.target.dialect === 8 ? "(Time.now.to_f * 1000).to_i - 3_600_000" : "Time.now.to_f - 3600";
            const jid = await ruby<string>(
              `UntilExecutedJob.set(queue: "orphanq", created_at: ${created}).perform_async("orphan", 120)`,
            );
            // The same kind of job running on the Ruby worker, for comparison.
            const rubyJid = await ruby<string>(
              `UntilExecutedJob.set(queue: "uqr", created_at: ${created}).perform_async("sleep:60")`,
            );
            await waitFor(
              "the Node job to start",
              async () => (await sk.redis.lrange("bridge:started", 0, -1)).includes(jid),
              30_000,
            );
            const [digest, rubyDigest] = await ruby<[string, string]>(
              `[UniqueState.digest_of("UntilExecutedJob", ["orphan", 120], queue: "orphanq"), UniqueState.digest_of("UntilExecutedJob", ["sleep:60"], queue: "uqr")]`,
            );
            // Each busy entry (the heartbeats write them within seconds).
            const busy = (j: string, d: string) =>
              waitFor(
                `the busy entry of ${j}`,
                async () => {
                  for (const p of await sk.redis.smembers("processes")) {
                    const work = Object.values(await sk.redis.hgetall(`${p}:work`));
                    if (work.some((w) => w.includes(j) && w.includes(d))) return p;
                  }
                  return undefined;
                },
                30_000,
              ).catch((e) => {
                throw new Error(`${(e as Error).message}\n${log}`);
              });
            const identity = await busy(jid, digest);
            await busy(rubyJid, rubyDigest);
            // The reaper only looks at locks older than its timeout: age both.
            for (const d of [digest, rubyDigest])
              await sk.redis.zadd("uniquejobs:digests", "XX", String(Date.now() / 1000 - 3600), d);
            await reap();
            const kept = await ruby<string[]>("UniqueState.digests");
            // The reaper judges a lock held on Node as one held on Ruby.
            expect(kept.includes(digest)).toBe(kept.includes(rubyDigest));
            // Gem 8 keeps both; gem 9.0.0.alpha2 keeps neither: its reaper
            // iterates HGETALL's Hash (redis-client) in slices of two and so
            // never sees a busy entry, Ruby's or Node's.
            expect(kept.includes(digest)).toBe(gem === 8);
            if (!kept.includes(digest)) {
              // Take the lock again (as the gem would on the next push) to test the clean-up.
              await sk.redis.zadd("uniquejobs:digests", String(Date.now() / 1000 - 3600), digest);
              await sk.redis.hset(`${digest}:LOCKED`, jid, "{}");
            }
            // SIGKILL: no shutdown, the job and its lock are left behind.
            child.kill("SIGKILL");
            await new Promise((r) => child.once("exit", r));
            // What 60 s of silence does to a dead process's keys.
            await sk.redis.del(identity, `${identity}:work`);
            await reap();
            expect(await ruby<string[]>("UniqueState.digests")).not.toContain(digest);
            const left = await ruby<{ keys: Record<string, string> }>("UniqueState.snapshot");
            expect(Object.keys(left.keys).filter((k) => k.startsWith(digest))).toEqual([]);
            // The same arguments can be pushed again.
            expect(await ruby(`UntilExecutedJob.set(queue: "elsewhere").perform_async("orphan", 120)`)).not.toBeNull();
          } finally {
            child.kill("SIGKILL");
          }
        }, 90_000);

        it("a corrupt lock hash: the job fails into the retry set with a clear error, as in Ruby; the worker goes on", async () => {
          await sk.redis.flushdb();
          const logger = captureLogger();
          const w = nodeUniqueWorker(sk, { gem, queues: ["uq"], logger });
          workers.push(w);
          const corrupt = async (hold: string, queue: string) => {
            // The lock is taken at push (into a queue nobody serves); its LOCKED
            // hash becomes a string; then the job moves to the worker's queue.
            const [jid, digest] = await ruby<[string, string]>(
              `jid = UntilExecutedJob.set(queue: "${hold}").perform_async("corrupt"); [jid, UniqueState.digest_of("UntilExecutedJob", ["corrupt"], queue: "${hold}")]`,
            );
            await sk.redis.set(`${digest}:LOCKED`, "not a hash");
            await sk.redis.lmove(`queue:${hold}`, `queue:${queue}`, "RIGHT", "LEFT");
            return jid;
          };
          // Ruby first (its server serves uqr), then Node.
          const rubyJid = await corrupt("hold-r", "uqr");
          await waitFor("Ruby to retry it", async () => (await sk.redis.zcard("retry")) === 1);
          const nodeJid = await corrupt("hold-n", "uq");
          await w.start();
          await waitFor("Node to retry it", async () => (await sk.redis.zcard("retry")) === 2);
          const retries = (await sk.redis.zrange("retry", 0, -1)).map((r) => JobRecord.parse(r));
          const byJid = (j: string) => retries.find((r) => r.getString("jid") === j)!;
          expect(byJid(rubyJid).getString("error_message")).toContain("WRONGTYPE");
          expect(byJid(nodeJid).getString("error_message")).toContain("WRONGTYPE");
          expect(byJid(nodeJid).getString("error_message")).toContain("could not take the lock");
          expect(logger.lines.some((l) => l.includes("Job raised exception") && l.includes("WRONGTYPE"))).toBe(true);
          // Nothing ran, and the worker keeps working.
          expect(await ranWith("corrupt")).toBe(false);
          await ruby(`UntilExecutedJob.perform_async("after corrupt")`);
          await waitFor("the next job to run", () => ranWith("after corrupt"));
        }, 90_000);

        it("a lock with no job: the job with those arguments is not run and the lock stays, as in Ruby; the worker goes on", async () => {
          await sk.redis.flushdb();
          const logger = captureLogger();
          const w = nodeUniqueWorker(sk, { gem, queues: ["uq"], logger });
          workers.push(w);
          await w.start();
          // A lock whose job is gone (what a crash leaves), then a job with the
          // same arguments slipped past the client middleware.
          const setup = (queue: string) =>
            ruby<string>(`
              ghost = {"class" => "UntilExecutedJob", "queue" => "${queue}", "args" => ["ghost"], "jid" => "0" * 24, "lock" => "until_executed"}
              SidekiqUniqueJobs::Job.prepare(ghost)
              raise "no lock" unless SidekiqUniqueJobs::Locksmith.new(ghost).lock
              client = Sidekiq::Client.new
              client.middleware { |chain| chain.remove(SidekiqUniqueJobs::Middleware::Client) }
              client.push("class" => "UntilExecutedJob", "queue" => "${queue}", "args" => ["ghost"], "lock" => "until_executed")
            `);
          const rubyJid = await setup("uqr");
          const nodeJid = await setup("uq");
          await waitFor(
            "both queues to drain",
            async () => (await sk.redis.llen("queue:uq")) + (await sk.redis.llen("queue:uqr")) === 0,
          );
          await new Promise((r) => setTimeout(r, 1500));
          expect(rubyJid).toMatch(/^[0-9a-f]{24}$/);
          // Neither ran, neither is retried, both ghost locks remain for the reaper.
          expect(await ranWith("ghost")).toBe(false);
          expect(await sk.redis.zcard("retry")).toBe(0);
          expect((await ruby<string[]>("UniqueState.digests")).length).toBe(2);
          expect(
            logger.lines.some((l) => l.includes("could not take the lock; the job was not run") && l.includes(nodeJid)),
          ).toBe(true);
          await ruby(`UntilExecutedJob.perform_async("after ghost")`);
          await waitFor("the next job to run", () => ranWith("after ghost"));
        }, 90_000);
      });
    }
  },
  (t) => t.version === "7.3.2" || t.version === "8.1.7",
);
