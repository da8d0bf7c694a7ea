// Add-on claims under a Sentinel failover with the master killed: Node cron
// pollers (or sidekiq-scheduler pollers), each on a connection of its own
// through Sentinel and with a heartbeat key that says it is alive, claim fire
// times due every second; the master is killed with SIGKILL, Sentinel
// promotes the replica, and they run on. What each server ran is read from its
// MONITOR (a replica's shows what its master streams to it): each claim (the
// gem's ZADD) and each push (the push script's HDEL of the in-flight entry).
// Every fire time of the window is then judged on the new master: claimed and
// pushed once, or more; claimed and never pushed (an in-flight entry left or
// not); not claimed because its claim ran on the old master only (lost with
// it); not claimed while no master was up (both gems claim only the fire time
// due now, as their Ruby pollers do); or never claimed at all.
// With `lagMs`, the replica is stopped (SIGSTOP) and its link cut the moment
// the old master runs a claim, and the master killed `lagMs` later (as in
// unique-lock-scenarios.ts): what the old master acknowledged meanwhile is lost.
import { Redis } from "ioredis";
import { silentLogger } from "../interop-tests/support/claim-poller.js";
import { Client } from "../src/core/client/client.js";
import { CronApi } from "../src/addons/sidekiq-cron/cron-api.js";
import { CronPoller } from "../src/addons/sidekiq-cron/poller.js";
import { connectRedis } from "../src/core/redis/connection.js";
import { SidekiqSchedulerPoller } from "../src/addons/sidekiq-scheduler/poller.js";
import { SchedulerApi } from "../src/addons/sidekiq-scheduler/scheduler-api.js";
import { newIdentity } from "../src/core/server/process-info.js";
import { ADDON_CLAIMS } from "../src/core/wire/bridge-keys.js";
import { sleep, startSentinelSetup, until, type ScenarioResult } from "./scenarios.js";

const DIALECT = "8.1.7";
const QUEUE = "chaos-claims-failover";
const POLLERS = 3;
const JOBS = 4;
const EVERY_SECOND = "* * * * * *";
/** How long the pollers run before the kill, and after the promotion. */
const BEFORE_MS = 8_000;
const AFTER_MS = 15_000;

/** One add-on: its jobs, its poller, and how its claims name a fire time. */
interface Kind {
  name: "cron" | "scheduler";
  define(redis: Redis, names: string[]): Promise<void>;
  /** Whether job number `i` fires at `second`. */
  fires(i: number, second: number): boolean;
  /** Starts one poller; returns how to stop it. */
  start(redis: Redis, identity: string, log: string[]): Promise<() => Promise<void>>;
  /** The claim set of a job. */
  set(name: string): string;
  /** `<job>@<epoch second>` for a claim set and member of this kind, else undefined. */
  fireTime(set: string, member: string): string | undefined;
}

// sidekiq-cron claims a fire time once it is a second old (fugit's previous_time)
// and skips one at or before its last enqueue's second, so an every-second job
// is enqueued every other second, in Ruby as in Node: half the jobs fire on
// even seconds, half on odd ones, so some fire time is claimed every second.
const CRON: Kind = {
  name: "cron",
  async define(redis, names) {
    const api = new CronApi({ redis });
    for (const [i, name] of names.entries())
      await api.create({ name, cron: `${i % 2}-59/2 * * * * *`, class: "ChaosClaimJob", queue: QUEUE, args: [name] });
  },
  fires: (i, second) => second % 2 === i % 2,
  async start(redis, identity, log) {
    const client = new Client({ redis, dialect: DIALECT });
    const logger = silentLogger(log);
    // Polls every 0.125 to 0.375 s, so each second is polled while a master is up.
    const poller = new CronPoller({
      redis,
      client,
      logger,
      identity,
      namespaces: ["default"],
      pollInterval: 0.25,
      initialWait: 0,
    });
    poller.start();
    return () => poller.stop();
  },
  set: (name) => `cron_job:default:${name}:enqueued`,
  fireTime(set, member) {
    const name = /^cron_job:default:(.+):enqueued$/.exec(set)?.[1];
    return name === undefined ? undefined : `${name}@${Date.parse(member) / 1000}`;
  },
};

const SCHEDULER: Kind = {
  name: "scheduler",
  async define(redis, names) {
    const api = new SchedulerApi({ redis });
    for (const name of names) await api.set(name, { cron: EVERY_SECOND, class: "ChaosClaimJob", queue: QUEUE });
  },
  fires: () => true,
  async start(redis, identity, log) {
    const client = new Client({ redis, dialect: DIALECT });
    const poller = new SidekiqSchedulerPoller({ redis, client, logger: silentLogger(log), identity, dynamicEvery: 1 });
    await poller.start();
    return () => poller.stop();
  },
  set: (name) => `sidekiq-scheduler:pushed:${name}`,
  fireTime(set, member) {
    const name = /^sidekiq-scheduler:pushed:(.+)$/.exec(set)?.[1];
    return name === undefined ? undefined : `${name}@${member}`;
  },
};

/** The fire time of an in-flight entry's field (`<kind>|<set>|<member>`). */
function fieldFireTime(kind: Kind, field: string): string | undefined {
  const last = field.lastIndexOf("|");
  return kind.fireTime(field.slice(field.indexOf("|") + 1, last), field.slice(last + 1));
}

/** What one server ran: each fire time's first claim and its pushes (own: run there, not streamed from a master). */
interface Ran {
  claims: Map<string, number>;
  pushes: Map<string, Array<{ at: number; own: boolean }>>;
  /** When it first claimed on its own (epoch ms): a promoted replica's first claim. */
  firstOwnClaim?: number;
}

/**
 * Follows a server's MONITOR; `onClaim` is called at each first claim of a
 * fire time. With `reconnect` (the replica's), it is back within 10 ms when
 * Sentinel, promoting the replica, closes its clients (CLIENT KILL TYPE
 * normal), before the pollers find the new master.
 */
async function watch(
  port: number,
  kind: Kind,
  { reconnect = false, onClaim }: { reconnect?: boolean; onClaim?: () => void },
): Promise<{ ran: Ran; stop(): void }> {
  const retryStrategy = reconnect ? () => 10 : () => null;
  const base = new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy });
  const monitor = await base.monitor();
  monitor.on("error", () => {}); // the old master is killed
  const ran: Ran = { claims: new Map(), pushes: new Map() };
  monitor.on("monitor", (time: string, args: string[], source: string) => {
    const at = Number(time) * 1000;
    const own = source === "lua";
    const cmd = args[0]?.toLowerCase();
    if (cmd === "zadd") {
      const fire = kind.fireTime(args[1] ?? "", args[3] ?? "");
      if (fire === undefined) return;
      if (own && ran.firstOwnClaim === undefined) ran.firstOwnClaim = at;
      if (ran.claims.has(fire)) return; // a later ZADD of the same member adds nothing
      ran.claims.set(fire, at);
      onClaim?.();
    } else if (cmd === "hdel" && args[1] === ADDON_CLAIMS) {
      const fire = fieldFireTime(kind, args[2] ?? "");
      if (fire !== undefined) ran.pushes.set(fire, [...(ran.pushes.get(fire) ?? []), { at, own }]);
    }
  });
  return { ran, stop: () => (monitor.disconnect(), base.disconnect()) };
}

/** The new master at the end: fire times claimed in the gem's sets, fire times with an entry left, jobs queued. */
interface Final {
  claimed: Set<string>;
  entries: Set<string>;
  queued: number;
  window: string[];
  killAt: number;
}

/** Each fire time of the window, judged against both servers' histories. */
function judge(final: Final, old: Ran, now: Ran) {
  const c = { claimed: 0, pushed: 0, duplicated: 0, withEntry: 0, noEntry: 0, lostWithOld: 0, outage: 0, never: 0 };
  let againAfterOld = 0;
  const outageTo = Math.floor((now.firstOwnClaim ?? Date.now()) / 1000);
  for (const fire of final.window) {
    const second = Number(fire.slice(fire.lastIndexOf("@") + 1));
    const pushes = now.pushes.get(fire) ?? [];
    if (final.claimed.has(fire)) {
      c.claimed++;
      if (pushes.length > 0) {
        c.pushed++;
        c.duplicated += pushes.length - 1;
      } else if (final.entries.has(fire)) c.withEntry++;
      else c.noEntry++;
      // Pushed on the old master and not streamed to the replica, then pushed on the new one.
      const lostPushes = (old.pushes.get(fire)?.length ?? 0) - pushes.filter((p) => !p.own).length;
      if (lostPushes > 0 && pushes.length > 0) againAfterOld++;
    } else if (old.claims.has(fire)) c.lostWithOld++;
    // Due from a second before the kill (cron claims a fire time a second late) to a second after the
    // first claim on the new master (a trigger held up by the outage is fired late, the next on time).
    else if (second >= Math.floor(final.killAt / 1000) - 1 && second <= outageTo + 1) c.outage++;
    else c.never++;
  }
  let allPushes = 0;
  for (const p of now.pushes.values()) allPushes += p.length;
  return { ...c, againAfterOld, allPushes, outageSeconds: ((now.firstOwnClaim ?? NaN) - final.killAt) / 1000 };
}

/** Reads what the new master holds for the window's fire times. */
async function readFinal(kind: Kind, redis: Redis, names: string[]): Promise<Omit<Final, "window" | "killAt">> {
  const claimed = new Set<string>();
  for (const name of names)
    for (const m of await redis.zrange(kind.set(name), 0, -1)) claimed.add(kind.fireTime(kind.set(name), m)!);
  const entries = new Set((await redis.hkeys(ADDON_CLAIMS)).map((f) => fieldFireTime(kind, f) ?? f));
  return { claimed, entries, queued: await redis.llen(`queue:${QUEUE}`) };
}

/** The pollers of `kind` through a failover with the master killed; the replica `lagMs` behind (0: in step). */
async function claimsUnderFailover(kind: Kind, lagMs: number): Promise<ScenarioResult> {
  const s = await startSentinelSetup();
  const source = { sentinels: [{ host: "127.0.0.1", port: s.sentinelPort }], name: "mymaster" };
  const names = Array.from({ length: JOBS }, (_, i) => `failover-${i}`);
  let armed = false;
  let cut = () => {};
  const claimRun = new Promise<void>((r) => (cut = r));
  const admin = new Redis({ port: s.master.port, maxRetriesPerRequest: 0, retryStrategy: () => null });
  admin.on("error", () => {});
  const onClaim = () => {
    if (!armed || !lagMs) return;
    armed = false;
    // At once, on a ready connection: this claim has reached the replica's socket, what the
    // master runs next (the winner's push, a few ms later) must not.
    process.kill(s.replica.pid, "SIGSTOP");
    void admin.call("CLIENT", "KILL", "TYPE", "replica").finally(cut);
  };
  const old = await watch(s.master.port, kind, { onClaim });
  const now = await watch(s.replica.port, kind, { reconnect: true });
  const conns: Redis[] = [];
  const stops: Array<() => Promise<void>> = [];
  const log: string[] = [];
  try {
    const setup = connectRedis(source).redis;
    conns.push(setup);
    await kind.define(setup, names);
    for (let i = 0; i < POLLERS; i++) {
      const { redis } = connectRedis(source);
      conns.push(redis);
      const identity = newIdentity();
      await redis.hset(identity, "info", "{}", "beat", String(Date.now() / 1000)); // alive to recovery
      stops.push(await kind.start(redis, identity, log));
    }
    const startAt = Date.now();
    await sleep(BEFORE_MS);
    armed = true;
    if (lagMs) {
      await Promise.race([claimRun, sleep(10_000)]);
      await sleep(lagMs);
    }
    const killAt = Date.now();
    process.kill(s.master.pid, "SIGKILL");
    if (lagMs) process.kill(s.replica.pid, "SIGCONT");
    const replica = new Redis({ port: s.replica.port });
    conns.push(replica);
    await until("the replica to become master", async () => (await replica.role())[0] === "master", 60_000);
    const promoted = (Date.now() - killAt) / 1000;
    await sleep(AFTER_MS);
    const stopAt = Date.now();
    await Promise.all(stops.splice(0).map((stop) => stop()));
    const window: string[] = [];
    for (let sec = Math.ceil(startAt / 1000) + 1; sec <= Math.floor(stopAt / 1000) - 1; sec++)
      for (const [i, name] of names.entries()) if (kind.fires(i, sec)) window.push(`${name}@${sec}`);
    const final = { ...(await readFinal(kind, replica, names)), window, killAt };
    const j = judge(final, old.ran, now.ran);
    const lost = j.withEntry + j.noEntry + j.never;
    const ownRecovered = log.filter((l) => l.includes("claimed by this process")).length;
    const errors = log.filter((l) => !/loaded|to poll|claimed by/.test(l)).length;
    const notes = [
      `${POLLERS} pollers, ${JOBS} jobs, ${window.length} fire times over ${(stopAt - startAt) / 1000 - 2} s`,
      `claimed on the new master ${j.claimed}, pushed ${j.pushed}`,
      `claimed never pushed: ${j.withEntry} with an in-flight entry left, ${j.noEntry} without`,
      `never claimed: ${j.lostWithOld} lost with the old master (its claim ran there only), ${j.outage} while no master was up, ${j.never} otherwise`,
      `pushed again on the new master after a push lost with the old one: ${j.againAfterOld}`,
      `in-flight entries left: ${final.entries.size}`,
      `promoted ${promoted.toFixed(1)} s after the kill, first claim on the new master ${j.outageSeconds.toFixed(1)} s after it`,
      `queue ${final.queued} jobs, pushes seen on its MONITOR ${j.allPushes}`,
      `finished by their own poller's recovery: ${ownRecovered}; poller errors logged: ${errors}`,
    ];
    return {
      scenario: `${kind.name === "cron" ? "cron pollers" : "sidekiq-scheduler"} through a Sentinel failover, master killed${lagMs ? `, replica ${lagMs} ms behind (cut at a claim)` : ""}`,
      system: "sidekiq-bridge (claim recovery)",
      sent: window.length,
      completed: j.pushed,
      lost,
      duplicated: j.duplicated,
      recoverySeconds: j.outageSeconds,
      notes: notes.join("; "),
    };
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
    for (const c of conns) c.disconnect();
    admin.disconnect();
    old.stop();
    now.stop();
    if (lagMs) process.kill(s.replica.pid, "SIGCONT");
    await s.stop();
  }
}

/** Cron pollers through a failover with the master killed; the replica `lagMs` behind at the kill. */
export function cronClaimSentinelKill(lagMs = 0): Promise<ScenarioResult> {
  return claimsUnderFailover(CRON, lagMs);
}

/** sidekiq-scheduler pollers through a failover with the master killed; the replica `lagMs` behind. */
export function schedulerClaimSentinelKill(lagMs = 0): Promise<ScenarioResult> {
  return claimsUnderFailover(SCHEDULER, lagMs);
}
