// JobRetry: Node fails jobs Ruby pushed, and Ruby's own API (RetrySet,
// DeadSet, SortedEntry#retry) reads what Node wrote. The same job string is also
// failed by Ruby's real JobRetry in-process (JobRetry#global, no server, no
// waiting), so Node's bytes are compared with Ruby's, time lexemes aside.
import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";
import { expect, it } from "vitest";
import { handleFailure, sendToDead, type RetryConfig } from "../src/core/server/job-retry.js";
import { describeError, type HandlerOptions } from "../src/core/server/types.js";
import {
  decodeBacktrace,
  JobRecord,
  profileForVersion,
  validateRaw,
  versionAtLeast,
  type RecordKind,
} from "../src/core/wire/index.js";
import { describeEachSidekiq, type SidekiqContext } from "./support/harness.js";
import { startMonitor } from "../harness/monitor.js";

interface CapturedRecord {
  kind: string;
  name: string;
  raw?: string;
  score?: string;
}

function captured(version: string, kind: string): CapturedRecord {
  const doc = JSON.parse(
    readFileSync(new URL(`../ruby-fixtures/captures/${version}.json`, import.meta.url), "utf8"),
  ) as { records: CapturedRecord[] };
  const r = doc.records.find((x) => x.kind === kind);
  if (!r?.raw) throw new Error(`no ${kind} record in the ${version} capture`);
  return r;
}

/** Ruby's JobRetry, as the processor builds it, and a failure through its global handler. */
const RUBY_RETRIER = `
  def bridge_retrier = Bridge.job_retry
  def bridge_fail(jobstr, queue, message)
    bridge_retrier.global(jobstr, queue) { raise ArgumentError, message }
  rescue Sidekiq::JobRetry::Handled
    nil
  end
`;

/** The shape of a time lexeme: what a Ruby Integer or Float looks like. */
function lexemeShape(raw: string | undefined): string {
  if (raw === undefined) return "absent";
  if (/^\d{13}$/.test(raw)) return "int-ms";
  if (/^\d{10}\.\d+$/.test(raw)) return "float-s";
  return `other:${raw}`;
}

/** error_backtrace encodings: Base64.encode64 (MIME, newline-terminated lines) or strict. */
function base64Style(b64: string): string {
  return b64.includes("\n") ? "mime" : "strict";
}

/** The payload with times and backtrace replaced by their shapes, for byte comparison. */
function normalized(raw: string): string {
  const rec = JobRecord.parse(raw);
  for (const k of ["created_at", "enqueued_at", "failed_at", "retried_at", "discarded_at"]) {
    const r = rec.raw(k);
    if (r !== undefined) rec.set(k, lexemeShape(r));
  }
  const bt = rec.getString("error_backtrace");
  if (bt !== undefined) rec.set("error_backtrace", base64Style(bt));
  return rec.toString();
}

async function zsetMember(
  redis: Redis,
  key: string,
  jid: string,
): Promise<{ member: string; score: string } | undefined> {
  const flat = await redis.zrange(key, 0, -1, "WITHSCORES");
  for (let i = 0; i < flat.length; i += 2) {
    const member = flat[i]!;
    if (member.includes(`"jid":"${jid}"`)) return { member, score: flat[i + 1]! };
  }
  return undefined;
}

/** Ruby pushes a NodeJob per name onto its own queue; Node RPOPs each. */
async function pushFromRuby(
  sk: SidekiqContext,
  jobs: Record<string, string>,
): Promise<Record<string, { jid: string; raw: string }>> {
  const entries = Object.entries(jobs)
    .map(
      ([name, extra]) =>
        `"${name}" => Sidekiq::Client.push({"class" => "NodeJob", "queue" => "n-${name}", "args" => [2**64 + 1, 1.0]}.merge(${extra}))`,
    )
    .join(",\n");
  const jids = await sk.ruby<Record<string, string>>(`{${entries}}`);
  const out: Record<string, { jid: string; raw: string }> = {};
  for (const [name, jid] of Object.entries(jids)) {
    const raw = await sk.redis.rpop(`queue:n-${name}`);
    if (!raw) throw new Error(`queue:n-${name} is empty`);
    out[name] = { jid, raw };
  }
  return out;
}

function nodeError(message: string): Error {
  const e = new Error(message);
  e.name = "ArgumentError";
  return e;
}

describeEachSidekiq("server: JobRetry writes what Ruby's JobRetry writes", (sk) => {
  const profile = () => profileForVersion(sk.target.version);
  const config = (extra: Partial<RetryConfig> = {}): RetryConfig => ({
    profile: profile(),
    onHandlerError: () => {},
    ...extra,
  });
  const fail = (
    raw: string,
    queue: string,
    error: unknown,
    extra: { handler?: HandlerOptions; config?: RetryConfig; now?: number } = {},
  ) =>
    handleFailure(sk.redis, JobRecord.parse(raw), error, {
      queue,
      config: extra.config ?? config(),
      handler: extra.handler,
      now: extra.now,
    });

  it("a Ruby job failed by Node: RetrySet shows retry_count 0, the error, failed_at now, at now+15..24, the backtrace, args byte for byte", async () => {
    const { first } = await pushFromRuby(sk, { first: `{"backtrace" => true}` });
    const { jid, raw } = first!;
    const err = new TypeError("node boom é");
    const t0 = Date.now() / 1000;
    const r = await fail(raw, "n-first", err);
    expect(r.outcome).toBe("retry");
    const stored = (await zsetMember(sk.redis, "retry", jid))!;
    expect(stored).toBeDefined();
    expect(JobRecord.parse(stored.member).raw("args")).toBe(JobRecord.parse(raw).raw("args"));
    expect(validateRaw(sk.target.dialect, "retry", stored.member)).toEqual({ ok: true });
    const seen = await sk.ruby<{
      count: number;
      klass: string;
      message: string;
      failed: number;
      failedClass: string;
      at: number;
      bt: string[];
      typed: unknown;
      want: unknown;
      queue: string;
      json: string;
    }>(`
      e = Sidekiq::RetrySet.new.find_job(${JSON.stringify(jid)})
      fa = e["failed_at"]
      failed = e.respond_to?(:failed_at) ? e.failed_at.to_f : Time.at(fa).to_f
      {"count" => e["retry_count"], "klass" => e["error_class"], "message" => e["error_message"],
       "failed" => failed, "failedClass" => fa.class.name, "at" => e.at.to_f, "bt" => e.error_backtrace,
       "typed" => Bridge.typed(e.item["args"]), "want" => Bridge.typed([2**64 + 1, 1.0]),
       "queue" => e.queue, "json" => JSON.generate(e.item["args"])}
    `);
    const t1 = Date.now() / 1000;
    expect(seen.count).toBe(0);
    expect(seen.klass).toBe("TypeError");
    expect(seen.message).toBe("node boom é");
    expect(seen.failedClass).toBe(sk.target.dialect === 8 ? "Integer" : "Float");
    // nowMs() is performance-based: allow for its drift from Date.now().
    expect(seen.failed).toBeGreaterThanOrEqual(t0 - 1);
    expect(seen.failed).toBeLessThanOrEqual(t1 + 1);
    // count 0: jitter rand(10)*1 (6.x, 7.x) or rand(10*1) (8.x): 0..9 s.
    expect(seen.at - seen.failed).toBeGreaterThanOrEqual(15 - 0.01);
    expect(seen.at - seen.failed).toBeLessThan(25);
    expect(seen.at).toBeCloseTo(r.retryAt!, 3);
    expect(seen.bt).toEqual(describeError(err).backtrace);
    expect(seen.bt.length).toBeGreaterThan(0);
    expect(seen.typed).toEqual(seen.want);
    expect(seen.json).toBe("[18446744073709551617,1.0]");
    expect(seen.queue).toBe("n-first");
  });

  it("first and second failure: the same bytes as Ruby's JobRetry (and the captured key order, lexemes, encodings)", async () => {
    // The FailJob shape of the capture: sidekiq_options retry: 1, backtrace: true.
    const jid = await sk.ruby<string>(`FailJob.set(queue: "cap").perform_async("boom", 2**70)`);
    const raw = (await sk.redis.rpop("queue:cap"))!;
    const message = `bridge fixture failure: ["boom", 1180591620717411303424]`;
    const compare = async (input: string, key: "retry" | "dead") => {
      // Ruby first, into the sorted set; take it out again before Node writes.
      await sk.ruby(`${RUBY_RETRIER}\nbridge_fail(${JSON.stringify(input)}, "cap", ${JSON.stringify(message)})`);
      const ruby = (await zsetMember(sk.redis, key, jid))!;
      expect(ruby, `Ruby's ${key} entry`).toBeDefined();
      await sk.redis.zrem(key, ruby.member);
      const r = await fail(input, "cap", nodeError(message));
      expect(r.outcome).toBe(key);
      const node = (await zsetMember(sk.redis, key, jid))!;
      expect(node, `Node's ${key} entry`).toBeDefined();
      expect(normalized(node.member)).toBe(normalized(ruby.member));
      // Scores come back spelled by the server (Valkey writes 1.79e+9): compare values' kind, not spelling.
      expect(Number.isFinite(Number(node.score)) && Number(node.score) < 1e11).toBe(
        Number.isFinite(Number(ruby.score)) && Number(ruby.score) < 1e11,
      );
      // Against the golden capture of this release.
      const golden = captured(sk.target.version, key);
      const n = JobRecord.parse(node.member);
      const g = JobRecord.parse(golden.raw!);
      expect(n.keys()).toEqual(g.keys());
      for (const k of ["created_at", "enqueued_at", "failed_at", "retried_at"])
        expect(lexemeShape(n.raw(k)), k).toBe(lexemeShape(g.raw(k)));
      expect(Number(node.score)).toBeLessThan(1e11); // float seconds, as the golden score (any server's spelling)
      expect(Number(golden.score)).toBeLessThan(1e11);
      expect(base64Style(n.getString("error_backtrace")!)).toBe(base64Style(g.getString("error_backtrace")!));
      expect(validateRaw(sk.target.dialect, key as RecordKind, node.member)).toEqual({ ok: true });
      return node;
    };
    const first = await compare(raw, "retry");
    await sk.redis.zrem("retry", first.member);
    const second = await compare(first.member, "dead");
    const dead = JobRecord.parse(second.member);
    expect(dead.get("retry_count")).toBe(1);
    expect(dead.keys().at(-1)).toBe("retried_at");
    expect(decodeBacktrace(dead.get("error_backtrace")).length).toBeGreaterThan(0);
  });

  it("Ruby's API retry moves Node's entry back to its queue with retry_count decremented; Node takes it", async () => {
    const { api } = await pushFromRuby(sk, { api: `{"retry" => 3}` });
    await fail(api!.raw, "n-api", new Error("first"));
    const back = await sk.ruby<number>(
      `Sidekiq::RetrySet.new.find_job(${JSON.stringify(api!.jid)}).retry; Sidekiq::Queue.new("n-api").size`,
    );
    expect(back).toBe(1);
    expect(await zsetMember(sk.redis, "retry", api!.jid)).toBeUndefined();
    const again = JobRecord.parse((await sk.redis.rpop("queue:n-api"))!);
    expect(again.getString("jid")).toBe(api!.jid);
    expect(again.get("retry_count")).toBe(-1);
    expect(again.get("error_class")).toBe("Error");
    expect(again.raw("args")).toBe("[18446744073709551617,1.0]");
    // Failing it again counts from -1 to 0: retried_at, still a retry.
    const r = await fail(again.toString(), "n-api", new Error("second"));
    expect(r.outcome).toBe("retry");
    const entry = JobRecord.parse((await zsetMember(sk.redis, "retry", api!.jid))!.member);
    expect(entry.get("retry_count")).toBe(0);
    expect(entry.has("retried_at")).toBe(true);
  });

  it("exhaustion: retry 0, retry 1 twice, retry false, dead false, retriesExhausted discard, retryIn kill / number", async () => {
    const v = sk.target.version;
    const jobs = await pushFromRuby(sk, {
      zero: `{"retry" => 0}`,
      one: `{"retry" => 1}`,
      off: `{"retry" => false}`,
      nodead: `{"retry" => 0, "dead" => false}`,
      exdiscard: `{"retry" => 0}`,
      kill: `{"retry" => 5}`,
      delay: `{"retry" => 5}`,
    });
    const deaths: string[] = [];
    const cfg = config({ deathHandlers: [(j) => void deaths.push(j.getString("jid")!)], random: () => 0.5 });
    const now = Date.now();
    const outcome = async (name: string, handler?: HandlerOptions, raw?: string) =>
      (await fail(raw ?? jobs[name]!.raw, `n-${name}`, new Error(name), { handler, config: cfg, now })).outcome;

    expect(await outcome("zero")).toBe("dead");
    expect(await outcome("one")).toBe("retry");
    const oneEntry = (await zsetMember(sk.redis, "retry", jobs.one!.jid))!;
    await sk.redis.zrem("retry", oneEntry.member);
    expect(await outcome("one", undefined, oneEntry.member)).toBe("dead");
    expect(await outcome("off")).toBe("dropped");
    expect(await outcome("nodead")).toBe("discarded");
    const exhaustedDiscard = await outcome("exdiscard", { retriesExhausted: () => "discard" });
    expect(exhaustedDiscard).toBe(versionAtLeast(v, "7.2.0") ? "discarded" : "dead");
    const killed = await outcome("kill", { retryIn: () => "kill" });
    expect(killed).toBe(versionAtLeast(v, "6.5.2") ? "dead" : "retry");
    const delayed = await fail(jobs.delay!.raw, "n-delay", new Error("delay"), {
      handler: { retryIn: () => 100 },
      config: cfg,
      now,
    });
    expect(delayed.outcome).toBe("retry");

    const jid = (n: string) => JSON.stringify(jobs[n]!.jid);
    const seen = await sk.ruby<{
      retry: string[];
      dead: string[];
      deadSize: number;
      oneRetried: number | null;
      oneCount: number;
      delayAt: number;
      killAt: number | null;
    }>(`
      rs = Sidekiq::RetrySet.new
      ds = Sidekiq::DeadSet.new
      one = ds.find_job(${jid("one")})
      ra = one["retried_at"]
      {"retry" => rs.map(&:jid), "dead" => ds.map(&:jid), "deadSize" => ds.size,
       "oneRetried" => ra && (ra.is_a?(Float) ? ra : ra / 1000.0), "oneCount" => one["retry_count"],
       "delayAt" => rs.find_job(${jid("delay")}).at.to_f,
       "killAt" => rs.find_job(${jid("kill")})&.at&.to_f}
    `);
    const deadWant = ["zero", "one"];
    if (!versionAtLeast(v, "7.2.0")) deadWant.push("exdiscard");
    if (versionAtLeast(v, "6.5.2")) deadWant.push("kill");
    // (Earlier tests of this suite left their own entries in the dead set.)
    const mine = new Set(Object.values(jobs).map((j) => j.jid));
    expect(seen.dead.filter((j) => mine.has(j)).sort()).toEqual(deadWant.map((n) => jobs[n]!.jid).sort());
    expect(seen.deadSize).toBe(seen.dead.length);
    for (const n of ["off", "nodead", "exdiscard", "zero", "one"]) expect(seen.retry).not.toContain(jobs[n]!.jid);
    expect(seen.retry).toContain(jobs.delay!.jid);
    expect(seen.oneCount).toBe(1);
    expect(seen.oneRetried).not.toBeNull();
    expect(Math.abs(seen.oneRetried! - now / 1000)).toBeLessThan(1);
    // retryIn 100 at count 0, random 0.5: jitter rand(10)*1 = 5 (6.x, 7.x), rand(10*1) = 5 (8.x).
    expect(seen.delayAt).toBeCloseTo(now / 1000 + 105, 3);
    if (versionAtLeast(v, "6.5.2")) expect(seen.killAt).toBeNull();
    else expect(seen.killAt).toBeCloseTo(now / 1000 + 15 + 5, 3); // 6.4.1: "kill".to_i == 0, default delay
    // Death handlers: every job that died or was dropped; a 7.2-8.0.6 exhausted discard skips them.
    const deathWant = ["zero", "one", "off", "nodead"];
    if (!versionAtLeast(v, "7.2.0") || versionAtLeast(v, "8.0.7")) deathWant.push("exdiscard");
    if (versionAtLeast(v, "6.5.2")) deathWant.push("kill");
    expect([...deaths].sort()).toEqual(deathWant.map((n) => jobs[n]!.jid).sort());
  });

  it("sendToDead trims by age (6 months) exactly as Ruby's send_to_morgue does", async () => {
    const nowS = Date.now() / 1000;
    const day = 24 * 3600;
    const prefill = [
      [nowS - 200 * day, "old-200"],
      [nowS - 181 * day, "old-181"],
      [nowS - 179 * day, "kept-179"],
      [nowS - 1 * day, "kept-1"],
    ] as const;
    const fillDead = async () => {
      await sk.redis.del("dead");
      for (const [score, jid] of prefill) await sk.redis.zadd("dead", String(score), `{"jid":"${jid}"}`);
    };
    await fillDead();
    await sendToDead(sk.redis, `{"jid":"node-new"}`, config());
    const nodeLeft = (await sk.redis.zrange("dead", 0, -1)).map((m) => (JSON.parse(m) as { jid: string }).jid);
    await fillDead();
    const rubyLeft = await sk.ruby<string[]>(`${RUBY_RETRIER}
      bridge_retrier.send(:send_to_morgue, {"jid" => "ruby-new"})
      Sidekiq::DeadSet.new.map(&:jid).reverse`);
    expect(nodeLeft).toEqual(["kept-179", "kept-1", "node-new"]);
    expect(rubyLeft).toEqual(["kept-179", "kept-1", "ruby-new"]);
  });

  it("sendToDead caps the count: dead_max_jobs 5 leaves 4, the newest, like Ruby", async () => {
    const nowS = Date.now() / 1000;
    const fillDead = async () => {
      await sk.redis.del("dead");
      for (let i = 0; i < 10; i++) await sk.redis.zadd("dead", String(nowS - 100 + i), `{"jid":"j${i}"}`);
    };
    await fillDead();
    await sendToDead(sk.redis, `{"jid":"new"}`, config({ deadMaxJobs: 5 }));
    const nodeLeft = (await sk.redis.zrange("dead", 0, -1)).map((m) => (JSON.parse(m) as { jid: string }).jid);
    await fillDead();
    const rubyLeft = await sk.ruby<string[]>(`${RUBY_RETRIER}
      Bridge.set_option(:dead_max_jobs, 5)
      bridge_retrier.send(:send_to_morgue, {"jid" => "new"})
      Sidekiq::DeadSet.new.map(&:jid).reverse`);
    expect(nodeLeft).toEqual(["j7", "j8", "j9", "new"]);
    expect(rubyLeft).toEqual(nodeLeft);
  });

  it("the MULTI block and the retry ZADD are the commands Ruby sends (seen by MONITOR)", async () => {
    const seen: { args: string[]; source: string }[] = [];
    const mon = await startMonitor(Number(new URL(sk.url).port), ({ db, source, args }) => {
      if (
        db === String(sk.db) &&
        ["multi", "exec", "zadd", "zremrangebyscore", "zremrangebyrank"].includes(args[0]!.toLowerCase())
      ) {
        seen.push({ args, source });
      }
    });
    try {
      await sk.ruby(`${RUBY_RETRIER}
        bridge_retrier.send(:send_to_morgue, {"jid" => "ruby-m"})
        bridge_fail(JSON.generate({"class" => "X", "jid" => "ruby-r", "args" => [], "retry" => true, "queue" => "m"}), "m", "x")`);
      await sendToDead(sk.redis, `{"jid":"node-m"}`, config());
      await fail(`{"class":"X","jid":"node-r","args":[],"retry":true,"queue":"m"}`, "m", new Error("x"));
      // MONITOR's stream can lag behind the replies on a loaded machine: wait for the last command.
      const deadline = Date.now() + 10_000;
      while (
        !seen.some((x) => x.args[0]!.toLowerCase() === "zadd" && x.args.some((a) => a.includes('"node-r"'))) &&
        Date.now() < deadline
      ) {
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      mon.stop();
    }
    const shape = (a: string[]) =>
      a.map((x, i) =>
        i === 0 ? x.toLowerCase() : x.startsWith("{") ? "<payload>" : /^-?\d+\.\d+$/.test(x) ? "<float>" : x,
      );
    // Split by the connection that sent them.
    const rubySource = seen.find((s) => s.args.some((a) => a.includes("ruby-m")))!.source;
    const bySource = (src: string) => seen.filter((s) => s.source === src).map((s) => shape(s.args));
    const nodeSource = seen.find((s) => s.args.some((a) => a.includes("node-m")))!.source;
    const expected = [
      ["multi"],
      ["zadd", "dead", "<float>", "<payload>"],
      ["zremrangebyscore", "dead", "-inf", "<float>"],
      ["zremrangebyrank", "dead", "0", "-10000"],
      ["exec"],
      ["zadd", "retry", "<float>", "<payload>"],
    ];
    expect(bySource(rubySource)).toEqual(expected);
    expect(bySource(nodeSource)).toEqual(expected);
  });
});
