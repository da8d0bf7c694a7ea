// npm run chaos: the fault scenarios, one after the other, with a table of
// what happened to every job. Needs root (Ruby's comparison runs in the forky
// root filesystem) and Debian's redis-server.
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { installFixtures, LocalBackend, removeFixtures } from "../harness/local-backend.js";
import { ensureDebianPackages, prepareRootfs } from "../harness/prepare.js";
import { selectedTargets } from "../harness/versions.js";
import {
  buildCli,
  kill9Node,
  kill9Ruby,
  redisFreeze,
  redisRestart,
  sentinelFailover,
  type ScenarioResult,
} from "./scenarios.js";
import { termWithoutRedis } from "./shutdown-scenarios.js";
import {
  clientThroughBlackhole,
  scheduledThroughBlackhole,
  workerThroughFault,
  workerUnderLatency,
} from "./network-scenarios.js";
import { cronClaimKill, schedulerClaimBlackhole, schedulerClaimKill } from "./addon-claim-scenarios.js";
import { moveResetMidBatch, pollerThroughBlackhole, retryAllThroughBlackhole } from "./network-tool-scenarios.js";
import { cronClaimSentinelKill, schedulerClaimSentinelKill } from "./claim-sentinel-scenarios.js";
import { throttledBlackhole, throttledKill9, throttledSentinelKill } from "./throttle-scenarios.js";
import {
  uniqueLockBlackhole,
  uniqueLockKill,
  uniqueLockRedisRestart,
  uniqueLockSentinelKill,
} from "./unique-lock-scenarios.js";

ensureDebianPackages({ "redis-server": "redis-server" });
console.error("building the CLI and preparing Ruby Sidekiq 8.1.7 for the comparison...");
buildCli();
const target = selectedTargets("8.1.7")[0]!;
const roots = await prepareRootfs([target]);
const runId = `chaos-${randomBytes(3).toString("hex")}`;
const fixtures = installFixtures(roots[target.suite]!, runId);
const backend = new LocalBackend(roots, fixtures, join(tmpdir(), runId), "redis://127.0.0.1");

const results: ScenarioResult[] = [];
// `--only <text>`: the scenarios whose name holds it (a row run again by hand).
const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined;
const run = async (name: string, f: () => Promise<ScenarioResult>) => {
  if (only !== undefined && !name.includes(only)) return;
  console.error(`running: ${name}`);
  const r = await f();
  results.push(r);
  console.error(`  lost ${r.lost}, duplicated ${r.duplicated}, recovery ${r.recoverySeconds.toFixed(2)} s`);
};
// `--addons`: the add-on scenarios alone; `--network`: the network faults alone.
const onlyAddons = process.argv.includes("--addons");
const onlyNetwork = process.argv.includes("--network");
try {
  if (onlyNetwork) {
    // Side by side with Ruby through the same proxy (bench/results/chaos-network.md).
    for (const fault of ["blackhole", "partition"] as const)
      for (const system of ["node-reliable", "node-basic", "ruby"] as const)
        await run(`worker, ${fault}, ${system}`, () => workerThroughFault(backend, target, system, fault));
    for (const system of ["node-reliable", "node-basic", "ruby"] as const)
      await run(`worker, 150 ms latency, ${system}`, () => workerUnderLatency(backend, target, system));
    for (const fault of ["reset", "cut"] as const)
      for (const system of ["node-reliable", "node-basic", "ruby"] as const)
        await run(`worker, ${fault}, ${system}`, () => workerThroughFault(backend, target, system, fault));
    for (const system of ["node", "ruby"] as const)
      await run(`client, blackhole, ${system}`, () => clientThroughBlackhole(backend, target, system));
    for (const system of ["node", "ruby"] as const)
      await run(`bulk client, blackhole, ${system}`, () => clientThroughBlackhole(backend, target, system, 100));
    for (const system of ["node-reliable", "ruby"] as const)
      await run(`scheduled poller, blackhole, ${system}`, () => scheduledThroughBlackhole(backend, target, system));
    await run("sidekiq-scheduler claims, blackhole (Node)", () => schedulerClaimBlackhole());
    for (const system of ["node-cron", "ruby-cron", "ruby-scheduler"] as const)
      await run(`poller, blackhole, ${system}`, () => pollerThroughBlackhole(backend, target, fixtures, system));
    for (const system of ["node", "ruby"] as const)
      await run(`retry all, blackhole, ${system}`, () => retryAllThroughBlackhole(backend, target, system));
    await run("migrate move, reset mid-batch", () => moveResetMidBatch());
    // The add-ons' own Ruby gems on Ruby Sidekiq beside Node's, on the same workload and fault.
    const ruby = { backend, target, fixtures };
    for (const system of ["Node", "Ruby"] as const)
      await run(`unique-jobs locks, blackhole (${system})`, () =>
        uniqueLockBlackhole(system === "Ruby" ? ruby : undefined),
      );
    for (const system of ["Node", "Ruby"] as const)
      await run(`throttled slots, blackhole (${system})`, () =>
        throttledBlackhole(system === "Ruby" ? ruby : undefined),
      );
  } else {
    await run("cron poller kill -9 mid-claim", () => cronClaimKill(6));
    await run("sidekiq-scheduler kill -9 mid-claim", () => schedulerClaimKill(6));
    // The same claims through a Sentinel failover with the master killed (bench/results/chaos-addons.md).
    await run("cron claims, Sentinel master kill", () => cronClaimSentinelKill());
    await run("cron claims, Sentinel master kill, replica 1 s behind", () => cronClaimSentinelKill(1000));
    await run("sidekiq-scheduler claims, Sentinel master kill", () => schedulerClaimSentinelKill());
    await run("sidekiq-scheduler claims, Sentinel master kill, replica 1 s behind", () =>
      schedulerClaimSentinelKill(1000),
    );
    // Locks and slots held by a worker that dies, or on a Redis that does
    // (bench/results/chaos-unique-jobs.md, chaos-throttled.md).
    await run("unique-jobs locks, kill -9 (Node)", () => uniqueLockKill());
    await run("unique-jobs locks, Redis restart", () => uniqueLockRedisRestart());
    await run("unique-jobs locks, Sentinel master kill", () => uniqueLockSentinelKill());
    await run("unique-jobs locks, Sentinel master kill, replica 1 s behind", () =>
      uniqueLockSentinelKill(20, 200, 1000),
    );
    await run("throttled slots, kill -9 (Node)", () => throttledKill9(false));
    await run("throttled slots, kill -9 (Node) and Redis restart", () => throttledKill9(true));
    await run("throttled slots, Sentinel master kill", () => throttledSentinelKill());
    if (!onlyAddons) {
      await run("kill -9 (Node)", () => kill9Node(5000, 50));
      await run("kill -9 (Node), 1 ms jobs fetched ahead", () => kill9Node(20_000, 10, 1));
      await run("kill -9 (Ruby)", () => kill9Ruby(backend, target, 5000, 50));
      await run("Redis restart", () => redisRestart(20_000));
      await run("Sentinel failover", () => sentinelFailover("graceful", 10_000));
      await run("Sentinel master kill", () => sentinelFailover("abrupt", 10_000));
      await run("Redis freeze", () => redisFreeze(5000, 5));
      await run("TERM with Redis stopped", () => termWithoutRedis("stopped"));
      await run("TERM with Redis frozen", () => termWithoutRedis("frozen"));
    }
  }
} finally {
  removeFixtures(roots[target.suite]!, fixtures);
}

if (process.argv.includes("--json")) console.log(JSON.stringify(results, null, 2));
else {
  const head = ["scenario", "system", "sent", "completed", "lost", "duplicated", "recovery s"];
  const rows = results.map((r) =>
    [r.scenario, r.system, r.sent, r.completed, r.lost, r.duplicated, r.recoverySeconds.toFixed(2)].map(String),
  );
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i >= 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ");
  console.log(line(head));
  for (const r of rows) console.log(line(r));
  for (const r of results) if (r.notes) console.log(`- ${r.scenario}, ${r.system}: ${r.notes}`);
}
