// The API commands of the real `sidekiq-bridge` binary (built once) against
// data real Ruby Sidekiq wrote, and read back by Ruby: enqueue, stats,
// queues, processes, scheduled / retries / dead, quiet / stop. Plus the
// usage contract: --help exits 0, an unknown flag 2, a bad Redis URL a clear
// error that never shows the password.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { SidekiqApi } from "../src/core/api/sidekiq-api.js";
import { JobRecord } from "../src/core/wire/index.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";
import { REPO_ROOT } from "../harness/local-backend.js";

// dist/ is built once per run by the interop global setup.
const MAIN = join(REPO_ROOT, "dist", "assembly", "main.js");

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs with --json and parses stdout (one JSON document). */
async function cliJson<T = Record<string, unknown>>(
  args: string[],
  env: Record<string, string | undefined>,
  expectCode = 0,
): Promise<T> {
  const r = await cli([...args, "--json"], env);
  expect(r.code, `sidekiq-bridge ${args.join(" ")}\n${r.stderr}${r.stdout}`).toBe(expectCode);
  return JSON.parse(r.stdout) as T;
}

const COMMANDS = ["enqueue", "stats", "queues", "processes", "scheduled", "retries", "dead", "quiet", "stop"];
const J = (s: string) => JSON.stringify(s);

describe("cli: usage", () => {
  it("--help exits 0 with usage, an unknown flag exits 2 with a pointer to --help, for every API command", async () => {
    const runs = await Promise.all(COMMANDS.flatMap((c) => [cli([c, "--help"]), cli([c, "--no-such-flag"])]));
    COMMANDS.forEach((c, i) => {
      const [help, bad] = [runs[2 * i]!, runs[2 * i + 1]!];
      expect(help.code, c).toBe(0);
      expect(help.stdout).toContain(`Usage: sidekiq-bridge ${c}`);
      expect(help.stdout).toContain("--json");
      expect(bad.code, c).toBe(2);
      expect(bad.stderr).toContain("--no-such-flag");
      expect(bad.stderr).toContain(`sidekiq-bridge ${c} --help`);
    });
    const top = await cli(["--help"]);
    for (const c of COMMANDS) expect(top.stdout).toMatch(new RegExp(`^  ${c} `, "m"));
  });

  it("a Redis URL that cannot be reached, or is malformed, gives a clear error without the password", async () => {
    const secret = "hunter2-s3cret";
    const refused = await cli(["stats", "--redis", `redis://admin:${secret}@127.0.0.1:1/0`]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("cannot connect to Redis at redis://***@127.0.0.1:1/0");
    expect(refused.stderr).toContain("ECONNREFUSED");
    const viaEnv = await cli(["retries", "list", "--json"], { REDIS_URL: `redis://:${secret}@127.0.0.1:1/0` });
    expect(viaEnv.code).toBe(1);
    expect(viaEnv.stdout).toBe("");
    const malformed = await cli(["queues", "--redis", `redis://admin:${secret.replace("-", "/")}@host/0`]);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain("not a Redis URL: redis://***@host/0");
    const scheme = await cli(["processes", "--redis", `http://admin:${secret}@host`]);
    expect(scheme.code).toBe(2);
    for (const r of [refused, viaEnv, malformed, scheme]) {
      expect(r.stdout + r.stderr).not.toContain("hunter2");
      expect(r.stdout + r.stderr).not.toContain("s3cret");
    }
  });
});

describeEachSidekiq("cli: API commands on Ruby's data", (sk) => {
  const env = () => ({ REDIS_URL: sk.url });
  const v8 = sk.target.dialect === 8;
  let rubyId = "";

  beforeAll(async () => {
    // A real, idle Ruby process in the registry for processes / stop / auto dialect.
    await sk.startSidekiq({ queues: ["cli-srv"], concurrency: 2, tag: "clitest" });
    const api = new SidekiqApi({ redis: sk.redis });
    rubyId = await waitFor(
      "the Ruby server to register",
      async () => (await api.processes.list())[0]?.identity,
      60_000,
    );
  }, 90_000);

  it("processes: Ruby's ProcessSet; quiet writes TSTP like Process#quiet!; unknown identities fail", async () => {
    const out = await cliJson<{ processes: Array<Record<string, unknown>>; work: unknown[] }>(
      ["processes", "--work"],
      env(),
    );
    const ruby = await sk.ruby<Array<Record<string, unknown>>>(
      `Sidekiq::ProcessSet.new.map { |p| {"identity" => p.identity, "tag" => p.tag, "queues" => p.queues, "concurrency" => p["concurrency"], "version" => p["version"], "pid" => p["pid"]} }`,
    );
    expect(
      out.processes.map((p) => ({
        identity: p.identity,
        tag: p.tag,
        queues: p.queues,
        concurrency: p.concurrency,
        version: p.version,
        pid: p.pid,
      })),
    ).toEqual(ruby);
    expect(out.processes[0]).toMatchObject({ identity: rubyId, runtime: "ruby", busy: 0, quiet: false });
    expect(out.work).toEqual(await sk.ruby(`Sidekiq::WorkSet.new.to_a`)); // idle: []
    const human = await cli(["processes"], env());
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^IDENTITY\s+RUNTIME\s+VERSION\s+QUEUES\s+BUSY\s+QUIET\s+AGE\s+BEAT/m);
    expect(human.stdout).toContain(rubyId);

    // A registered process nobody pops signals for: the list shows exactly what was written.
    const fake = "fake-cli:1:aaaaaaaaaaaa";
    await sk.redis
      .multi()
      .sadd("processes", fake)
      .hset(fake, "info", JSON.stringify({ hostname: "fake-cli", identity: fake, queues: [] }), "busy", "0")
      .expire(fake, 60)
      .exec();
    expect(await cliJson(["quiet", fake], env())).toEqual({
      signal: "TSTP",
      signalled: [{ identity: fake, runtime: "ruby" }],
      errors: [],
    });
    expect(await sk.redis.lrange(`${fake}-signals`, 0, -1)).toEqual(["TSTP"]);
    expect(await sk.redis.ttl(`${fake}-signals`)).toBeGreaterThan(0);
    const missing = await cli(["stop", "nobody:1:000000000000"], env());
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no live Sidekiq process "nobody:1:000000000000"');
    await sk.redis.multi().srem("processes", fake).del(fake, `${fake}-signals`).exec();
  });

  it("enqueue: Ruby reads the job with its types, in the live fleet's format; --in schedules it", async () => {
    const pushed = await cliJson<{ jid: string; dialect: string }>(
      ["enqueue", "RecordJob", '[1, 1.0, 18446744073709551616, "é", {"k": [null]}]', "-q", "cli-enq", "--retry", "3"],
      env(),
    );
    expect(pushed.dialect).toBe(sk.target.version); // auto: the live Ruby server's release
    const later = await cliJson<{ jid: string; at: number }>(
      ["enqueue", "RecordJob", "[2]", "--queue", "cli-enq", "--in", "3600"],
      env(),
    );
    const r = await sk.ruby<{ args: unknown; retry: unknown; enq: string; sched: { jid: string; at: number } }>(`
      j = Sidekiq::Queue.new("cli-enq").find_job(${J(pushed.jid)})
      s = Sidekiq::ScheduledSet.new.find_job(${J(later.jid)})
      {args: Bridge.typed(j.args), retry: j["retry"], enq: j["enqueued_at"].class.name, sched: {jid: s.jid, at: s.score}}`);
    expect(r.args).toEqual({
      Array: [
        { Integer: "1" },
        { Float: "1.0" },
        { Integer: "18446744073709551616" },
        { String: '"é"' },
        { Hash: [[{ String: '"k"' }, { Array: [{ NilClass: "nil" }] }]] },
      ],
    });
    expect(r.retry).toBe(3);
    expect(r.enq).toBe(v8 ? "Integer" : "Float");
    expect(r.sched.jid).toBe(later.jid);
    expect(Math.abs(r.sched.at - later.at)).toBeLessThan(0.001);
    const bad = await cli(["enqueue", "RecordJob", "{}"], env());
    expect(bad.code).toBe(2);
  });

  it("stats: Sidekiq::Stats's numbers and latencies", async () => {
    await sk.ruby(`
      2.times { |i| RecordJob.set(queue: "cli-stats").perform_async(i) }
      Sidekiq.redis { |c| c.set("stat:processed", "41"); c.set("stat:failed", "7") }
      nil`);
    const t0 = Date.now();
    const ruby = await sk.ruby<Record<string, unknown> & { queues: Record<string, number>; lat: number }>(`
      s = Sidekiq::Stats.new
      {processed: s.processed, failed: s.failed, scheduled_size: s.scheduled_size, retry_size: s.retry_size, dead_size: s.dead_size,
       enqueued: s.enqueued, processes_size: s.processes_size, workers_size: s.workers_size, queues: s.queues,
       lat: Sidekiq::Queue.new("cli-stats").latency}`);
    const out = await cliJson<
      Record<string, unknown> & { queues: Array<{ name: string; size: number; latency: number }> }
    >(["stats", "--api-version", sk.target.version], env());
    const elapsed = (Date.now() - t0) / 1000;
    const { queues, lat, ...counts } = ruby;
    expect(out).toMatchObject(counts);
    expect(Object.fromEntries(out.queues.map((q) => [q.name, q.size]))).toEqual(queues);
    const cliLat = out.queues.find((q) => q.name === "cli-stats")!.latency;
    expect(cliLat).toBeGreaterThanOrEqual(lat - 0.01);
    expect(cliLat).toBeLessThanOrEqual(lat + elapsed + 0.01);
    const human = await cli(["stats"], env());
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^processed\s+41$/m);
    expect(human.stdout).toMatch(/^cli-stats\s+2\s+\S+/m);
  });

  it("queues: list, show (paged like Queue#each), clear --yes", async () => {
    const jids = await sk.ruby<string[]>(
      `Sidekiq::Client.push_bulk("class" => RecordJob, "args" => (1..5).map { |i| [i] }, "queue" => "cli-q")`,
    );
    const list = await cliJson<{ queues: Array<{ name: string; size: number }> }>(["queues"], env());
    const rubyAll = await sk.ruby<Array<[string, number]>>(`Sidekiq::Queue.all.map { |q| [q.name, q.size] }`);
    expect(list.queues.map((q) => [q.name, q.size])).toEqual(rubyAll);

    const shown = await cliJson<{
      size: number;
      entries: Array<{ index: number; jid: string; class: string; job: unknown }>;
    }>(["queues", "show", "cli-q", "--offset", "1", "--limit", "2"], env());
    const rubyOrder = await sk.ruby<string[]>(`Sidekiq::Queue.new("cli-q").map(&:jid)`);
    expect(new Set(rubyOrder)).toEqual(new Set(jids));
    expect(shown.size).toBe(5);
    expect(shown.entries.map((e) => [e.index, e.jid, e.class])).toEqual([
      [1, rubyOrder[1], "RecordJob"],
      [2, rubyOrder[2], "RecordJob"],
    ]);
    expect(shown.entries[0]!.job).toMatchObject({ class: "RecordJob", queue: "cli-q", jid: rubyOrder[1] });
    const human = await cli(["queues", "show", "cli-q"], env());
    expect(human.stdout).toMatch(/^#\s+JID\s+CLASS\s+ENQUEUED AT\s+ARGS$/m);

    const refused = await cli(["queues", "clear", "cli-q"], env());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("without --yes");
    expect(await cliJson(["queues", "clear", "cli-q", "--yes"], env())).toEqual({ queue: "cli-q", cleared: 5 });
    expect(
      await sk.ruby(`[Sidekiq::Queue.new("cli-q").size, Sidekiq::Queue.all.map(&:name).include?("cli-q")]`),
    ).toEqual([0, false]);
  });

  it("scheduled / retries / dead: list with filters, retry / kill / delete / add-to-queue by jid and --all", async () => {
    const made = await sk.ruby<{ retry: string[]; aj: string; sched: string[] }>(`
      t = ${v8 ? "(Time.now.to_f * 1000).to_i" : "Time.now.to_f"}
      rs = Sidekiq::RetrySet.new
      now = Time.now.to_f
      mk = ->(i, extra = {}) { {"retry" => true, "queue" => "cli-r", "class" => "RecordJob", "args" => [i, 1.0], "jid" => SecureRandom.hex(12), "created_at" => t,
                                "enqueued_at" => t, "failed_at" => t, "retry_count" => 2, "error_class" => "RuntimeError", "error_message" => "boom #{i}"}.merge(extra) }
      r = [mk.(1), mk.(2), mk.(3)]
      aj = mk.(4, "class" => "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper", "wrapped" => "AjRecordJob", "args" => [{"job_class" => "AjRecordJob", "arguments" => []}], "queue" => "cli-aj")
      (r + [aj]).each_with_index { |j, i| rs.schedule(now + 1000 + i, j) }
      {retry: r.map { |j| j["jid"] }, aj: aj["jid"],
       sched: [RecordJob.set(queue: "cli-s").perform_in(3600, 1), RecordJob.set(queue: "cli-s").perform_in(3700, 2), RecordJob.set(queue: "cli-s").perform_in(3800, 3)]}`);
    const [r1, r2, r3] = made.retry as [string, string, string];

    // list: newest score first, as Sidekiq::RetrySet#each; class filter unwraps ActiveJob.
    const listed = await cliJson<{
      size: number;
      entries: Array<{
        jid: string;
        class: string;
        wrapper?: string;
        retry_count: number;
        score: number;
        job: unknown;
      }>;
    }>(["retries", "list"], env());
    expect(listed.size).toBe(4);
    expect(listed.entries.map((e) => e.jid)).toEqual(await sk.ruby<string[]>(`Sidekiq::RetrySet.new.map(&:jid)`));
    const aj = await cliJson<{ entries: Array<{ jid: string; class: string; wrapper: string; queue: string }> }>(
      ["retries", "list", "--class", "AjRecordJob"],
      env(),
    );
    expect(aj.entries).toEqual([
      expect.objectContaining({
        jid: made.aj,
        class: "AjRecordJob",
        wrapper: "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper",
        queue: "cli-aj",
      }),
    ]);
    const byQueue = await cliJson<{ entries: unknown[] }>(
      ["retries", "list", "--queue", "cli-r", "--limit", "2"],
      env(),
    );
    expect(byQueue.entries).toHaveLength(2);
    const human = await cli(["retries", "list"], env());
    expect(human.stdout).toMatch(/^NEXT RETRY\s+JID\s+CLASS\s+QUEUE\s+RETRIES\s+ERROR$/m);
    expect(human.stdout).toContain("RuntimeError: boom 1");

    // by jid
    expect(await cliJson(["retries", "retry", r1], env())).toEqual({
      set: "retry",
      action: "retry",
      done: 1,
      jids: [r1],
      not_found: [],
      failed: [],
    });
    expect(await cliJson(["retries", "kill", r2], env())).toMatchObject({ done: 1, jids: [r2] });
    expect(await cliJson(["retries", "delete", r3, "0123456789abcdef01234567"], env(), 1)).toMatchObject({
      done: 1,
      jids: [r3],
      not_found: ["0123456789abcdef01234567"],
    });
    expect(await cliJson(["scheduled", "add-to-queue", made.sched[0]!], env())).toMatchObject({
      set: "schedule",
      done: 1,
    });
    // --all: the rest of the retries (the ActiveJob) to the dead set, then every dead job back to its queue.
    expect(await cliJson(["retries", "kill", "--all"], env())).toMatchObject({ all: true, done: 1 });
    expect(await cliJson(["dead", "retry", "--all"], env())).toMatchObject({ all: true, done: 2, failed: [] });
    const refused = await cli(["scheduled", "delete", "--all", "--queue", "cli-s"], env());
    expect(refused.code).toBe(2);
    expect(await cliJson(["scheduled", "delete", "--all", "--queue", "cli-s", "--yes"], env())).toMatchObject({
      done: 2,
    });
    expect((await cli(["scheduled", "retry"], env())).code).toBe(2);

    const r = await sk.ruby<{
      retry: number;
      dead: number;
      sched: number;
      q: Array<[string, number]>;
      aj: Array<[string, number]>;
      s: string[];
      r1: boolean;
    }>(`
      {retry: Sidekiq::RetrySet.new.size, dead: Sidekiq::DeadSet.new.size, sched: Sidekiq::ScheduledSet.new.count { |e| e["queue"] == "cli-s" },
       q: Sidekiq::Queue.new("cli-r").map { |j| [j.jid, j["retry_count"]] }.sort, aj: Sidekiq::Queue.new("cli-aj").map { |j| [j.display_class, j["retry_count"]] },
       s: Sidekiq::Queue.new("cli-s").map(&:jid), r1: Sidekiq::Queue.new("cli-r").find_job(${J(r1)})["args"][1].is_a?(Float)}`);
    // r1 retried (2 -> 1), r2 killed then retried from the dead set (2 -> 1), r3 deleted;
    // the ActiveJob killed then retried (2 -> 1); one scheduled job added to its queue.
    expect(r).toEqual({
      retry: 0,
      dead: 0,
      sched: 0,
      q: [
        [r1, 1],
        [r2, 1],
      ].sort(),
      aj: [["AjRecordJob", 1]],
      s: [made.sched[0]],
      r1: true,
    });
    // The retried payload kept its bytes: only retry_count and enqueued_at differ.
    const raw = (await sk.redis.lrange("queue:cli-r", 0, -1)).find((x) => x.includes(r1))!;
    expect(JobRecord.parse(raw).raw("args")).toBe("[1,1.0]");
  });

  it("stop: the Ruby server shuts down; afterwards enqueue without --dialect explains why it cannot pick a format", async () => {
    expect(await cliJson(["stop", rubyId], env())).toMatchObject({
      signal: "TERM",
      signalled: [{ identity: rubyId, runtime: "ruby" }],
    });
    await waitFor("the Ruby server to stop", async () => (await sk.redis.sismember("processes", rubyId)) === 0, 30_000);
    expect(await sk.ruby<number>(`Sidekiq::ProcessSet.new.to_a.size`)).toBe(0);
    const r = await cli(["enqueue", "RecordJob", "[1]"], env());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("--dialect");
    const ok = await cliJson<{ dialect: string }>(
      ["enqueue", "RecordJob", "[1]", "--dialect", sk.target.version],
      env(),
    );
    expect(ok.dialect).toBe(sk.target.version);
  }, 60_000);
});
