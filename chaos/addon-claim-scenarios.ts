// Add-on pollers under faults: a Node cron poller or sidekiq-scheduler killed
// with SIGKILL between its claim and its push, round after round (alternately
// after the claim and after storing the payload), with Redis killed and
// restarted (AOF always) half-way, then one live Node poller left to recover.
// Counted against the gem's own claims: every fire time claimed in the gem's
// set must be in the queue exactly once (lost: claimed and never pushed;
// duplicated: pushed more than once), and no in-flight claim may be left.
// Clean-up comes from sidekiq-bridge's recovery (src/addons/pollers/claims.ts): the gems
// have none, and their own poller skips a fire time killed at this point
// (interop-tests/cron-claim-recovery.test.ts, scheduler-claim-recovery.test.ts).
import { rmSync } from "node:fs";
import { Redis } from "ioredis";
import { killClaimPoller, silentLogger, type ClaimStage } from "../interop-tests/support/claim-poller.js";
import { startFaultProxy } from "../harness/fault-proxy.js";
import { startRedis } from "../harness/redis-server.js";
import { connectRedis } from "../src/core/redis/connection.js";
import { Client } from "../src/core/client/client.js";
import { CronApi } from "../src/addons/sidekiq-cron/cron-api.js";
import { CronPoller } from "../src/addons/sidekiq-cron/poller.js";
import { SidekiqSchedulerPoller } from "../src/addons/sidekiq-scheduler/poller.js";
import { SchedulerApi } from "../src/addons/sidekiq-scheduler/scheduler-api.js";
import { newIdentity } from "../src/core/server/process-info.js";
import { ADDON_CLAIMS } from "../src/core/wire/bridge-keys.js";
import { sleep, startDurableRedis, until, type ScenarioResult } from "./scenarios.js";

const DIALECT = "8.1.7";
const QUEUE = "chaos-claims";

/** `rounds` kills of a poller at its pause point, Redis restarted after half of them. */
async function killRounds(
  rounds: number,
  kill: (url: string, stage: ClaimStage, round: number) => Promise<void>,
): Promise<{ url: string; redis: Redis; stopAll: () => Promise<void> }> {
  const durable = await startDurableRedis();
  let { server } = durable;
  const { cfg, url, redis, dir } = durable;
  for (let i = 0; i < rounds; i++) {
    await kill(url, i % 2 === 0 ? "claimed" : "prepared", i);
    if (i === Math.floor(rounds / 2) - 1) {
      // Redis killed mid-scenario: the claims and in-flight entries must survive it (AOF always).
      process.kill(server.pid, "SIGKILL");
      await server.stop();
      server = await startRedis(cfg);
      await until("Redis back", async () => (await redis.ping()) === "PONG", 30_000);
    }
  }
  return {
    url,
    redis,
    stopAll: async () => {
      redis.disconnect();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The jobs in the queue per claimed fire time, judged against the claims: lost, duplicated. */
function tally(
  claimed: string[],
  pushed: string[],
): { sent: number; completed: number; lost: number; duplicated: number } {
  const counts = new Map<string, number>();
  for (const p of pushed) counts.set(p, (counts.get(p) ?? 0) + 1);
  let lost = 0;
  let duplicated = 0;
  for (const c of claimed) {
    const n = counts.get(c) ?? 0;
    if (n === 0) lost++;
    else duplicated += n - 1;
  }
  return { sent: claimed.length, completed: claimed.length - lost, lost, duplicated };
}

/** The cron poller killed between claim and push, `rounds` times (one cron job each), then recovered. */
export async function cronClaimKill(rounds = 6): Promise<ScenarioResult> {
  const now = Math.ceil(Date.now() / 60_000) * 60_000 + 2_000;
  const fireTime = new Date(Math.floor(now / 60_000) * 60_000).toISOString().replace(".000Z", "Z");
  const names = Array.from({ length: rounds }, (_, i) => `claim-${i}`);
  const run = await killRounds(rounds, async (url, stage, i) => {
    const redis = new Redis(url);
    await new CronApi({ redis }).create({
      name: names[i]!,
      cron: "* * * * *",
      class: "ChaosClaimJob",
      queue: QUEUE,
      args: [names[i]!],
    });
    redis.disconnect();
    await killClaimPoller({ url, target: { version: DIALECT } }, stage, { CLAIM_KIND: "cron", CLAIM_NOW: String(now) });
  });
  const { redis } = run;
  try {
    const held = await redis.hlen(ADDON_CLAIMS);
    const start = Date.now();
    const poller = new CronPoller({
      redis,
      client: new Client({ redis, dialect: DIALECT }),
      logger: silentLogger(),
      identity: newIdentity(),
      namespaces: ["default"],
      now: () => now,
    });
    await until(
      "every claim recovered",
      async () => (await poller.pollOnce(), (await redis.hlen(ADDON_CLAIMS)) === 0),
      60_000,
    );
    const recoverySeconds = (Date.now() - start) / 1000;
    const claimed: string[] = [];
    for (const n of names)
      if ((await redis.zscore(`cron_job:default:${n}:enqueued`, fireTime)) !== null) claimed.push(n);
    const pushed = (await redis.lrange(`queue:${QUEUE}`, 0, -1)).map(
      (j) => (JSON.parse(j) as { args: string[] }).args[0]!,
    );
    const t = tally(claimed, pushed);
    const left = await redis.hlen(ADDON_CLAIMS);
    return {
      scenario: `cron poller kill -9 between claim and push (${rounds} rounds), Redis restarted mid-way`,
      system: "sidekiq-bridge (claim recovery)",
      ...t,
      recoverySeconds,
      notes: `${held} in-flight claims before the last poller (each killed poller's successor finished its predecessor's at its first poll), ${left} after; ${claimed.length}/${rounds} fire times claimed in the gem's :enqueued sets; clean-up by sidekiq-bridge's recovery (sidekiq-cron's own poller skips such a fire time)`,
    };
  } finally {
    await run.stopAll();
  }
}

/** sidekiq-scheduler killed between claim and push, `rounds` times, then recovered by a live Node scheduler. */
export async function schedulerClaimKill(rounds = 6): Promise<ScenarioResult> {
  const config = { cron: "* * * * * *", class: "ChaosClaimJob", queue: QUEUE, include_metadata: true };
  const run = await killRounds(rounds, async (url, stage, i) => {
    if (i === 0) {
      const redis = new Redis(url);
      await new SchedulerApi({ redis }).set("claim", config);
      redis.disconnect();
    }
    await killClaimPoller({ url, target: { version: DIALECT } }, stage, { CLAIM_KIND: "scheduler" });
  });
  const { redis } = run;
  try {
    const held = await redis.hlen(ADDON_CLAIMS);
    const start = Date.now();
    const poller = new SidekiqSchedulerPoller({
      redis,
      client: new Client({ redis, dialect: DIALECT }),
      logger: silentLogger(),
      identity: newIdentity(),
      dynamicEvery: 1,
    });
    await poller.start();
    try {
      await until("every claim recovered", async () => (await redis.hlen(ADDON_CLAIMS)) === 0, 60_000);
    } finally {
      await poller.stop();
    }
    const recoverySeconds = (Date.now() - start) / 1000;
    // Every trigger claimed in the gem's pushed set (the kills' and the live scheduler's own).
    const claimed = await redis.zrange("sidekiq-scheduler:pushed:claim", 0, -1);
    const pushed = (await redis.lrange(`queue:${QUEUE}`, 0, -1)).map((j) => {
      const args = (JSON.parse(j) as { args: Array<{ scheduled_at: number }> }).args;
      return String(args[args.length - 1]!.scheduled_at);
    });
    const t = tally(claimed, pushed);
    const left = await redis.hlen(ADDON_CLAIMS);
    return {
      scenario: `sidekiq-scheduler kill -9 between claim and push (${rounds} rounds), Redis restarted mid-way`,
      system: "sidekiq-bridge (claim recovery)",
      ...t,
      recoverySeconds,
      notes: `${held} in-flight claims before recovery, ${left} after; ${claimed.length} triggers claimed in the gem's pushed set (${rounds} by killed schedulers, the rest by the live one); clean-up by sidekiq-bridge's recovery (sidekiq-scheduler skips such a trigger)`,
    };
  } finally {
    await run.stopAll();
  }
}

/**
 * A live Node sidekiq-scheduler (a trigger every second) reaching Redis
 * through a fault proxy whose flows are blackholed 5 s in (new flows pass):
 * every trigger claimed in the gem's pushed set must be in the queue once, no
 * in-flight claim may be left, and the seconds the outage spans with no
 * trigger claimed are counted as skipped.
 */
export async function schedulerClaimBlackhole(): Promise<ScenarioResult> {
  const server = await startRedis();
  const url = `${server.url}/0`;
  const redis = new Redis(url);
  const proxy = await startFaultProxy(server.port);
  const pushedSet = "sidekiq-scheduler:pushed:net";
  await new SchedulerApi({ redis }).set("net", {
    cron: "* * * * * *",
    class: "ChaosClaimJob",
    queue: QUEUE,
    include_metadata: true,
  });
  const { redis: via } = connectRedis(`${proxy.url}/0`);
  const client = new Client({ redis: via, dialect: DIALECT });
  const poller = new SidekiqSchedulerPoller({
    redis: via,
    client,
    logger: silentLogger(),
    identity: newIdentity(),
    dynamicEvery: 1,
  });
  try {
    await poller.start();
    await sleep(5000);
    const before = await redis.zcard(pushedSet);
    const fault = Date.now();
    proxy.blackhole();
    await until("triggers claimed again", async () => (await redis.zcard(pushedSet)) > before + 1, 60_000);
    const resumed = (Date.now() - fault) / 1000;
    await sleep(5000);
    await poller.stop();
    await until("no claim in flight", async () => (await redis.hlen(ADDON_CLAIMS)) === 0, 30_000).catch(
      () => undefined,
    );
    const claimed = await redis.zrange(pushedSet, 0, -1);
    const pushed = (await redis.lrange(`queue:${QUEUE}`, 0, -1)).map((j) => {
      const args = (JSON.parse(j) as { args: Array<{ scheduled_at: number }> }).args;
      return String(args[args.length - 1]!.scheduled_at);
    });
    const seconds = [...new Set(claimed.map((c) => Math.round(Number(c))))].sort((a, b) => a - b);
    let skipped = 0;
    for (let i = 1; i < seconds.length; i++) skipped += seconds[i]! - seconds[i - 1]! - 1;
    return {
      scenario: "sidekiq-scheduler (every second), the poller's flows blackholed",
      system: "sidekiq-bridge (Node poller)",
      ...tally(claimed, pushed),
      recoverySeconds: resumed,
      notes: `triggers claimed again ${resumed.toFixed(1)} s after the fault; ${skipped} fire times skipped between the first and the last claimed (${seconds.length} claimed); ${await redis.hlen(ADDON_CLAIMS)} claims left in flight`,
    };
  } finally {
    await poller.stop().catch(() => undefined);
    await client.close();
    via.disconnect();
    await proxy.close();
    redis.disconnect();
    await server.stop();
  }
}
