// sidekiq-unique-jobs locks under faults: Node CLI workers (the gem's server
// middleware, gem 8 keys) run until_executed, while_executing and
// until_and_while_executing jobs of 2 s; a worker is killed with SIGKILL,
// or Redis is, or the Sentinel master is; then the run settles and the
// gem's keys are audited. Runs are recorded in a ledger Redis of their own.
// Wave "a" + "a2" (a second copy of every key: until_* refused at push while
// locked, while_executing let in and rescheduled on conflict) before the
// fault, wave "c" during it, wave "b" after it, while the locks held at the
// fault may still be held.
import { rmSync } from "node:fs";
import { Redis } from "ioredis";
import type { RedisSource } from "../src/core/redis/connection.js";
import { startRedis, type RedisServer } from "../harness/redis-server.js";
import { startFaultProxy } from "../harness/fault-proxy.js";
import { CHANGELOG } from "../src/addons/sidekiq-unique-jobs/locksmith.js";
import { cleanup, heldLocks, locksLeft, pending, unlockedJobs } from "./unique-lock-audit.js";
import { LEDGER, pushWave, QUEUE, readLedger, tally, type Pushed } from "./unique-lock-workload.js";
import { sleep, startDurableRedis, startSentinelSetup, until, type ScenarioResult } from "./scenarios.js";
import { startChaosWorker, type ChaosWorker, type RubyHost } from "./workers.js";

const CONCURRENCY = 9;
/** The gem release whose keys Node writes (gem 8), and Ruby runs beside Sidekiq 8.1.7. */
const GEM = "sidekiq-unique-jobs-8.1.0";

interface Fault {
  name: string;
  /** Breaks things once the first wave is running; returns what the audit needs. */
  inject(first: ChaosWorker): Promise<{ killed?: Map<number, number>; note?: string }>;
  /** After wave "b": e.g. start the worker that recovers. */
  afterWave?(): Promise<void>;
}

interface Setup {
  source: RedisSource;
  /** The Sidekiq Redis for the scenario's reads (follows a failover). */
  redis: Redis;
  /** Extra worker flags (Sentinel), and the URL the worker gets. */
  workerUrl: string;
  workerArgs: string[];
  /** Ruby Sidekiq with the gem as the worker (Node's CLI when absent). */
  ruby?: RubyHost;
}

/** Jobs waiting nowhere and the ledger still for 3 s; false after `ms`. */
async function settle(redis: Redis, ledger: Redis, ms: number): Promise<boolean> {
  const stable = async () => {
    const a = await ledger.llen(LEDGER);
    await sleep(3000);
    return (await pending(redis, QUEUE)) === 0 && (await ledger.llen(LEDGER)) === a;
  };
  return until("the run to settle", stable, ms).then(
    () => true,
    () => false,
  );
}

function countBy(items: string[]): string {
  const m = new Map<string, number>();
  for (const i of items) m.set(i, (m.get(i) ?? 0) + 1);
  return [...m].map(([k, n]) => `${k} ${n}`).join(", ") || "none";
}

/** The common run: wave a, fault, wave b, settle, audit. */
async function runScenario(
  setup: Setup,
  ledger: Redis,
  ledgerUrl: string,
  perKind: number,
  ms: number,
  makeFault: (spawn: () => Promise<ChaosWorker>) => Fault,
): Promise<ScenarioResult> {
  const workers: ChaosWorker[] = [];
  const spawn = async () => {
    const w = await startChaosWorker(
      {
        url: setup.workerUrl,
        concurrency: CONCURRENCY,
        queues: [QUEUE],
        env: { CHAOS_LEDGER_URL: ledgerUrl },
        handlers: "chaos/unique-handlers.mjs",
        nodeArgs: setup.workerArgs,
        nodeLabel: "sidekiq-bridge (reliable fetch, unique-jobs gem 8 keys)",
        rubyRequire: "lib/network_unique_jobs.rb",
        peers: [GEM],
        rubyLabel: (t) => `Ruby Sidekiq ${t.version} (${GEM})`,
      },
      setup.ruby,
    );
    workers.push(w);
    return w;
  };
  try {
    const pushed: Pushed[] = await pushWave(setup.source, perKind, ["a", "a2"], ms);
    const fault = makeFault(spawn);
    const first = await spawn();
    await until("a worker's slots to be busy", async () => (await ledger.llen(LEDGER)) >= CONCURRENCY, 60_000);
    const held = await heldLocks(setup.redis);
    const faultAt = Date.now();
    // Wave "c" is pushed while the fault happens.
    const during = pushWave(setup.source, perKind, ["c"], ms);
    const { killed = new Map<number, number>(), note } = await fault.inject(first);
    pushed.push(...(await during));
    const unlocked = await unlockedJobs(setup.redis, QUEUE);
    pushed.push(...(await pushWave(setup.source, perKind, ["b"], ms)));
    await fault.afterWave?.();
    const settled = await settle(setup.redis, ledger, 90_000);
    const settleSeconds = (Date.now() - faultAt) / 1000;
    const l = await readLedger(ledger);
    const t = tally(pushed, l, ms, killed);
    const c = await cleanup(setup.redis, held, faultAt, l);
    const left = await locksLeft(setup.redis);
    const stillLocked = await heldLocks(setup.redis);
    const notRun = workers.map((w) => (w.output().match(/the job was not run/g) ?? []).length);
    const lockedKeys = [...stillLocked.values()].reduce((n, j) => n + j.length, 0);
    const died = workers.filter((w) => w.died()).length;
    const notes = [
      died > 0 ? `${died} WORKERS DIED` : "",
      settled ? `settled ${settleSeconds.toFixed(1)} s after the fault` : "DID NOT SETTLE within 90 s",
      note,
      `${t.refused} pushes refused by a held lock, ${t.failed} failed (not acknowledged)`,
      `${t.reRuns} jobs completed twice (at-least-once re-runs of one jid or copy)`,
      `lost by kind/wave: ${countBy(t.lostJobs.map((j) => j.replace(/-\d+\//, "/")))}`,
      `${[...held.values()].flat().length} locks held at the fault, released by: ${Object.entries(c.byWhat)
        .map(([k, n]) => `${k} ${n}`)
        .join(", ")} (last ${c.lastSeconds.toFixed(1)} s after the fault)`,
      `locks left after recovery: ${lockedKeys} LOCKED entries, ${left.digests} digests; other gem keys without a TTL: ${left.keys.filter((k) => !k.endsWith(":LOCKED")).join(" ") || "none"}`,
      `until_executed jobs waiting right after the fault: ${unlocked.checked}, of which without their lock: ${unlocked.missing}`,
      `"the job was not run" log lines per worker: ${notRun.join(", ")}`,
    ];
    return {
      scenario: fault.name,
      system: first.label,
      sent: t.sent,
      completed: t.completed,
      lost: t.lost,
      duplicated: t.duplicated,
      recoverySeconds: c.lastSeconds,
      notes: notes.filter(Boolean).join("; "),
    };
  } finally {
    await Promise.all(workers.map((w) => w.kill9()));
  }
}

async function withLedger<T>(f: (ledger: Redis, url: string) => Promise<T>): Promise<T> {
  const server = await startRedis();
  const ledger = new Redis(`${server.url}/0`);
  try {
    return await f(ledger, `${server.url}/0`);
  } finally {
    ledger.disconnect();
    await server.stop();
  }
}

/** 1. kill -9 of the worker running the jobs; a new worker recovers its working hash. */
export async function uniqueLockKill(perKind = 6, ms = 2000): Promise<ScenarioResult> {
  const server = await startRedis();
  const url = `${server.url}/0`;
  const redis = new Redis(url);
  try {
    return await withLedger((ledger, ledgerUrl) =>
      runScenario({ source: url, redis, workerUrl: url, workerArgs: [] }, ledger, ledgerUrl, perKind, ms, (spawn) => ({
        name: "kill -9 Node worker mid-job, new worker recovers",
        async inject(first) {
          await first.kill9();
          return { killed: new Map([[first.pid, Date.now()]]) };
        },
        async afterWave() {
          const w = await spawn();
          await until("recovery", async () => /Recovered \d+ jobs/.test(w.output()), 60_000);
        },
      })),
    );
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

/** 2. Redis killed with SIGKILL and restarted on its AOF (appendfsync always) while the jobs run. */
export async function uniqueLockRedisRestart(perKind = 6, ms = 2000): Promise<ScenarioResult> {
  const durable = await startDurableRedis();
  const { cfg, url, redis, dir } = durable;
  let server: RedisServer = durable.server;
  try {
    return await withLedger((ledger, ledgerUrl) =>
      runScenario({ source: url, redis, workerUrl: url, workerArgs: [] }, ledger, ledgerUrl, perKind, ms, () => ({
        name: "Redis killed (SIGKILL) and restarted mid-job, AOF always",
        async inject() {
          const t0 = Date.now();
          process.kill(server.pid, "SIGKILL");
          await server.stop();
          await sleep(1000);
          server = await startRedis(cfg);
          await until("Redis back", async () => (await redis.ping()) === "PONG", 30_000);
          return { note: `Redis down ${((Date.now() - t0) / 1000).toFixed(1)} s` };
        },
      })),
    );
  } finally {
    redis.disconnect();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * 3. The Sentinel master killed with SIGKILL while the jobs run; with `lagMs`,
 * the replica is stopped (SIGSTOP) and its link cut that long first, so it is
 * that far behind when promoted (asynchronous replication on loopback is
 * otherwise too quick to lose anything). Every lock write the old master ran is seen as it ran
 * (the gem's scripts PUBLISH each changelog entry); those missing from the
 * promoted replica were lost.
 */
export async function uniqueLockSentinelKill(perKind = 20, ms = 200, lagMs = 0): Promise<ScenarioResult> {
  const s = await startSentinelSetup();
  const source = { sentinels: [{ host: "127.0.0.1", port: s.sentinelPort }], name: "mymaster" };
  const redis = new Redis({ ...source, maxRetriesPerRequest: null });
  redis.on("error", () => {});
  const sub = new Redis({ port: s.master.port, maxRetriesPerRequest: 0, retryStrategy: () => null });
  sub.on("error", () => {});
  const published: string[] = [];
  sub.on("message", (_channel: string, m: string) => published.push(m));
  await sub.subscribe(CHANGELOG);
  const workerArgs = ["--sentinel", `127.0.0.1:${s.sentinelPort}`];
  try {
    return await withLedger((ledger, ledgerUrl) =>
      runScenario({ source, redis, workerUrl: "", workerArgs }, ledger, ledgerUrl, perKind, ms, () => ({
        name: `Sentinel failover, master killed (SIGKILL) mid-job${lagMs ? `, replica ${lagMs} ms behind` : ""}`,
        async inject() {
          if (lagMs) {
            // Stopped, then cut off: what the master writes from here on never reaches it.
            process.kill(s.replica.pid, "SIGSTOP");
            const m = new Redis({ port: s.master.port });
            await m.call("CLIENT", "KILL", "TYPE", "replica");
            m.disconnect();
          }
          await sleep(lagMs);
          process.kill(s.master.pid, "SIGKILL");
          if (lagMs) process.kill(s.replica.pid, "SIGCONT");
          const replica = new Redis({ port: s.replica.port });
          await until("the replica to become master", async () => (await replica.role())[0] === "master", 60_000);
          const kept = new Set(await replica.zrange(CHANGELOG, 0, -1));
          replica.disconnect();
          const lost = published.filter((e) => !kept.has(e)).map((e) => (JSON.parse(e) as { message: string }).message);
          return {
            note: `lock writes the old master ran: ${published.length}, lost in the failover: ${countBy(lost)}`,
          };
        },
      })),
    );
  } finally {
    sub.disconnect();
    redis.disconnect();
    await s.stop();
  }
}

/**
 * 4. The worker reaches Redis through a fault proxy whose flows are
 * blackholed mid-job (no FIN, no RST; new flows pass): its connections notice
 * within their network timeout and connect again. No lock may be left held.
 * With `ruby`, the worker is Ruby Sidekiq running the gem itself; the
 * pushes (Node's port of the gem's client middleware) and the ledger go
 * straight to Redis either way.
 */
export async function uniqueLockBlackhole(ruby?: RubyHost, perKind = 6, ms = 2000): Promise<ScenarioResult> {
  const server = await startRedis();
  const url = `${server.url}/0`;
  const redis = new Redis(url);
  const proxy = await startFaultProxy(server.port);
  try {
    const setup = { source: url, redis, workerUrl: `${proxy.url}/0`, workerArgs: [], ruby };
    return await withLedger((ledger, ledgerUrl) =>
      runScenario(setup, ledger, ledgerUrl, perKind, ms, () => ({
        name: "the worker's flows blackholed mid-job (new flows pass)",
        async inject() {
          const before = proxy.connections;
          proxy.blackhole();
          await until("the worker to connect again", async () => proxy.connections > before, 60_000);
          return { note: `${proxy.connections - before} new connections through the proxy` };
        },
      })),
    );
  } finally {
    await proxy.close();
    redis.disconnect();
    await server.stop();
  }
}

/** The four rows of bench/results/chaos-unique-jobs.md, one after the other. */
export async function uniqueLockScenarios(): Promise<ScenarioResult[]> {
  return [
    await uniqueLockKill(),
    await uniqueLockRedisRestart(),
    await uniqueLockSentinelKill(),
    await uniqueLockSentinelKill(20, 200, 1000),
  ];
}
