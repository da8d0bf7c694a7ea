// npm run chaos -- --network: the worker and the client through a fault proxy
// on 127.0.0.1 (harness/fault-proxy.ts) that fails as production networks do,
// side by side with Ruby Sidekiq 8.1.7 on the same Redis and the same fault.
// A producer pushes 20 jobs a second straight to Redis; each job records its
// run straight to Redis too, so only the worker's own connections cross the
// fault. Each row: seconds until jobs flow again, until the heartbeat is back,
// and what happened to every job.
import type { ChildProcess } from "node:child_process";
import { Redis } from "ioredis";
import type { SidekiqBackend, SidekiqProcess } from "../harness/backend.js";
import { startFaultProxy, type FaultProxy } from "../harness/fault-proxy.js";
import { startRedis } from "../harness/redis-server.js";
import type { SidekiqTarget } from "../harness/versions.js";
import { Client } from "../src/core/client/client.js";
import { count, runsSettled, type ScenarioResult, sleep, spawnNodeWorker, stopChild, until } from "./scenarios.js";

/** `reset`, `cut`: the next reply carrying a job is reset (RST) or cut in the middle of its payload (then silent). */
export type NetworkFault = "blackhole" | "partition" | "reset" | "cut";
export type NetworkSystem = "node-reliable" | "node-basic" | "ruby";

const QUEUE = "net";
const PARTITION_SECONDS = 20;
const FAULT_NAMES: Record<NetworkFault, string> = {
  blackhole: "flows blackholed",
  partition: `partition ${PARTITION_SECONDS} s, then heal`,
  reset: "a fetch reply reset mid-way (RST)",
  cut: "a fetch reply cut mid-job, then silent",
};

interface Running {
  label: string;
  stop(): Promise<void>;
}

function startWorker(
  system: NetworkSystem,
  backend: SidekiqBackend,
  target: SidekiqTarget,
  proxyUrl: string,
  recordUrl: string,
  concurrency: number,
): Promise<Running> | Running {
  if (system === "ruby") {
    return backend
      .startSidekiq(target, {
        queues: [QUEUE],
        concurrency,
        require: "lib/chaos_jobs.rb",
        env: { REDIS_URL: proxyUrl, CHAOS_RECORD_URL: recordUrl },
      })
      .then((p: SidekiqProcess) => ({ label: `Ruby Sidekiq ${target.version}`, stop: () => p.stop() }));
  }
  const basic = system === "node-basic";
  const child: ChildProcess = spawnNodeWorker(
    proxyUrl,
    concurrency,
    basic ? ["--fetch", "basic"] : [],
    { CHAOS_RECORD_URL: recordUrl },
    { queues: [QUEUE] },
  );
  return { label: `sidekiq-bridge (${basic ? "basic" : "reliable"} fetch)`, stop: () => stopChild(child) };
}

/** A producer pushing `perSecond` ChaosJobs straight to Redis until stopped; returns their jids. */
function producer(url: string, perSecond: number) {
  const client = new Client({ redis: url, dialect: "8.1.7", validate: false });
  const sent: Array<{ jid: string; at: number }> = [];
  let on = true;
  const loop = (async () => {
    while (on) {
      const jid = await client.push({ class: "ChaosJob", queue: QUEUE, args: [0] });
      sent.push({ jid: jid!, at: Date.now() });
      await sleep(1000 / perSecond);
    }
  })();
  return {
    sent,
    async stop() {
      on = false;
      await loop;
      await client.close();
    },
  };
}

/** The newest heartbeat (epoch ms) among the processes serving QUEUE. */
async function newestBeat(redis: Redis): Promise<number> {
  let newest = 0;
  for (const id of await redis.smembers("processes")) {
    const beat = Number(await redis.hget(id, "beat"));
    if (beat > 0) newest = Math.max(newest, beat < 1e11 ? beat * 1000 : beat);
  }
  return newest;
}

/**
 * A worker on `system` through the proxy while the producer runs; then the
 * fault: a blackhole of every flow (new ones pass), or a partition of
 * PARTITION_SECONDS then healed. Measured from the fault (blackhole) or the
 * heal (partition): the first run of a job pushed after it, the first beat
 * after it.
 */
export async function workerThroughFault(
  backend: SidekiqBackend,
  target: SidekiqTarget,
  system: NetworkSystem,
  fault: NetworkFault,
): Promise<ScenarioResult> {
  const server = await startRedis();
  const url = `${server.url}/0`;
  const redis = new Redis(url);
  const proxy: FaultProxy = await startFaultProxy(server.port);
  const worker = await startWorker(system, backend, target, `${proxy.url}/0`, url, 5);
  const produce = producer(url, 20);
  try {
    await until("jobs to flow", async () => (await redis.llen("chaos:runs")) >= 40, 60_000);
    if (fault === "blackhole") proxy.blackhole();
    else if (fault === "reset") proxy.resetMidReply("ChaosJob");
    else if (fault === "cut") proxy.cutMidBulk("ChaosJob");
    else proxy.partition();
    if (fault === "partition") {
      await sleep(PARTITION_SECONDS * 1000);
      proxy.heal();
    }
    const from = Date.now();
    const after = new Set<string>();
    let resumed = NaN;
    let beatBack = NaN;
    const deadline = from + 90_000;
    while (Date.now() < deadline && (Number.isNaN(resumed) || Number.isNaN(beatBack))) {
      for (const s of produce.sent) if (s.at > from) after.add(s.jid);
      if (Number.isNaN(resumed)) {
        const runs = await redis.lrange("chaos:runs", -200, -1);
        if (runs.some((r) => after.has(r.split(":")[0]!))) resumed = (Date.now() - from) / 1000;
      }
      if (Number.isNaN(beatBack) && (await newestBeat(redis)) > from) beatBack = (Date.now() - from) / 1000;
      await sleep(100);
    }
    await produce.stop();
    const sent = produce.sent.map((s) => s.jid);
    // What can still run does: the queue drains and the runs settle.
    await until("the queue to drain", async () => (await redis.llen(`queue:${QUEUE}`)) === 0, 120_000).catch(
      () => undefined,
    );
    await runsSettled(redis, 3000);
    const counted = await count(redis, sent);
    const processes = await redis.scard("processes");
    return {
      scenario: FAULT_NAMES[fault],
      system: worker.label,
      sent: sent.length,
      ...counted,
      recoverySeconds: resumed,
      notes:
        `jobs flow again ${Number.isNaN(resumed) ? "never (90 s)" : `${resumed.toFixed(1)} s`} after the ` +
        `${fault === "partition" ? "heal" : "fault"}; heartbeat back ${Number.isNaN(beatBack) ? "never (90 s)" : `${beatBack.toFixed(1)} s`}; ` +
        `${proxy.connections} connections through the proxy; ${processes} process(es) in the process set at the end`,
    };
  } finally {
    await produce.stop().catch(() => undefined);
    await worker.stop().catch(() => undefined);
    await proxy.close();
    redis.disconnect();
    await server.stop();
  }
}

/** A backlog of `total` ChaosJobs drained through `ms` of latency each way: jobs a second. */
export async function workerUnderLatency(
  backend: SidekiqBackend,
  target: SidekiqTarget,
  system: NetworkSystem,
  ms = 150,
  total = 300,
  concurrency = 5,
): Promise<ScenarioResult> {
  const server = await startRedis();
  const url = `${server.url}/0`;
  const redis = new Redis(url);
  const proxy = await startFaultProxy(server.port);
  proxy.latency(ms);
  const client = new Client({ redis: url, dialect: "8.1.7", validate: false });
  const sent = (
    await client.pushBulk({ class: "ChaosJob", queue: QUEUE, args: Array.from({ length: total }, () => [0]) })
  ).filter((j): j is string => j !== null);
  await client.close();
  const t0 = Date.now();
  const worker = await startWorker(system, backend, target, `${proxy.url}/0`, url, concurrency);
  try {
    // From the first run, so start-up (slower through the latency, and Ruby's boot) is not counted.
    await until("the first run", async () => (await redis.llen("chaos:runs")) > 0, 120_000);
    const first = Date.now();
    await until("the backlog to drain", async () => (await redis.llen("chaos:runs")) >= total, 300_000);
    const seconds = (Date.now() - first) / 1000;
    const counted = await count(redis, sent);
    return {
      scenario: `latency ${ms} ms each way, backlog of ${total}, concurrency ${concurrency}`,
      system: worker.label,
      sent: sent.length,
      ...counted,
      recoverySeconds: (first - t0) / 1000,
      notes: `${((total - 1) / seconds).toFixed(1)} jobs/s after the first run (first run ${((first - t0) / 1000).toFixed(1)} s after start)`,
    };
  } finally {
    await worker.stop().catch(() => undefined);
    await proxy.close();
    redis.disconnect();
    await server.stop();
  }
}

/**
 * A client pushing every 50 ms through the proxy for 15 s; the flows are
 * blackholed after 3 s. The longest push, and how each ended.
 */
export async function clientThroughBlackhole(
  backend: SidekiqBackend,
  target: SidekiqTarget,
  system: "node" | "ruby",
  bulk = 0,
): Promise<ScenarioResult> {
  const server = await startRedis();
  const url = `${server.url}/0`;
  const redis = new Redis(url);
  const proxy = await startFaultProxy(server.port);
  const pushes: Array<{ at: number; ms: number; outcome: string }> = [];
  try {
    setTimeout(() => proxy.blackhole(), 3000);
    if (system === "ruby") {
      const r = await backend.runRuby(target, "lib/network_push_loop.rb", [], {
        env: { REDIS_URL: `${proxy.url}/0`, PUSH_SECONDS: "15", PUSH_BULK: String(bulk) },
        timeoutMs: 120_000,
      });
      for (const line of r.stdout.trim().split("\n")) {
        const [at, ms, outcome] = line.split(" ");
        if (outcome) pushes.push({ at: Number(at), ms: Number(ms), outcome });
      }
    } else {
      const client = new Client({ redis: `${proxy.url}/0`, dialect: "8.1.7", validate: false, warn: () => {} });
      const end = Date.now() + 15_000;
      while (Date.now() < end) {
        const at = Date.now();
        const pushed =
          bulk > 0
            ? client.pushBulk({ class: "ChaosJob", queue: "netpush", args: Array.from({ length: bulk }, () => [0]) })
            : client.push({ class: "ChaosJob", queue: "netpush", args: [0] });
        const outcome = await pushed.then(
          () => "ok",
          (e: Error) => e.name,
        );
        pushes.push({ at, ms: Date.now() - at, outcome });
        await sleep(50);
      }
      await client.close();
    }
    const longest = pushes.reduce((a, b) => (b.ms > a.ms ? b : a), pushes[0]!);
    const failed = pushes.filter((p) => p.outcome !== "ok");
    const written = await redis.llen("queue:netpush");
    const ok = (pushes.length - failed.length) * Math.max(1, bulk);
    return {
      scenario:
        bulk > 0 ? `a bulk push of ${bulk} every 50 ms, flows blackholed` : "a push every 50 ms, flows blackholed",
      system: system === "ruby" ? `Ruby Sidekiq ${target.version} client` : "sidekiq-bridge Client",
      sent: pushes.length * Math.max(1, bulk),
      completed: written,
      lost: Math.max(0, ok - written),
      duplicated: Math.max(0, written - ok),
      recoverySeconds: longest.ms / 1000,
      notes:
        `longest push ${(longest.ms / 1000).toFixed(1)} s (${longest.outcome}); ${failed.length} failed` +
        (failed.length ? ` (${[...new Set(failed.map((f) => f.outcome))].join(", ")})` : "") +
        `; ${written} jobs in the queue for ${ok} jobs of pushes that succeeded`,
    };
  } finally {
    await proxy.close();
    redis.disconnect();
    await server.stop();
  }
}

/**
 * Sidekiq's scheduled poller through a blackhole: 100 jobs scheduled over the
 * next 20 s, the worker's flows blackholed 5 s in. Each must run once: the
 * poller moves a job from the schedule to its queue in one script, so a
 * reply lost with the connection may not move it twice, nor lose it.
 */
export async function scheduledThroughBlackhole(
  backend: SidekiqBackend,
  target: SidekiqTarget,
  system: NetworkSystem,
): Promise<ScenarioResult> {
  const server = await startRedis();
  const url = `${server.url}/0`;
  const redis = new Redis(url);
  const proxy = await startFaultProxy(server.port);
  const client = new Client({ redis: url, dialect: "8.1.7", validate: false });
  const start = Date.now() / 1000;
  const at = Array.from({ length: 100 }, (_, i) => start + 2 + (i * 20) / 100);
  const sent = (await client.pushBulk({ class: "ChaosJob", queue: QUEUE, args: at.map(() => [0]), at })).filter(
    (j): j is string => j !== null,
  );
  await client.close();
  const worker = await startWorker(system, backend, target, `${proxy.url}/0`, url, 5);
  try {
    await sleep(Math.max(0, (start + 5) * 1000 - Date.now()));
    proxy.blackhole();
    const fault = Date.now();
    await until("every scheduled job to run", async () => (await count(redis, sent)).lost === 0, 120_000).catch(
      () => undefined,
    );
    const last = (Date.now() - fault) / 1000;
    await runsSettled(redis, 3000);
    return {
      scenario: "scheduled poller, 100 jobs over 20 s, flows blackholed 5 s in",
      system: worker.label,
      sent: sent.length,
      ...(await count(redis, sent)),
      recoverySeconds: last,
      notes: `every job ran ${last.toFixed(1)} s after the fault (the last was due ${(start + 22 - fault / 1000).toFixed(1)} s after it); ${await redis.zcard("schedule")} left in the schedule`,
    };
  } finally {
    await worker.stop().catch(() => undefined);
    await proxy.close();
    redis.disconnect();
    await server.stop();
  }
}
