// The Node cron poller (inside a Worker) and sidekiq-cron's own poller (inside
// a real `sidekiq` with sidekiq-cron 2.3.1 loaded) run together for three
// minutes, both polling about every second: every fire time they claimed is
// pushed exactly once, both took part, disabled jobs never fire, namespaces,
// date_as_argument, last_enqueue_time and history trimming agree, and (on
// Sidekiq 8.1.7, which has Rails) ActiveJob classes run on Ruby.
import { expect, it } from "vitest";
import { CronApi } from "../src/addons/sidekiq-cron/index.js";
import { Worker } from "../src/assembly/worker.js";
import type { Logger } from "../src/core/logging/logger.js";
import { CRON_PEERS, cronRuby } from "./support/cron.js";
import { describeEachSidekiqConcurrently } from "./support/harness.js";

const RUN_SECONDS = Number(process.env.CRON_PROOF_SECONDS ?? 190);

interface Claim {
  time: number;
  member: string;
}

describeEachSidekiqConcurrently(
  "cron: the Node poller and sidekiq-cron's poller together",
  (sk) => {
    it(
      `enqueue each fire time exactly once with both pollers running (${RUN_SECONDS} s)`,
      {
        timeout: (RUN_SECONDS + 120) * 1000,
      },
      async () => {
        const aj = sk.target.activejob && sk.target.dialect === 8;
        const ruby = cronRuby(sk);
        const created = await ruby<boolean[]>(`[
        Sidekiq::Cron::Job.create("name" => "proof-sec", "cron" => "* * * * * *", "class" => "CronProofJob", "queue" => "cron-proof", "args" => ["sec"], "date_as_argument" => true),
        Sidekiq::Cron::Job.create("name" => "proof-min", "cron" => "* * * * *", "class" => "CronProofJob", "queue" => "cron-proof", "args" => ["min"]),
        Sidekiq::Cron::Job.create("name" => "proof-off", "cron" => "* * * * * *", "class" => "CronProofJob", "queue" => "cron-proof", "args" => ["off"], "status" => "disabled"),
        ${aj ? `Sidekiq::Cron::Job.create("name" => "proof-aj", "cron" => "*/10 * * * * *", "class" => "AjRecordJob", "queue" => "cron-aj", "args" => ["aj", {"k" => 1}], "active_job" => true)` : "true"}
      ]`);
        expect(created.every(Boolean)).toBe(true);
        // One job created from Node, in another namespace.
        const api = new CronApi({ redis: sk.redis });
        await api.create({
          name: "proof-ns",
          namespace: "proofns",
          cron: "*/2 * * * * *",
          class: "CronProofJob",
          queue: "cron-proof",
          args: ["ns"],
        });
        const createdAt = Date.now();
        // Each save records the fire time just past (so a new job does not fire at once);
        // a poller's ZADD of that same member later only moves its score, and pushes nothing.
        const saved = new Set<string>();
        for (const [ns, name] of [
          ["default", "proof-sec"],
          ["default", "proof-min"],
          ["default", "proof-off"],
          ["default", "proof-aj"],
          ["proofns", "proof-ns"],
        ])
          for (const m of await sk.redis.zrange(`cron_job:${ns}:${name}:enqueued`, 0, -1))
            saved.add(`${ns}:${name}:${m}`);

        const nodeClaims = new Map<string, Set<string>>();
        const logs: string[] = [];
        const logger: Logger = {
          debug: (m, ctx) => {
            if (m.startsWith("cron: enqueued ")) {
              const name = m.slice("cron: enqueued ".length);
              if (!nodeClaims.has(name)) nodeClaims.set(name, new Set());
              nodeClaims.get(name)!.add(String(ctx?.fireTime));
            }
          },
          info: (m) => logs.push(m),
          warn: (m) => logs.push(`WARN ${m}`),
          error: (m) => logs.push(`ERROR ${m}`),
        };
        const rubyProc = await sk.startSidekiq({
          queues: aj ? ["cron-aj"] : ["cron-none"],
          require: "lib/cron_jobs.rb",
          env: { ...sk.peers(...CRON_PEERS), BRIDGE_CRON_POLL: "1", BRIDGE_CRON_HISTORY: "5" },
        });
        const worker = new Worker({
          redis: sk.url,
          dialect: sk.target.version,
          queues: ["cron-none"],
          scheduler: false,
          timeout: 3,
          logger,
          cron: { pollInterval: 1, initialWait: 0, historySize: 5 },
        });
        await worker.start();
        await new Promise((r) => setTimeout(r, RUN_SECONDS * 1000));
        // Both pollers stop polling as soon as their stop begins; the stops
        // themselves (Ruby's shutdown above all) can take seconds more.
        const stopping = Date.now();
        await Promise.all([worker.stop(), rubyProc.stop()]);
        const endedAt = Date.now();
        expect(logs.filter((l) => /^(ERROR|WARN).*cron/.test(l))).toEqual([]);

        const pushed = (await sk.redis.lrange("queue:cron-proof", 0, -1)).map(
          (raw) => [raw, JSON.parse(raw) as { args: unknown[]; class: string }] as const,
        );
        const raw: Record<string, string[]> = {};
        const claimsOf = async (name: string, ns = "default"): Promise<Claim[]> => {
          const z = await sk.redis.zrange(`cron_job:${ns}:${name}:enqueued`, 0, -1, "WITHSCORES");
          raw[name] = z;
          const out: Claim[] = [];
          for (let i = 0; i < z.length; i += 2) {
            const member = z[i]!;
            expect(member).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
            expect(z[i + 1]).toMatch(/^\d+(\.\d+)?$/);
            expect(Number(z[i + 1]) * 1000 === Date.parse(member) || saved.has(`${ns}:${name}:${member}`)).toBe(true);
            if (!saved.has(`${ns}:${name}:${member}`)) out.push({ time: Date.parse(member), member });
          }
          return out;
        };
        const check = async (name: string, marker: string, ns = "default") => {
          const claims = await claimsOf(name, ns);
          const jobs = pushed.filter(([, j]) => j.args[0] === marker);
          // One push per claimed fire time, and no fire time claimed under two spellings.
          const dup = claims.filter((c, i) => claims.findIndex((d) => d.time === c.time) !== i);
          expect(dup, `${name}: ${JSON.stringify(claims)}`).toEqual([]);
          const detail = () =>
            `${name}: claims ${claims.map((c) => c.member.slice(11, 19)).join(" ")}; node ${[...(nodeClaims.get(name) ?? [])].map((m) => m.slice(11, 19)).join(" ")}; pushed ${jobs.map(([, j]) => JSON.stringify(j.args)).join(" ")}\n${JSON.stringify(raw[name])} created ${new Date(createdAt).toISOString()}`;
          expect(jobs.length, detail()).toBe(claims.length);
          const byNode = nodeClaims.get(name) ?? new Set<string>();
          for (const m of byNode) expect(claims.some((c) => c.member === m)).toBe(true);
          return { claims, jobs, node: byNode.size, ruby: claims.length - byNode.size };
        };

        const sec = await check("proof-sec", "sec");
        expect(sec.node).toBeGreaterThan(Math.floor(RUN_SECONDS / 30));
        expect(sec.ruby).toBeGreaterThan(Math.floor(RUN_SECONDS / 30));
        // date_as_argument: a Ruby Float (epoch seconds) after the marker, from either poller.
        for (const [raw, j] of sec.jobs) {
          expect(j.args).toHaveLength(2);
          expect(raw).toMatch(/"args":\["sec",\d+\.\d+\]/);
          expect((j.args[1] as number) * 1000).toBeGreaterThanOrEqual(createdAt - 1000);
          expect((j.args[1] as number) * 1000).toBeLessThanOrEqual(endedAt);
        }
        // Both pollers trim the history to 5 and record the last enqueue time.
        expect(await sk.redis.llen("cron_job:default:proof-sec:jid_history")).toBe(5);
        const last = (await api.find("proof-sec"))!.lastEnqueueTime!.getTime();
        expect(endedAt - last).toBeLessThan(10_000);

        // Every minute boundary while both pollers ran (polling each second,
        // so give them 3 s) was enqueued, once; one in the last seconds before
        // or during the stops may or may not have been, and nothing else was.
        const min = await check("proof-min", "min");
        const sure: number[] = [];
        const possible: number[] = [];
        for (let t = Math.ceil(createdAt / 60_000) * 60_000; t <= endedAt; t += 60_000)
          (t <= stopping - 3000 ? sure : possible).push(t);
        const minTimes = min.claims.map((c) => c.time).filter((t) => t > createdAt);
        expect(minTimes.filter((t) => t <= stopping - 3000)).toEqual(sure);
        for (const t of minTimes.filter((t) => t > stopping - 3000)) expect(possible).toContain(t);

        const ns = await check("proof-ns", "ns", "proofns");
        expect(ns.claims.length).toBeGreaterThan(RUN_SECONDS / 15);
        expect(ns.node + ns.ruby).toBe(ns.claims.length);

        console.log(
          `Sidekiq ${sk.target.version}, ${RUN_SECONDS} s: every second ${sec.claims.length} fire times (Node ${sec.node}, Ruby ${sec.ruby}), ` +
            `every minute ${min.claims.length} (Node ${min.node}, Ruby ${min.ruby}), namespace ${ns.claims.length} (Node ${ns.node}, Ruby ${ns.ruby}); each pushed once`,
        );
        const off = await check("proof-off", "off");
        expect(off.claims).toEqual([]);
        expect(off.jobs).toEqual([]);

        const seen = await ruby<Record<string, number>>(`
        h = Sidekiq::Cron::Job.find("proof-sec")
        {"history" => h.jid_history_from_redis.size, "queue" => Sidekiq::Queue.new("cron-proof").size}
      `);
        expect(seen).toEqual({ history: 5, queue: pushed.length });

        if (aj) {
          // Both pollers enqueued AjRecordJob; the real Ruby worker performed every one.
          const claims = await claimsOf("proof-aj");
          expect(new Set(claims.map((c) => c.time)).size).toBe(claims.length);
          expect(nodeClaims.get("proof-aj")?.size ?? 0).toBeGreaterThan(0);
          const received = (await sk.redis.lrange("bridge:received", 0, -1))
            .map((r) => JSON.parse(r) as { class: string; args_typed: unknown })
            .filter((r) => r.class === "AjRecordJob");
          expect(received.length).toBe(claims.length);
          for (const r of received) {
            expect(r.args_typed).toEqual({
              Array: [{ String: '"aj"' }, { Hash: [[{ String: '"k"' }, { Integer: "1" }]] }],
            });
          }
        }
      },
    );
  },
  (t) => t.dialect !== 6,
);
