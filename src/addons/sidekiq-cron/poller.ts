// sidekiq-cron's poller (Sidekiq::Cron::Poller) for Node. Every poll it reads
// all cron jobs and, for each enabled, valid job whose last fire time is at
// most `reschedule_grace_period` old and later than its `last_enqueue_time`,
// ZADDs that fire time to the job's `:enqueued` set: only the poller whose
// ZADD adds the member pushes the job. Ruby pollers take the same lock with
// the same member (the fire time in ISO 8601 UTC), so Ruby and Node pollers
// running together enqueue each fire time once. Entries older than a day are
// then trimmed from `:enqueued`.
//
// Unlike the gem's poller, a poller killed between its claim and its push
// does not skip that fire time: with an identity (a worker's), the claim is
// recoverable (src/addons/pollers/claims.ts) and any live Node poller pushes it once.
//
// Unlike the gem's poller, one unreadable entry (a message that is not JSON,
// a key of the wrong type) does not stop the others: it is logged once and
// skipped, and invalid jobs are logged once too (Ruby skips them silently).
import type { Redis } from "ioredis";
import type { Client } from "../../core/client/client.js";
import type { Logger } from "../../core/logging/logger.js";
import { rubyFloatToS } from "../../core/wire/ruby-json.js";
import { CronApi } from "./cron-api.js";
import { iso8601, type CronJob } from "./cron-job.js";
import {
  AddonClaims,
  claimedBy,
  prepareAddonPush,
  type PreparedClaim,
  type ClaimStageHook,
} from "../pollers/claims.js";
import { cronEnqueueRecord, enqueueCronJob, pushCronJob, type EnqueueOptions } from "./enqueue.js";
import { enqueuedKey, jobKey, LEGACY_JOBS_KEY } from "./keys.js";

/** How long `:enqueued` remembers fire times (REMEMBER_THRESHOLD). */
const REMEMBER_SECONDS = 24 * 60 * 60;

/** Options of the cron poller: poll interval, grace period, history size, namespaces. */
export interface CronPollerOptions extends EnqueueOptions {
  redis: Redis;
  client: Client;
  logger: Logger;
  /** `cron_poll_interval` in seconds (default 30); each wait is 0.5 to 1.5 times it, as Sidekiq's poller waits. */
  pollInterval?: number;
  /** Seconds before the first poll (default: Sidekiq's 10 + up to 5 at random). */
  initialWait?: number;
  /** `reschedule_grace_period`: fire times older than this many seconds are skipped (default 60). */
  gracePeriod?: number;
  /** Namespaces to poll, or "auto" (default): every `cron_jobs:<namespace>` set in Redis. */
  namespaces?: string[] | "auto";
  /** Epoch milliseconds (a clock for tests). */
  now?: () => number;
  /**
   * The process's identity (a worker's, whose heartbeat says it is alive): its
   * claims are recoverable by other Node pollers if it dies before pushing.
   * Without one, the poller claims and pushes as the gem does.
   */
  identity?: string;
  /** After each step of a won claim (tests stop the process there). */
  onClaimStage?: ClaimStageHook;
}

/** What one poll did: the jobs enqueued and the entries skipped. */
export interface CronPollResult {
  jobs: number;
  enqueued: Array<{ name: string; namespace: string; fireTime: string; jid: string | null }>;
}

/** sidekiq-cron's poller in Node: enqueues each due fire time once, claimed with the gem's own ZADD. */
export class CronPoller {
  readonly name = "sidekiq-cron poller";
  private readonly api: CronApi;
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;
  /** The last problem logged per job key, so each is logged once (again when it changes). */
  private readonly reported = new Map<string, string>();
  private namespaceCache?: { value: string[]; until: number };
  private active = false;
  /** Jobs this poller has pushed since it started. */
  enqueuedCount = 0;

  private readonly claims?: AddonClaims;

  constructor(private readonly options: CronPollerOptions) {
    this.api = new CronApi({ ...options, redis: options.redis, client: options.client });
    if (options.identity)
      this.claims = new AddonClaims(options.redis, "cron", options.identity, undefined, options.onClaimStage);
  }

  private now(): Date {
    return new Date(this.options.now ? this.options.now() : Date.now());
  }

  start(): void {
    this.stopped = false;
    const initial = this.options.initialWait ?? 10 + 5 * Math.random();
    this.schedule(initial * 1000, true);
  }

  private schedule(ms: number, first = false): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = (first ? this.migrateLegacy() : Promise.resolve())
        .then(() => this.pollOnce())
        .catch((e: Error) => this.options.logger.error(`cron poller: ${e.message}`))
        .finally(() => {
          this.running = undefined;
          const interval = this.options.pollInterval ?? 30;
          this.schedule(interval * (Math.random() + 0.5) * 1000);
        });
    }, ms);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private async migrateLegacy(): Promise<void> {
    if ((await this.options.redis.exists(LEGACY_JOBS_KEY)) === 0) return;
    const { moved, unreadable } = await this.api.migrateLegacyJobs();
    if (moved.length)
      this.options.logger.info(`cron: moved sidekiq-cron 1.x jobs into the default namespace`, { moved });
    for (const u of unreadable) this.report(u.key, `cannot read legacy cron job ${u.key}: ${u.error}`);
  }

  private async namespaces(): Promise<string[]> {
    const ns = this.options.namespaces ?? "auto";
    if (ns !== "auto") return ns;
    const now = Date.now();
    if (this.namespaceCache && this.namespaceCache.until > now) return this.namespaceCache.value;
    // A SCAN of the keyspace: done once a minute, not every poll.
    const value = await this.api.namespaces();
    this.namespaceCache = { value, until: now + 60_000 };
    return value;
  }

  private report(key: string, problem: string): void {
    if (this.reported.get(key) === problem) return;
    this.reported.set(key, problem);
    this.options.logger.warn(problem);
  }

  /** One poll (`Poller#enqueue`) at `now`: returns what this poller pushed. */
  async pollOnce(now = this.now()): Promise<CronPollResult> {
    await this.recoverClaims();
    const listing = await this.api.list(await this.namespaces());
    const result: CronPollResult = { jobs: listing.jobs.length, enqueued: [] };
    if (!this.active && listing.jobs.length > 0) {
      this.active = true;
      this.options.logger.info(`cron poller: ${listing.jobs.length} cron jobs to poll`);
    }
    for (const u of listing.unreadable) {
      this.report(u.key, `cron job ${u.key} cannot be read, skipped (other cron jobs still run): ${u.error}`);
    }
    for (const job of listing.jobs) {
      const key = jobKey(job.name, job.namespace);
      try {
        const errors = job.errors();
        if (errors.length > 0) {
          this.report(key, `cron job ${key} is invalid, skipped (other cron jobs still run): ${errors.join("; ")}`);
          continue;
        }
        if (this.reported.delete(key)) this.options.logger.info(`cron job ${key} is valid again`);
        const fired = await this.testAndEnqueue(job, now);
        if (fired) result.enqueued.push(fired);
      } catch (e) {
        this.options.logger.error(`cron job ${key}: ${(e as Error).message}`);
      }
    }
    return result;
  }

  /** `test_and_enqueue_for_time!`: the `:enqueued` ZADD decides which poller pushes this fire time. */
  private async testAndEnqueue(job: CronJob, now: Date): Promise<CronPollResult["enqueued"][number] | undefined> {
    if (!job.enabled) return undefined;
    const last = job.lastTime(now);
    const lastS = Math.floor(last.getTime() / 1000);
    if (Math.floor(now.getTime() / 1000) - lastS > (this.options.gracePeriod ?? 60)) return undefined;
    if (job.lastEnqueueTime && Math.floor(job.lastEnqueueTime.getTime() / 1000) >= lastS) return undefined;
    const eKey = enqueuedKey(job.name, job.namespace);
    const fireTime = iso8601(last);
    const score = rubyFloatToS(last.getTime() / 1000);
    let jid: string | null;
    if (this.claims) {
      const claim = await this.claims.claim(
        { set: eKey, score, member: fireTime },
        { name: job.name, namespace: job.namespace, fireTime },
      );
      if (!claim) return undefined;
      const prepared = await this.claims.pushPrepared(claim, () => this.prepare(job));
      // Undefined: recovery took the claim over, thinking this process dead; it pushes.
      if (!prepared) return undefined;
      jid = prepared.jid;
    } else {
      if ((await this.options.redis.zadd(eKey, score, fireTime)) !== 1) return undefined;
      jid = await enqueueCronJob(this.options.redis, this.options.client, job, this.options, this.now());
    }
    this.enqueuedCount++;
    this.options.logger.debug(`cron: enqueued ${job.name}`, { namespace: job.namespace, fireTime, jid });
    await this.options.redis.zremrangebyscore(eKey, 0, `(${rubyFloatToS(now.getTime() / 1000 - REMEMBER_SECONDS)}`);
    return { name: job.name, namespace: job.namespace, fireTime, jid };
  }

  /** The payload of `enqueue!` now, with the gem's record of it (last_enqueue_time, jid_history). */
  private async prepare(job: CronJob): Promise<PreparedClaim> {
    const now = this.now();
    const prepared = await prepareAddonPush(this.options.client, this.options.redis, (c) =>
      pushCronJob(c, job, this.options, now),
    );
    return { ...prepared, record: cronEnqueueRecord(job, prepared.jid, this.options, now) };
  }

  /** Pushes, once, the fire times that dead Node pollers claimed and did not push (a slice per poll). */
  private async recoverClaims(): Promise<void> {
    if (!this.claims) return;
    try {
      const recovered = await this.claims.recover(async (info) => {
        const job = await this.api.find(String(info.name), String(info.namespace));
        return job ? this.prepare(job) : undefined;
      });
      for (const r of recovered)
        this.options.logger.warn(
          `cron: pushed ${r.info.name} for ${r.info.fireTime}, claimed by ${claimedBy(r.owner, this.options.identity)}`,
        );
    } catch (e) {
      this.options.logger.error(`cron poller: recovering claims of dead processes: ${(e as Error).message}`);
    }
  }
}
