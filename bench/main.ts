// npm run bench: sidekiq-bridge against Ruby Sidekiq 8.1.7, BullMQ and the
// redis-benchmark ceiling, each system on a fresh Redis pinned to CPU 0 with
// its processes on CPU 1. Prints a table and writes bench/results/latest.json
// and latest.md. Method: bench/README.md. Settings: bench/config.ts.
import { Redis } from "ioredis";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ensureDebianPackages } from "../harness/prepare.js";
import { startRedis, type RedisServer } from "../harness/redis-server.js";
import { Client } from "../src/core/client/client.js";
import { loadConfig } from "./config.js";
import { Child } from "./lib/child.js";
import { AUX_CPU, canPin, pinPid, placement, REDIS_CPU } from "./lib/cpu.js";
import { ceilingScenario, redisBenchmarkVersion } from "./scenarios/ceiling.js";
import { runPlan, type Figure, type ScenarioContext, type Session } from "./scenarios/context.js";
import { drainFigures } from "./scenarios/drain.js";
import { enqueueFigures } from "./scenarios/enqueue.js";
import { latencyFigures } from "./scenarios/latency.js";
import { scheduledFigures } from "./scenarios/scheduled.js";
import { environment } from "./report/environment.js";
import { toJson } from "./report/json.js";
import { toMarkdown } from "./report/markdown.js";
import { metricDefs, Results } from "./report/model.js";
import { renderTable } from "./report/table.js";
import { judgeTargets } from "./report/targets.js";
import { BRIDGE_VARIANTS, BridgeSystem } from "./systems/bridge.js";
import { BullMQSystem } from "./systems/bullmq.js";
import { RubySystem } from "./systems/ruby.js";
import type { BenchRedis, SystemUnderTest } from "./systems/types.js";
import { summarize } from "./measure/summary.js";
import { measureRssFloor, type RssFloor } from "./measure/rss-floor.js";
import { BENCH_DIR, REPO_ROOT } from "./lib/build.js";
import { WORKER_NODE_FLAGS } from "../src/tools/cli/node-flags.js";

const cfg = loadConfig();
const started = Date.now();
const say = (m: string) =>
  process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${m}\n`);
// Node's version moves the figures: said first and with the table (scripts/node24 runs it on Node 24).
say(`Node ${process.version} (${process.execPath})`);

const FIGURES: Figure[] = [enqueueFigures(cfg), drainFigures(cfg), latencyFigures(cfg), scheduledFigures(cfg)]
  .flat()
  .filter((f) => cfg.scenarios.has(f.scenario));

const all: SystemUnderTest[] = [
  ...BRIDGE_VARIANTS.map((v) => new BridgeSystem(v)),
  new RubySystem("8.1.7"),
  new BullMQSystem(),
];
/** BENCH_SYSTEMS: ids ("bridge", "bridge-reliable", "ruby", "bullmq", "ceiling"), or a prefix with "*" ("bridge*": every bridge variant). */
const wanted = (id: string) =>
  cfg.systems === "all" || cfg.systems.some((t) => (t.endsWith("*") ? id.startsWith(t.slice(0, -1)) : t === id));
for (const name of cfg.systems === "all" ? [] : cfg.systems) {
  const ids = [...all.map((s) => s.id), "ceiling"];
  if (!ids.some((id) => (name.endsWith("*") ? id.startsWith(name.slice(0, -1)) : id === name))) {
    throw new Error(`BENCH_SYSTEMS: "${name}" names no system (${ids.join(", ")}; a trailing * matches a prefix)`);
  }
}
const systems = all.filter((s) => wanted(s.id));
const withCeiling = wanted("ceiling") && cfg.scenarios.has("ceiling");

// Emergency stop: everything we started, by pid.
const cleanups: Array<() => Promise<void> | void> = [];
let stopping = false;
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    say(`${sig}: stopping what the harness started`);
    for (const c of Child.live) c.kill();
    // async: a cleanup that throws is one settled result, not the end of the others and of the exit.
    void Promise.allSettled(cleanups.reverse().map(async (f) => f())).then(() => process.exit(130));
  });
}

/** A fresh redis-server pinned to the Redis CPU, stopped by its pid at the end. */
async function startBenchRedis(): Promise<BenchRedis & { stop(): Promise<void> }> {
  const server: RedisServer = await startRedis({ databases: 16 });
  let stopped = false;
  const redis = new Redis(server.url, { maxRetriesPerRequest: 3 });
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    redis.disconnect();
    await server.stop();
  };
  cleanups.push(stop);
  pinPid(server.pid, REDIS_CPU);
  return { url: server.url, pid: server.pid, redis, stop };
}

async function withRedis<T>(fn: (r: BenchRedis) => Promise<T>): Promise<T> {
  const r = await startBenchRedis();
  try {
    return await fn(r);
  } finally {
    await r.stop();
  }
}

/** A real job payload (what the drains move), sized for redis-benchmark. */
async function samplePayload(r: BenchRedis): Promise<string> {
  const client = new Client({ redis: r.url, dialect: "8.1.7", validate: false });
  try {
    await client.job<[number]>("BenchNoopJob", { queue: "bench" }).performAsync(12345);
    return (await r.redis.rpop("queue:bench")) ?? "";
  } finally {
    await client.close();
  }
}

async function main(): Promise<number> {
  ensureDebianPackages({ "redis-server": "redis-server", "redis-benchmark": "redis-tools" });
  pinPid(process.pid, AUX_CPU);
  const results = new Results();
  const defs = metricDefs(cfg.counts);
  say(
    `${cfg.quick ? "quick smoke run" : "full run"}: ${systems.map((s) => s.id).join(", ")}${withCeiling ? ", ceiling" : ""}; ${cfg.warmups} warm-up + ${cfg.runs} run(s); ${placement()}`,
  );

  let rbVersion: string | undefined;
  if (withCeiling) {
    rbVersion = await redisBenchmarkVersion();
    results.systems.push({
      id: "ceiling",
      label: "redis-benchmark",
      ours: false,
      description: `${rbVersion || "redis-benchmark"}: LPUSH and BRPOP of a ${"real job payload"} on a fresh Redis`,
    });
    say("ceiling: redis-benchmark");
    try {
      await withRedis(async (r) =>
        ceilingScenario(cfg, r, results, await samplePayload(r), (m) => say(`ceiling ${m}`)),
      );
    } catch (e) {
      results.errors.push({ system: "ceiling", scenario: "ceiling", message: (e as Error).message });
      say(`ceiling failed: ${(e as Error).message}`);
    }
  }

  // Every system gets its own fresh Redis for the whole run, flushed before each figure.
  const ready: Array<{ system: SystemUnderTest; ctx: ScenarioContext }> = [];
  for (const system of systems) {
    say(`${system.id}: setting up`);
    try {
      await system.setup();
      cleanups.push(() => system.teardown());
      const r = await startBenchRedis();
      const ctx: ScenarioContext = {
        cfg,
        system,
        r,
        family: system.family(r),
        results,
        log: (m) => say(`${system.id} ${m}`),
      };
      ready.push({ system, ctx });
      results.systems.push({
        id: system.id,
        label: system.label,
        ours: system.ours,
        ...(system.basicFetch ? { basicFetch: true } : {}),
        description: system.describe(),
      });
    } catch (e) {
      results.errors.push({ system: system.id, scenario: "setup", message: (e as Error).message });
      say(`${system.id}: setup failed: ${(e as Error).message}`);
    }
  }

  // Each figure: open it for every system, then run 1 of each system, run 2 of each, ...
  for (const figure of FIGURES) {
    const open: Array<{ ctx: ScenarioContext; session: Session }> = [];
    const fail = (ctx: ScenarioContext, e: unknown) => {
      results.errors.push({ system: ctx.system.id, scenario: figure.name, message: (e as Error).message });
      say(`${ctx.system.id} ${figure.name} failed: ${(e as Error).message}`);
    };
    for (const { system, ctx } of ready) {
      if (system.skip?.includes(figure.scenario)) continue;
      try {
        await ctx.r.redis.flushall();
        say(`${system.id}: ${figure.name}`);
        open.push({ ctx, session: await figure.open(ctx) });
      } catch (e) {
        fail(ctx, e);
      }
    }
    for (const p of runPlan(cfg)) {
      for (const o of [...open]) {
        try {
          await o.session.run(p);
        } catch (e) {
          fail(o.ctx, e);
          open.splice(open.indexOf(o), 1);
          await o.session.close().catch(() => undefined);
        }
      }
    }
    for (const o of open) await o.session.close().catch((e: Error) => fail(o.ctx, e));
  }

  for (const { system, ctx } of ready) {
    await ctx.family.close().catch(() => undefined);
    await (ctx.r as BenchRedis & { stop(): Promise<void> }).stop();
    await system.teardown();
  }

  const foreign = [...(results.runs.get("foreign")?.values() ?? [])].flat().map((r) => r.value);
  if (foreign.length) {
    const { median, max } = summarize(foreign);
    results.notes.push(
      `Other processes used a median ${median.toFixed(0)}% (max ${max.toFixed(0)}%) of the machine's CPUs during the measured windows` +
        (median > 10
          ? ": the machine was shared while this ran, so absolute figures are low and noisy; the ratios (runs interleaved) hold up better."
          : "."),
    );
  }
  if (!canPin()) results.notes.push("Processes were not pinned to CPUs (taskset missing or fewer than 2 CPUs).");

  const elapsed = (Date.now() - started) / 1000;
  const env = environment(rbVersion);
  // What of the peak RSS figures node and ioredis take before any of our code
  // runs: with the worker's flags, and with none (the enqueuing client's).
  let floor: RssFloor | undefined;
  const ours = (metric: string) => results.systems.some((s) => s.ours && results.median(s.id, metric) !== undefined);
  const floors: Array<[string, readonly string[]]> = [
    ...(ours("rss.drain.c10")
      ? [[`the worker's flags (${WORKER_NODE_FLAGS.join(" ")})`, WORKER_NODE_FLAGS] as [string, readonly string[]]]
      : []),
    ...(ours("rss.enqueue") ? [["no flags (as the enqueuing client runs)", []] as [string, readonly string[]]] : []),
  ];
  for (const [label, flags] of floors) {
    try {
      const f = await measureRssFloor(flags, REPO_ROOT);
      if (flags === WORKER_NODE_FLAGS) floor = f;
      results.notes.push(
        `Peak RSS floor with ${label}: node alone ${f.nodeMiB.toFixed(1)} MB, node with ioredis required ${f.ioredisMiB.toFixed(1)} MB, an empty event loop with ioredis connected ${f.connectedMiB.toFixed(1)} MB.`,
      );
    } catch (e) {
      results.notes.push(
        `The RSS floor (node alone, node with ioredis) could not be measured: ${(e as Error).message}`,
      );
    }
  }
  const targets = judgeTargets(results, floor);
  console.log(`\nOn Node ${env.node}:\n${renderTable(results, defs)}\n`);
  if (targets.length) {
    console.log("Targets (medians):");
    for (const t of targets)
      console.log(
        `  ${t.status === "met" ? "met   " : t.status === "missed" ? "MISSED" : "n/a   "} ${t.system}: ${t.target} — ${t.detail}`,
      );
  }
  mkdirSync(cfg.outDir, { recursive: true });
  const json = join(cfg.outDir, `${cfg.outName}.json`);
  const md = join(cfg.outDir, `${cfg.outName}.md`);
  writeFileSync(json, `${JSON.stringify(toJson(results, defs, cfg, env, targets, elapsed), null, 2)}\n`);
  const readme = relative(cfg.outDir, join(BENCH_DIR, "README.md"));
  writeFileSync(md, toMarkdown(results, defs, cfg, env, targets, elapsed, readme));
  console.log(`\nWrote ${json} and ${md} (${Math.round(elapsed)} s).`);
  if (results.errors.length) {
    console.error(`${results.errors.length} scenario(s) failed:`);
    for (const e of results.errors) console.error(`  ${e.system} / ${e.scenario}: ${e.message}`);
    return 1;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: Error) => {
    console.error(e.stack ?? e.message);
    for (const c of Child.live) c.kill();
    void Promise.allSettled(cleanups.map(async (f) => f())).then(() => process.exit(1));
  },
);
