// sidekiq-throttled slots under faults: CLI workers (chaos/throttle-handlers.mjs:
// ChaosJob at most 4 at once, a slot lost after 4 s) with more slots (10) than
// the limit, so every fetch also hands throttled jobs back. Each scenario
// counts every job (lost, duplicated), the slots left in the gem's zset once
// every job ran, the most handlers seen running at once (from the workers'
// `chaos-span` lines) against the limit, and what freed the slots a fault
// left behind: our recovery (the killed worker's jobs run again under the
// same jid, which the gem's script lets back into its own slot, and give it
// back) or the gem's lost-job expiry (the script drops a slot past its score).
import type { ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { Redis } from "ioredis";
import { startFaultProxy } from "../harness/fault-proxy.js";
import { startRedis, type RedisServer } from "../harness/redis-server.js";
import { WORKING_REGISTRY } from "../src/core/wire/bridge-keys.js";
import { pending } from "./unique-lock-audit.js";
import {
  count,
  enqueue,
  sleep,
  spawnNodeWorker,
  startDurableRedis,
  startSentinelSetup,
  stopChild,
  until,
  type ScenarioResult,
} from "./scenarios.js";
import { startChaosWorker, type RubyHost } from "./workers.js";

const SLOTS = "throttled:ChaosJob:concurrency.v2";
const LIMIT = 4;
const CONCURRENCY = 10;
const HANDLERS = { handlers: "chaos/throttle-handlers.mjs" };
const SYSTEM = "sidekiq-bridge (reliable fetch, throttled)";
/** The gem's release for Sidekiq 8 (../shared/peers/ruby/README.md). */
const THROTTLED_GEM = "sidekiq-throttled-2.1.0";

type Worker = ChildProcess & { output: () => string };

interface Span {
  jid: string;
  start: number;
  /** Undefined: cut by the worker's death. */
  end: number | undefined;
}

/** The runs a worker printed; one cut by a kill ends when its worker died. */
function spansOf(output: string, diedAt: number): Span[] {
  const byToken = new Map<string, Span>();
  for (const m of output.matchAll(/^chaos-span (start|end) (\S+) (\d+) (\S+)$/gm)) {
    const [, kind, token, ms, jid] = m;
    if (kind === "start") byToken.set(token!, { jid: jid!, start: Number(ms), end: undefined });
    else byToken.get(token!)!.end = Number(ms);
  }
  return [...byToken.values()].map((s) => ({ ...s, end: s.end ?? diedAt }));
}

/** The most runs at once (an end and a start in the same millisecond do not overlap). */
function mostAtOnce(spans: readonly Span[]): number {
  const edges = spans.flatMap((s) => [
    [s.start, 1],
    [s.end!, -1],
  ]);
  edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let now = 0;
  let most = 0;
  for (const [, d] of edges) most = Math.max(most, (now += d!));
  return most;
}

/** The slots in the gem's zset: jid and when the gem counts it lost (epoch ms). */
async function slots(redis: Redis): Promise<Array<{ jid: string; lostAt: number }>> {
  const flat = await redis.zrange(SLOTS, 0, -1, "WITHSCORES");
  const out: Array<{ jid: string; lostAt: number }> = [];
  for (let i = 0; i < flat.length; i += 2) out.push({ jid: flat[i]!, lostAt: Number(flat[i + 1]) * 1000 });
  return out;
}

/** Resolves with the ms from `from` until none of `jids` holds a slot (polled; outages are waited out). */
async function whenFreed(redis: Redis, jids: readonly string[], from: number): Promise<number> {
  if (jids.length === 0) return 0;
  for (;;) {
    const held = await redis.zmscore(SLOTS, ...jids).catch(() => ["unknown"]);
    if (held.every((s) => s === null)) return Date.now() - from;
    if (Date.now() - from > 120_000) return NaN;
    await sleep(25);
  }
}

/** What freed each dead slot: its jid running again before its expiry (recovery), or the expiry. */
function freedBy(dead: ReadonlyArray<{ jid: string; lostAt: number }>, later: readonly Span[]): string {
  const rerun = dead.filter((d) => later.some((s) => s.jid === d.jid && s.start < d.lostAt)).length;
  const parts = [];
  if (rerun) parts.push(`${rerun} by recovery (the same jid ran again and gave it back)`);
  if (dead.length - rerun) parts.push(`${dead.length - rerun} by the gem's lost-job expiry (${LIMIT} s)`);
  return parts.join(", ") || "none held";
}

/** The jobs a worker's recovery put back (its "Recovered N jobs" lines). */
function recovered(output: string): number {
  return [...output.matchAll(/Recovered (\d+) jobs/g)].reduce((n, m) => n + Number(m[1]), 0);
}

/** Redis killed (SIGKILL), down 1 s, then started again on its port and directory (AOF always). */
async function killAndRestart(server: RedisServer, cfg: Parameters<typeof startRedis>[0]): Promise<RedisServer> {
  process.kill(server.pid, "SIGKILL");
  await server.stop();
  await sleep(1000);
  return startRedis(cfg);
}

/** A new worker, once its start-up recovery has put a dead worker's jobs back. */
async function recoveringWorker(url: string): Promise<Worker> {
  const w = spawnNodeWorker(url, CONCURRENCY, [], {}, HANDLERS);
  try {
    await until("recovery", async () => recovered(w.output()) > 0, 60_000);
  } catch (e) {
    w.kill("SIGKILL");
    throw e;
  }
  return w;
}

/** Waits until `runs` jobs ran and every slot is held. */
async function busyWithSlots(redis: Redis, runs: number): Promise<void> {
  await until(
    `${runs} runs with every slot held`,
    async () => (await redis.llen("chaos:runs")) >= runs && (await redis.zcard(SLOTS)) === LIMIT,
    90_000,
  );
}

function row(
  scenario: string,
  sent: string[],
  c: { completed: number; lost: number; duplicated: number },
  recoverySeconds: number,
  spans: readonly Span[],
  notes: string,
  system = SYSTEM,
): ScenarioResult {
  const most = mostAtOnce(spans);
  return {
    scenario,
    system,
    sent: sent.length,
    ...c,
    recoverySeconds,
    notes: `max concurrency seen ${most} / limit ${LIMIT}${most > LIMIT ? " (OVER THE LIMIT)" : ""}; ${notes}`,
  };
}

/**
 * kill -9 of a worker while its jobs hold every slot, then a new worker that
 * recovers its jobs; with `restartRedis`, Redis is also killed (SIGKILL) and
 * restarted (AOF always) while the new worker holds every slot, half-way.
 */
export async function throttledKill9(restartRedis: boolean, total = 400, jobMs = 100): Promise<ScenarioResult> {
  const durable = await startDurableRedis();
  const { cfg, url, redis, dir } = durable;
  let { server } = durable;
  const workers: Worker[] = [];
  try {
    const sent = await enqueue(url, total, jobMs);
    const first = spawnNodeWorker(url, CONCURRENCY, [], {}, HANDLERS);
    workers.push(first);
    await busyWithSlots(redis, total / 4);
    first.kill("SIGKILL");
    await new Promise((r) => first.once("exit", r));
    const killedAt = Date.now();
    // Read after the kill: nothing else holds slots, so these are the dead worker's.
    const dead = await slots(redis);
    const freed = whenFreed(
      redis,
      dead.map((d) => d.jid),
      killedAt,
    );
    const second = await recoveringWorker(url);
    workers.push(second);
    const recoverySeconds = (Date.now() - killedAt) / 1000;
    let restart = "";
    if (restartRedis) {
      await busyWithSlots(redis, total / 2);
      const heldAtKill = (await slots(redis)).length;
      server = await killAndRestart(server, cfg);
      const [back, runs] = [Date.now(), await redis.llen("chaos:runs")];
      await until("work to flow again", async () => (await redis.llen("chaos:runs")) > runs, 60_000);
      restart = `; Redis killed with ${heldAtKill} slots held by the live worker, back after 1 s, work flowing again ${((Date.now() - back) / 1000).toFixed(2)} s later, worker ${second.exitCode === null ? "kept running" : "DIED"}`;
    }
    await until("every job", async () => (await count(redis, sent)).lost === 0, 90_000);
    const left = await slots(redis);
    const freedMs = await freed;
    await stopChild(second);
    const spans = [...spansOf(first.output(), killedAt), ...spansOf(second.output(), Date.now())];
    return row(
      `kill -9 worker holding throttle slots${restartRedis ? ", Redis killed and restarted mid-way" : ""}`,
      sent,
      await count(redis, sent),
      recoverySeconds,
      spans,
      `${recovered(second.output())} jobs recovered; ${dead.length} slots held by the killed worker, freed ${(freedMs / 1000).toFixed(2)} s after the kill: ${freedBy(dead, spansOf(second.output(), Date.now()))}; slots still held after recovery (every job run): ${left.length}${restart}`,
    );
  } finally {
    for (const w of workers) w.kill("SIGKILL");
    redis.disconnect();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Finished runs (an `end` line: the run record was acknowledged) whose record is not in `chaos:runs`. */
async function lostRunRecords(redis: Redis, spans: readonly Span[], cut: number): Promise<number> {
  const recorded = new Map<string, number>();
  for (const r of await redis.lrange("chaos:runs", 0, -1)) {
    const jid = r.split(":")[0]!;
    recorded.set(jid, (recorded.get(jid) ?? 0) + 1);
  }
  const finished = new Map<string, number>();
  for (const s of spans) if (s.end !== cut) finished.set(s.jid, (finished.get(s.jid) ?? 0) + 1);
  let lost = 0;
  for (const [jid, n] of finished) lost += Math.max(0, n - (recorded.get(jid) ?? 0));
  return lost;
}

/**
 * A Sentinel failover with the master killed (SIGKILL) while a worker's jobs
 * hold every slot. Replication is asynchronous: what the old master
 * acknowledged and had not sent on is gone (run records, slot takes and
 * give-backs, acknowledgements), and counted here.
 */
export async function throttledSentinelKill(total = 400, jobMs = 100): Promise<ScenarioResult> {
  const s = await startSentinelSetup();
  const source = { sentinels: [{ host: "127.0.0.1", port: s.sentinelPort }], name: "mymaster" };
  const redis = new Redis({ ...source, maxRetriesPerRequest: null });
  redis.on("error", () => {});
  const env = { CHAOS_SENTINEL: `127.0.0.1:${s.sentinelPort}` };
  const worker = spawnNodeWorker("", CONCURRENCY, ["--sentinel", `127.0.0.1:${s.sentinelPort}`], env, HANDLERS);
  try {
    const sent = await enqueue(source, total, jobMs);
    await busyWithSlots(redis, total / 5);
    const before = await slots(redis);
    const t0 = Date.now();
    process.kill(s.master.pid, "SIGKILL");
    const freed = whenFreed(
      redis,
      before.map((b) => b.jid),
      t0,
    );
    const replica = new Redis({ port: s.replica.port });
    await until("the replica to become master", async () => (await replica.role())[0] === "master", 60_000);
    const promoted = (Date.now() - t0) / 1000;
    // Read at once from the new master: which slots held at the kill it has.
    const afterPromotion = new Set((await slots(replica)).map((x) => x.jid));
    replica.disconnect();
    const kept = before.filter((b) => afterPromotion.has(b.jid)).length;
    await until(
      "the run to settle",
      async () => {
        const a = await redis.llen("chaos:runs");
        await sleep(3000);
        return (await redis.llen("chaos:runs")) === a && (await redis.llen("queue:chaos")) === 0;
      },
      120_000,
    );
    const cut = Date.now() + 1e9; // no run is cut: the worker lives
    const spans = spansOf(worker.output(), cut);
    const finishedJids = new Set(spans.filter((x) => x.end !== cut).map((x) => x.jid));
    const left = await slots(redis);
    const stale = left.filter((l) => finishedJids.has(l.jid));
    // A slot of a finished job (its give-back lost) lasts until the gem's expiry.
    const staleGone = stale.length
      ? await whenFreed(
          redis,
          stale.map((x) => x.jid),
          Date.now(),
        )
      : 0;
    const heldInWorking = await workingJobs(redis);
    const lostRecords = await lostRunRecords(redis, spans, cut);
    const ran = new Set(spans.map((x) => x.jid));
    const neverRan = sent.filter((j) => !ran.has(j)).length;
    const alive = worker.exitCode === null;
    await stopChild(worker);
    return row(
      "Sentinel failover, master killed, slots held",
      sent,
      await count(redis, sent),
      promoted,
      spans,
      [
        `replica promoted ${promoted.toFixed(2)} s after the kill; worker ${alive ? "kept running" : "DIED"}`,
        `${kept} of the ${before.length} slots held at the kill were on the new master; ${freedHow(before, t0, await freed)}`,
        `lost acknowledged writes: ${lostRecords} run records (the handler's RPUSH was answered, the record is gone)`,
        `${neverRan} jobs never started; ${heldInWorking} jobs left in working keys after the run settled`,
        `slots still held after recovery: ${left.length} (${stale.length} of finished jobs, whose give-back was lost${stale.length ? `, gone ${(staleGone / 1000).toFixed(2)} s later by the gem's lost-job expiry` : ""})`,
      ].join("; "),
    );
  } finally {
    worker.kill("SIGKILL");
    redis.disconnect();
    await s.stop();
  }
}

/** When the slots held at a fault were all gone, and whether their expiry could have done it. */
function freedHow(held: ReadonlyArray<{ lostAt: number }>, from: number, ms: number): string {
  if (Number.isNaN(ms)) return "NOT FREED within 120 s";
  const firstLost = Math.min(...held.map((h) => h.lostAt));
  const by =
    from + ms < firstLost ? "their jobs' own give-backs (before any expiry)" : "give-backs or the gem's expiry";
  return `all gone ${(ms / 1000).toFixed(2)} s after the kill, by ${by}`;
}

/** Jobs in any registered working hash or list. */
async function workingJobs(redis: Redis): Promise<number> {
  let n = 0;
  for (const key of await redis.smembers(WORKING_REGISTRY))
    n += (await redis.type(key)) === "hash" ? await redis.hlen(key) : await redis.llen(key);
  return n;
}

/**
 * The worker reaches Redis through a fault proxy whose flows are blackholed
 * while its jobs hold every slot (no FIN, no RST; new flows pass). Its jobs'
 * records go straight to Redis. The slots held at the fault must be given
 * back, and the limit hold throughout. With `ruby`, the worker is Ruby
 * Sidekiq running the gem itself, with the same throttle on the same job.
 */
export async function throttledBlackhole(ruby?: RubyHost, total = 400, jobMs = 100): Promise<ScenarioResult> {
  const server = await startRedis();
  const url = `${server.url}/0`;
  const redis = new Redis(url);
  const proxy = await startFaultProxy(server.port);
  const worker = await startChaosWorker(
    {
      url: `${proxy.url}/0`,
      concurrency: CONCURRENCY,
      queues: ["chaos"],
      env: { CHAOS_RECORD_URL: url },
      ...HANDLERS,
      nodeLabel: SYSTEM,
      rubyRequire: "lib/network_throttled.rb",
      peers: [THROTTLED_GEM, "redis-prescription-standin"],
      rubyLabel: (t) => `Ruby Sidekiq ${t.version} (${THROTTLED_GEM})`,
    },
    ruby,
  );
  try {
    const sent = await enqueue(url, total, jobMs);
    await busyWithSlots(redis, total / 4);
    // Read again until every slot is held (Ruby's fetch idles in the gem's cooldown), then the fault at once.
    let held: Array<{ jid: string; lostAt: number }> = [];
    await until("every slot held", async () => (held = await slots(redis)).length === LIMIT, 60_000);
    const [at, before] = [Date.now(), proxy.connections];
    proxy.blackhole();
    const heldJids = held.map((h) => h.jid);
    const freed = whenFreed(redis, heldJids, at);
    const runs = await redis.llen("chaos:runs");
    await until("work to flow again", async () => (await redis.llen("chaos:runs")) > runs + CONCURRENCY, 60_000);
    const resumed = (Date.now() - at) / 1000;
    // Every job ran, or none is left to run (a fetch whose reply the fault took loses its job).
    await until("every job, or nothing left to run", () => everyJobOrSettled(redis, sent), 120_000);
    const left = await slots(redis);
    const freedMs = await freed;
    const died = worker.died();
    await worker.stop();
    return row(
      "the worker's flows blackholed while its jobs hold every slot (new flows pass)",
      sent,
      await count(redis, sent),
      resumed,
      spansOf(worker.output(), Date.now()),
      `work flowing again ${resumed.toFixed(2)} s after the fault; ${held.length} slots held at the fault, ${freedHow(held, at, freedMs)}; slots still held after every job ran: ${left.length}; ${proxy.connections - before} new connections through the proxy${died ? "; the worker DIED" : ""}`,
      worker.label,
    );
  } finally {
    await worker.kill9();
    await proxy.close();
    redis.disconnect();
    await server.stop();
  }
}

/** True once every job ran, or once none waits anywhere and the runs stood still for 3 s. */
async function everyJobOrSettled(redis: Redis, sent: string[]): Promise<boolean> {
  if ((await count(redis, sent)).lost === 0) return true;
  const a = await redis.llen("chaos:runs");
  await sleep(3000);
  return (await pending(redis, "chaos")) === 0 && (await redis.llen("chaos:runs")) === a;
}

/** The three scenarios, one after the other. */
export async function throttledScenarios(): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  results.push(await throttledKill9(false));
  results.push(await throttledKill9(true));
  results.push(await throttledSentinelKill());
  return results;
}
