// Sidekiq's Scheduled::Poller: moves due jobs from `retry` and `schedule` to
// their queues, in score order, as Ruby's poller does, but a batch at a time:
//
// 1. One Lua pop moves up to `batchSize` due jobs, with their scores, from the
//    sorted set into this process's promoting set
//    (`bridge:promoting:<identity>|<set>`, registered in `bridge:promoting-keys`).
// 2. Each job is prepared as the client's pushRecord would write it
//    (enqueued_at renewed, `at` removed, client middleware, routing).
// 3. One Lua commit LPUSHes every job onto its queue, SADDs the queues and
//    deletes the promoting set, atomically and only while the promoting set
//    still holds the batch: either the jobs are in their queues and the
//    promoting set is gone, or neither. A resent commit (after a reconnect) or
//    one that comes after recovery took the batch back does nothing.
//
// A crash between 1 and 3 leaves the batch in the promoting set; recovery.ts
// returns the promoting sets of dead processes to their sorted sets at their
// own scores, so nothing is lost and nothing pushed twice. A failed commit puts
// the batch back the same way. Every script declares all its keys (Valkey,
// Dragonfly) and uses ZRANGEBYSCORE, so Redis older than 6.2 works too.
import type { Redis } from "ioredis";
import type { Client } from "../client/client.js";
import type { PreparedPush } from "../client/client-types.js";
import { pipeQueuePushes } from "../client/push-batch.js";
import { execRetryingOnce, retryingOnce } from "../redis/retry-once.js";
import { commitPromotedBatch, popDueIntoPromotingSet } from "../redis/scripts/index.js";
import { isConnectionError } from "../redis/availability.js";
import { JobRecord } from "../wire/job-record.js";
import type { WireProfile } from "../wire/dialect.js";
import { releaseRules } from "../wire/release-rules.js";
import { rubyFloatToS } from "../wire/ruby-json.js";
import { PROCESSES_KEY, QUEUES_KEY, queueKey, RETRY_KEY, SCHEDULE_KEY, PROCESS_CLEANUP_KEY } from "../wire/keys.js";
import { PROMOTING_REGISTRY, promotingKey } from "../wire/bridge-keys.js";
import type { Logger } from "../logging/logger.js";
import { sendToDead, type RetryConfig } from "./job-retry.js";
import { newIdentity } from "./heartbeat.js";
import { identityHost, recoverPromoting, recoverPromotingKey } from "./recovery.js";

export const SORTED_SETS = [RETRY_KEY, SCHEDULE_KEY] as const;
export const INITIAL_WAIT_SECONDS = 10;
/** Jobs per pop (the `batchSize` option). */
export const DEFAULT_BATCH_SIZE = 100;
/** How often a poller looks for the promoting sets of dead processes. */
export const PROMOTING_RECOVERY_INTERVAL_MS = 60_000;

export interface PollerOptions {
  redis: Redis;
  client: Client;
  profile: () => WireProfile;
  retry: () => RetryConfig;
  logger: Logger;
  /**
   * The identity of this process (its heartbeat key, `hostname:pid:hex`; never
   * another process's): it names the promoting sets, which recovery returns
   * once the heartbeat is gone. Default: a fresh identity with no heartbeat
   * (another process may then take a batch back mid-way; the commit notices,
   * so nothing runs twice).
   */
  identity?: string;
  /** Jobs moved per round trip (default 100). */
  batchSize?: number;
  /** Sidekiq's poll_interval_average: a fixed average, which also skips the 10 s initial wait. */
  pollIntervalAverage?: number;
  /** Sidekiq's average_scheduled_poll_interval (5 s), scaled by the process count. */
  averageScheduledPollInterval?: number;
  random?: () => number;
}

/** A job of a batch on its way to its queue. */
interface Planned {
  original: string;
  push: PreparedPush;
}

/** Groups by `key`, keeping each group's items in order (and the groups in first-seen order). */
function groupBy<K, T>(items: readonly T[], key: (t: T) => K): Map<K, T[]> {
  const m = new Map<K, T[]>();
  for (const t of items) {
    const k = key(t);
    let l = m.get(k);
    if (!l) m.set(k, (l = []));
    l.push(t);
  }
  return m;
}

const byQueue = (plans: readonly Planned[]) => groupBy(plans, (p) => p.push.queue);

/** The pass in progress for each identity in this process. */
const passes = new Map<string, Promise<number>>();

export class ScheduledPoller {
  private done = false;
  private wake?: () => void;
  private loop?: Promise<void>;
  private readonly identity: string;
  private readonly batchSize: number;
  private lastRecovery = 0;

  constructor(private readonly options: PollerOptions) {
    this.identity = options.identity ?? newIdentity();
    this.batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    if (!(Number.isInteger(this.batchSize) && this.batchSize > 0))
      throw new RangeError("batchSize must be a positive integer");
  }

  private get rand(): () => number {
    return this.options.random ?? Math.random;
  }

  /** This process's promoting set for `retry` or `schedule`. */
  promotingKey(set: string): string {
    return promotingKey(this.identity, set);
  }

  /**
   * One pass: every due job of `retry`, then of `schedule`. Returns how many moved.
   * Passes of pollers with the same identity run one after the other: a batch is
   * committed only while the promoting set holds it, which holds when one
   * promoter at a time uses that set.
   */
  async enqueue(): Promise<number> {
    const prev = passes.get(this.identity);
    const run = (prev ? prev.catch(() => undefined) : Promise.resolve()).then(() => this.pass());
    passes.set(this.identity, run);
    try {
      return await run;
    } finally {
      if (passes.get(this.identity) === run) passes.delete(this.identity);
    }
  }

  private async pass(): Promise<number> {
    let moved = 0;
    for (const set of SORTED_SETS) {
      while (!this.done) {
        const jobs = await popDueIntoPromotingSet(
          this.options.redis,
          [set, this.promotingKey(set), PROMOTING_REGISTRY],
          [rubyFloatToS(Date.now() / 1000), this.batchSize],
        );
        if (!jobs || jobs.length === 0) break;
        moved += await this.promote(set, jobs);
        // A short batch: nothing else was due when it was taken.
        if (jobs.length < this.batchSize) break;
      }
    }
    return moved;
  }

  /** Pushes one popped batch (now in the promoting set) to its queues. */
  private async promote(set: string, jobs: readonly string[]): Promise<number> {
    const promoting = this.promotingKey(set);
    const home: Planned[] = [];
    const remote: Planned[] = [];
    const failed: string[] = [];
    let firstError: unknown;
    let remotePushed = 0;
    try {
      for (const job of jobs) {
        let record: JobRecord;
        try {
          record = JobRecord.parse(job);
        } catch {
          // Ruby's poller would raise on it forever; keep it, but in the morgue.
          // (Should we die before the commit, recovery returns it and it is buried
          // again: the dead set holds it once, being a set.)
          await sendToDead(this.options.redis, job, this.options.retry());
          this.options.logger.error(`Invalid JSON in ${set}; moved to the dead set`, { jobstr: job.slice(0, 200) });
          continue;
        }
        let push: PreparedPush | null;
        try {
          push = await this.options.client.prepareRecord(record);
        } catch (e) {
          // As before: this job goes back (behind the others, at `now`) and the pass
          // stops once the rest of the batch is pushed.
          failed.push(job);
          firstError ??= e;
          continue;
        }
        if (!push) continue; // a client middleware stopped it
        (push.redis === this.options.redis ? home : remote).push({ original: job, push });
      }
      // Queues routed to another Redis (sharding, rare) cannot share the commit:
      // they are pushed first, so a crash before the commit pushes them again
      // after recovery (at least once, never lost).
      for (const [redis, plans] of groupBy(remote, (p) => p.push.redis)) {
        const payloads = new Map([...byQueue(plans)].map(([q, l]) => [q, l.map((p) => p.push.json)]));
        await execRetryingOnce(redis, () => pipeQueuePushes(redis.pipeline(), payloads), "promote");
        remotePushed += plans.length;
      }
    } catch (e) {
      await this.recoverOwnPromoting(promoting, set);
      throw e;
    }

    let pushed: number;
    for (;;) {
      const groups = byQueue(home);
      const keys = [promoting, PROMOTING_REGISTRY, set, QUEUES_KEY, ...[...groups.keys()].map(queueKey)];
      const args: Array<string | number> = [jobs.length, rubyFloatToS(Date.now() / 1000), failed.length, ...failed];
      for (const [q, l] of groups) args.push(q, l.length, ...l.map((p) => p.push.json));
      let r: number | number[];
      try {
        r = await retryingOnce(this.options.redis, () => commitPromotedBatch(this.options.redis, keys, args));
      } catch (e) {
        await this.recoverOwnPromoting(promoting, set);
        throw e;
      }
      if (!Array.isArray(r)) {
        pushed = r;
        break;
      }
      // Some queue keys hold another type: those jobs go back like failed ones.
      const names = [...groups.keys()];
      const bad = new Set(r.map((i) => names[i - 1]!));
      for (const p of home) if (bad.has(p.push.queue)) failed.push(p.original);
      home.splice(0, home.length, ...home.filter((p) => !bad.has(p.push.queue)));
      firstError ??= new Error(`WRONGTYPE ${[...bad].map(queueKey).join(", ")} not a list: jobs left in ${set}`);
    }
    if (pushed < 0) {
      this.options.logger.warn(
        `A batch of ${jobs.length} jobs from ${set} was taken back by recovery before it was pushed; they stay in ${set}`,
      );
      return remotePushed;
    }
    if (firstError !== undefined) throw firstError;
    return remotePushed + pushed;
  }

  /** After a failure: the batch back into its sorted set at its own scores (logged if that fails too; the next pop retries it). */
  private async recoverOwnPromoting(promoting: string, set: string): Promise<void> {
    try {
      await retryingOnce(this.options.redis, () => recoverPromotingKey(this.options.redis, promoting, set));
    } catch (e) {
      this.options.logger.error(`could not put a batch back into ${set}; the next pass will`, {
        error: (e as Error).message,
      });
    }
  }

  /** Sidekiq's random_poll_interval, in seconds. */
  async randomPollInterval(): Promise<number> {
    const count = Math.max(await this.options.redis.scard(PROCESSES_KEY), 1);
    const interval = this.options.pollIntervalAverage ?? count * (this.options.averageScheduledPollInterval ?? 5);
    if (count < 10) return interval * this.rand() + interval / 2;
    return releaseRules(this.options.profile()).scheduled.largeFleetPollInterval === "interval*rand*2"
      ? interval * this.rand() * 2
      : interval * this.rand();
  }

  /** Removes processes whose heartbeat expired, at most once a minute fleet-wide. */
  async cleanup(): Promise<number> {
    const locked = await this.options.redis.set(PROCESS_CLEANUP_KEY, "1", "EX", 60, "NX");
    if (locked !== "OK") return 0;
    const procs: string[] = [];
    let cursor = "0";
    do {
      const [next, batch] = await this.options.redis.sscan(PROCESSES_KEY, cursor);
      cursor = next;
      procs.push(...batch);
    } while (cursor !== "0");
    if (procs.length === 0) return 0;
    const pipe = this.options.redis.pipeline();
    for (const p of procs) pipe.hget(p, "info");
    const res = (await pipe.exec()) ?? [];
    const prune = procs.filter((_, i) => res[i]?.[1] === null);
    return prune.length ? this.options.redis.srem(PROCESSES_KEY, ...prune) : 0;
  }

  /**
   * Returns the promoting sets of dead processes (any fetch mode), at most once
   * a minute per poller and under a lock fleet-wide.
   */
  private async recoverPromoting(): Promise<void> {
    if (Date.now() - this.lastRecovery < PROMOTING_RECOVERY_INTERVAL_MS) return;
    this.lastRecovery = Date.now();
    try {
      await recoverPromoting(this.options.redis, identityHost(this.identity), this.options.logger, true);
    } catch (e) {
      this.options.logger.warn("could not recover the promoting sets of dead processes", {
        error: (e as Error).message,
      });
    }
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
      await this.sleep((this.options.pollIntervalAverage === undefined ? INITIAL_WAIT_SECONDS : 0) + 5 * this.rand());
      await this.cleanup().catch((e: Error) =>
        this.options.logger.warn("process cleanup failed", { error: e.message }),
      );
      while (!this.done) {
        await this.recoverPromoting();
        try {
          await this.enqueue();
        } catch (e) {
          // An outage is reported once, by the worker's connection watch.
          if (!isConnectionError(e))
            this.options.logger.error("scheduler could not enqueue", { error: (e as Error).message });
        }
        if (this.done) break;
        let wait = 5;
        try {
          wait = await this.randomPollInterval();
        } catch (e) {
          if (!isConnectionError(e))
            this.options.logger.error("scheduler could not read the process count", { error: (e as Error).message });
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
