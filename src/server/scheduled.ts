// Sidekiq's Scheduled::Poller: moves due jobs from `retry` and `schedule` to
// their queues, one at a time with a Lua pop that declares its key (so it also
// runs on Valkey and Dragonfly), and re-pushes them through the client.
import type { Redis } from "ioredis";
import type { Client } from "../client/client.js";
import { JobRecord } from "../wire/job-record.js";
import { versionAtLeast, type WireProfile } from "../wire/dialect.js";
import { rubyFloatToS } from "../wire/ruby-json.js";
import type { Logger } from "./logger.js";
import { sendToDead, type RetryConfig } from "./job-retry.js";

export const SORTED_SETS = ["retry", "schedule"] as const;
export const INITIAL_WAIT_SECONDS = 10;

// ZRANGEBYSCORE (not ZRANGE … BYSCORE) so Redis older than 6.2 works too.
const LUA_ZPOPBYSCORE = `
local key, now = KEYS[1], ARGV[1]
local jobs = redis.call("zrangebyscore", key, "-inf", now, "limit", 0, 1)
if jobs[1] then
  redis.call("zrem", key, jobs[1])
  return jobs[1]
end`;

type ZPopRedis = Redis & { bridgeZpopbyscore(key: string, now: string): Promise<string | null> };

export interface PollerOptions {
  redis: Redis;
  client: Client;
  profile: () => WireProfile;
  retry: () => RetryConfig;
  logger: Logger;
  /** Sidekiq's poll_interval_average: a fixed average, which also skips the 10 s initial wait. */
  pollIntervalAverage?: number;
  /** Sidekiq's average_scheduled_poll_interval (5 s), scaled by the process count. */
  averageScheduledPollInterval?: number;
  random?: () => number;
}

export class Poller {
  private done = false;
  private wake?: () => void;
  private loop?: Promise<void>;
  private readonly redis: ZPopRedis;

  constructor(private readonly o: PollerOptions) {
    this.redis = o.redis as ZPopRedis;
    if (!(this.redis as unknown as { bridgeZpopbyscore?: unknown }).bridgeZpopbyscore) {
      // ioredis sends EVALSHA and reloads the script on NOSCRIPT, as Sidekiq does.
      o.redis.defineCommand("bridgeZpopbyscore", { numberOfKeys: 1, lua: LUA_ZPOPBYSCORE });
    }
  }

  private get rand(): () => number {
    return this.o.random ?? Math.random;
  }

  /** One pass: every due job of `retry`, then of `schedule`. Returns how many moved. */
  async enqueue(): Promise<number> {
    let moved = 0;
    for (const set of SORTED_SETS) {
      while (!this.done) {
        const job = await this.redis.bridgeZpopbyscore(set, rubyFloatToS(Date.now() / 1000));
        if (job === null || job === undefined) break;
        let record: JobRecord;
        try {
          record = JobRecord.parse(job);
        } catch {
          // Ruby's poller would raise on it forever; keep it, but in the morgue.
          await sendToDead(this.o.redis, job, this.o.retry());
          this.o.logger.error(`Invalid JSON in ${set}; moved to the dead set`, { jobstr: job.slice(0, 200) });
          continue;
        }
        try {
          await this.o.client.pushRecord(record);
          moved++;
        } catch (e) {
          // Put it back where it was so nothing is lost, then stop this pass.
          await this.o.redis.zadd(set, rubyFloatToS(Date.now() / 1000), job);
          throw e;
        }
      }
    }
    return moved;
  }

  /** Sidekiq's random_poll_interval, in seconds. */
  async randomPollInterval(): Promise<number> {
    const count = Math.max(await this.o.redis.scard("processes"), 1);
    const interval = this.o.pollIntervalAverage ?? count * (this.o.averageScheduledPollInterval ?? 5);
    if (count < 10) return interval * this.rand() + interval / 2;
    return versionAtLeast(this.o.profile().version, "8.0.10") ? interval * this.rand() * 2 : interval * this.rand();
  }

  /** Removes processes whose heartbeat expired, at most once a minute fleet-wide. */
  async cleanup(): Promise<number> {
    const locked = await this.o.redis.set("process_cleanup", "1", "EX", 60, "NX");
    if (locked !== "OK") return 0;
    const procs: string[] = [];
    let cursor = "0";
    do {
      const [next, batch] = await this.o.redis.sscan("processes", cursor);
      cursor = next;
      procs.push(...batch);
    } while (cursor !== "0");
    if (procs.length === 0) return 0;
    const pipe = this.o.redis.pipeline();
    for (const p of procs) pipe.hget(p, "info");
    const res = (await pipe.exec()) ?? [];
    const prune = procs.filter((_, i) => res[i]?.[1] === null);
    return prune.length ? this.o.redis.srem("processes", ...prune) : 0;
  }

  private sleep(seconds: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, seconds * 1000);
      this.wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  start(): void {
    this.loop ??= (async () => {
      await this.sleep((this.o.pollIntervalAverage === undefined ? INITIAL_WAIT_SECONDS : 0) + 5 * this.rand());
      await this.cleanup().catch((e: Error) => this.o.logger.warn("process cleanup failed", { error: e.message }));
      while (!this.done) {
        try {
          await this.enqueue();
        } catch (e) {
          this.o.logger.error("scheduler could not enqueue", { error: (e as Error).message });
        }
        if (this.done) break;
        let wait = 5;
        try {
          wait = await this.randomPollInterval();
        } catch (e) {
          this.o.logger.error("scheduler could not read the process count", { error: (e as Error).message });
        }
        await this.sleep(wait);
      }
    })();
  }

  async stop(): Promise<void> {
    this.done = true;
    this.wake?.();
    await this.loop;
  }
}
