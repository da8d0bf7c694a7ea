// The Node scheduler and sidekiq-scheduler's own (inside a real `sidekiq`:
// 5.0.6 on Sidekiq 6.4, 6.0.2 on 7.3 and 8.1) run together for three minutes
// on one schedule: every cron fire time and every `at` is enqueued once, by
// whichever scheduler claims it first; `every`, `interval` and `in` are
// enqueued by each scheduler on its own cadence, as by two Ruby processes
// (the gem claims those for the second each process triggers in, so two
// processes dedupe only when they trigger in the same second); a disabled
// schedule never fires; each push has its own claim.
import { expect, it } from "vitest";
import type { Logger } from "../../src/core/logging/logger.js";
import { Worker } from "../../src/assembly/worker.js";
import type { SidekiqTarget } from "../../harness/versions.js";
import { describeEachSidekiqConcurrently, waitFor } from "./harness.js";
import { startRubyScheduler } from "./scheduler.js";

const RUN_SECONDS = Number(process.env.SCHEDULER_PROOF_SECONDS ?? 185);
const Q = "sched-soak";
const utc = (ms: number) => new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " +0000";

/** Differences between consecutive values. */
const gaps = (xs: number[]) => xs.slice(1).map((x, i) => x - xs[i]!);

/**
 * The soak for the releases `only` selects (all by default), the releases side
 * by side in one file (scheduler-soak.test.ts): each mostly waits on the two
 * schedulers, so together they hold one test worker for three minutes.
 */
export function schedulerSoak(only?: (t: SidekiqTarget) => boolean): void {
  describeEachSidekiqConcurrently(
    "sidekiq-scheduler: the Node scheduler and the gem's together",
    (sk) => {
      it(
        `enqueue each cron and at fire time once, the others per scheduler (${RUN_SECONDS} s)`,
        { timeout: (RUN_SECONDS + 120) * 1000 },
        async () => {
          const t0 = Math.ceil(Date.now() / 1000) * 1000;
          const ats = [0.3, 0.55, 0.8].map((f) => t0 + Math.round((RUN_SECONDS * f) / 1) * 1000);
          const job = (kind: string, value: unknown, name: string, extra: Record<string, unknown> = {}) => ({
            [kind]: value,
            class: "SchedulerProofJob",
            queue: Q,
            args: [name],
            ...extra,
          });
          const schedule = {
            sec: job("cron", "* * * * * *", "sec"),
            min: job("cron", "* * * * *", "min"),
            every: job("every", "7s", "every"),
            interval: job("interval", "11s", "interval"),
            in: job("in", "20s", "in"),
            at1: job("at", utc(ats[0]!), "at1"),
            at2: job("at", utc(ats[1]!), "at2"),
            at3: job("at", utc(ats[2]!), "at3"),
            off: job("cron", "* * * * * *", "off", { enabled: false }),
          };
          const rubyProc = await startRubyScheduler(sk, schedule);
          // Ruby wrote its static schedule to Redis and fires it.
          await waitFor("Ruby's first push", async () => (await sk.redis.zcard("sidekiq-scheduler:pushed:sec")) > 0);
          // Node loads a few seconds after Ruby, as a second process would: their every / in cadences differ.
          await new Promise((r) => setTimeout(r, 3500));

          const won = new Map<string, number[]>();
          const lost = new Map<string, number[]>();
          const add = (m: Map<string, number[]>, name: string, s: unknown) =>
            m.set(name, [...(m.get(name) ?? []), Number(s)]);
          const lines: string[] = [];
          let loadedAt = 0;
          const logger: Logger = {
            debug: (m, ctx) => {
              const q = /^sidekiq-scheduler: queueing \S+ \((.+)\)$/.exec(m);
              if (q) add(won, q[1]!, ctx?.claimed);
              const a = /^sidekiq-scheduler: (.+) already enqueued$/.exec(m);
              if (a) add(lost, a[1]!, ctx?.claimed);
            },
            info: (m) => {
              if (/schedules loaded/.test(m) && !loadedAt) loadedAt = Date.now();
              lines.push(m);
            },
            warn: (m) => lines.push(`WARN ${m}`),
            error: (m) => lines.push(`ERROR ${m}`),
          };
          const worker = new Worker({
            redis: sk.url,
            dialect: sk.target.version,
            queues: ["scheduler-none"],
            scheduler: false,
            timeout: 3,
            logger,
            sidekiqScheduler: { dynamicEvery: 1 },
          });
          await worker.start();
          await waitFor("the Node scheduler to load", async () => loadedAt > 0);
          const bothFrom = Math.ceil(Date.now() / 1000);
          await new Promise((r) => setTimeout(r, RUN_SECONDS * 1000));
          const stopping = Math.floor(Date.now() / 1000);
          await Promise.all([worker.stop(), rubyProc.stop()]);
          expect(lines.filter((l) => /^(WARN|ERROR)/.test(l))).toEqual([]);

          const jobs = (await sk.redis.lrange(`queue:${Q}`, 0, -1)).map((raw) => JSON.parse(raw) as { args: string[] });
          const claims = async (name: string) =>
            (await sk.redis.zrange(`sidekiq-scheduler:pushed:${name}`, 0, -1)).map(Number).sort((a, b) => a - b);
          const pushedOf = (name: string) => jobs.filter((j) => j.args[0] === name).length;
          const all: Record<string, number[]> = {};
          for (const name of Object.keys(schedule)) {
            all[name] = await claims(name);
            // Each push has its own claim, and each claim one push.
            expect(pushedOf(name), name).toBe(all[name]!.length);
            // What Node pushed, it had claimed; what it lost, another scheduler had.
            for (const s of [...(won.get(name) ?? []), ...(lost.get(name) ?? [])]) expect(all[name]).toContain(s);
          }
          expect(all.off).toEqual([]);

          // cron: every second while both ran, once; both schedulers took part.
          const sec = new Set(all.sec);
          for (let s = bothFrom + 2; s <= stopping - 2; s++) expect(sec.has(s), `second ${s}`).toBe(true);
          expect(won.get("sec")!.length).toBeGreaterThan(RUN_SECONDS / 20);
          expect(all.sec!.length - won.get("sec")!.length).toBeGreaterThan(RUN_SECONDS / 20);
          // Every minute boundary while both ran, once.
          for (let s = Math.ceil((bothFrom + 2) / 60) * 60; s <= stopping - 2; s += 60) expect(all.min).toContain(s);
          // at: once each, for its own second.
          for (const [i, at] of ats.entries()) expect(all[`at${i + 1}`], `at${i + 1}`).toEqual([at / 1000]);

          // every 7s: Node triggers on its own cadence from its load, as one more Ruby process would.
          const nodeEvery = [...(won.get("every") ?? []), ...(lost.get("every") ?? [])].sort((a, b) => a - b);
          const expected = Math.floor((stopping * 1000 - loadedAt) / 7000);
          expect(Math.abs(nodeEvery.length - expected), JSON.stringify(nodeEvery)).toBeLessThanOrEqual(1);
          for (const g of gaps(nodeEvery)) expect([6, 7, 8]).toContain(g);
          // Ruby's pushes keep their own 7 s cadence (14 where Node took the second first).
          const rubyEvery = all.every!.filter((s) => !(won.get("every") ?? []).includes(s));
          expect(rubyEvery.length).toBeGreaterThan(RUN_SECONDS / 14);
          for (const g of gaps(rubyEvery)) expect([6, 7, 8, 13, 14, 15]).toContain(g);
          // interval 11s: counted from the end of each run.
          const nodeInterval = [...(won.get("interval") ?? []), ...(lost.get("interval") ?? [])].sort((a, b) => a - b);
          expect(nodeInterval.length).toBeGreaterThanOrEqual(Math.floor(RUN_SECONDS / 12));
          for (const g of gaps(nodeInterval)) expect([11, 12]).toContain(g);
          // in 20s: once per scheduler, 20 s after each loaded it.
          const nodeIn = [...(won.get("in") ?? []), ...(lost.get("in") ?? [])];
          expect(nodeIn).toHaveLength(1);
          expect(all.in!.length).toBe(won.get("in")?.length ? 2 : 1);
          console.log(
            `Sidekiq ${sk.target.version}: pushed sec ${all.sec!.length} (Node ${won.get("sec")!.length}), min ${all.min!.length}, ` +
              `every ${all.every!.length} (Node ${nodeEvery.length} triggers, ${won.get("every")?.length ?? 0} won), ` +
              `interval ${all.interval!.length} (Node ${nodeInterval.length}), in ${all.in!.length}, at ${ats.length}`,
          );
        },
      );
    },
    only,
  );
}
