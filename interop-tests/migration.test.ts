// Migration: the `sidekiq-bridge migrate | export | import` commands
// (built once, run as the real binary) against real Ruby Sidekiq, under live
// traffic: timestamps 8 -> 7 -> 8 byte for byte with Sidekiq 7.3.2 reading the
// 7 form; export/import byte for byte into a fresh Redis; audit of a live Ruby
// 8.1.7 fleet; move of one class under a Ruby producer; and the end-to-end
// hand-over of a queue from Ruby to a Node Worker and back.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Client } from "../src/core/client/client.js";
import { Worker } from "../src/assembly/worker.js";
import type { Logger } from "../src/core/logging/logger.js";
import { JobRecord, newJid, rubyFloatToS } from "../src/core/wire/index.js";
import type { AuditReport } from "../src/tools/migration/audit.js";
import type { MoveReport } from "../src/tools/migration/move.js";
import {
  convertPayloadTimes,
  migrateTimestamps,
  type TimestampReport,
} from "../src/tools/migration/convert-timestamps.js";
import type { ExportSummary } from "../src/tools/migration/dump.js";
import type { ImportSummary } from "../src/tools/migration/restore.js";
import { REPO_ROOT } from "../harness/local-backend.js";
import { describeEachSidekiq, FIRST_PASS, waitFor, type SidekiqContext } from "./support/harness.js";
import type { RedisServer } from "../harness/redis-server.js";
import { startServer } from "../harness/servers.js";

// The binary is built once by the global setup (interop-tests/support/global-setup.ts),
// before any suite spawns it; building here again would rewrite dist/ under other suites.
beforeAll(() => {
  for (const f of [
    "assembly/main",
    "tools/cli/migrate-command",
    "tools/cli/export-command",
    "tools/cli/import-command",
  ]) {
    if (!existsSync(join(REPO_ROOT, "dist", `${f}.js`)))
      throw new Error(`dist/${f}.js is missing: the global setup should have built it (npm run build)`);
  }
});

interface CliResult<T> {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  json: T;
}

/** Runs the built binary; parses stdout as JSON when it is JSON. */
function cli<T = unknown>(url: string, args: string[]): Promise<CliResult<T>> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["dist/assembly/main.js", ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, REDIS_URL: url },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("exit", (code) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, ms: Date.now() - started, json: json as T });
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

function jidOf(raw: string | Buffer): string {
  return JobRecord.parse(raw.toString()).getString("jid")!;
}

/** A time lexeme's form. */
function unitOf(raw: string, field = "created_at"): "ms" | "s" | "none" {
  const lex = JobRecord.parse(raw).raw(field);
  if (lex === undefined) return "none";
  return /^\d+$/.test(lex) ? "ms" : "s";
}

function templates(version: string): Record<string, string[]> {
  const doc = JSON.parse(
    readFileSync(new URL(`../ruby-fixtures/captures/${version}.json`, import.meta.url), "utf8"),
  ) as {
    records: Array<{ kind: string; name: string; raw?: string; score?: string }>;
  };
  const by: Record<string, string[]> = {};
  for (const r of doc.records) {
    if (!r.raw || r.kind === "dead-malformed") continue;
    let kind = r.kind;
    if (kind === "activejob") kind = r.score ? "scheduled" : "job";
    (by[kind] ??= []).push(r.raw);
  }
  return by;
}

// ---------------------------------------------------------------------------
// 1. timestamps: 8 -> 7 -> 8 with 50,000 entries of every kind (10,000 in the
//    repeat passes), live pushes,
//    and real Sidekiq 7.3.2 reading the 7 form.

describeEachSidekiq(
  "migration: timestamps 8 -> 7 -> 8 under live pushes",
  (sk) => {
    // 200,000 entries through the real CLI: minutes on a busy 2-core machine. What is
    // checked is correctness (every byte back), so the limits are generous; speed is the bench's.
    // The repeat passes (Valkey, Docker's Ruby) check the same on 40,000: still many
    // batches of every key, at a fifth of the time of two passes running side by side.
    const N = FIRST_PASS ? 50_000 : 10_000;
    const KEYS = ["queue:mig-a", "queue:mig-b", "schedule", "retry", "dead"] as const;
    const before = new Map<string, string[]>();
    const originalJids = new Set<string>();
    const pushed8: string[] = [];
    const pushed7: string[] = [];

    const RUBY_VIEW = `
      q = Sidekiq::Queue.new("mig-a")
      j = q.first
      r = Sidekiq::RetrySet.new.first
      d = Sidekiq::DeadSet.new.first
      s = Sidekiq::ScheduledSet.new.first
      {
        "now" => Time.now.to_f,
        "latency" => q.latency,
        "created" => j.created_at.to_f, "enqueued" => j.enqueued_at.to_f, "job_latency" => j.latency,
        "retry_created" => r.created_at.to_f, "retry_failed" => Time.at(r["failed_at"]).to_f, "retry_at" => r.at.to_f,
        "dead_failed" => Time.at(d["failed_at"]).to_f, "dead_created" => d.created_at.to_f,
        "scheduled_created" => s.created_at.to_f, "scheduled_at" => s.at.to_f
      }`;
    interface RubyView {
      now: number;
      latency: number;
      created: number;
      enqueued: number;
      job_latency: number;
      retry_created: number;
      retry_failed: number;
      retry_at: number;
      dead_failed: number;
      dead_created: number;
      scheduled_created: number;
      scheduled_at: number;
    }

    it(`fills ${N.toLocaleString("en-US")} Sidekiq 8 payloads of each kind (queue, schedule, retry, dead) from real 8.1.7 captures`, async () => {
      const t0 = Date.now();
      const tpl = templates("8.1.7");
      const now = Date.now();
      const mk = (raw: string, queue: string, i: number, ageMs: number): string => {
        const r = JobRecord.parse(raw).set("jid", newJid()).set("queue", queue);
        for (const f of ["created_at", "enqueued_at", "failed_at", "retried_at"])
          if (r.has(f)) r.set(f, now - ageMs - (i % 997));
        return r.toString();
      };
      const fill = async (
        kind: string,
        key: string,
        queue: (i: number) => string,
        score: ((i: number) => number) | undefined,
        age: number,
      ) => {
        const t = tpl[kind]!;
        for (let s = 0; s < N; s += 5000) {
          const batch: string[] = [];
          for (let i = s; i < s + 5000; i++) batch.push(mk(t[i % t.length]!, queue(i), i, age));
          for (const b of batch) originalJids.add(jidOf(b));
          if (!score) await sk.redis.lpush(key, ...batch);
          else await sk.redis.zadd(key, ...batch.flatMap((b, j) => [rubyFloatToS(score(s + j)), b]));
        }
      };
      const nowS = now / 1000;
      for (let part = 0; part < 2; part++) {
        const q = part === 0 ? "mig-a" : "mig-b";
        const t = tpl.job!;
        for (let s = 0; s < N / 2; s += 5000) {
          const batch: string[] = [];
          for (let i = s; i < s + 5000; i++) batch.push(mk(t[i % t.length]!, q, i, 30_000));
          for (const b of batch) originalJids.add(jidOf(b));
          await sk.redis.lpush(`queue:${q}`, ...batch);
        }
      }
      await fill(
        "scheduled",
        "schedule",
        (i) => (i % 2 ? "mig-a" : "mig-b"),
        (i) => nowS + 3600 + i / 1000,
        5_000,
      );
      await fill(
        "retry",
        "retry",
        () => "mig-a",
        (i) => nowS + 7200 + i / 1000,
        60_000,
      );
      await fill(
        "dead",
        "dead",
        () => "mig-b",
        (i) => nowS - 86_400 + i / 1000,
        120_000,
      );
      // A queue a real 7.3.2 server will run after the migration.
      const run = Array.from({ length: 20 }, (_, i) =>
        JobRecord.parse(tpl.job![2]!)
          .set("jid", newJid())
          .set("queue", "mig-run")
          .set("args", [i])
          .set("created_at", now)
          .set("enqueued_at", now)
          .toString(),
      );
      await sk.redis.lpush("queue:mig-run", ...run);
      await sk.redis.sadd("queues", "mig-a", "mig-b", "mig-run");
      for (const k of KEYS)
        before.set(
          k,
          k.startsWith("queue:") ? await sk.redis.lrange(k, 0, -1) : await sk.redis.zrange(k, 0, -1, "WITHSCORES"),
        );
      expect(
        before.get("schedule")!.length / 2 + before.get("retry")!.length / 2 + before.get("dead")!.length / 2,
      ).toBe(3 * N);
      expect(before.get("queue:mig-a")!.length + before.get("queue:mig-b")!.length).toBe(N);
      // Sidekiq 7.3.2 misreads the 8 form: integer ms taken as seconds (year ~58,000).
      const view = await sk.ruby<RubyView>(RUBY_VIEW);
      expect(view.latency).toBeLessThan(-1e9);
      expect(view.created).toBeGreaterThan(1e12);
      console.log(
        `[timestamps] filled ${4 * N} entries + 20 in ${Date.now() - t0} ms; 7.3.2 on the 8 form: latency ${view.latency.toExponential(2)} s, created_at year ~${Math.round(view.created / 31_557_600 + 1970)}`,
      );
    }, 240_000);

    it("--dry-run counts per key; then 8 -> 7 while Node clients keep pushing: nothing lost, what was written meanwhile in ms is reported, a second pass fixes it", async () => {
      const dry = await cli<TimestampReport>(sk.url, ["migrate", "timestamps", "--to", "7", "--dry-run", "--json"]);
      expect(dry.code, dry.stderr).toBe(0);
      const dryBy = Object.fromEntries(dry.json.keys.map((k) => [k.key, k.converted]));
      expect(dryBy).toMatchObject({
        schedule: N,
        retry: N,
        dead: N,
        "queue:mig-a": N / 2,
        "queue:mig-b": N / 2,
        "queue:mig-run": 20,
      });
      expect(await sk.redis.lrange("queue:mig-a", 0, -1)).toEqual(before.get("queue:mig-a")); // dry: untouched

      const c8 = new Client({ redis: sk.url, dialect: 8 });
      const c7 = new Client({ redis: sk.url, dialect: "7.3.2" });
      let stop = false;
      const pusher = async (c: Client, out: string[]) => {
        for (let i = 0; !stop; i++) {
          const job = c.job("RecordJob", { queue: i % 2 ? "mig-a" : "mig-b" });
          out.push((await job.performAsync(i))!);
          if (i % 4 === 0) out.push((await job.performIn(3600, i))!);
          await sleep(3);
        }
      };
      const loops = [pusher(c8, pushed8), pusher(c7, pushed7)];
      const run = await cli<TimestampReport>(sk.url, ["migrate", "timestamps", "--to", "7", "--json"]);
      stop = true;
      await Promise.all(loops);
      await Promise.all([c8.close(), c7.close()]);
      expect([0, 3], run.stderr).toContain(run.code);
      const r = run.json;
      const by = Object.fromEntries(r.keys.map((k) => [k.key, k]));
      // Every original entry converted, none missed or lost.
      expect(by.schedule!.converted).toBeGreaterThanOrEqual(N);
      expect(by.retry!.converted).toBe(N);
      expect(by.dead!.converted).toBe(N);
      expect(by["queue:mig-a"]!.converted + by["queue:mig-b"]!.converted).toBeGreaterThanOrEqual(N);
      expect(r.totals.gone + r.totals.conflicts + r.totals.unparseable).toBe(0);

      // No concurrent push lost; each dialect-8 one is now 7 (converted in the pass) or counted as remaining.
      const all = new Map<string, string>();
      for (const k of ["queue:mig-a", "queue:mig-b"])
        for (const raw of await sk.redis.lrange(k, 0, -1)) all.set(jidOf(raw), raw);
      for (const raw of await sk.redis.zrange("schedule", 0, -1)) all.set(jidOf(raw), raw);
      for (const j of [...pushed8, ...pushed7]) expect(all.has(j), `pushed job ${j} is missing`).toBe(true);
      const left8 = pushed8.filter((j) => unitOf(all.get(j)!) === "ms").length;
      const conv8 = pushed8.length - left8;
      expect(pushed7.every((j) => unitOf(all.get(j)!) === "s")).toBe(true);
      // Every ms payload left is a dialect-8 push (no original was missed).
      const msNow = [...all.values()].filter((raw) => unitOf(raw) === "ms").length;
      expect(msNow).toBe(left8);
      // The run reported those written before its verification scan; the few pushed
      // between that scan and the pushers stopping are not in its count.
      expect(r.totals.remaining).toBeGreaterThan(0);
      expect(r.totals.remaining).toBeLessThanOrEqual(left8);
      expect(run.code).toBe(3);
      expect(run.stdout).not.toBe("");
      console.log(
        `[timestamps] 8->7: ${r.totals.converted} converted in ${r.durationMs} ms (CLI ${run.ms} ms) while Node pushed ${pushed8.length} (dialect 8) + ${pushed7.length} (dialect 7) entries; ` +
          `of the dialect-8 ones ${conv8} were converted in the pass and ${left8} left in ms: ${r.totals.remaining} reported as remaining by the run, ${left8 - r.totals.remaining} pushed after its verification scan`,
      );

      const second = await cli<TimestampReport>(sk.url, ["migrate", "timestamps", "--to", "7", "--json"]);
      expect(second.code, second.stderr).toBe(0);
      expect(second.json.totals.converted).toBe(left8);
      expect(second.json.totals.remaining).toBe(0);
      console.log(
        `[timestamps] second pass: ${second.json.totals.converted} converted, 0 remaining, ${second.json.durationMs} ms`,
      );
    }, 240_000);

    it("real Sidekiq 7.3.2 reads the 7 form: latency, created_at/enqueued_at/failed_at are sane Times, and a 7.3.2 server runs a migrated job", async () => {
      const v = await sk.ruby<RubyView>(RUBY_VIEW);
      const day = 86_400;
      expect(v.latency).toBeGreaterThanOrEqual(0);
      expect(v.latency).toBeLessThan(600);
      expect(v.job_latency).toBeGreaterThanOrEqual(0);
      for (const f of [
        "created",
        "enqueued",
        "retry_created",
        "retry_failed",
        "dead_failed",
        "dead_created",
        "scheduled_created",
      ] as const) {
        expect(Math.abs(v[f] - v.now), `${f} = ${v[f]}`).toBeLessThan(2 * day);
      }
      expect(v.retry_at - v.now).toBeGreaterThan(3000); // scores untouched
      expect(v.scheduled_at - v.now).toBeGreaterThan(3000);
      const server = await sk.startSidekiq({ queues: ["mig-run"], concurrency: 2 });
      const received = await waitFor(
        "the 20 migrated mig-run jobs to run on 7.3.2",
        async () => {
          const got = await sk.redis.lrange("bridge:received", 0, -1);
          return got.length >= 20 ? got : undefined;
        },
        60_000,
      );
      await server.stop();
      for (const e of received) {
        expect((JSON.parse(e) as { class: string }).class).toBe("RecordJob");
        expect(e).toMatch(/"created_at":\d{10}\.\d+[,}]/); // the job hash 7.3.2 ran: float seconds
      }
      console.log(
        `[timestamps] 7.3.2: queue latency ${v.latency.toFixed(1)} s, created_at ${new Date(v.created * 1000).toISOString()}; a 7.3.2 server ran all 20 migrated jobs`,
      );
    }, 240_000);

    it("--to 8 gives back every original byte, scores included", async () => {
      const back = await cli<TimestampReport>(sk.url, ["migrate", "timestamps", "--to", "8", "--json"]);
      expect(back.code, back.stderr).toBe(0);
      expect(back.json.totals.remaining).toBe(0);
      let compared = 0;
      for (const k of KEYS) {
        const orig = before.get(k)!;
        if (k.startsWith("queue:")) {
          const now = (await sk.redis.lrange(k, 0, -1)).filter((raw) => originalJids.has(jidOf(raw)));
          expect(now.length, k).toBe(orig.length);
          expect(now, k).toEqual(orig);
          compared += now.length;
        } else {
          const flat = await sk.redis.zrange(k, 0, -1, "WITHSCORES");
          const now: string[] = [];
          for (let i = 0; i < flat.length; i += 2)
            if (originalJids.has(jidOf(flat[i]!))) now.push(flat[i]!, flat[i + 1]!);
          expect(now.length, k).toBe(orig.length);
          expect(now, k).toEqual(orig);
          compared += now.length / 2;
        }
      }
      expect(compared).toBe(4 * N);
      console.log(
        `[timestamps] 7->8: ${back.json.totals.converted} converted in ${back.json.durationMs} ms; ${compared} original entries byte-identical to before`,
      );
    }, 240_000);
  },
  (t) => t.version === "7.3.2",
);

// ---------------------------------------------------------------------------
// 1b. The replacement scripts against everything a live fleet does to the same
//     keys at once: a worker popping the tail, a client pushing the head, the
//     Web UI deleting jobs, a poller popping due retries.

describeEachSidekiq(
  "migration: timestamps against a worker, a producer, deletes and a poller at once",
  (sk) => {
    it("each job is popped, deleted or left exactly once, never half-written; a second pass leaves nothing in ms", async () => {
      const R = sk.redis;
      const tpl = templates("8.1.7");
      const now = Date.now();
      const mk = (raw: string, queue: string, i: number) => {
        const r = JobRecord.parse(raw).set("jid", newJid()).set("queue", queue);
        for (const f of ["created_at", "enqueued_at", "failed_at"]) if (r.has(f)) r.set(f, now - (i % 5000));
        return r.toString();
      };
      const origQueue = Array.from({ length: 20_000 }, (_, i) => mk(tpl.job![i % tpl.job!.length]!, "race", i));
      const origRetry = Array.from({ length: 5_000 }, (_, i) => mk(tpl.retry![0]!, "race", i));
      for (let i = 0; i < origQueue.length; i += 5000) await R.lpush("queue:race", ...origQueue.slice(i, i + 5000));
      // Retries: half due now (the poller takes them during the run), half later.
      await R.zadd(
        "retry",
        ...origRetry.flatMap((m, i) => [rubyFloatToS(now / 1000 + (i % 2 ? 3600 : -1) + i / 1e6), m]),
      );
      const conv = new Map<string, string>();
      for (const o of [...origQueue, ...origRetry]) conv.set(o, convertPayloadTimes(o, 7).raw!);
      const originals = new Map([...origQueue, ...origRetry].map((o) => [jidOf(o), o]));

      const w = sk.newRedis();
      let stop = false;
      const popped: string[] = [];
      const pushed: string[] = [];
      const deleted: string[] = [];
      const promoted: string[] = [];
      const worker = (async () => {
        while (!stop) {
          const j = await w.rpop("queue:race");
          if (j) popped.push(j);
          else await sleep(1);
          await sleep(0.5);
        }
      })();
      const pr = sk.newRedis();
      const producer = (async () => {
        for (let i = 0; !stop; i++) {
          const raw = mk(tpl.job![0]!, "race", i);
          await pr.lpush("queue:race", raw);
          pushed.push(raw);
          await sleep(1);
        }
      })();
      const dr = sk.newRedis();
      const deleter = (async () => {
        for (let i = 0; !stop; i++) {
          const o = origQueue[(i * 7919) % origQueue.length]!;
          if ((await dr.lrem("queue:race", 1, o)) === 1 || (await dr.lrem("queue:race", 1, conv.get(o)!)) === 1)
            deleted.push(jidOf(o));
          await sleep(20);
        }
      })();
      const pl = sk.newRedis();
      pl.defineCommand("raceZpop", {
        numberOfKeys: 1,
        lua: `local j = redis.call("zrangebyscore", KEYS[1], "-inf", ARGV[1], "limit", 0, 1) if j[1] then redis.call("zrem", KEYS[1], j[1]) return j[1] end`,
      });
      const poller = (async () => {
        while (!stop) {
          const j = (await (pl as unknown as { raceZpop(k: string, n: string): Promise<string | null> }).raceZpop(
            "retry",
            String(Date.now() / 1000),
          )) as string | null;
          if (j) promoted.push(j);
          else await sleep(5);
          await sleep(1);
        }
      })();

      const mr = sk.newRedis();
      const report = await migrateTimestamps(mr, { to: 7, queues: ["race"], sets: ["retry"], batchSize: 100 });
      stop = true;
      await Promise.all([worker, producer, deleter, poller]);

      // Never half-written: what the worker and poller got is the original or its full conversion.
      for (const j of [...popped, ...promoted]) {
        const id = jidOf(j);
        const o = originals.get(id);
        if (o) expect(j === o || j === conv.get(o), `popped ${id}`).toBe(true);
        else expect(pushed).toContain(j);
      }
      // Exactly once: popped + promoted + deleted + left = originals + pushed.
      const left = [...(await R.lrange("queue:race", 0, -1)), ...(await R.zrange("retry", 0, -1))];
      const seen = new Map<string, number>();
      for (const id of [...popped, ...promoted, ...left].map(jidOf).concat(deleted))
        seen.set(id, (seen.get(id) ?? 0) + 1);
      const expected = [...originals.keys(), ...pushed.map(jidOf)];
      expect(seen.size).toBe(expected.length);
      for (const id of expected) expect(seen.get(id), id).toBe(1);
      // What is left of the originals is converted, or counted for the next pass.
      const leftOrigInMs = left.filter((m) => originals.has(jidOf(m)) && unitOf(m) === "ms").length;
      expect(leftOrigInMs).toBeLessThanOrEqual(report.totals.remaining);
      const second = await migrateTimestamps(mr, { to: 7, queues: ["race"], sets: ["retry"] });
      expect(second.totals.remaining).toBe(0);
      for (const m of [...(await R.lrange("queue:race", 0, -1)), ...(await R.zrange("retry", 0, -1))])
        expect(unitOf(m)).toBe("s");
      const by = Object.fromEntries(report.keys.map((k) => [k.key, k]));
      console.log(
        `[race] ${report.durationMs} ms: queue converted ${by["queue:race"]!.converted}, gone ${by["queue:race"]!.gone}; retry converted ${by.retry!.converted}, gone ${by.retry!.gone}; ` +
          `meanwhile the worker popped ${popped.length}, the producer pushed ${pushed.length} (ms), the UI deleted ${deleted.length}, the poller promoted ${promoted.length}; ` +
          `left in ms after the pass ${report.totals.remaining} (originals among them ${leftOrigInMs}); second pass converted ${second.totals.converted}`,
      );
    }, 90_000);
  },
  (t) => t.version === "8.1.7",
);

// ---------------------------------------------------------------------------
// 2. export / import into an empty Redis, byte for byte.

describeEachSidekiq(
  "migration: export and import",
  (sk) => {
    let target: RedisServer | undefined;
    let dir = "";
    afterAll(async () => {
      await target?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    /** Every key of the export's kind, its type and content (as raw bytes, hex), and whether it has a TTL. */
    async function contents(r: Redis): Promise<Record<string, { type: string; data: string[]; ttl: boolean }>> {
      const keys = new Set<string>();
      for (const p of ["queue:*", "stat:*", "queues", "schedule", "retry", "dead"]) {
        let cursor = "0";
        do {
          const [next, batch] = await r.scan(cursor, "MATCH", p, "COUNT", 1000);
          cursor = next;
          batch.forEach((k) => keys.add(k));
        } while (cursor !== "0");
      }
      const out: Record<string, { type: string; data: string[]; ttl: boolean }> = {};
      for (const k of [...keys].sort()) {
        const type = await r.type(k);
        let data: Buffer[] = [];
        if (type === "list") data = await r.lrangeBuffer(k, 0, -1);
        else if (type === "zset") data = await r.zrangeBuffer(k, 0, -1, "WITHSCORES");
        else if (type === "set") data = (await r.smembersBuffer(k)).sort(Buffer.compare);
        else if (type === "string") data = [(await r.getBuffer(k))!];
        out[k] = { type, data: data.map((b) => b.toString("hex")), ttl: (await r.pttl(k)) > 0 };
      }
      return out;
    }

    it("export then import into a fresh Redis reproduces every key byte for byte; a second import is refused; --force replaces", async () => {
      // Real Ruby bytes, Node bytes, odd bytes.
      await sk.ruby(`
        Sidekiq::Client.push_bulk("class" => "RecordJob", "queue" => "ex-a", "args" => (1..3000).map { |i| [i, "é ✓", 2**70, 1.0] })
        Sidekiq::Client.push_bulk("class" => "RecordJob", "queue" => "ex-b", "args" => (1..500).map { |i| [i] }, "at" => (1..500).map { |i| Time.now.to_f + 3600 + i })
        200.times { |i| Sidekiq::RetrySet.new.schedule(Time.now.to_f + 600 + i, {"class" => "FailJob", "args" => [i], "queue" => "ex-a", "jid" => SecureRandom.hex(12), "created_at" => (Time.now.to_f * 1000).to_i, "retry_count" => 0, "error_message" => "boom ✗", "error_class" => "RuntimeError", "failed_at" => (Time.now.to_f * 1000).to_i}) }
        50.times { |i| Sidekiq::DeadSet.new.kill(Sidekiq.dump_json({"class" => "FailJob", "args" => [i], "jid" => SecureRandom.hex(12), "queue" => "ex-b"}), notify_failure: false) }
        Sidekiq.redis { |c| c.set("stat:processed", "123456"); c.set("stat:failed", "78"); c.set("stat:processed:2026-11-21", "9"); c.expire("stat:processed:2026-11-21", 86400 * 365) }
        true`);
      const c = new Client({ redis: sk.url, dialect: 8 });
      await c
        .job("NodeJob", { queue: "ex-c" })
        .performBulk(Array.from({ length: 1000 }, (_, i) => [i, { nested: [i, null, true] }]));
      await c.close();
      await sk.redis.rpush("queue:ex-c", Buffer.from([0xff, 0xfe, 0x00, 0x7b]), ""); // not UTF-8, and an empty element
      await sk.redis.zadd("dead", "1795305964.1108546", Buffer.from([0xc3, 0x28, 0x0a, 0x00]));
      await sk.redis.zadd(
        "schedule",
        "1e+300",
        '{"class":"Far","queue":"ex-b"}',
        "-12.5",
        '{"class":"Past","queue":"ex-b"}',
      );
      const source = await contents(sk.redis);
      const entries = Object.values(source).reduce(
        (n, k) => n + (k.type === "zset" ? k.data.length / 2 : k.data.length),
        0,
      );

      dir = mkdtempSync(join(tmpdir(), "sidekiq-bridge-export-"));
      const file = join(dir, "fleet.msgpack");
      const ex = await cli<ExportSummary & { file: string }>(sk.url, ["export", file, "--stats", "--json"]);
      expect(ex.code, ex.stderr).toBe(0);
      expect(ex.json.entries).toBe(entries);
      expect(ex.json.keys.map((k) => k.key).sort()).toEqual(Object.keys(source));

      target = await startServer(); // the same kind as the source: Redis and Valkey spell scores differently
      const targetUrl = `${target.url}/3`;
      const im = await cli<ImportSummary>(targetUrl, ["import", file, "--json"]);
      expect(im.code, im.stderr).toBe(0);
      expect(im.json.entries).toBe(entries);
      const t = new Redis(targetUrl);
      try {
        const copy = await contents(t);
        expect(Object.keys(copy)).toEqual(Object.keys(source));
        for (const k of Object.keys(source)) expect(copy[k], k).toEqual(source[k]);
        expect(copy["stat:processed:2026-11-21"]!.ttl).toBe(true);
        expect((await t.keys("sidekiq-bridge:import:*")).length).toBe(0);

        const again = await cli(targetUrl, ["import", file]);
        expect(again.code).toBe(1);
        expect(again.stderr).toMatch(/not empty: it already holds dead, queue:ex-a/);
        await t.lpush("queue:ex-a", "extra");
        const forced = await cli<ImportSummary>(targetUrl, ["import", file, "--force", "--json"]);
        expect(forced.code, forced.stderr).toBe(0);
        expect(forced.json.replaced).toContain("queue:ex-a");
        expect((await contents(t))["queue:ex-a"]).toEqual(source["queue:ex-a"]);

        // A truncated file and a flipped byte are refused and leave nothing behind.
        const bytes = readFileSync(file);
        const cut = join(dir, "cut.msgpack");
        writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length / 2)));
        const bad = join(dir, "bad.msgpack");
        const flipped = Buffer.from(bytes);
        const at = flipped.indexOf(Buffer.from("é ✓"));
        flipped[at + 3] = flipped[at + 3]! ^ 0x01;
        writeFileSync(bad, flipped);
        for (const [f, why] of [
          [cut, /truncated/],
          [bad, /damaged/],
        ] as const) {
          const db = `${target.url}/4`;
          const r = await cli(db, ["import", f]);
          expect(r.code, r.stderr).toBe(1);
          expect(r.stderr).toMatch(why);
          const d = new Redis(db);
          expect(await d.dbsize()).toBe(0);
          d.disconnect();
        }
        console.log(
          `[export] ${ex.json.keys.length} keys, ${entries} entries, ${ex.json.bytes} bytes in ${ex.json.durationMs} ms; import ${im.json.durationMs} ms; every key identical; re-import refused, --force replaced, truncated and damaged files refused`,
        );
      } finally {
        t.disconnect();
      }
    }, 90_000);
  },
  (t) => t.version === "8.1.7",
);

// ---------------------------------------------------------------------------
// 3. audit of a live Ruby 8.1.7 process serving a, b, c.

describeEachSidekiq(
  "migration: audit",
  (sk) => {
    let dir = "";
    afterAll(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("READY for the queue Node's handlers cover, BLOCKED naming the missing classes otherwise; the Ruby and Node processes with their versions", async () => {
      // One Ruby thread, kept busy by a SlowJob, so the other jobs stay where they are.
      const server = await sk.startSidekiq({
        queues: ["a", "b", "c"],
        concurrency: 1,
        require: "lib/migration_jobs.rb",
      });
      await sk.ruby(`SlowJob.set(queue: "a").perform_async(60)`);
      await waitFor(
        "the Ruby process to be busy",
        async () => {
          const ids = await sk.redis.smembers("processes");
          const busy = await Promise.all(ids.map((id) => sk.redis.hget(id, "busy")));
          return busy.includes("1") ? true : undefined;
        },
        30_000,
      );
      await sk.ruby(`
        3.times { |i| RecordJob.set(queue: "a").perform_async(i) }
        2.times { |i| FailJob.set(queue: "a").perform_async(i) }
        4.times { |i| Sidekiq::Client.push("class" => "MigXJob", "queue" => "b", "args" => [i]) }
        Sidekiq::Client.push("class" => "MigYJob", "queue" => "b", "args" => [1], "at" => Time.now.to_f + 3600)
        AjRecordJob.set(queue: "b").perform_later(1) if defined?(AjRecordJob)
        Sidekiq::RetrySet.new.schedule(Time.now.to_f + 3600, {"class" => "MigFlakyJob", "args" => [1], "queue" => "b", "jid" => SecureRandom.hex(12), "created_at" => (Time.now.to_f * 1000).to_i, "retry_count" => 0, "failed_at" => (Time.now.to_f * 1000).to_i, "error_class" => "RuntimeError", "error_message" => "x"})
        Sidekiq::RetrySet.new.schedule(Time.now.to_f + 3600, {"class" => "FailJob", "args" => [1], "queue" => "a", "jid" => SecureRandom.hex(12), "created_at" => (Time.now.to_f * 1000).to_i, "retry_count" => 0, "failed_at" => (Time.now.to_f * 1000).to_i, "error_class" => "RuntimeError", "error_message" => "x"})
        Sidekiq::Client.push("class" => "UnknownToNode", "queue" => "c", "args" => [])
        SlowJob.set(queue: "c").perform_async(0)
        Sidekiq::DeadSet.new.kill(Sidekiq.dump_json({"class" => "OldDeadJob", "args" => [], "jid" => SecureRandom.hex(12), "queue" => "b"}), notify_failure: false)
        true`);
      // A Node worker on another queue: the audit lists it too.
      const node = new Worker({ redis: sk.url, queues: ["n"], logger: quiet, scheduler: false });
      await node.start();
      dir = mkdtempSync(join(tmpdir(), "sidekiq-bridge-audit-"));
      const handlers = join(dir, "handlers.mjs");
      writeFileSync(
        handlers,
        `export default (worker) => {
          worker.use(async (_ctx, next) => next());
          worker.register("MigXJob", async () => {}).register("MigYJob", async () => {}, { retryIn: () => 1 });
          worker.register("MigFlakyJob", async () => {});
          worker.registerActiveJob("AjRecordJob", async () => {});
          worker.register("RecordJob", async () => {});
        };\n`,
      );
      try {
        const r = await cli<AuditReport>(sk.url, ["migrate", "audit", "--handlers", handlers, "--json"]);
        expect(r.code, r.stderr).toBe(3); // something is BLOCKED
        const q = Object.fromEntries(r.json.queues.map((x) => [x.queue, x]));
        expect(q.b!.verdict).toBe("READY");
        expect(q.b!.classes.map((c) => [c.name, c.activeJob, c.queued, c.scheduled, c.retry, c.dead])).toEqual(
          expect.arrayContaining([
            ["MigXJob", false, 4, 0, 0, 0],
            ["MigYJob", false, 0, 1, 0, 0],
            ["MigFlakyJob", false, 0, 0, 1, 0],
            ["AjRecordJob", true, 1, 0, 0, 0],
          ]),
        );
        expect(q.b!.warnings.join("\n")).toMatch(/OldDeadJob, found only in the dead set/);
        expect(q.a!.verdict).toBe("BLOCKED");
        expect(q.a!.missing).toEqual(["FailJob"]); // the SlowJob of a is running, not queued
        expect(q.a!.reasons).toContain("no Node handler for FailJob (2 queued, 1 in retry)");
        expect(q.c!.verdict).toBe("BLOCKED");
        expect(q.c!.missing).toEqual(["SlowJob", "UnknownToNode"]);
        for (const name of ["a", "b", "c"]) {
          expect(q[name]!.servedBy).toEqual([
            expect.objectContaining({ runtime: "ruby", version: "8.1.7", pid: expect.any(Number) }),
          ]);
        }
        const rubyProc = r.json.processes.find((p) => p.runtime === "ruby")!;
        expect(rubyProc.queues.sort()).toEqual(["a", "b", "c"]);
        expect(r.json.node.processes).toEqual([
          expect.objectContaining({
            identity: node.identity,
            runtime: "node",
            version: "8.1.7-sidekiq-bridge.0.1.0",
            queues: ["n"],
          }),
        ]);
        expect(q.n!.servedBy).toEqual([expect.objectContaining({ runtime: "node" })]);

        // --node-classes adds to the module: a becomes READY.
        const r2 = await cli<AuditReport>(sk.url, [
          "migrate",
          "audit",
          "-r",
          handlers,
          "--node-classes",
          "FailJob,SlowJob",
          "-q",
          "a",
          "-q",
          "b",
          "--json",
        ]);
        expect(r2.code, r2.stderr).toBe(0);
        expect(r2.json.queues.map((x) => [x.queue, x.verdict])).toEqual([
          ["a", "READY"],
          ["b", "READY"],
        ]);
        const human = await cli(sk.url, ["migrate", "audit", "-r", handlers, "-q", "c"]);
        expect(human.stdout).toMatch(/^c\s+BLOCKED/m);
        expect(human.stdout).toMatch(/served by: ruby 8\.1\.7 /);
        console.log(`[audit]\n${human.stdout}`);
      } finally {
        await node.stop();
        await server.stop();
      }
    }, 90_000);
  },
  (t) => t.version === "8.1.7",
);

// ---------------------------------------------------------------------------
// 4. move one class from b to b-node while a Ruby producer keeps enqueuing.

/** A Ruby producer: pushes MigXJob/MigYJob to `queue` until the key `mig:stop` is set; records "class jid". */
function rubyProducer(sk: SidekiqContext, queue: string, extra = ""): Promise<unknown> {
  return sk.ruby(
    `i = 0
     until Sidekiq.redis { |r| r.get("mig:stop") }
       k = i.even? ? "MigXJob" : "MigYJob"
       jid = Sidekiq::Client.push("class" => k, "queue" => "${queue}", "args" => [i, 5])
       Sidekiq.redis { |r| r.rpush("mig:produced", "#{k} #{jid}") }
       ${extra}
       i += 1
       sleep 0.003
     end
     i`,
  );
}

describeEachSidekiq(
  "migration: move under live traffic",
  (sk) => {
    it("moves class X from b to b-node while Ruby keeps enqueuing to b and runs b: each X job ends up exactly once in b-node or run; others untouched; scheduled and retry entries rewritten", async () => {
      const R = sk.redis;
      // 20,000 queued (10,000 X then 10,000 Y), X and Y scheduled, X and Y in retry, bound for b.
      await sk.ruby(`
        Sidekiq::Client.push_bulk("class" => "MigXJob", "queue" => "b", "args" => (1..10_000).map { |i| [i, 5] })
        Sidekiq::Client.push_bulk("class" => "MigYJob", "queue" => "b", "args" => (1..10_000).map { |i| [i, 5] })
        Sidekiq::Client.push_bulk("class" => "MigXJob", "queue" => "b", "args" => (1..100).map { |i| [i] }, "at" => Time.now.to_f + 3600)
        Sidekiq::Client.push_bulk("class" => "MigYJob", "queue" => "b", "args" => (1..100).map { |i| [i] }, "at" => Time.now.to_f + 3600)
        Sidekiq::Client.push_bulk("class" => "MigXJob", "queue" => "other", "args" => (1..10).map { |i| [i] }, "at" => Time.now.to_f + 3600)
        %w[MigXJob MigYJob].each { |k| 50.times { |i| Sidekiq::RetrySet.new.schedule(Time.now.to_f + 3600 + i, {"class" => k, "args" => [i], "queue" => "b", "jid" => SecureRandom.hex(12), "created_at" => (Time.now.to_f * 1000).to_i, "retry_count" => 0, "failed_at" => (Time.now.to_f * 1000).to_i, "error_class" => "RuntimeError", "error_message" => "x"}) } }
        true`);
      const initialQueue = await R.lrange("queue:b", 0, -1);
      const initialSets = {
        schedule: await R.zrange("schedule", 0, -1, "WITHSCORES"),
        retry: await R.zrange("retry", 0, -1, "WITHSCORES"),
      };
      // A Ruby server runs b (slowly: 5 ms a job, one thread) while a Ruby producer keeps pushing to b.
      const server = await sk.startSidekiq({ queues: ["b"], concurrency: 1, require: "lib/migration_jobs.rb" });
      const producer = rubyProducer(sk, "b");
      await waitFor(
        "the producer and the server to get going",
        async () => ((await R.llen("mig:produced")) > 100 && (await R.llen("mig:runs")) > 20 ? true : undefined),
        30_000,
      );

      const first = await cli<MoveReport>(sk.url, [
        "migrate",
        "move",
        "--from",
        "b",
        "--to",
        "b-node",
        "--class",
        "MigXJob",
        "--json",
      ]);
      expect([0, 3], first.stderr).toContain(first.code);
      await R.set("mig:stop", "1");
      const produced = Number(await producer);
      // What arrived after the last pass: a second run (traffic stopped) moves it.
      const second = await cli<MoveReport>(sk.url, [
        "migrate",
        "move",
        "--from",
        "b",
        "--to",
        "b-node",
        "--class",
        "MigXJob",
        "--json",
      ]);
      expect(second.code, second.stderr).toBe(0);
      expect(second.json.remaining).toBe(0);
      await server.stop();

      const xJids = new Set<string>();
      const yJids = new Set<string>();
      for (const raw of initialQueue)
        (JobRecord.parse(raw).getString("class") === "MigXJob" ? xJids : yJids).add(jidOf(raw));
      for (const line of await R.lrange("mig:produced", 0, -1)) {
        const [k, j] = line.split(" ");
        (k === "MigXJob" ? xJids : yJids).add(j!);
      }
      const runs = (await R.lrange("mig:runs", 0, -1)).map((e) => JSON.parse(e) as { class: string; jid: string });
      const ran = new Map<string, number>();
      for (const r of runs) ran.set(r.jid, (ran.get(r.jid) ?? 0) + 1);
      const bNode = (await R.lrange("queue:b-node", 0, -1)).map((raw) => ({ raw, rec: JobRecord.parse(raw) }));
      const bLeft = (await R.lrange("queue:b", 0, -1)).map((raw) => JobRecord.parse(raw));
      const inNode = new Map<string, number>();
      for (const { rec } of bNode) inNode.set(rec.getString("jid")!, (inNode.get(rec.getString("jid")!) ?? 0) + 1);

      let movedX = 0;
      let ranX = 0;
      for (const j of xJids) {
        const n = (inNode.get(j) ?? 0) + (ran.get(j) ?? 0);
        expect(n, `X job ${j}: ${inNode.get(j) ?? 0} in b-node, ran ${ran.get(j) ?? 0} times`).toBe(1);
        if (inNode.has(j)) movedX++;
        else ranX++;
      }
      expect(bLeft.every((r) => r.getString("class") === "MigYJob")).toBe(true);
      const inB = new Map<string, number>();
      for (const r of bLeft) inB.set(r.getString("jid")!, (inB.get(r.getString("jid")!) ?? 0) + 1);
      for (const j of yJids) expect((ran.get(j) ?? 0) + (inB.get(j) ?? 0), `Y job ${j}`).toBe(1);
      expect(
        bNode.every(({ rec }) => rec.getString("class") === "MigXJob" && rec.getString("queue") === "b-node"),
      ).toBe(true);
      // Moved payloads: only `queue` changed, byte for byte.
      const initialByJid = new Map(initialQueue.map((raw) => [jidOf(raw), raw]));
      let checkedBytes = 0;
      for (const { raw, rec } of bNode) {
        const orig = initialByJid.get(rec.getString("jid")!);
        if (orig) {
          expect(raw).toBe(orig.replace('"queue":"b"', '"queue":"b-node"'));
          checkedBytes++;
        }
      }
      // FIFO kept: b-node runs the initial jobs in their original order.
      const order = bNode
        .map(({ rec }) => rec.getString("jid")!)
        .filter((j) => initialByJid.has(j))
        .reverse();
      const inOrder = new Set(order);
      const origOrder = [...initialQueue]
        .reverse()
        .map(jidOf)
        .filter((j) => inOrder.has(j));
      expect(order).toEqual(origOrder);
      // Sets: X bound for b rewritten to b-node with its score; everything else as it was.
      for (const set of ["schedule", "retry"] as const) {
        const before = initialSets[set];
        const now = await R.zrange(set, 0, -1, "WITHSCORES");
        const nowMap = new Map<string, string>();
        for (let i = 0; i < now.length; i += 2) nowMap.set(now[i]!, now[i + 1]!);
        expect(now.length).toBe(before.length);
        for (let i = 0; i < before.length; i += 2) {
          const raw = before[i]!;
          const rec = JobRecord.parse(raw);
          const expected =
            rec.getString("class") === "MigXJob" && rec.getString("queue") === "b"
              ? raw.replace('"queue":"b"', '"queue":"b-node"')
              : raw;
          expect(nowMap.get(expected), `${set}: ${expected.slice(0, 80)}`).toBe(before[i + 1]);
        }
      }
      const f = first.json;
      console.log(
        `[move] the Ruby producer pushed ${produced} jobs (half X) while the server ran b and the move ran; first run: ${f.moved} moved in ${f.passes} pass(es), ${f.durationMs} ms, ` +
          `gone ${f.locations.reduce((a, l) => a + l.gone, 0)} (run by Ruby first), remaining ${f.remaining}; second run moved ${second.json.moved}. ` +
          `X jobs: ${xJids.size} = ${movedX} in b-node + ${ranX} run by Ruby; ${checkedBytes} moved payloads byte-checked; sets: ${f.locations
            .filter((l) => l.key !== "queue:b")
            .map((l) => `${l.key} ${l.moved}`)
            .join(", ")}`,
      );
      expect(f.locations.find((l) => l.key === "schedule")!.moved).toBe(100);
      expect(f.locations.find((l) => l.key === "retry")!.moved).toBe(50);
    }, 90_000);
  },
  (t) => t.version === "8.1.7",
);

// ---------------------------------------------------------------------------
// 5. End to end: three Ruby 8.1.7 processes serve a, b, c under a Ruby
//    producer (with failing jobs that sit in retry); audit says b is READY; a
//    Node Worker takes b and the Ruby process stops serving it; later the
//    roll-back. Every job runs exactly once, and retries of b run on whichever
//    side owns b when they come due.

interface Run {
  class: string;
  jid: string;
  queue: string;
  side: "ruby" | "node";
  at: number;
}

describeEachSidekiq(
  "migration: hand b over from Ruby to Node and back, under traffic",
  (sk) => {
    let dir = "";
    afterAll(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    /** Waits until a live process lists exactly these queues (a restarted server is up). */
    const serving = (queues: string[]) =>
      waitFor(
        `a Ruby process serving ${queues.join(",")}`,
        async () => {
          const procs = await sk.ruby<string[][]>(`Sidekiq::ProcessSet.new.map { |p| p["queues"].sort }`);
          return procs.some((q) => q.join(",") === [...queues].sort().join(",")) ? true : undefined;
        },
        40_000,
      );

    it("audit READY, Node takes b, Ruby stops serving it, roll-back: every job once, none lost, b's retries run by b's owner when due", async () => {
      const R = sk.redis;
      const t0 = Date.now();
      const opts = { concurrency: 3, require: "lib/migration_jobs.rb" };
      let r1 = await sk.startSidekiq({ queues: ["a", "b", "c"], ...opts });
      await sk.startSidekiq({ queues: ["a", "c"], ...opts });
      await sk.startSidekiq({ queues: ["a", "c"], ...opts });
      // The producer: X and (every 4th) flaky jobs to a, b, c in turn, until mig:stop.
      const producer = sk.ruby(`
        i = 0
        until Sidekiq.redis { |r| r.get("mig:stop") }
          q = %w[a b c][i % 3]
          k = (i % 4 == 3) ? "MigFlakyJob" : "MigXJob"
          jid = Sidekiq::Client.push("class" => k, "queue" => q, "args" => k == "MigXJob" ? [i, 2] : [i])
          Sidekiq.redis { |r| r.rpush("mig:produced", jid) }
          i += 1
          sleep 0.01
        end
        i`);
      await serving(["a", "b", "c"]);
      await waitFor(
        "Ruby to run jobs and fail some",
        async () => ((await R.llen("mig:runs")) > 30 && (await R.zcard("retry")) > 0 ? true : undefined),
        30_000,
      );

      // A batch of flaky jobs that fail on Ruby right before the hand-over: their retries come due after it.
      const flakyBatch = async (n: number, tag: string): Promise<string[]> =>
        sk.ruby<string[]>(
          `(1..${n}).map { |i| jid = Sidekiq::Client.push("class" => "MigFlakyJob", "queue" => "b", "args" => ["${tag}#{i}"]); Sidekiq.redis { |r| r.rpush("mig:produced", jid) }; jid }`,
        );
      const failedAll = (jids: string[]) =>
        waitFor(
          `${jids.length} batch jobs to fail once`,
          async () => {
            const f = new Set(
              (await R.lrange("mig:failures", 0, -1)).map((e) => (JSON.parse(e) as { jid: string }).jid),
            );
            return jids.every((j) => f.has(j)) ? true : undefined;
          },
          20_000,
        );

      // Audit with the handlers the Node worker will run.
      dir = mkdtempSync(join(tmpdir(), "sidekiq-bridge-e2e-"));
      const handlersFile = join(dir, "handlers.mjs");
      writeFileSync(
        handlersFile,
        `export default (w) => { w.register("MigXJob", () => {}); w.register("MigFlakyJob", () => {}, { retryIn: () => 1 }); };\n`,
      );
      const audit = await cli<AuditReport>(sk.url, ["migrate", "audit", "-r", handlersFile, "-q", "b", "--json"]);
      expect(audit.code, audit.stderr).toBe(0);
      const b = audit.json.queues[0]!;
      expect(b.verdict).toBe("READY");
      // What b holds right now: its retries at least (queued jobs may all be running).
      expect(b.classes.map((c) => c.name)).toContain("MigFlakyJob");
      expect(b.classes.every((c) => ["MigFlakyJob", "MigXJob"].includes(c.name) && c.handled)).toBe(true);
      expect(b.servedBy).toEqual([expect.objectContaining({ runtime: "ruby", version: "8.1.7" })]);

      const batchA = await flakyBatch(20, "A");
      await failedAll(batchA);

      // Hand-over: the Node worker takes b, then the Ruby process restarts without it.
      const rec = sk.newRedis();
      const record = (ctx: { jid: string; queue: string; className: string }) =>
        rec.rpush(
          "mig:runs",
          JSON.stringify({ class: ctx.className, jid: ctx.jid, queue: ctx.queue, side: "node", at: Date.now() / 1000 }),
        );
      const node = new Worker({ redis: sk.url, queues: ["b"], concurrency: 5, logger: quiet, pollIntervalAverage: 1 });
      node.register("MigXJob", async ([, ms], ctx) => {
        await sleep(Number(ms ?? 0));
        await record(ctx);
      });
      node.register(
        "MigFlakyJob",
        async (_args, ctx) => {
          if ((await rec.sadd("mig:failed-once", ctx.jid)) === 1) {
            await rec.rpush(
              "mig:failures",
              JSON.stringify({ jid: ctx.jid, queue: ctx.queue, side: "node", at: Date.now() / 1000 }),
            );
            throw new Error(`first attempt of ${ctx.jid} fails on purpose`);
          }
          await record(ctx);
        },
        { retryIn: () => 1 },
      );
      await node.start();
      // Ruby stops fetching at once (TSTP: quiet), then restarts without b.
      await r1.signal("SIGTSTP");
      await r1.stop();
      const tHandover = Date.now() / 1000;
      r1 = await sk.startSidekiq({ queues: ["a", "c"], ...opts });
      await serving(["a", "c"]);
      await sleep(2000);
      const batchB = await flakyBatch(20, "B");
      await failedAll(batchB);

      // Roll-back: Ruby serves b again, then the Node worker stops (unfinished jobs go back to b).
      const tRollback = Date.now() / 1000;
      const r1b = await sk.startSidekiq({ queues: ["a", "b", "c"], ...opts });
      await serving(["a", "b", "c"]);
      await node.stop();
      const tNodeGone = Date.now() / 1000;
      await r1.stop();
      r1 = r1b; // eslint-disable-line no-useless-assignment -- read by the suite's cleanup
      await sleep(1500);
      await R.set("mig:stop", "1");
      const produced = Number(await producer);

      // Drain: every job that was pushed has run.
      const all = await R.lrange("mig:produced", 0, -1);
      const runs = await waitFor(
        "every job to have run (retries included)",
        async () => {
          const rs = (await R.lrange("mig:runs", 0, -1)).map((e) => JSON.parse(e) as Run);
          const done = new Set(rs.map((r) => r.jid));
          return all.every((j) => done.has(j)) ? rs : undefined;
        },
        45_000,
      );
      await sleep(1500); // anything running twice would show up now
      const final = (await R.lrange("mig:runs", 0, -1)).map((e) => JSON.parse(e) as Run);
      const failures = (await R.lrange("mig:failures", 0, -1)).map((e) => JSON.parse(e) as Run);

      // Exactly once, none lost.
      const count = new Map<string, number>();
      for (const r of final) count.set(r.jid, (count.get(r.jid) ?? 0) + 1);
      expect(final.length).toBe(all.length);
      expect(new Set(all).size).toBe(all.length);
      for (const j of all) expect(count.get(j), j).toBe(1);
      const failCount = new Map<string, number>();
      for (const f of failures) failCount.set(f.jid, (failCount.get(f.jid) ?? 0) + 1);
      for (const [j, n] of failCount) expect(n, `failures of ${j}`).toBe(1);
      expect(
        (await R.zcard("retry")) +
          (await R.zcard("dead")) +
          (await R.llen("queue:b")) +
          (await R.llen("queue:a")) +
          (await R.llen("queue:c")),
      ).toBe(0);

      // Who ran what: Node only b; only Node between the hand-over and the roll-back; only Ruby after Node left.
      const nodeRuns = final.filter((r) => r.side === "node");
      expect(nodeRuns.length).toBeGreaterThan(0);
      expect(nodeRuns.every((r) => r.queue === "b")).toBe(true);
      const bRuns = final.filter((r) => r.queue === "b");
      const during = bRuns.filter((r) => r.at > tHandover && r.at < tRollback);
      expect(during.length).toBeGreaterThan(0);
      expect(during.filter((r) => r.side !== "node")).toEqual([]);
      const after = bRuns.filter((r) => r.at > tNodeGone);
      expect(after.length).toBeGreaterThan(0);
      expect(after.filter((r) => r.side !== "ruby")).toEqual([]);

      // Retries of b's classes: run by whoever owned b when they came due.
      const success = new Map(final.map((r) => [r.jid, r]));
      const failed = new Map(failures.map((f) => [f.jid, f]));
      const crossA = batchA.filter((j) => failed.get(j)!.side === "ruby" && success.get(j)!.side === "node").length;
      const crossB = batchB.filter((j) => failed.get(j)!.side === "node" && success.get(j)!.side === "ruby").length;
      expect(batchA.every((j) => failed.get(j)!.side === "ruby")).toBe(true);
      expect(batchB.every((j) => failed.get(j)!.side === "node")).toBe(true);
      expect(crossA).toBeGreaterThan(0);
      expect(crossB).toBeGreaterThan(0);
      for (const j of [...batchA, ...batchB]) {
        const s = success.get(j)!;
        if (s.at > tHandover && s.at < tRollback) expect(s.side).toBe("node");
        if (s.at > tNodeGone) expect(s.side).toBe("ruby");
      }
      const bFlaky = [...failed.values()].filter((f) => f.queue === "b");
      console.log(
        `[e2e] ${all.length} jobs (${produced} from the producer + 40 in two flaky batches) ran exactly once, ${failures.length} failed once first; ` +
          `Node ran ${nodeRuns.length} b jobs (${bRuns.length} b jobs in all), ${during.length} b runs between hand-over and roll-back all on Node, ${after.length} after Node left all on Ruby; ` +
          `b retries: ${bFlaky.length}, batch A ${crossA}/20 failed on Ruby and ran on Node (the others came due before the hand-over), batch B ${crossB}/20 failed on Node and ran on Ruby; ${Date.now() - t0} ms`,
      );
      void runs;
    }, 120_000);
  },
  (t) => t.version === "8.1.7",
);
