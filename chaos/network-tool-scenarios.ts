// npm run chaos -- --network, the rows past the worker and the client: the
// recurring-job pollers (sidekiq-cron and sidekiq-scheduler, the gems' own
// Ruby pollers in Sidekiq 8.1.7 beside Node's) and the operator tools (the
// dashboard's Retry All, `migrate move`) with their flows blackholed or a
// reply reset mid-way by the fault proxy on 127.0.0.1.
import { Redis } from "ioredis";
import type { SidekiqBackend } from "../harness/backend.js";
import { startFaultProxy } from "../harness/fault-proxy.js";
import { peersRubyLib } from "../harness/local-backend.js";
import { freePort, startRedis } from "../harness/redis-server.js";
import type { SidekiqTarget } from "../harness/versions.js";
import { CronApi } from "../src/addons/sidekiq-cron/cron-api.js";
import { enqueuedKey } from "../src/addons/sidekiq-cron/keys.js";
import { moveJobs } from "../src/tools/migration/move.js";
import { connectRedis } from "../src/core/redis/connection.js";
import { startWebServer } from "../src/assembly/web.js";
import { Worker } from "../src/assembly/worker.js";
import { type ScenarioResult, sleep, until } from "./scenarios.js";

export type PollerSystem = "node-cron" | "ruby-cron" | "ruby-scheduler";

const POLL_QUEUE = "netpoll";
const CRON_PEERS = ["sidekiq-cron-2.3.1", "fugit-1.13.0", "cronex-0.15.0"];
const SCHEDULER_PEERS = ["sidekiq-scheduler-6.0.2", "rufus-scheduler-3.9.2", "fugit-1.13.0"];

/** Seconds between the first and the last claimed with no claim. */
function skippedSeconds(scores: readonly number[]): number {
  const seconds = [...new Set(scores.map((s) => Math.floor(s)))].sort((a, b) => a - b);
  let skipped = 0;
  for (let i = 1; i < seconds.length; i++) skipped += seconds[i]! - seconds[i - 1]! - 1;
  return skipped;
}

async function startPoller(
  system: PollerSystem,
  backend: SidekiqBackend,
  target: SidekiqTarget,
  fixtures: string,
  proxyUrl: string,
): Promise<{ label: string; stop(): Promise<unknown> }> {
  if (system === "node-cron") {
    const worker = new Worker({
      redis: proxyUrl,
      dialect: target.version,
      queues: [`${POLL_QUEUE}-none`],
      scheduler: false,
      cron: { pollInterval: 1, initialWait: 0 },
    });
    await worker.start();
    return { label: "sidekiq-bridge (Node cron poller)", stop: () => worker.stop() };
  }
  const cron = system === "ruby-cron";
  const schedule = { net: { cron: "* * * * * *", class: "ChaosClaimJob", queue: POLL_QUEUE } };
  const p = await backend.startSidekiq(target, {
    queues: [`${POLL_QUEUE}-none`],
    require: cron ? "lib/cron_jobs.rb" : "lib/scheduler_jobs.rb",
    env: {
      REDIS_URL: proxyUrl,
      RUBYLIB: peersRubyLib(fixtures, cron ? CRON_PEERS : SCHEDULER_PEERS),
      ...(cron
        ? { BRIDGE_CRON_POLL: "1" }
        : { BRIDGE_SCHEDULE: JSON.stringify(schedule), BRIDGE_SCHEDULER_DYNAMIC: "false" }),
    },
  });
  return {
    label: cron
      ? `sidekiq-cron 2.3.1 on Ruby Sidekiq ${target.version}`
      : `sidekiq-scheduler 6.0.2 on Ruby Sidekiq ${target.version}`,
    stop: () => p.stop(),
  };
}

/**
 * A schedule firing every second, claimed by `system`'s poller through the
 * proxy; its flows blackholed 8 s in. Each claimed fire time must be pushed
 * once; fire times with no claim between the first and the last are counted
 * as skipped (sidekiq-cron enqueues only the latest fire time a poll finds
 * due, by design; rufus runs each trigger on time in a thread of its own).
 */
export async function pollerThroughBlackhole(
  backend: SidekiqBackend,
  target: SidekiqTarget,
  fixtures: string,
  system: PollerSystem,
): Promise<ScenarioResult> {
  const server = await startRedis();
  const url = `${server.url}/0`;
  const redis = new Redis(url);
  const proxy = await startFaultProxy(server.port);
  const cron = system !== "ruby-scheduler";
  if (cron)
    await new CronApi({ redis }).create({
      name: "net",
      cron: "* * * * * *",
      class: "ChaosClaimJob",
      queue: POLL_QUEUE,
    });
  const claimsKey = cron ? enqueuedKey("net") : "sidekiq-scheduler:pushed:net";
  // sidekiq-cron's save marks the current fire time as enqueued (no push), so the job does not fire at once.
  const marked = new Set(await redis.zrange(claimsKey, 0, -1));
  const poller = await startPoller(system, backend, target, fixtures, `${proxy.url}/0`);
  try {
    await until("claims", async () => (await redis.zcard(claimsKey)) >= 5, 60_000);
    const before = await redis.zcard(claimsKey);
    const fault = Date.now();
    proxy.blackhole();
    await until("claimed again", async () => (await redis.zcard(claimsKey)) > before + 1, 60_000);
    const resumed = (Date.now() - fault) / 1000;
    await sleep(5000);
    await poller.stop();
    const flat = await redis.zrange(claimsKey, 0, -1, "WITHSCORES");
    const scores = flat.filter((m, i) => i % 2 === 1 && !marked.has(flat[i - 1]!)).map(Number);
    const pushed = await redis.llen(`queue:${POLL_QUEUE}`);
    return {
      scenario: "a schedule every second, the poller's flows blackholed",
      system: poller.label,
      sent: scores.length,
      completed: pushed,
      lost: Math.max(0, scores.length - pushed),
      duplicated: Math.max(0, pushed - scores.length),
      recoverySeconds: resumed,
      notes:
        `claimed again ${resumed.toFixed(1)} s after the fault; ${skippedSeconds(scores)} fire times skipped between the first and the last claimed (${scores.length} claimed, ${pushed} pushed)` +
        (cron ? "; sidekiq-cron claims only the latest fire time each poll finds due, so it skips by design" : ""),
    };
  } finally {
    await poller.stop().catch(() => undefined);
    await proxy.close();
    redis.disconnect();
    await server.stop();
  }
}

/** `n` retry entries (due in an hour, so no poller takes them) with jids 0..n-1, in one pipeline per 1,000. */
async function seedRetries(redis: Redis, n: number): Promise<string[]> {
  const jids: string[] = [];
  const now = Date.now() / 1000;
  for (let from = 0; from < n; from += 1000) {
    const p = redis.pipeline();
    for (let i = from; i < Math.min(n, from + 1000); i++) {
      const jid = i.toString(16).padStart(24, "0");
      jids.push(jid);
      const job = { class: "ChaosJob", queue: "netretry", args: [i], jid, retry: true, retry_count: 1 };
      p.zadd("retry", now + 3600 + i, JSON.stringify({ ...job, failed_at: now, error_class: "E", error_message: "x" }));
    }
    await p.exec();
  }
  return jids;
}

/** Each jid's count in `lists`: lost (0) and duplicated (more than 1). */
async function tallyLists(redis: Redis, jids: readonly string[], lists: readonly string[], sets: readonly string[]) {
  const seen = new Map<string, number>();
  for (const key of lists)
    for (const raw of await redis.lrange(key, 0, -1)) {
      const jid = (JSON.parse(raw) as { jid: string }).jid;
      seen.set(jid, (seen.get(jid) ?? 0) + 1);
    }
  for (const key of sets)
    for (const raw of await redis.zrange(key, 0, -1)) {
      const jid = (JSON.parse(raw) as { jid: string }).jid;
      seen.set(jid, (seen.get(jid) ?? 0) + 1);
    }
  return {
    lost: jids.filter((j) => !seen.has(j)).length,
    duplicated: jids.filter((j) => (seen.get(j) ?? 0) > 1).length,
  };
}

/**
 * The dashboard's Retry All on 20,000 retries through the proxy, the flows
 * blackholed once a third moved; or Ruby's Web UI action (RetrySet#retry_all)
 * on the same fault. How long the action took, and every job in its queue
 * or the retry set exactly once.
 */
export async function retryAllThroughBlackhole(
  backend: SidekiqBackend,
  target: SidekiqTarget,
  system: "node" | "ruby",
  n = 20_000,
): Promise<ScenarioResult> {
  const server = await startRedis();
  const url = `${server.url}/0`;
  const redis = new Redis(url);
  const proxy = await startFaultProxy(server.port);
  const jids = await seedRetries(redis, n);
  let over = false;
  const watch = (async () => {
    await until("a third moved", async () => over || (await redis.zcard("retry")) <= (n * 2) / 3, 120_000);
    if (over) return NaN;
    proxy.blackhole();
    return Date.now();
  })().catch(() => NaN);
  let outcome: string;
  const t0 = Date.now();
  try {
    if (system === "ruby") {
      const r = await backend.runRuby(target, "lib/network_retry_all.rb", [], {
        env: { REDIS_URL: `${proxy.url}/0` },
        timeoutMs: 300_000,
      });
      outcome = r.stdout.trim().split("\n").pop() ?? "no output";
    } else {
      const port = await freePort();
      const web = await startWebServer({ redis: `${proxy.url}/0`, port });
      try {
        const base = `http://127.0.0.1:${port}`;
        const page = await fetch(`${base}/retries`);
        const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0]!;
        const token = /name="authenticity_token" value="([^"]+)"/.exec(await page.text())?.[1] ?? "";
        const res = await fetch(`${base}/retries/all`, {
          method: "POST",
          redirect: "manual",
          headers: { cookie, origin: base, "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ action: "retry", authenticity_token: token }).toString(),
        });
        outcome = `HTTP ${res.status} to ${decodeURIComponent(res.headers.get("location") ?? "")}`;
      } finally {
        await web.close();
      }
    }
    const seconds = (Date.now() - t0) / 1000;
    over = true;
    const fault = await watch;
    const tally = await tallyLists(redis, jids, ["queue:netretry"], ["retry"]);
    return {
      scenario: `Retry All of ${n.toLocaleString("en")} retries, flows blackholed a third of the way`,
      system:
        system === "ruby"
          ? `Ruby Sidekiq ${target.version} (RetrySet#retry_all, the Web UI's action)`
          : "sidekiq-bridge dashboard",
      sent: n,
      completed: n - tally.lost,
      ...tally,
      recoverySeconds: Number.isNaN(fault) ? NaN : (Date.now() - fault) / 1000,
      notes: `the action took ${seconds.toFixed(1)} s (${outcome}); ${await redis.llen("queue:netretry")} in the queue, ${await redis.zcard("retry")} left in the retry set; ${Number.isNaN(fault) ? "it ended before a third moved: no fault" : "fault applied"}`,
    };
  } finally {
    await proxy.close();
    redis.disconnect();
    await server.stop();
  }
}

/**
 * `migrate move` of 20,000 jobs through the proxy, the reply of one of its
 * batch scripts reset mid-way once a third moved; run again by the operator
 * if it stopped. Every job in exactly one of the two queues.
 */
export async function moveResetMidBatch(n = 20_000): Promise<ScenarioResult> {
  const server = await startRedis();
  const url = `${server.url}/0`;
  const redis = new Redis(url);
  const proxy = await startFaultProxy(server.port);
  const jids: string[] = [];
  for (let from = 0; from < n; from += 1000) {
    const p = redis.pipeline();
    for (let i = from; i < Math.min(n, from + 1000); i++) {
      const jid = i.toString(16).padStart(24, "0");
      jids.push(jid);
      p.lpush("queue:netfrom", JSON.stringify({ class: "ChaosJob", queue: "netfrom", args: [i], jid, retry: true }));
    }
    await p.exec();
  }
  const { redis: via } = connectRedis(`${proxy.url}/0`);
  try {
    let over = false;
    const fault = (async () => {
      await until("a third moved", async () => over || (await redis.llen("queue:netto")) >= n / 3, 120_000);
      if (over) return NaN;
      proxy.resetMidReply();
      return Date.now();
    })().catch(() => NaN);
    const t0 = Date.now();
    const runs: string[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const outcome = await moveJobs(via, { from: "netfrom", to: "netto" }).then(
        (r) => `moved ${r.moved}, ${r.remaining} remaining`,
        (e: Error) => `${e.name}: ${e.message}`,
      );
      runs.push(outcome);
      if (outcome.startsWith("moved") && (await redis.llen("queue:netfrom")) === 0) break;
    }
    over = true;
    const at = await fault;
    const tally = await tallyLists(redis, jids, ["queue:netfrom", "queue:netto"], []);
    return {
      scenario: `migrate move of ${n.toLocaleString("en")} jobs, a batch's reply reset mid-way`,
      system: "sidekiq-bridge migrate move",
      sent: n,
      completed: n - tally.lost,
      ...tally,
      recoverySeconds: (Date.now() - at) / 1000,
      notes: `${runs.length} run(s) (${runs.join("; ")}) in ${((Date.now() - t0) / 1000).toFixed(1)} s; ${await redis.llen("queue:netto")} in the destination, ${await redis.llen("queue:netfrom")} left in the source`,
    };
  } finally {
    via.disconnect();
    await proxy.close();
    redis.disconnect();
    await server.stop();
  }
}
