// Sidekiq::API for Node (src/core/api/) against real Ruby Sidekiq, per release:
// Stats and latency equal Ruby's on the same data; Node's retry / kill /
// delete / add_to_queue on Ruby-written entries leave Redis as Ruby's own
// actions do; ProcessSet and WorkSet agree on a live Ruby server and a Node
// Worker; Node's quiet/stop make both go quiet and stop.
import { beforeEach, expect, it } from "vitest";
import { EmbeddedProcessError, ProcessNotFoundError } from "../src/core/api/process-hash.js";
import { SidekiqApi } from "../src/core/api/sidekiq-api.js";
import { Client } from "../src/core/client/client.js";
import { Worker } from "../src/assembly/worker.js";
import { JobRecord, RawJson, rubyFloatToS } from "../src/core/wire/index.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";
import { between } from "./support/between.js";

/** Ruby prelude: the payload time unit of the release (8.x integer ms, else float s). */
const RB = `
V8 = Gem::Version.new(Sidekiq::VERSION) >= Gem::Version.new("8.0")
def ptime(ago = 0) = V8 ? ((Time.now.to_f - ago) * 1000).to_i : Time.now.to_f - ago
def member?(set, m) = [true, 1].include?(Sidekiq.redis { |c| c.sismember(set, m) })
`;

const J = (s: string) => JSON.stringify(s);
const jidOf = (c: string) => c.repeat(24);

interface RubyStats {
  processed: number;
  failed: number;
  scheduled_size: number;
  retry_size: number;
  dead_size: number;
  enqueued: number;
  processes_size: number;
  workers_size: number;
  default_queue_latency: number;
  queues: Record<string, number>;
  latency: Record<string, number>;
  summaries?: Array<{ name: string; size: number; latency: number; paused: boolean }>;
}

describeEachSidekiq("api: Sidekiq::API for Node", (sk) => {
  const v8 = sk.target.dialect === 8;
  const api = () => new SidekiqApi({ redis: sk.redis, apiVersion: sk.target.version });

  beforeEach(async () => {
    await sk.redis.flushdb();
  });

  it("Stats, queue sizes and every queue's latency equal Ruby's Sidekiq::Stats and Queue#latency", async () => {
    // Ruby writes jobs, sets and counters; Node adds queues whose times use each lexeme.
    await sk.ruby(`${RB}
      3.times { |i| RecordJob.perform_async(i) }
      RecordJob.perform_in(3600, "later"); RecordJob.perform_in(7200, "later")
      Sidekiq::RetrySet.new.schedule(Time.now.to_f + 600, {"class" => "FailJob", "args" => [1], "queue" => "default", "jid" => SecureRandom.hex(12), "created_at" => ptime, "retry_count" => 0})
      2.times { |i| Sidekiq::DeadSet.new.kill(Sidekiq.dump_json({"class" => "FailJob", "args" => [i], "jid" => SecureRandom.hex(12)}), notify_failure: false) }
      Sidekiq.redis { |c| c.set("stat:processed", "12"); c.set("stat:failed", "3") }
      nil`);
    const nowS = Date.now() / 1000;
    const job = (q: string, times: string) =>
      `{"retry":true,"queue":"${q}","class":"RecordJob","args":[],"jid":"${q.padEnd(24, "0").slice(0, 24)}"${times}}`;
    await sk.redis
      .multi()
      .sadd("queues", "floaty", "millis", "created", "created_f", "ghostq")
      .lpush(
        "queue:floaty",
        job("floaty", `,"created_at":${rubyFloatToS(nowS - 40)},"enqueued_at":${rubyFloatToS(nowS - 30.25)}`),
      )
      .lpush(
        "queue:millis",
        job(
          "millis",
          `,"created_at":${Math.floor((nowS - 45) * 1000)},"enqueued_at":${Math.floor((nowS - 40) * 1000)}`,
        ),
      )
      .lpush("queue:created", job("created", `,"created_at":${Math.floor((nowS - 50) * 1000)}`))
      .lpush("queue:created_f", job("created_f", `,"created_at":${rubyFloatToS(nowS - 55)}`))
      .sadd("processes", "fake:1:aaaaaaaaaaaa", "fake:2:bbbbbbbbbbbb", "gone:3:cccccccccccc")
      .hset("fake:1:aaaaaaaaaaaa", "busy", "2", "info", "{}")
      .hset("fake:2:bbbbbbbbbbbb", "busy", "1", "info", "{}")
      .exec();

    const a = api();
    const read = async () => {
      const stats = await a.stats();
      const summaries = await a.queueSummaries();
      const latency: Record<string, number> = {};
      for (const q of await a.queues()) latency[q.name] = await q.latency();
      return { stats, summaries, latency };
    };
    const before = await read();
    const ruby = await sk.ruby<RubyStats>(`
      s = Sidekiq::Stats.new
      out = {processed: s.processed, failed: s.failed, scheduled_size: s.scheduled_size, retry_size: s.retry_size,
             dead_size: s.dead_size, enqueued: s.enqueued, processes_size: s.processes_size, workers_size: s.workers_size,
             default_queue_latency: s.default_queue_latency, queues: s.queues,
             latency: Sidekiq::Queue.all.map { |q| [q.name, q.latency] }.to_h}
      out[:summaries] = s.queue_summaries.map { |q| {name: q.name, size: q.size, latency: q.latency, paused: q.paused} } if s.respond_to?(:queue_summaries)
      out`);
    const after = await read();

    const exact = {
      processed: ruby.processed,
      failed: ruby.failed,
      scheduledSize: ruby.scheduled_size,
      retrySize: ruby.retry_size,
      deadSize: ruby.dead_size,
      enqueued: ruby.enqueued,
      processesSize: ruby.processes_size,
      workersSize: ruby.workers_size,
    };
    expect(exact).toEqual({
      processed: 12,
      failed: 3,
      scheduledSize: 2,
      retrySize: 1,
      deadSize: 2,
      enqueued: 7,
      processesSize: 3,
      workersSize: 3,
    });
    expect(before.stats).toMatchObject(exact);
    expect(after.stats).toMatchObject(exact);
    between(
      ruby.default_queue_latency,
      before.stats.defaultQueueLatency,
      after.stats.defaultQueueLatency,
      "default_queue_latency",
    );

    // Stats#queues: name => size; Queue.all: every name, each with its latency.
    expect(Object.fromEntries(after.summaries.map((q) => [q.name, q.size]))).toEqual(ruby.queues);
    expect(Object.keys(after.latency)).toEqual(Object.keys(ruby.latency));
    for (const [name, lat] of Object.entries(ruby.latency))
      between(lat, before.latency[name]!, after.latency[name]!, `Queue#latency ${name}`);
    for (const q of ruby.summaries ?? []) {
      const b = before.summaries.find((x) => x.name === q.name)!;
      const n = after.summaries.find((x) => x.name === q.name)!;
      expect({ size: n.size, paused: n.paused }).toEqual({ size: q.size, paused: q.paused });
      between(q.latency, b.latency, n.latency, `queue_summaries ${q.name}`);
    }

    // What the rules are (Ruby says so above; spelled out here): 8.1.1+ reads
    // created_at when enqueued_at is missing and integers as ms; 6.x/7.x do neither.
    expect(ruby.latency.ghostq).toBe(0);
    expect(ruby.latency.floaty).toBeGreaterThan(30);
    if (v8) {
      expect(ruby.latency.millis).toBeGreaterThan(39);
      expect(ruby.latency.created).toBeGreaterThan(49);
      expect(ruby.latency.created_f).toBeGreaterThan(54);
    } else {
      expect(ruby.latency.millis).toBeLessThan(-1e12);
      expect(ruby.latency.created).toBe(0);
      expect(ruby.latency.created_f).toBe(0);
    }
  });

  it("Queue: entries page like Queue#each, find/delete by jid (LREM), clear (UNLINK + SREM) as Ruby sees them", async () => {
    const jids = await sk.ruby<string[]>(`
      jids = Sidekiq::Client.push_bulk("class" => RecordJob, "args" => (1..60).map { |i| [i, 2**64 + i, 1.0] }, "queue" => "paged")
      Sidekiq::Client.push_bulk("class" => RecordJob, "args" => [[1], [2]], "queue" => "paged2")
      jids`);
    const a = api();
    const q = a.queue("paged");
    const all: string[] = [];
    for await (const e of q.each()) all.push(e.jid!);
    expect(all).toHaveLength(60);
    expect(new Set(all)).toEqual(new Set(jids));
    const page = await q.page(10, 5);
    expect(page.map((e) => e.index)).toEqual([10, 11, 12, 13, 14]);
    expect(page.map((e) => e.jid)).toEqual(all.slice(10, 15));
    // Stored bytes, big integers and 1.0 included, come back verbatim.
    expect(page[0]!.raw).toMatch(/"args":\[\d+,1844674407370955\d+,1\.0\]/);

    const victim = all[30]!;
    expect((await q.findJob(victim))?.jid).toBe(victim);
    expect(await q.deleteJob(victim)).toBe(true);
    expect(await q.deleteJob(victim)).toBe(false);
    await a.queue("paged2").clear();

    const ruby = await sk.ruby<{ jids: string[]; found: boolean; size: number; all: string[]; size2: number }>(`
      q = Sidekiq::Queue.new("paged")
      {jids: q.map(&:jid), found: !q.find_job(${J(victim)}).nil?, size: q.size, all: Sidekiq::Queue.all.map(&:name), size2: Sidekiq::Queue.new("paged2").size}`);
    expect(ruby).toEqual({ jids: all.filter((j) => j !== victim), found: false, size: 59, all: ["paged"], size2: 0 });
  });

  it("retry, kill, delete, add_to_queue on Ruby-written entries leave Redis as Ruby's own actions do", async () => {
    const made = await sk.ruby<{ scheduled: string[]; same_score: number }>(`${RB}
      t = ptime
      mk = ->(jid) { {"retry" => 3, "queue" => "parity", "class" => "RecordJob", "args" => [1, 2**64, 1.0, "é", {"k" => [nil, true]}],
                      "jid" => jid, "created_at" => t, "enqueued_at" => t, "custom" => {"x" => 1.5}, "error_message" => "boom",
                      "error_class" => "RuntimeError", "failed_at" => t, "retry_count" => 2, "retried_at" => t} }
      now = Time.now.to_f
      rs = Sidekiq::RetrySet.new
      %w[a b c d e f].each_with_index { |c, i| rs.schedule(now + 3600 + i, mk.(c * 24)) }
      same = (now + 7200).round(3)
      rs.schedule(same, mk.("x" * 24)); rs.schedule(same, mk.("y" * 24))
      {scheduled: [RecordJob.set(queue: "parity2").perform_in(3600, 1, 2**64, 1.0), RecordJob.set(queue: "parity2").perform_in(3601, 1, 2**64, 1.0)],
       same_score: same}`);
    const originals = new Map<string, string>();
    for (const raw of await sk.redis.zrange("retry", 0, -1)) originals.set(JobRecord.parse(raw).getString("jid")!, raw);
    const [rubySched, nodeSched] = made.scheduled as [string, string];

    // Node acts on b (retry), d (kill), f (delete), the second scheduled job (add_to_queue),
    // and removes x by score as Ruby's remove_job does (y shares the score).
    const a = api();
    const find = async (c: string) => (await a.retries.find(jidOf(c)))!;
    expect(await a.retries.retry(await find("b"))).toBe(true);
    expect(await a.retries.kill(await find("d"))).toBe(true);
    expect(await a.retries.delete(await find("f"))).toBe(true);
    expect(await a.scheduled.addToQueue((await a.scheduled.find(nodeSched))!)).toBe(true);
    const score = (await sk.redis.zscore("retry", originals.get(jidOf("x"))!))!;
    expect(await a.retries.removeByScore(score, jidOf("x"))).toBe(originals.get(jidOf("x")));
    // Acting again on what is gone does nothing.
    expect(await a.retries.retry({ ...(await find("a")), raw: originals.get(jidOf("b"))! })).toBe(false);

    // Ruby does the same to a, c, e and the first scheduled job, then reads everything.
    const r = await sk.ruby<{
      retry_left: string[];
      same: string[];
      dead: Array<[string, string, number]>;
      retried_equal: boolean;
      retried_classes: string[];
      node_retried: { retry_count: number; args: unknown };
      queued_equal: boolean;
      sched_left: number;
      now: number;
    }>(`${RB}
      rs = Sidekiq::RetrySet.new
      rs.find_job(${J(jidOf("a"))}).retry
      rs.find_job(${J(jidOf("c"))}).kill
      rs.find_job(${J(jidOf("e"))}).delete
      Sidekiq::ScheduledSet.new.find_job(${J(rubySched)}).add_to_queue
      q = Sidekiq::Queue.new("parity")
      ra, na = q.find_job(${J(jidOf("a"))}), q.find_job(${J(jidOf("b"))})
      strip = ->(j, skip = %w[jid enqueued_at]) { Bridge.typed(j.item.reject { |k, _| skip.include?(k) }) }
      q2 = Sidekiq::Queue.new("parity2")
      r2, n2 = q2.find_job(${J(rubySched)}), q2.find_job(${J(nodeSched)})
      {retry_left: Sidekiq::RetrySet.new.map(&:jid).sort, same: Sidekiq::RetrySet.new.fetch(${made.same_score}).map(&:jid),
       dead: Sidekiq::DeadSet.new.map { |e| [e.jid, e.value, e.score] },
       retried_equal: strip.(ra) == strip.(na), retried_classes: [ra["enqueued_at"].class.name, na["enqueued_at"].class.name],
       node_retried: {retry_count: na["retry_count"], args: Bridge.typed(na.args)},
       queued_equal: strip.(r2, %w[jid enqueued_at created_at]) == strip.(n2, %w[jid enqueued_at created_at]) && r2["enqueued_at"].class == n2["enqueued_at"].class,
       sched_left: Sidekiq::ScheduledSet.new.size, now: Time.now.to_f}`);

    // retry: retry_count decremented, a new enqueued_at of the release's type, all else as Ruby leaves it.
    expect(r.retried_equal).toBe(true);
    expect(r.retried_classes).toEqual(v8 ? ["Integer", "Integer"] : ["Float", "Float"]);
    expect(r.node_retried.retry_count).toBe(1);
    expect(r.node_retried.args).toEqual({
      Array: [
        { Integer: "1" },
        { Integer: "18446744073709551616" },
        { Float: "1.0" },
        { String: '"é"' },
        { Hash: [[{ String: '"k"' }, { Array: [{ NilClass: "nil" }, { TrueClass: "true" }] }]] },
      ],
    });
    // Node's entry is the original string with exactly two members changed.
    const nodeRaw = (await sk.redis.lrange("queue:parity", 0, -1)).find((x) => x.includes(jidOf("b")))!;
    const expected = JobRecord.parse(originals.get(jidOf("b"))!)
      .set("retry_count", 1)
      .set("enqueued_at", new RawJson(JobRecord.parse(nodeRaw).raw("enqueued_at")!));
    expect(nodeRaw).toBe(expected.toString());

    // kill: both in the dead set with their bytes unchanged, scored now.
    const dead = new Map(r.dead.map(([jid, value, score]) => [jid, { value, score }]));
    for (const c of ["c", "d"]) {
      expect(dead.get(jidOf(c))?.value).toBe(originals.get(jidOf(c)));
      expect(r.now - dead.get(jidOf(c))!.score).toBeLessThan(60);
    }
    expect(dead.size).toBe(2);
    // delete, and the by-score removal: only y (same score as x) is left of the untouched ones.
    expect(r.retry_left).toEqual([jidOf("y")]);
    expect(r.same).toEqual([jidOf("y")]);
    // add_to_queue: both pushed the same way.
    expect(r.queued_equal).toBe(true);
    expect(r.sched_left).toBe(0);
  });

  it("list with class/queue filters; retry_all, kill_all, filtered bulk actions", async () => {
    await sk.ruby(`${RB}
      t = ptime
      rs = Sidekiq::RetrySet.new
      now = Time.now.to_f
      base = {"retry" => true, "created_at" => t, "enqueued_at" => t, "failed_at" => t, "error_class" => "E", "error_message" => "m"}
      rs.schedule(now + 100, base.merge("class" => "RecordJob", "queue" => "bulk_a", "args" => [1], "jid" => SecureRandom.hex(12), "retry_count" => 1))
      rs.schedule(now + 200, base.merge("class" => "RecordJob", "queue" => "bulk_a", "args" => [2], "jid" => SecureRandom.hex(12), "retry_count" => 1))
      rs.schedule(now + 300, base.merge("class" => "SlowJob", "queue" => "bulk_b", "args" => [0], "jid" => SecureRandom.hex(12), "retry_count" => 4))
      rs.schedule(now + 400, base.merge("class" => "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper", "wrapped" => "AjRecordJob", "queue" => "bulk_c",
        "args" => [{"job_class" => "AjRecordJob", "arguments" => []}], "jid" => SecureRandom.hex(12), "retry_count" => 0))
      Sidekiq.redis { |c| c.zadd("retry", (now + 500).to_s, "not json") }
      nil`);
    const a = api();
    // Listing is Ruby's each order: highest score first.
    const listed = await a.retries.list();
    expect(listed.map((e) => e.displayClass)).toEqual([undefined, "AjRecordJob", "SlowJob", "RecordJob", "RecordJob"]);
    const rubyOrder = await sk.ruby<Array<string | null>>(`Sidekiq::RetrySet.new.map(&:display_class)`);
    expect(listed.map((e) => e.displayClass ?? null)).toEqual(rubyOrder.map((c) => c ?? null));
    expect((await a.retries.list({ filter: { className: "AjRecordJob" } })).map((e) => e.queue)).toEqual(["bulk_c"]);
    expect(await a.retries.list({ filter: { queue: "bulk_a" }, limit: 1, offset: 1 })).toHaveLength(1);

    expect(await a.retries.retryAll({ className: "RecordJob" })).toEqual({ done: 2, failed: [] });
    expect(await a.retries.killAll()).toEqual({ done: 3, failed: [] }); // SlowJob, the ActiveJob, and "not json" (bytes as they are)
    const back = await a.dead.retryAll();
    expect(back.done).toBe(2);
    expect(back.failed.map((f) => f.raw)).toEqual(["not json"]); // cannot be pushed: put back

    const r = await sk.ruby<{ retry: number; dead: string[]; a: number[]; b: number[]; c: number[] }>(`
      counts = ->(q) { Sidekiq::Queue.new(q).map { |j| j["retry_count"] }.sort }
      {retry: Sidekiq::RetrySet.new.size, dead: Sidekiq::DeadSet.new.map(&:value), a: counts.("bulk_a"), b: counts.("bulk_b"), c: counts.("bulk_c")}`);
    // Manual retries do not count: retry_count - 1, even 0 to -1 as Ruby does.
    expect(r).toEqual({ retry: 0, dead: ["not json"], a: [0, 0], b: [3], c: [-1] });

    await a.dead.clear();
    expect(await sk.redis.exists("dead")).toBe(0);
  });

  it("remote signals as Process#quiet!/#stop! write them; embedded processes refused; the process_cleanup lock as the release has it", async () => {
    const info = (id: string, embedded: boolean) =>
      JSON.stringify({
        hostname: "fake",
        started_at: 1795303460.5,
        pid: 1,
        tag: "",
        concurrency: 2,
        queues: ["default"],
        labels: [],
        identity: id,
        version: sk.target.version,
        embedded,
      });
    const [f1, f2, emb] = ["fake:1:aaaaaaaaaaaa", "fake:2:bbbbbbbbbbbb", "emb:3:cccccccccccc"] as const;
    const tx = sk.redis.multi().sadd("processes", f1, f2, emb);
    for (const [id, e] of [
      [f1, false],
      [f2, false],
      [emb, true],
    ] as const)
      tx.hset(id, "info", info(id, e), "busy", "0", "beat", "1795303600.0", "quiet", "false").expire(id, 60);
    await tx.exec();

    const a = api();
    await a.processes.quiet(f1);
    await a.processes.stop(f1);
    await expect(a.processes.quiet(emb)).rejects.toBeInstanceOf(EmbeddedProcessError);
    await expect(a.processes.stop(emb)).rejects.toBeInstanceOf(EmbeddedProcessError);
    await expect(a.processes.quiet("nobody:9:000000000000")).rejects.toBeInstanceOf(ProcessNotFoundError);

    const r = await sk.ruby<{ refused: string | null; ids: string[] }>(`
      ps = Sidekiq::ProcessSet.new(false)
      p2 = ps.find { |p| p.identity == ${J(f2)} }
      p2.quiet!; p2.stop!
      refused = begin; ps.find { |p| p.identity == ${J(emb)} }.quiet!; nil; rescue => e; e.message; end
      {refused: refused, ids: ps.map(&:identity)}`);
    // Same list, same TTL: LPUSH then EXPIRE 60, newest first.
    for (const id of [f1, f2]) {
      expect(await sk.redis.lrange(`${id}-signals`, 0, -1)).toEqual(["TERM", "TSTP"]);
      const ttl = await sk.redis.ttl(`${id}-signals`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60);
    }
    expect(r.ids).toEqual((await a.processes.list({ cleanup: false })).map((p) => p.identity));
    // 7.0.3+ refuses; 6.4.1 had no embedded mode (Node refuses whatever the release).
    if (sk.target.dialect >= 7) expect(r.refused).toBe("Can't quiet an embedded process");
    else expect(r.refused).toBeNull();
    expect(await sk.redis.llen(`${emb}-signals`)).toBe(sk.target.dialect >= 7 ? 0 : 1);

    // Cleanup: a member without heartbeat hash is pruned; from 6.5.2 at most once a minute (the lock).
    const ghost = "ghost:4:dddddddddddd";
    await sk.redis.sadd("processes", ghost);
    await sk.redis.del("process_cleanup");
    await a.processes.list();
    expect(await sk.redis.sismember("processes", ghost)).toBe(0);
    // 6.4.1 has no lock; from 6.5.2 the cleanup takes it for a minute.
    if (sk.target.dialect >= 7) expect(await sk.redis.ttl("process_cleanup")).toBeGreaterThan(0);
    else expect(await sk.redis.exists("process_cleanup")).toBe(0);
    await sk.redis.sadd("processes", ghost);
    await a.processes.list(); // lock held: 7+ rules leave the ghost, 6.4.1 rules prune it
    const nodeKept = await sk.redis.sismember("processes", ghost);
    await sk.redis.sadd("processes", ghost);
    const rubyKept = await sk.ruby<boolean>(`${RB} Sidekiq::ProcessSet.new; member?("processes", ${J(ghost)})`);
    expect(nodeKept === 1).toBe(rubyKept);
    expect(rubyKept).toBe(sk.target.dialect >= 7);
  });

  it("a live Ruby server and a Node Worker: ProcessSet and WorkSet agree, Node's quiet and stop reach both", async () => {
    const beat = sk.target.dialect === 6 ? 5 : 10;
    const client = new Client({ redis: sk.url, dialect: sk.target.version });
    // Still running at the second beat and at the comparison after it, which boots a
    // Ruby process (seconds on a loaded machine); the stop below cuts it short (-t 5).
    await client.job("SlowJob", { queue: "rubyq" }).performAsync(3 * beat + 10);
    await client.job("NodeSlowJob", { queue: "nodeq" }).performAsync();
    await client.close();

    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const worker = new Worker({
      redis: sk.url,
      dialect: sk.target.version,
      queues: ["nodeq"],
      concurrency: 2,
      scheduler: false,
      timeout: 3,
      tag: "nodeapi",
    });
    worker.register("NodeSlowJob", async (_args, ctx) => {
      await Promise.race([released, new Promise((r) => ctx.signal.addEventListener("abort", r))]);
    });
    const server = await sk.startSidekiq({ queues: ["rubyq"], concurrency: 3, tag: "rubyapi" });
    await worker.start();
    const a = api();
    try {
      // Quiet goes to the Ruby server as soon as it is registered (its first beat):
      // the next beat pops it, the one after shows quiet. Meanwhile (from the
      // next beat) both running jobs are visible: a quiet process still runs them.
      const rubyId = await waitFor(
        "the Ruby server's first heartbeat",
        async () => (await a.processes.list()).find((p) => p.side === "ruby")?.identity,
        60_000,
      );
      await a.processes.quiet(rubyId);
      const work = await waitFor(
        "both processes and their work",
        async () => {
          const w = await a.work();
          return w.length === 2 && (await a.processes.list()).length === 2 ? w : undefined;
        },
        (2 * beat + 15) * 1000,
      );
      const procs = await a.processes.list();
      const rubyProc = procs.find((p) => p.side === "ruby")!;
      const nodeProc = procs.find((p) => p.side === "node")!;
      expect(rubyProc.tag).toBe("rubyapi");
      expect(nodeProc.identity).toBe(worker.identity);

      const ruby = await sk.ruby<{
        procs: Array<Record<string, unknown>>;
        work: Array<[string, string, string, string, number]>;
      }>(`
        {procs: Sidekiq::ProcessSet.new.map { |p| {"identity" => p.identity, "hostname" => p["hostname"], "pid" => p["pid"], "tag" => p.tag,
            "labels" => p.labels, "queues" => p.queues, "concurrency" => p["concurrency"], "version" => p["version"],
            "embedded" => p["embedded"] || false, "started_at" => p["started_at"]} },
         work: Sidekiq::WorkSet.new.map { |pid, tid, w| w.is_a?(Hash) ? [pid, tid, w["queue"], w["payload"]["jid"], w["run_at"]] : [pid, tid, w.queue, w.job.jid, w.run_at.to_i] }}`);
      expect(
        procs.map((p) => ({
          identity: p.identity,
          hostname: p.hostname,
          pid: p.pid,
          tag: p.tag,
          labels: p.labels,
          queues: p.queues,
          concurrency: p.concurrency,
          version: p.version ?? null,
          embedded: p.embedded,
          started_at: p.startedAt,
        })),
      ).toEqual(ruby.procs);
      // Sorted by run_at on both sides; equal run_ats (same second) in any order.
      const key = (w: readonly unknown[]) => `${String(w[0])} ${String(w[1])}`;
      const byKey = (x: unknown[], y: unknown[]) => (key(x) < key(y) ? -1 : 1);
      expect(work.map((w) => [w.process, w.tid, w.queue, w.jid, w.runAt]).sort(byKey)).toEqual(
        [...ruby.work].sort(byKey),
      );
      release();

      // The Node worker beats as soon as it goes quiet.
      await a.processes.quiet(nodeProc.identity);
      await waitFor("both quiet", async () => (await a.processes.list()).every((p) => p.quiet), (2 * beat + 5) * 1000);
      const stopping = await sk.ruby<boolean[]>(`Sidekiq::ProcessSet.new.map(&:stopping?)`);
      expect(stopping).toEqual([true, true]);

      // Stop: TERM; both shut down and leave the registry.
      await a.processes.stop(rubyProc.identity);
      await a.processes.stop(nodeProc.identity);
      // Ruby pops TERM at its next beat, then waits -t 5 for SlowJob: the bound
      // only catches a process that never leaves, so it is wide (a loaded
      // machine's Docker container took over 20 s).
      await waitFor(
        "both stopped",
        async () => (await sk.redis.smembers("processes")).length === 0,
        (beat + 5 + 45) * 1000,
      );
      expect(await sk.ruby<number>(`Sidekiq::ProcessSet.new.to_a.size`)).toBe(0);
    } finally {
      release();
      await worker.stop();
      await server.stop();
    }
  }, 180_000);
});
