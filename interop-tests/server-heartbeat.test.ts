// A Node process in the Ruby fleet's process registry. Real Sidekiq's
// API (ProcessSet, WorkSet, Process#quiet!/stop!, Stats, Metrics::Query) and
// its real Web UI (rendered with Rack::MockRequest) read what Heartbeat and
// Stats write. beat() is called directly: no waiting for timers.
import { beforeAll, expect, it } from "vitest";
import { BRIDGE_LABEL } from "../src/core/wire/bridge-label.js";
import { Heartbeat, newIdentity, type RemoteSignal, type WorkEntry } from "../src/core/server/heartbeat.js";
import { bridgeVersionString } from "../src/core/server/process-info.js";
import { ExecutionStats } from "../src/core/server/execution-stats.js";
import { intSeconds, nowMs, profileForVersion } from "../src/core/wire/index.js";
import { describeEachSidekiq } from "./support/harness.js";
import { between } from "./support/between.js";

const HOST = "node-bridge-host";

interface SeenProcess {
  identity: string;
  concurrency: number;
  queues: string[];
  busy: number;
  quiet: string;
  stopping: boolean;
  tag: string;
  labels: string[];
  version: string | null;
  gem_version: string;
  hostname: string;
  pid: number;
  started_at: number;
}

interface SeenWork {
  process: string;
  tid: string;
  queue: string;
  run_at: number;
  args: unknown[];
  klass: string;
  jid: string;
}

describeEachSidekiq("server heartbeat: Ruby sees the Node process", (sk) => {
  const profile = profileForVersion(sk.target.version);
  const metrics = sk.target.dialect >= 7;
  const identity = newIdentity(HOST);
  const stats = new ExecutionStats();
  const signals: RemoteSignal[] = [];
  let quiet = false;
  let running: WorkEntry[] = [];
  let jid = "";
  let hb: Heartbeat;
  let builtAt = 0;
  const rubyId = JSON.stringify(identity);

  beforeAll(async () => {
    // A real payload, pushed by Ruby, fetched as a worker would.
    jid = await sk.ruby<string>(
      `Sidekiq::Client.push("class" => "SlowJob", "args" => [30, "node"], "queue" => "nodeq")`,
    );
    const raw = (await sk.redis.rpop("queue:nodeq"))!;
    expect(raw).toContain(jid);
    running = [{ tid: "n0de", queue: "nodeq", payload: raw, runAt: intSeconds(nowMs()) }];
    builtAt = Date.now() / 1000;
    hb = new Heartbeat({
      redis: sk.redis,
      profile,
      identity,
      tag: "bridge-tag",
      labels: ["blue"],
      capsules: [{ name: "default", concurrency: 4, mode: "weighted", weights: { nodeq: 2, other: 1 } }],
      work: () => running,
      stats,
      onSignal: (s) => {
        signals.push(s);
        if (s === "TSTP" || s === "TERM") quiet = true;
      },
      quiet: () => quiet,
    });
  });

  it("ProcessSet lists the Node process; WorkSet shows its running job", async () => {
    await hb.beat();
    const seen = await sk.ruby<{ size: number; process: SeenProcess | null; total_concurrency: number }>(`
      ps = Sidekiq::ProcessSet.new
      p = ps.find { |x| x.identity == ${rubyId} }
      {"size" => ps.size, "total_concurrency" => ps.total_concurrency, "process" => p && {
        "identity" => p.identity, "concurrency" => p["concurrency"], "queues" => p.queues, "busy" => p["busy"],
        "quiet" => p["quiet"], "stopping" => p.stopping?, "tag" => p.tag, "labels" => p.labels,
        "version" => p["version"], "gem_version" => (Gem::Version.new(p["version"]).to_s rescue "invalid"),
        "hostname" => p["hostname"], "pid" => p["pid"], "started_at" => p["started_at"]}}
    `);
    expect(seen.size).toBe(1);
    expect(seen.total_concurrency).toBe(4);
    const p = seen.process!;
    expect(p).not.toBeNull();
    expect(p).toMatchObject({
      identity,
      concurrency: 4,
      queues: ["nodeq", "other"],
      busy: 1,
      quiet: "false",
      stopping: false,
      tag: "bridge-tag",
      labels: ["blue", BRIDGE_LABEL],
      version: bridgeVersionString(profile),
      hostname: HOST,
      pid: process.pid,
    });
    expect(p.gem_version).not.toBe("invalid"); // a valid Gem::Version, should any tool parse it
    // Between building the heartbeat and now, however long a loaded machine took.
    between(p.started_at, builtAt, Date.now() / 1000, "started_at", 0.002);

    const works = await sk.ruby<SeenWork[]>(
      sk.target.dialect === 6
        ? `Sidekiq::Workers.new.map { |pid, tid, w| {"process" => pid, "tid" => tid, "queue" => w["queue"], "run_at" => w["run_at"],
             "args" => w["payload"]["args"], "klass" => w["payload"]["class"], "jid" => w["payload"]["jid"]} }`
        : `Sidekiq::WorkSet.new.map { |pid, tid, w| {"process" => pid, "tid" => tid, "queue" => w.queue, "run_at" => w.run_at.to_i,
             "args" => w.job.args, "klass" => w.job.klass, "jid" => w.job.jid} }`,
    );
    expect(works).toEqual([
      {
        process: identity,
        tid: "n0de",
        queue: "nodeq",
        run_at: running[0]!.runAt,
        args: [30, "node"],
        klass: "SlowJob",
        jid,
      },
    ]);
    expect(await sk.ruby<number>(`Sidekiq::WorkSet.new.size`)).toBe(1);
  });

  it("Process#quiet! and #stop! reach onSignal within one beat", async () => {
    await sk.ruby(`Sidekiq::ProcessSet.new.find { |x| x.identity == ${rubyId} }.quiet!`);
    await hb.beat();
    expect(signals).toEqual(["TSTP"]);
    await hb.beat(); // writes quiet "true" now that onSignal set it
    expect(await sk.ruby<boolean>(`Sidekiq::ProcessSet.new.find { |x| x.identity == ${rubyId} }.stopping?`)).toBe(true);
    await sk.ruby(`Sidekiq::ProcessSet.new.find { |x| x.identity == ${rubyId} }.stop!`);
    await hb.beat();
    expect(signals).toEqual(["TSTP", "TERM"]);
    await sk.ruby(`Sidekiq::ProcessSet.new.find { |x| x.identity == ${rubyId} }.dump_threads`);
    await hb.beat();
    expect(signals).toEqual(["TSTP", "TERM", "TTIN"]);
    quiet = false;
    await hb.beat();
  });

  it("Stats counts what Stats flushed; Metrics::Query shows the class (7+)", async () => {
    stats.record("NodeJob", 15, true);
    stats.record("NodeJob", 300, true);
    stats.record("NodeJob", 40, false);
    stats.record("OtherNodeJob", 5, true);
    await hb.beat();
    const got = await sk.ruby<{
      processed: number;
      failed: number;
      today: Record<string, number>;
      top?: Record<string, Record<string, number>>;
      hist?: number[];
    }>(`
      s = Sidekiq::Stats.new
      out = {"processed" => s.processed, "failed" => s.failed,
             "today" => Sidekiq::Stats::History.new(1).processed}
      if Bridge::SIDEKIQ_7
        require "sidekiq/metrics/query"
        q = Sidekiq::Metrics::Query.new
        top = q.top_jobs
        out["top"] = top.job_results.transform_values { |r| r.totals.slice("p", "f", "ms") }
        out["hist"] = q.for_job("NodeJob").job_results["NodeJob"].hist.values.reduce { |a, b| a.zip(b).map(&:sum) }
      end
      out
    `);
    expect(got.processed).toBe(4);
    expect(got.failed).toBe(1);
    expect(Object.values(got.today)).toEqual([4]);
    if (metrics) {
      expect(got.top).toEqual({ NodeJob: { p: 3, f: 1, ms: 315 }, OtherNodeJob: { p: 1, ms: 5 } });
      // Histogram (reversed by Query: index 25 - bucket): 15 ms -> bucket 0, 300 ms -> bucket 7.
      const hist = got.hist!;
      expect(hist.reduce((a, b) => a + b, 0)).toBe(2);
      expect(hist[25]).toBe(1);
      expect(hist[25 - 7]).toBe(1);
    }
  });

  it(
    "the real Web UI renders /busy with the Node process and its job" + (metrics ? ", and /metrics" : ""),
    async () => {
      const pages = await sk.ruby<Record<string, { status: number; body: string }>>(`
      require "sidekiq/web"
      require "rack/mock"
      app = Sidekiq::Web.new
      paths = ["/busy"] + (Bridge::SIDEKIQ_7 ? ["/metrics"] : [])
      paths.to_h { |path|
        res = Rack::MockRequest.new(app).get(path, "rack.session" => {})
        [path, {"status" => res.status, "body" => res.body}]
      }
    `);
      const busy = pages["/busy"]!;
      expect(busy.status, busy.body.slice(0, 2000)).toBe(200);
      expect(busy.body).toContain(`${HOST}:${process.pid}`);
      expect(busy.body).toContain(BRIDGE_LABEL);
      expect(busy.body).toContain("bridge-tag");
      expect(busy.body).toContain("SlowJob");
      expect(busy.body).toContain(jid);
      if (sk.target.dialect >= 7) expect(busy.body).toContain(bridgeVersionString(profile)); // shown: differs from the UI's own
      if (metrics) {
        const m = pages["/metrics"]!;
        expect(m.status, m.body.slice(0, 2000)).toBe(200);
        expect(m.body).toContain("NodeJob");
      }
    },
  );

  it("after clear(), ProcessSet drops the process and its work is gone", async () => {
    await hb.stop();
    await hb.clear();
    const after = await sk.ruby<{ size: number; ids: string[]; works: number }>(`
      ps = Sidekiq::ProcessSet.new
      {"size" => ps.size, "ids" => ps.map(&:identity), "works" => Sidekiq::WorkSet.new.count}
    `);
    expect(after).toEqual({ size: 0, ids: [], works: 0 });
    expect(await sk.redis.exists(`${identity}:work`, `${identity}:workers`)).toBe(0);
    expect(await sk.redis.sismember("processes", identity)).toBe(0);
    // The hash itself is left to expire, as Ruby leaves it.
    expect(await sk.redis.ttl(identity)).toBeGreaterThan(0);
  });
});

// A fleet whose oldest reader is 6.4.1 makes Node write the 6.4.1 profile; newer
// readers in the same fleet look only at `<id>:work`, which is why that profile
// writes `<id>:workers` and `<id>:work` both (see heartbeat.ts).
describeEachSidekiq(
  "server heartbeat: a 6.4.1-profile Node process seen by a newer release",
  (sk) => {
    it("WorkSet shows its job, /busy renders it, and clear() removes both work keys", async () => {
      const identity = newIdentity(HOST);
      const jid = await sk.ruby<string>(`Sidekiq::Client.push("class" => "SlowJob", "args" => [1], "queue" => "oldq")`);
      const raw = (await sk.redis.rpop("queue:oldq"))!;
      const hb = new Heartbeat({
        redis: sk.redis,
        profile: profileForVersion("6.4.1"),
        identity,
        capsules: [{ name: "default", concurrency: 2, mode: "strict", weights: { oldq: 0 } }],
        work: () => [{ tid: "old1", queue: "oldq", payload: raw, runAt: intSeconds(nowMs()) }],
        stats: new ExecutionStats(),
        onSignal: () => {},
        quiet: () => false,
      });
      await hb.beat();
      const seen = await sk.ruby<{ jids: string[]; busy: number; status: number; body: string }>(`
        require "sidekiq/web"
        require "rack/mock"
        res = Rack::MockRequest.new(Sidekiq::Web.new).get("/busy", "rack.session" => {})
        {"jids" => Sidekiq::WorkSet.new.map { |_, _, w| w.job.jid }, "busy" => Sidekiq::WorkSet.new.size,
         "status" => res.status, "body" => res.body}
      `);
      expect(seen.jids).toEqual([jid]);
      expect(seen.busy).toBe(1);
      expect(seen.status, seen.body.slice(0, 2000)).toBe(200);
      expect(seen.body).toContain(jid);
      await hb.clear();
      expect(await sk.redis.exists(`${identity}:work`, `${identity}:workers`)).toBe(0);
    });
  },
  (t) => t.dialect >= 7,
);
