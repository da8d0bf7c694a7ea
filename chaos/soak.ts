// npm run soak: a mixed fleet under load for SOAK_MINUTES (default 60), with
// a fault every SOAK_FAULT_EVERY seconds (default 180), then every job
// counted. The fleet: a real Ruby Sidekiq 8.1.7 process and two Node workers
// on one queue, a Node-only queue whose jobs fail once (the retry set and
// the poller carry them), jobs scheduled a few seconds ahead, and a
// sidekiq-cron job every minute claimed by the Node pollers. The faults, in
// turn: kill -9 of one Node worker (restarted at once), TERM of the Ruby
// process (restarted), and Redis killed and restarted (AOF, appendfsync
// always). The other Node worker is never touched: its RSS is sampled every
// 30 s to show growth, or none, after warm-up.
// Every job that never ran is then explained (chaos/soak-explain.ts): the
// handlers and Ruby's middleware log each start and end to files, and the
// AOF (timestamps on, never rewritten) holds the history of every key.
// Prints a summary and writes it to bench/results/soak.md (SOAK_OUT to change;
// SOAK_KEEP=1 keeps the events files and the AOF).
import { randomBytes } from "node:crypto";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChildProcess } from "node:child_process";
import { installFixtures, LocalBackend, removeFixtures } from "../harness/local-backend.js";
import { ensureDebianPackages, prepareRootfs } from "../harness/prepare.js";
import { startRedis } from "../harness/redis-server.js";
import { selectedTargets } from "../harness/versions.js";
import { Client } from "../src/core/client/client.js";
import { CronApi } from "../src/addons/sidekiq-cron/cron-api.js";
import { enqueuedKey } from "../src/addons/sidekiq-cron/keys.js";
import { buildCli, count, sleep, spawnNodeWorker, startDurableRedis, stopChild, until } from "./scenarios.js";
import { explainLost, unrecorded, type SoakRecord } from "./soak-explain.js";
import { lostJobsReport, lostSplit } from "./soak-report.js";

const MINUTES = Number(process.env.SOAK_MINUTES ?? 60);
const FAULT_EVERY_S = Number(process.env.SOAK_FAULT_EVERY ?? 180);
/** Jobs pushed a second, in all. */
const RATE = Number(process.env.SOAK_RATE ?? 40);
const OUT = process.env.SOAK_OUT ?? "bench/results/soak.md";

const rssKb = (pid: number): number => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
};

ensureDebianPackages({ "redis-server": "redis-server" });
console.error("building the CLI and preparing Ruby Sidekiq 8.1.7...");
buildCli();
const target = selectedTargets("8.1.7")[0]!;
const roots = await prepareRootfs([target]);
const runId = `soak-${randomBytes(3).toString("hex")}`;
const fixtures = installFixtures(roots[target.suite]!, runId);
const backend = new LocalBackend(roots, fixtures, join(tmpdir(), runId), "redis://127.0.0.1");

const durable = await startDurableRedis();
const { cfg, url, redis, dir } = durable;
let server = durable.server;
// The AOF as a history: each second stamped, never compacted (here and after each restart).
const history = ["aof-timestamp-enabled yes", "auto-aof-rewrite-percentage 0"];
for (const line of history) await redis.call("CONFIG", "SET", ...line.split(" "));
cfg.config.push(...history);
const client = new Client({ redis: url, dialect: "8.1.7", validate: false });
const eventsDir = mkdtempSync(join(tmpdir(), "soak-events-"));
const rubyEvents = `${fixtures}/soak-events.log`;
const rubyOpts = {
  queues: ["chaos"],
  concurrency: 5,
  require: "lib/soak_jobs.rb",
  env: { REDIS_URL: url, SOAK_EVENTS: rubyEvents },
};
const processes = new Map<number, string>();
let nodeStarts = 0;
let rubyStarts = 0;
const nodeWorker = (label: string) => {
  const c = spawnNodeWorker(
    url,
    10,
    [],
    { SOAK_EVENTS_DIR: eventsDir },
    { queues: ["chaos", "soak-node"], handlers: "chaos/soak-handlers.mjs" },
  );
  processes.set(c.pid!, `node (${label})`);
  return c;
};
const startRuby = async () => {
  const r = await backend.startSidekiq(target, rubyOpts);
  processes.set(r.pid, `ruby #${++rubyStarts}`);
  return r;
};

const sent: string[] = [];
/** Each push call: the index in `sent` of its first jid, when it returned, what it pushed. */
const pushes: SoakRecord["pushes"] = { firstIndex: [], at: [], kind: [] };
const faults: Array<{ at: number; kind: string; doneAt: number }> = [];
const rss: Array<{ minute: number; kb: number }> = [];
let ruby = await startRuby();
const steady = nodeWorker("steady");
let killable: ChildProcess = nodeWorker(`killable #${++nodeStarts}`);
const started = Date.now();
const minute = () => (Date.now() - started) / 60_000;

try {
  const cron = new CronApi({ redis, client });
  await cron.create({ name: "soak-every-minute", cron: "* * * * *", class: "SoakCronJob", queue: "soak-node" });

  // The producer: each tick a bulk of plain jobs, a flaky one and a scheduled one.
  let producing = true;
  const producer = (async () => {
    const plain = client.job("ChaosJob", { queue: "chaos" });
    const flaky = client.job("FlakyJob", { queue: "soak-node" });
    const record = (kind: string, jids: string[]) => {
      pushes.firstIndex.push(sent.length);
      pushes.at.push(Date.now());
      pushes.kind.push(kind);
      sent.push(...jids);
    };
    while (producing) {
      try {
        const n = Math.max(1, Math.round(RATE / 2) - 2);
        record("ChaosJob on chaos (bulk)", (await plain.performBulk(Array.from({ length: n }, () => [5]))) as string[]);
        record("FlakyJob on soak-node", [(await flaky.performAsync())!]);
        record("ChaosJob on chaos (scheduled 3 s ahead)", [(await plain.performIn(3, 5))!]);
      } catch {
        // Redis restarting: the push failed and wrote nothing; the next tick tries again.
      }
      await sleep(500);
    }
  })();

  const sampler = setInterval(() => rss.push({ minute: minute(), kb: rssKb(steady.pid!) }), 30_000);
  const kinds = ["kill -9 of a Node worker", "TERM of the Ruby process", "Redis killed and restarted"];
  for (let i = 0; minute() < MINUTES; i++) {
    await sleep(Math.min(FAULT_EVERY_S * 1000, Math.max(0, (MINUTES - minute()) * 60_000)));
    if (minute() >= MINUTES) break;
    const kind = kinds[i % kinds.length]!;
    const fault = { at: Date.now(), kind, doneAt: 0 };
    faults.push(fault);
    console.error(`fault at ${minute().toFixed(1)} min: ${kind}`);
    if (kind.startsWith("kill -9")) {
      killable.kill("SIGKILL");
      await new Promise((r) => killable.once("exit", r));
      killable = nodeWorker(`killable #${++nodeStarts}`);
    } else if (kind.startsWith("TERM")) {
      await ruby.stop("SIGTERM", 60_000);
      ruby = await startRuby();
    } else {
      process.kill(server.pid, "SIGKILL");
      await server.stop();
      await sleep(1000);
      server = await startRedis(cfg);
    }
    fault.doneAt = Date.now();
  }
  producing = false;
  await producer;
  clearInterval(sampler);
  console.error(`load ended after ${minute().toFixed(1)} min; waiting for every job...`);
  // Every job run, or no progress for a minute (a lost job never comes).
  let last = { lost: -1, at: Date.now() };
  await until(
    "every job to run, or a minute without progress",
    async () => {
      const { lost } = await count(redis, sent);
      if (lost !== last.lost) last = { lost, at: Date.now() };
      return lost === 0 || Date.now() - last.at > 60_000;
    },
    10 * 60_000,
  ).catch((e: Error) => console.error(e.message));
  const result = await count(redis, sent);
  // Ruby's events file lives in its root filesystem, which goes at the end.
  copyFileSync(join(roots[target.suite]!, rubyEvents), join(eventsDir, "ruby.log"));
  const { lost, unsent } = await unrecorded(redis, sent);
  const record: SoakRecord = {
    started,
    sent,
    pushes,
    faults,
    processes,
    eventFiles: readdirSync(eventsDir).map((f) => join(eventsDir, f)),
    aofDir: dir,
  };
  const explained = await explainLost(redis, record, lost);
  // The last minute's cron job may still be on its way.
  await until(
    "every claimed cron fire time to run",
    async () =>
      new Set(await redis.lrange("soak:cron-runs", 0, -1)).size >=
      (await redis.zcard(enqueuedKey("soak-every-minute"))),
    90_000,
  ).catch((e: Error) => console.error(e.message));
  const cronRuns = await redis.lrange("soak:cron-runs", 0, -1);
  const claims = await redis.zcard(enqueuedKey("soak-every-minute"));
  const warm = rss.filter((s) => s.minute >= 5);
  const lines = [
    `# Soak: ${MINUTES} minutes of a mixed fleet with a fault every ${FAULT_EVERY_S} s`,
    "",
    `Run ${new Date(started).toISOString()}: Ruby Sidekiq ${target.version} (concurrency 5) and two Node workers`,
    `(concurrency 10) on \`chaos\`, a Node-only queue of jobs that fail once, jobs scheduled 3 s ahead,`,
    `a sidekiq-cron job every minute; about ${RATE} jobs a second pushed from Node. \`npm run soak\``,
    `(SOAK_MINUTES, SOAK_FAULT_EVERY, SOAK_RATE).`,
    "",
    "| | |",
    "| --- | --- |",
    `| jobs sent | ${sent.length} |`,
    `| completed | ${result.completed} |`,
    `| lost | ${result.lost} (${lostSplit(explained)}) |`,
    `| duplicated | ${result.duplicated} (kill -9 of a Node worker re-runs the jobs it held that had run but were not yet acknowledged: at-least-once, as docs/OPERATING.md explains) |`,
    `| cron fire times claimed / jobs run | ${claims} / ${new Set(cronRuns).size} (${cronRuns.length - new Set(cronRuns).size} run twice) |`,
    `| faults | ${faults.length} |`,
    `| RSS of the untouched Node worker after warm-up (5 min) | ${warm.length ? `${(Math.min(...warm.map((s) => s.kb)) / 1024) | 0}–${(Math.max(...warm.map((s) => s.kb)) / 1024) | 0} MB, first ${(warm[0]!.kb / 1024).toFixed(0)} MB, last ${(warm.at(-1)!.kb / 1024).toFixed(0)} MB` : "no samples"} |`,
    "",
    "Faults:",
    "",
    ...faults.map(
      (f) =>
        `- ${((f.at - started) / 60_000).toFixed(1)} min: ${f.kind} (back after ${((f.doneAt - f.at) / 1000).toFixed(1)} s)`,
    ),
    "",
    "RSS samples (minute: MB):",
    "",
    rss.map((s) => `${s.minute.toFixed(1)}: ${(s.kb / 1024).toFixed(0)}`).join(", "),
    "",
    ...lostJobsReport(explained, unsent),
  ];
  writeFileSync(OUT, lines.join("\n"));
  console.log(lines.join("\n"));
} finally {
  await stopChild(killable);
  await stopChild(steady);
  await ruby.stop("SIGTERM", 30_000).catch(() => undefined);
  await client.close();
  redis.disconnect();
  await server.stop();
  removeFixtures(roots[target.suite]!, fixtures);
  if (process.env.SOAK_KEEP) console.error(`kept: events in ${eventsDir}, the AOF in ${dir}`);
  else for (const d of [dir, eventsDir]) rmSync(d, { recursive: true, force: true });
}
