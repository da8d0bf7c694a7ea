// Fault scenarios for the Node worker: each sends jobs, breaks
// something on purpose, and counts what happened to every job.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { Client } from "../src/core/client/client.js";
import type { RedisSource } from "../src/core/redis/connection.js";
import { redisServerBinary } from "../harness/redis-server.js";
import { writeFileSync } from "node:fs";
import type { SidekiqBackend } from "../harness/backend.js";
import { REPO_ROOT } from "../harness/local-backend.js";
import { freePort, startRedis, type RedisServer } from "../harness/redis-server.js";
import type { SidekiqTarget } from "../harness/versions.js";
import { WORKING_REGISTRY } from "../src/core/wire/bridge-keys.js";

export interface ScenarioResult {
  scenario: string;
  system: string;
  sent: number;
  completed: number;
  lost: number;
  duplicated: number;
  /** Seconds from the fault's end until work was flowing again / orphans were back. */
  recoverySeconds: number;
  notes?: string;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Until `chaos:runs` has not grown for `quietMs` (at most a minute). */
export function runsSettled(redis: Redis, quietMs: number): Promise<void> {
  return until(
    "the runs to settle",
    async () => {
      const a = await redis.llen("chaos:runs");
      await sleep(quietMs);
      return (await redis.llen("chaos:runs")) === a;
    },
    60_000,
  );
}

export async function until(what: string, fn: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await fn().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(50);
  }
}

/** Builds dist/ once, so scenarios run the real `sidekiq-bridge` binary. */
export function buildCli(): void {
  const r = spawnSync("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: REPO_ROOT, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`build failed:\n${r.stdout}${r.stderr}`);
}

export function spawnNodeWorker(
  url: string,
  concurrency: number,
  extra: string[] = [],
  env: Record<string, string> = {},
  { queues = ["chaos"], handlers = "chaos/handlers.mjs" }: { queues?: string[]; handlers?: string } = {},
): ChildProcess & { output: () => string } {
  const child = spawn(
    process.execPath,
    [
      "dist/assembly/main.js",
      "worker",
      ...queues.flatMap((q) => ["-q", q]),
      "-c",
      String(concurrency),
      "-t",
      "5",
      "-r",
      handlers,
      "--dialect",
      "8.1.7",
      ...extra,
    ],
    { cwd: REPO_ROOT, env: { ...process.env, REDIS_URL: url, ...env }, stdio: ["ignore", "pipe", "pipe"] },
  ) as ChildProcess & { output: () => string };
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  child.output = () => out;
  return child;
}

export async function stopChild(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return;
  const done = new Promise((r) => c.once("exit", r));
  c.kill("SIGTERM");
  const t = setTimeout(() => c.kill("SIGKILL"), 15_000);
  await done;
  clearTimeout(t);
}

export async function count(
  redis: Redis,
  sent: string[],
): Promise<{ completed: number; duplicated: number; lost: number }> {
  // Node records `<jid>:<token>` (a token per execution), Ruby's job `<jid>`:
  // executions are distinct tokens, or records when there is no token.
  const runs = await redis.lrange("chaos:runs", 0, -1);
  const executions = new Map<string, Set<string>>();
  runs.forEach((r, i) => {
    const [jid, token] = r.split(":");
    let set = executions.get(jid!);
    if (!set) executions.set(jid!, (set = new Set()));
    set.add(token ?? String(i));
  });
  const completed = sent.filter((j) => executions.has(j)).length;
  let duplicated = 0;
  for (const set of executions.values()) duplicated += set.size - 1;
  return { completed, duplicated, lost: sent.length - completed };
}

export async function enqueue(url: RedisSource, n: number, ms: number): Promise<string[]> {
  const c = new Client({ redis: url, dialect: "8.1.7", validate: false });
  const jids = (await c
    .job("ChaosJob", { queue: "chaos" })
    .performBulk(Array.from({ length: n }, () => [ms]))) as string[];
  await c.close();
  return jids;
}

/**
 * Jobs a killed worker still held (its working hashes and lists) whose run
 * was already recorded: their work reached Redis, their acknowledgement did
 * not, so recovery runs them again. Reliable fetch is at-least-once, and
 * these are exactly the runs a kill -9 can repeat.
 */
async function heldAfterRun(redis: Redis): Promise<number> {
  const recorded = new Set((await redis.lrange("chaos:runs", 0, -1)).map((r) => r.split(":")[0]));
  let n = 0;
  for (const key of await redis.smembers(WORKING_REGISTRY)) {
    const jobs = (await redis.type(key)) === "hash" ? await redis.hvals(key) : await redis.lrange(key, 0, -1);
    for (const j of jobs) if (recorded.has((JSON.parse(j) as { jid: string }).jid)) n++;
  }
  return n;
}

/**
 * kill -9 of a worker with `queued` jobs waiting and `inFlight` running,
 * then a restart. The Node worker's reliable fetch should lose nothing.
 * Jobs of `jobMs` (default 50); short ones (under 5 ms) make the worker
 * fetch a batch ahead, so the kill also catches jobs waiting for a slot.
 */
export async function kill9Node(queued = 5000, inFlight = 50, jobMs = 50): Promise<ScenarioResult> {
  const server = await startRedis();
  const url = `${server.url}/0`;
  const redis = new Redis(url);
  const children: ChildProcess[] = [];
  try {
    const sent = await enqueue(url, queued, jobMs);
    const first = spawnNodeWorker(url, inFlight);
    children.push(first);
    await until("the worker to be busy", async () => (await redis.llen("chaos:runs")) >= 200, 60_000);
    first.kill("SIGKILL");
    await new Promise((r) => first.once("exit", r));
    const killedAt = Date.now();
    const rerun = await heldAfterRun(redis);
    const second = spawnNodeWorker(url, inFlight);
    children.push(second);
    await until(
      "the dead worker's jobs to be recovered",
      async () => /Recovered \d+ jobs/.test(second.output()),
      60_000,
    );
    const recoverySeconds = (Date.now() - killedAt) / 1000;
    await until("every job", async () => (await count(redis, sent)).lost === 0, 120_000);
    await stopChild(second);
    return {
      scenario: jobMs < 5 ? `kill -9 worker, ${jobMs} ms jobs (batches fetched ahead)` : "kill -9 worker",
      system: "sidekiq-bridge (reliable fetch)",
      sent: sent.length,
      ...(await count(redis, sent)),
      recoverySeconds,
      notes: `${rerun} jobs had recorded their run but were still held at the kill (not yet acknowledged): recovery runs these again`,
    };
  } finally {
    for (const c of children) c.kill("SIGKILL");
    redis.disconnect();
    await server.stop();
  }
}

/** The same scenario with Ruby Sidekiq's basic fetch, for comparison. */
export async function kill9Ruby(
  backend: SidekiqBackend,
  target: SidekiqTarget,
  queued = 5000,
  inFlight = 50,
): Promise<ScenarioResult> {
  const server = await startRedis();
  const url = `${server.url}/0`;
  const redis = new Redis(url);
  try {
    const sent = await enqueue(url, queued, 50);
    // The local backend's Ruby shares this machine's network: the same URL works.
    const opts = { queues: ["chaos"], concurrency: inFlight, require: "lib/chaos_jobs.rb", env: { REDIS_URL: url } };
    const first = await backend.startSidekiq(target, opts);
    await until("Ruby to be busy", async () => (await redis.llen("chaos:runs")) >= 200, 60_000);
    await first.stop("SIGKILL");
    const killedAt = Date.now();
    const second = await backend.startSidekiq(target, opts);
    await until("the queue to drain", async () => (await redis.llen("queue:chaos")) === 0, 120_000);
    // Whatever was running at the kill is gone with basic fetch; let the rest finish.
    await runsSettled(redis, 1500);
    const recoverySeconds = (Date.now() - killedAt) / 1000;
    await second.stop();
    return {
      scenario: "kill -9 worker",
      system: `Ruby Sidekiq ${target.version} (basic fetch)`,
      sent: sent.length,
      ...(await count(redis, sent)),
      recoverySeconds,
      notes: "BRPOP removes a job from Redis when fetched: jobs running at the kill are gone",
    };
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

/**
 * A Redis that keeps its data across a restart on the same port (AOF,
 * appendfsync always), and a connection for the scenario's own reads that
 * waits out outages.
 */
export async function startDurableRedis(): Promise<{
  server: RedisServer;
  cfg: { port: number; dir: string; config: string[] };
  url: string;
  redis: Redis;
  dir: string;
}> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "sidekiq-bridge-chaos-"));
  const cfg = { port, dir, config: ["appendonly yes", "appendfsync always"] };
  const server = await startRedis(cfg);
  const url = `${server.url}/0`;
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  redis.on("error", () => {}); // the outages are the point
  return { server, cfg, url, redis, dir };
}

/** Redis killed and restarted (AOF, appendfsync always) in the middle of a run. */
export async function redisRestart(total = 20_000): Promise<ScenarioResult> {
  const durable = await startDurableRedis();
  const { cfg, url, redis, dir } = durable;
  let { server } = durable;
  const worker = spawnNodeWorker(url, 20);
  try {
    const sent = await enqueue(url, total, 1);
    await until("a quarter of the jobs", async () => (await redis.llen("chaos:runs")) >= total / 4, 120_000);
    process.kill(server.pid, "SIGKILL");
    await server.stop();
    await sleep(1000);
    server = await startRedis(cfg);
    const back = Date.now();
    const before = await redis.llen("chaos:runs");
    await until("work to flow again", async () => (await redis.llen("chaos:runs")) > before, 60_000);
    const recoverySeconds = (Date.now() - back) / 1000;
    await until("every job", async () => (await count(redis, sent)).lost === 0, 180_000);
    const alive = worker.exitCode === null;
    await stopChild(worker);
    return {
      scenario: "Redis killed and restarted (AOF always)",
      system: "sidekiq-bridge (reliable fetch)",
      sent: sent.length,
      ...(await count(redis, sent)),
      recoverySeconds,
      notes: alive ? "worker kept running" : "WORKER DIED",
    };
  } finally {
    worker.kill("SIGKILL");
    redis.disconnect();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Redis frozen for `seconds` (SIGSTOP, then SIGCONT). */
export async function redisFreeze(total = 5000, seconds = 5): Promise<ScenarioResult> {
  const server = await startRedis();
  const url = `${server.url}/0`;
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  const worker = spawnNodeWorker(url, 20);
  try {
    const sent = await enqueue(url, total, 1);
    await until("some progress", async () => (await redis.llen("chaos:runs")) >= total / 10, 60_000);
    process.kill(server.pid, "SIGSTOP");
    await sleep(seconds * 1000);
    process.kill(server.pid, "SIGCONT");
    const back = Date.now();
    const before = await redis.llen("chaos:runs");
    await until("work to flow again", async () => (await redis.llen("chaos:runs")) > before, 60_000);
    const recoverySeconds = (Date.now() - back) / 1000;
    await until("every job", async () => (await count(redis, sent)).lost === 0, 120_000);
    const alive = worker.exitCode === null;
    await stopChild(worker);
    return {
      scenario: `Redis frozen ${seconds} s (SIGSTOP)`,
      system: "sidekiq-bridge (reliable fetch)",
      sent: sent.length,
      ...(await count(redis, sent)),
      recoverySeconds,
      notes: alive ? "worker kept running" : "WORKER DIED",
    };
  } finally {
    worker.kill("SIGKILL");
    redis.disconnect();
    await server.stop();
  }
}

interface SentinelSetup {
  master: RedisServer;
  replica: RedisServer;
  sentinelPort: number;
  sentinel: ChildProcess;
  dir: string;
  stop(): Promise<void>;
}

/** A master, a replica and one Sentinel (quorum 1), all on loopback. */
export async function startSentinelSetup(): Promise<SentinelSetup> {
  // No 5 s delay before the first (diskless) sync.
  const master = await startRedis({ config: ["repl-diskless-sync-delay 0"] });
  const replica = await startRedis({ config: [`replicaof 127.0.0.1 ${master.port}`] });
  const rc = new Redis({ port: replica.port });
  await until(
    "the replica to be in sync",
    async () => (await rc.info("replication")).includes("master_link_status:up"),
    30_000,
  );
  // "link up" can come before the master streams to the replica: see a write arrive.
  const mc = new Redis({ port: master.port });
  await mc.set("chaos:probe", "1");
  await until("a write to reach the replica", async () => (await rc.get("chaos:probe")) === "1", 30_000);
  await mc.del("chaos:probe");
  mc.disconnect();
  rc.disconnect();
  const sentinelPort = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "sidekiq-bridge-sentinel-"));
  const conf = join(dir, "sentinel.conf");
  writeFileSync(
    conf,
    [
      `port ${sentinelPort}`,
      "bind 127.0.0.1",
      `dir ${dir}`,
      `sentinel monitor mymaster 127.0.0.1 ${master.port} 1`,
      "sentinel down-after-milliseconds mymaster 1000",
      "sentinel failover-timeout mymaster 5000",
      "",
    ].join("\n"),
  );
  // redis-server in sentinel mode: no extra package needed.
  const sentinel = spawn(redisServerBinary(), [conf, "--sentinel"], { stdio: "ignore" });
  const probe = new Redis({
    port: sentinelPort,
    host: "127.0.0.1",
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on("error", () => {});
  await until(
    "Sentinel to know the replica",
    async () => {
      if (probe.status !== "ready") await probe.connect().catch(() => undefined);
      const replicas = (await probe.call("SENTINEL", "REPLICAS", "mymaster")) as unknown[];
      return replicas.length > 0;
    },
    30_000,
  );
  probe.disconnect();
  return {
    master,
    replica,
    sentinelPort,
    sentinel,
    dir,
    async stop() {
      sentinel.kill("SIGTERM");
      await replica.stop();
      await master.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A Sentinel failover in the middle of a run. "graceful": SENTINEL FAILOVER
 * (asserted: lost 0). "abrupt": the master is killed; asynchronous
 * replication may lose its last writes (reported, not asserted).
 */
export async function sentinelFailover(mode: "graceful" | "abrupt", total = 10_000): Promise<ScenarioResult> {
  const s = await startSentinelSetup();
  const source = { sentinels: [{ host: "127.0.0.1", port: s.sentinelPort }], name: "mymaster" };
  const redis = new Redis({ ...source, maxRetriesPerRequest: null });
  redis.on("error", () => {});
  const env = { CHAOS_SENTINEL: `127.0.0.1:${s.sentinelPort}` };
  const worker = spawnNodeWorker("", 20, ["--sentinel", `127.0.0.1:${s.sentinelPort}`], env);
  try {
    const sent = await enqueue(source, total, 1);
    await until("a fifth of the jobs", async () => (await redis.llen("chaos:runs")) >= total / 5, 120_000);
    const t0 = Date.now();
    if (mode === "graceful") {
      const sen = new Redis({ port: s.sentinelPort, host: "127.0.0.1" });
      await sen.call("SENTINEL", "FAILOVER", "mymaster");
      sen.disconnect();
    } else process.kill(s.master.pid, "SIGKILL");
    const replica = new Redis({ port: s.replica.port });
    await until("the replica to become master", async () => (await replica.role())[0] === "master", 60_000);
    replica.disconnect();
    const promoted = (Date.now() - t0) / 1000;
    const settle = async () => {
      const a = await redis.llen("chaos:runs");
      await sleep(3000);
      return (await redis.llen("chaos:runs")) === a && (await redis.llen("queue:chaos")) === 0;
    };
    if (mode === "graceful") await until("every job", async () => (await count(redis, sent)).lost === 0, 180_000);
    else await until("the run to settle", settle, 180_000);
    const alive = worker.exitCode === null;
    await stopChild(worker);
    const c = await count(redis, sent);
    return {
      scenario: mode === "graceful" ? "Sentinel failover (SENTINEL FAILOVER)" : "Sentinel failover (master killed)",
      system: "sidekiq-bridge (reliable fetch)",
      sent: sent.length,
      ...c,
      recoverySeconds: promoted,
      notes: `${alive ? "worker kept running" : "WORKER DIED"}${mode === "abrupt" ? `; replication is asynchronous, so writes the old master had not sent to the replica when it died are gone (${c.lost} jobs)` : ""}`,
    };
  } finally {
    worker.kill("SIGKILL");
    redis.disconnect();
    await s.stop();
  }
}
