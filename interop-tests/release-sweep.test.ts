// The release sweep: every release of harness/versions.ts SWEEP (Debian's
// three and seven upstream ones, run from their own sources) beside Node,
// both directions, each behaviour read through that release's own code. A
// few Ruby processes per release: one `sidekiq` server and a handful of evals
// that batch their checks (harness/README.md, "The release sweep").
import { afterAll, beforeAll, expect } from "vitest";
import { Client } from "../src/core/client/client.js";
import { Worker } from "../src/assembly/worker.js";
import { SidekiqApi } from "../src/core/api/sidekiq-api.js";
import { describeError } from "../src/core/server/types.js";
import { releaseRules, versionAtLeast } from "../src/core/wire/index.js";
import type { SidekiqProcess } from "../harness/backend.js";
import { sweepTargets } from "../harness/versions.js";
import { supportResults } from "./support/support-results.js";
import { beatNow, describeEachRelease, selected, waitFor } from "./support/harness.js";
import { hooks, iterated, nodeTwin } from "./support/iterable-twin.js";
import {
  failureCases,
  nodeFailures,
  nodeRulesView,
  payloadOf,
  sameLatency,
  sidekiqmonBlock,
  sweepIt,
  type FailureSeen,
  type HeartbeatView,
  type RulesView,
} from "./support/release-sweep.js";

const LOAD = `require File.join(File.dirname($0), "lib/sweep")`;

interface Ran {
  jid: string;
  args_json?: string;
  args_typed?: unknown;
  class?: string;
}

const targets = sweepTargets(selected());
const record = supportResults(
  "sweep",
  targets.map((t) => t.version),
);

describeEachRelease("release sweep", targets, (sk) => {
  const version = sk.target.version;
  const rules = releaseRules(version);
  const nodeFailure = new Error("sweep node failure é");
  nodeFailure.name = "TypeError";
  let w: Worker;
  let server: SidekiqProcess;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));

  const ranBy = async (list: string, jids: readonly string[]): Promise<Map<string, Ran>> =>
    waitFor(`${jids.length} jobs in ${list}`, async () => {
      const all = (await sk.redis.lrange(list, 0, -1)).map((s) => JSON.parse(s) as Ran);
      const m = new Map(all.filter((r) => jids.includes(r.jid)).map((r) => [r.jid, r]));
      return m.size === jids.length ? m : undefined;
    });

  beforeAll(async () => {
    server = await sk.startSidekiq({ queues: ["sweep-r"], concurrency: 4 });
    w = new Worker({
      redis: sk.url,
      dialect: version,
      queues: ["sweep-n"],
      concurrency: 4,
      pollIntervalAverage: 1,
      timeout: 5,
      tag: "sweep",
    });
    const rec = sk.newRedis();
    w.register("RecordJob", async (_args, ctx) => {
      await rec.lpush("node:ran", JSON.stringify({ jid: ctx.jid, args_json: ctx.record.raw("args") }));
    });
    w.registerActiveJob("AjRecordJob", async (args, ctx) => {
      await rec.lpush("node:ran", JSON.stringify({ jid: ctx.jid, args_json: JSON.stringify(args) }));
    });
    w.register("SlowNode", () => gate);
    w.registerIterable("BridgeIterableJob", nodeTwin(sk));
    w.register("FailNode", () => {
      throw nodeFailure;
    });
    await w.start();
  });
  afterAll(async () => {
    release();
    await w.stop();
  });

  sweepIt(record, version, "loads", async () => {
    const seen = await sk.ruby<{ version: string; path: string; servers: string[] }>(`
      Bridge.wait_for("the Ruby server's heartbeat") { Sidekiq::ProcessSet.new.any? { |p| p["tag"] != "sweep" } }
      {"version" => Sidekiq::VERSION, "path" => $LOADED_FEATURES.grep(%r{/sidekiq\\.rb\\z}).first,
       "servers" => Sidekiq::ProcessSet.new.reject { |p| p["tag"] == "sweep" }.map { |p| p["version"] }}
    `);
    expect(seen.version).toBe(version);
    // 6.x heartbeats carry no version; release_check.rb says it in the server's log.
    expect(seen.servers).toEqual([versionAtLeast(version, "7.0.0") ? version : null]);
    if (sk.target.release) {
      const own = `/releases/${sk.target.release}/lib/sidekiq.rb`;
      expect(seen.path).toContain(own);
      expect(server.log()).toMatch(new RegExp(`harness: Sidekiq ${version.replaceAll(".", "\\.")} from \\S*${own}`));
    } else expect(seen.path).toContain(`/gems/sidekiq-${version}/lib/sidekiq.rb`);
  });

  sweepIt(record, version, "nodeToRuby", async () => {
    const c = new Client({ redis: sk.url, dialect: version });
    try {
      const job = c.job("RecordJob", { queue: "sweep-r" });
      const args = [18446744073709551617n, 1.5, "é\u2028", { a: [null, true] }];
      const jids = [(await job.performAsync(...args))!, (await job.performIn(1, "later"))!];
      jids.push(...(await c.pushBulk({ class: "RecordJob", queue: "sweep-r", args: [[1], [2]] })).map((j) => j!));
      const aj = await c.activeJob("AjRecordJob", { queue: "sweep-r" }).performLater(7, "s");
      const ran = await ranBy("bridge:received", [...jids, aj.jid!]);
      expect(jids.map((j) => ran.get(j)!.args_json)).toEqual([
        '[18446744073709551617,1.5,"é\u2028",{"a":[null,true]}]',
        '["later"]',
        "[1]",
        "[2]",
      ]);
      expect(ran.get(aj.jid!)).toMatchObject({
        class: "AjRecordJob",
        args_typed: { Array: [{ Integer: "7" }, { String: '"s"' }] },
      });
      // The wrapper class this release's own adapter writes (Rails' before 7.3.3, Sidekiq's after).
      const wrapper = await sk.ruby<string>(
        `AjRecordJob.set(queue: "sweep-probe").perform_later(1); JSON.parse(Bridge.redis { |r| r.rpop("queue:sweep-probe") })["class"]`,
      );
      expect(wrapper).toBe(rules.activeJob.wrapperClass);
      expect((await c.activeJob("AjRecordJob", { queue: "sweep-probe" }).performLater(1)).jid).toBeTruthy();
      expect(JSON.parse((await sk.redis.rpop("queue:sweep-probe"))!).class).toBe(wrapper);
    } finally {
      await c.close();
    }
  });

  sweepIt(record, version, "rubyToNode", async () => {
    const pushed = await sk.ruby<{ jids: string[]; aj: string }>(`
      j = RecordJob.set(queue: "sweep-n")
      jids = [j.perform_async(2**64 + 1, 1.5, "é", {"a" => [nil, true]}), j.perform_in(1, "later")]
      jids += Sidekiq::Client.push_bulk("class" => "RecordJob", "queue" => "sweep-n", "args" => [[1], [2]])
      aj = AjRecordJob.set(queue: "sweep-n").perform_later(7, "s", {"k" => [1, nil]})
      {"jids" => jids, "aj" => aj.provider_job_id}
    `);
    const ran = await ranBy("node:ran", [...pushed.jids, pushed.aj]);
    expect(pushed.jids.map((j) => ran.get(j)!.args_json)).toEqual([
      '[18446744073709551617,1.5,"é",{"a":[null,true]}]',
      '["later"]',
      "[1]",
      "[2]",
    ]);
    expect(JSON.parse(ran.get(pushed.aj)!.args_json!)).toEqual([7, "s", { k: [1, null] }]);
  });

  sweepIt(record, version, "failureRead", async () => {
    const jid = await sk.ruby<string>(
      `Sidekiq::Client.push("class" => "FailNode", "queue" => "sweep-n", "args" => [1, "x"], "retry" => 3, "backtrace" => true)`,
    );
    await waitFor(
      "Node to fail the job into the retry set",
      async () => (await sk.redis.zrange("retry", 0, -1)).some((m) => m.includes(jid)) || undefined,
    );
    const view = await sk.ruby<Record<string, unknown>>(`${LOAD}\nSweep.retry_view(${JSON.stringify(jid)})`);
    expect(view).toMatchObject({
      count: 0,
      errorClass: "TypeError",
      message: "sweep node failure é",
      failedAtClass: rules.payload.time === "millis" ? "Integer" : "Float",
      queue: "sweep-n",
      args: '[1,"x"]',
      backtrace: describeError(nodeFailure).backtrace,
      // Base64.encode64 (a newline every 60 characters) before 7.2.1, strict after.
      rawBacktraceHasNewline: rules.payload.backtraceBase64 === "mime",
    });
    const page = await sk.ruby<{ status: number; body: string }>(`
      require "sidekiq/web"
      require "rack/mock"
      res = Rack::MockRequest.new(Sidekiq::Web.new).get("/retries", "rack.session" => {})
      {"status" => res.status, "body" => res.body}
    `);
    expect(page.status, page.body.slice(0, 1500)).toBe(200);
    expect(page.body).toContain("sweep node failure");
  });

  sweepIt(record, version, "failureRoutes", async () => {
    const cases = failureCases(version);
    const node = await nodeFailures(sk.redis, version, cases, (c) => `node-${c.name}`);
    const input = cases.map((c) => ({ name: c.name, payload: payloadOf(c, `ruby-${c.name}`) }));
    const ruby = await sk.ruby<Record<string, FailureSeen>>(
      `${LOAD}\nSweep.fail_cases(JSON.parse(${JSON.stringify(JSON.stringify(input))}))`,
    );
    for (const c of cases) {
      const r = ruby[c.name]!;
      const n = node[c.name]!;
      expect({ ...n, delay: null }, c.name).toEqual({ ...r, delay: null });
      if (r.delay !== null) expect(Math.abs(n.delay! - r.delay), `${c.name} delay`).toBeLessThan(1);
    }
    // The rules, as this release's own code just showed them.
    const jitterMax = rules.retry.jitter === "rand(10*(count+1))" ? 49 : 45;
    expect(ruby.jitter!.delay).toBeCloseTo(4 ** 4 + 15 + jitterMax, 0);
    expect(ruby.retryForPast!.outcome).toBe(rules.retry.retryFor === "ignored" ? "retry" : "dead");
    expect(ruby.retryForCountUsed!.outcome).toBe(rules.retry.retryFor === "instead-of-count" ? "retry" : "dead");
    expect(ruby.exhaustedDiscard!.outcome).toBe(rules.retry.exhaustedDiscard ? "discarded" : "dead");
    expect(ruby.discardIn!.outcome).toBe(rules.retry.retryIn === "to_i" ? "retry" : "discarded");
    expect(ruby.discardIn!.death).toBe(rules.retry.discardRunsDeathHandlers);
    expect(ruby.discardIn!.discardedAt).toBe(rules.retry.discardedAt);
    // 6.5.2-7.0.6: a Float answer falls back to the default (15 + the jitter, 9); otherwise 30 + 9.
    expect(ruby.floatDelay!.delay).toBeCloseTo(rules.retry.retryIn === "strategy" ? 24 : 39, 0);
  });

  sweepIt(record, version, "stats", async () => {
    await beatNow(w);
    const c = new Client({ redis: sk.url, dialect: version });
    await c.job("RecordJob", { queue: "sweep-idle" }).performAsync(1);
    await c.close();
    const api = new SidekiqApi({ redis: sk.url, apiVersion: version });
    const seen = await sk.ruby<{
      processed: number;
      failed: number;
      today: number;
      top: string[] | null;
      latency: number;
    }>(`
      require "sidekiq/metrics/query" if Bridge::SIDEKIQ_7
      s = Sidekiq::Stats.new
      h = Sidekiq::Stats::History.new(1)
      top = Bridge::SIDEKIQ_7 ? Sidekiq::Metrics::Query.new.top_jobs(minutes: 60).job_results.keys : nil
      {"processed" => s.processed, "failed" => s.failed, "today" => h.processed.values.sum, "top" => top,
       "latency" => Sidekiq::Queue.new("sweep-idle").latency}
    `);
    expect(seen.processed).toBeGreaterThanOrEqual(6);
    expect(seen.failed).toBeGreaterThanOrEqual(1);
    expect(seen.today).toBeGreaterThanOrEqual(6);
    if (rules.metrics.enabled) expect(seen.top).toEqual(expect.arrayContaining(["RecordJob", "FailNode"]));
    else expect(seen.top).toBeNull();
    expect(seen.latency).toBeGreaterThan(0);
    expect(Math.abs((await api.queue("sweep-idle").latency()) - seen.latency)).toBeLessThan(1);
    await api.close();
  });

  sweepIt(record, version, "deadSetKill", async () => {
    const api = new SidekiqApi({ redis: sk.url, apiVersion: version, deadMaxJobs: 3 });
    await sk.redis.del("dead");
    for (let i = 0; i < 4; i++) await api.dead.killMessage(JSON.stringify({ class: "X", jid: `n${i}`, args: [] }));
    const nodeSize = await sk.redis.zcard("dead");
    await api.close();
    const rubySize = await sk.ruby<number>(`
      ${LOAD}
      Bridge.set_option(:dead_max_jobs, 3)
      Sidekiq::DeadSet.new.clear
      4.times { |i| Sidekiq::DeadSet.new.kill(JSON.generate({"class" => "X", "jid" => "r#{i}", "args" => []}), notify_failure: false) }
      Sidekiq::DeadSet.new.size
    `);
    expect(nodeSize).toBe(rubySize);
    // ZREMRANGEBYRANK dead 0 -3 keeps 2; 7.0.0-7.3.4 trim by the default 10,000 instead.
    expect(rubySize).toBe(rules.api.deadSetKillLimits === "configured" ? 2 : 4);
  });

  sweepIt(record, version, "rules", async () => {
    const { view, laterJid } = await nodeRulesView(sk.redis, sk.url, version);
    const ruby = await sk.ruby<RulesView>(`${LOAD}\nSweep.rules_view(${JSON.stringify(laterJid)})`);
    expect(sameLatency(view, ruby), JSON.stringify([view, ruby])).toBe(true);
    expect({ ...view, latencyNoEnqueued: 0, latencyWindow: [] }).toEqual({
      cleanupLock: ruby.cleanupLock,
      latencyNoEnqueued: 0,
      latencyWindow: [],
      strictArgs: ruby.strictArgs,
      pollInterval12: ruby.pollInterval12,
    });
    const [rubyKeeps, nodeKeeps] = ruby.scheduledKeepsEnqueuedAt;
    expect(nodeKeeps).toBe(rubyKeeps);
    // And what release-rules.ts says of this release.
    expect(ruby).toMatchObject({
      cleanupLock: rules.api.processCleanupLock,
      strictArgs: rules.client.strictArgs === "raise" ? "raised" : "pushed",
      // 12 processes, rand 0.5, interval 12 * 5 s: 30 s, or 60 s from 8.0.10.
      pollInterval12: rules.scheduled.largeFleetPollInterval === "interval*rand*2" ? 60 : 30,
      scheduledKeepsEnqueuedAt: [!rules.client.scheduledDropsEnqueuedAt, !rules.client.scheduledDropsEnqueuedAt],
    });
    // A job with only created_at: 0 before 8.1.1, its age after.
    if (rules.api.latency === "enqueued-or-created-typed") expect(ruby.latencyNoEnqueued).toBeGreaterThan(29);
    else expect(ruby.latencyNoEnqueued).toBe(0);
  });

  // Declared only where IterableJob exists (support-matrix.ts: since 7.3.0).
  sweepIt(record, version, "iterable", async () => {
    const jid = await sk.ruby<string>(
      `require File.join(File.dirname($0), "lib/iterable_jobs"); BridgeIterableJob.set(queue: "sweep-n").perform_async(2000, 10)`,
    );
    // Node flushes its state every 5 s, as Ruby does, and reads `cancelled` then.
    await waitFor(
      "Node's first state flush",
      async () => (await sk.redis.hexists(`it-${jid}`, "c")) === 1 || undefined,
    );
    const seen = await sk.ruby<{ cursor: unknown; executions: number; canCancel: boolean }>(
      `${LOAD}\nSweep.iteration_view(${JSON.stringify(jid)})`,
    );
    expect(typeof seen.cursor).toBe("number");
    expect(seen.executions).toBe(1);
    expect(seen.canCancel).toBe(rules.iteration.cancellation);
    // 7.3.2 has no cancel!: the iteration runs on, and the worker's stop interrupts it.
    if (!rules.iteration.cancellation) return;
    await waitFor("the iteration to end", async () => (await hooks(sk, jid)).includes("node:complete:1") || undefined);
    expect(await hooks(sk, jid)).toEqual(["node:start:1", "node:cancel:1", "node:stop:1", "node:complete:1"]);
    const items = await iterated(sk, jid);
    expect(items).toEqual(Array.from({ length: items.length }, (_, i) => `node:${i}`));
    expect(items.length).toBeGreaterThan(seen.cursor as number);
    expect(items.length).toBeLessThan(2000);
  });

  sweepIt(record, version, "heartbeat", async () => {
    const jid = await sk.ruby<string>(
      `Sidekiq::Client.push("class" => "SlowNode", "queue" => "sweep-n", "args" => [1])`,
    );
    await waitFor("the slow job to start in Node", async () => w.dump().length === 1 || undefined);
    await beatNow(w);
    const seen = await sk.ruby<HeartbeatView>(`${LOAD}\nSweep.heartbeat_view("sweep")`);
    release();
    expect(seen.busy, seen.body.slice(0, 1500)).toBe(200);
    expect(seen.body).toContain(w.identity.split(":")[0]);
    expect(seen.work).toEqual([jid]);
    expect(seen.node).toMatchObject({ identity: w.identity, concurrency: 4, queues: ["sweep-n"], busy: 1 });
    // This release's own bin/sidekiqmon, while Node's job runs: identity and tag, threads and busy, queues.
    const mon = sidekiqmonBlock(seen.sidekiqmon, w.identity);
    expect(mon, seen.sidekiqmon).toBeDefined();
    // tags_for: the tag, then the labels (the bridge names itself in one).
    expect(mon![0]).toBe(`${w.identity} [${["sweep", ...(seen.node.labels as string[])].join("] [")}]`);
    expect(mon![0]).toContain("[sidekiq-bridge]");
    expect(mon).toContain("  Threads: 4 (1 busy)");
    expect(mon).toContain("   Queues: sweep-n");
    // The Node process writes the fields this release's own process writes, in the
    // same places (hash field or info); and `version` where 6.x writes none
    // (src/core/server/process-info.ts: it names the bridge), and the 8.1.2 `concurrency`
    // field in every profile (src/core/server/heartbeat.ts: older readers ignore it).
    const extra = versionAtLeast(version, "7.0.0") ? [] : ["version"];
    const field = rules.launcher.concurrencyField ? [] : ["concurrency"];
    expect(Object.keys(seen.node).sort()).toEqual([...Object.keys(seen.ruby), ...extra].sort());
    expect(seen.nodeRaw).toEqual({
      fields: [...seen.rubyRaw.fields, ...field].sort(),
      info: [...seen.rubyRaw.info, ...extra].sort(),
    });
    expect(seen.nodeRaw.info.includes("concurrency")).toBe(!rules.launcher.concurrencyField);
    expect(seen.nodeRaw.info.includes("capsules")).toBe(rules.launcher.capsules);
    expect(seen.nodeRaw.info.includes("weights")).toBe(rules.launcher.weights !== "none");
    expect(seen.nodeRaw.info.includes("embedded")).toBe(rules.launcher.embedded);
    await waitFor("the slow job to finish", async () => w.dump().length === 0 || undefined);
    await sk.ruby(`Sidekiq::ProcessSet.new.find { |p| p.identity == ${JSON.stringify(w.identity)} }.quiet!`);
    await beatNow(w);
    await waitFor("Node to go quiet", async () => w.quiet || undefined);
    await sk.ruby(`Sidekiq::ProcessSet.new.find { |p| p.identity == ${JSON.stringify(w.identity)} }.stop!`);
    await beatNow(w).catch(() => {});
    await waitFor("Node to leave the process set", async () =>
      (await sk.redis.sismember("processes", w.identity)) === 0 ? true : undefined,
    );
  });
});
