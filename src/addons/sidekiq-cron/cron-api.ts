// sidekiq-cron's job API for Node (Sidekiq::Cron::Job's class methods and
// save / enable! / disable! / destroy / enqueue!), on the gem's own keys, so
// Ruby's `Sidekiq::Cron::Job.all` and the Web UI's Cron tab see what Node
// writes and the reverse.
//
//   const cron = new CronApi({ redis, client });
//   await cron.create({ name: "nightly", cron: "0 3 * * *", class: "NightlyJob", queue: "low" });
//   for (const job of await cron.all("*")) console.log(job.name, job.status);
//   await cron.disable("nightly");
import type { Redis } from "ioredis";
import type { Client } from "../../core/client/client.js";
import { rubyFloatToS } from "../../core/wire/ruby-json.js";
import { CronJob, CronJobError, iso8601, type CronJobInput } from "./cron-job.js";
import { enqueueCronJob, type EnqueueOptions } from "./enqueue.js";
import {
  DEFAULT_NAMESPACE,
  enqueuedKey,
  jidHistoryKey,
  jobKey,
  jobsKey,
  LEGACY_JOBS_KEY,
  namespaceOfJobsKey,
} from "./keys.js";

/** Options of {@link CronApi}: the Redis and how an enqueue writes the job. */
export interface CronApiOptions extends EnqueueOptions {
  redis: Redis;
  /** The client that pushes enqueued jobs (needed only by `enqueue`). */
  client?: Client;
  /** Epoch milliseconds (a clock for tests). */
  now?: () => number;
}

/** A stored entry that could not be read as a cron job (bad JSON, wrong type). */
export interface UnreadableCronJob {
  key: string;
  namespace: string;
  error: string;
}

/** What {@link CronApi} lists: the readable jobs and those it could not read. */
export interface CronListing {
  jobs: CronJob[];
  unreadable: UnreadableCronJob[];
}

/** sidekiq-cron's jobs in Redis, read and written as the gem does: list, find, create, enable, disable, delete, enqueue now. */
export class CronApi {
  readonly redis: Redis;
  private readonly client?: Client;

  constructor(private readonly options: CronApiOptions) {
    this.redis = options.redis;
    if (options.client) this.client = options.client;
  }

  private now(): Date {
    return new Date(this.options.now ? this.options.now() : Date.now());
  }

  /**
   * Every namespace with a `cron_jobs:<namespace>` set, and "default"
   * (`Namespace.all` with `available_namespaces = :auto`).
   */
  async namespaces(): Promise<string[]> {
    const found = new Set<string>();
    let cursor = "0";
    do {
      const [next, keys] = await this.redis.scan(cursor, "MATCH", "cron_jobs:*", "COUNT", 1000);
      for (const k of keys) found.add(namespaceOfJobsKey(k));
      cursor = next;
    } while (cursor !== "0");
    found.add(DEFAULT_NAMESPACE);
    return [...found].sort();
  }

  /** `Job.count(namespace)`. */
  async count(namespace = DEFAULT_NAMESPACE): Promise<number> {
    if (namespace !== "*") return this.redis.scard(jobsKey(namespace));
    let n = 0;
    for (const ns of await this.namespaces()) n += await this.redis.scard(jobsKey(ns));
    return n;
  }

  /**
   * `Job.all(namespace)` ("*" for every namespace), with the entries Ruby
   * could not read listed apart instead of failing the whole listing.
   */
  async list(namespace: string | string[] = DEFAULT_NAMESPACE): Promise<CronListing> {
    const namespaces = namespace === "*" ? await this.namespaces() : Array.isArray(namespace) ? namespace : [namespace];
    const keys: Array<[string, string]> = [];
    for (const ns of namespaces) for (const k of await this.redis.smembers(jobsKey(ns))) keys.push([ns, k]);
    const out: CronListing = { jobs: [], unreadable: [] };
    if (keys.length === 0) return out;
    const pipe = this.redis.pipeline();
    for (const [, k] of keys) pipe.hgetall(k);
    const replies = (await pipe.exec()) ?? [];
    keys.forEach(([ns, key], i) => {
      const [err, h] = replies[i] ?? [new Error("no reply"), null];
      if (err) {
        out.unreadable.push({ key, namespace: ns, error: err.message });
        return;
      }
      const hash = h as Record<string, string>;
      if (!hash || Object.keys(hash).length === 0) return; // Ruby rejects empty hashes too
      try {
        out.jobs.push(CronJob.fromHash(hash));
      } catch (e) {
        out.unreadable.push({ key, namespace: ns, error: (e as Error).message });
      }
    });
    return out;
  }

  /** `Job.all(namespace)`: the readable jobs. */
  async all(namespace: string | string[] = DEFAULT_NAMESPACE): Promise<CronJob[]> {
    return (await this.list(namespace)).jobs;
  }

  /** `Job.find(name, namespace)`: the job if it exists and is valid. */
  async find(name: string, namespace = DEFAULT_NAMESPACE): Promise<CronJob | undefined> {
    const h = await this.redis.hgetall(jobKey(name, namespace));
    if (Object.keys(h).length === 0) return undefined;
    const job = CronJob.fromHash(h);
    return job.errors().length === 0 ? job : undefined;
  }

  /** `Job.new(input).save`: throws CronJobError with `valid?`'s reasons when invalid. */
  async create(input: CronJobInput): Promise<CronJob> {
    const job = CronJob.build(input);
    // A job created from Node keeps the status and last enqueue time it already has, as Ruby's Job.new does.
    if (input.status === undefined || !job.lastEnqueueTime) {
      const [status, last] = await this.redis.hmget(jobKey(job.name, job.namespace), "status", "last_enqueue_time");
      if (input.status === undefined && status) job.status = status;
      if (last && !job.lastEnqueueTime)
        job.lastEnqueueTime = CronJob.fromHash({ last_enqueue_time: last }).lastEnqueueTime;
    }
    await this.save(job);
    return job;
  }

  /** `save`: the set, the hash, and the first `:enqueued` entry so a new job does not fire at once. */
  async save(job: CronJob): Promise<void> {
    const errors = job.errors();
    if (errors.length > 0) throw new CronJobError(`invalid cron job ${JSON.stringify(job.name)}: ${errors.join(", ")}`);
    const key = jobKey(job.name, job.namespace);
    const hash = job.toHash();
    await this.redis
      .multi()
      .sadd(jobsKey(job.namespace), key)
      .hset(key, ...Object.entries(hash).flat())
      .exec();
    const now = this.now();
    const eKey = enqueuedKey(job.name, job.namespace);
    if ((await this.redis.exists(eKey)) === 0) {
      await this.redis.zadd(eKey, rubyFloatToS(now.getTime() / 1000), iso8601(job.lastTime(now)));
    }
  }

  private async require(name: string, namespace: string): Promise<CronJob> {
    const job = await this.find(name, namespace);
    if (!job)
      throw new CronJobError(`no valid cron job ${JSON.stringify(name)} in namespace ${JSON.stringify(namespace)}`);
    return job;
  }

  /** `enable!`. */
  async enable(name: string, namespace = DEFAULT_NAMESPACE): Promise<CronJob> {
    const job = await this.require(name, namespace);
    job.status = "enabled";
    await this.save(job);
    return job;
  }

  /** `disable!`. */
  async disable(name: string, namespace = DEFAULT_NAMESPACE): Promise<CronJob> {
    const job = await this.require(name, namespace);
    job.status = "disabled";
    await this.save(job);
    return job;
  }

  /** `Job.destroy(name, namespace)`: the set member, `:enqueued`, `:jid_history` and the hash. */
  async destroy(name: string, namespace = DEFAULT_NAMESPACE): Promise<boolean> {
    const job = await this.find(name, namespace);
    if (!job) return false;
    await this.redis
      .multi()
      .srem(jobsKey(job.namespace), jobKey(job.name, job.namespace))
      .del(enqueuedKey(job.name, job.namespace))
      .del(jidHistoryKey(job.name, job.namespace))
      .del(jobKey(job.name, job.namespace))
      .exec();
    return true;
  }

  /** `enqueue!` (the Web UI's "Enqueue Now"): pushes the job now, whatever its schedule or status. */
  async enqueue(name: string, namespace = DEFAULT_NAMESPACE): Promise<string | null> {
    if (!this.client) throw new Error("CronApi: enqueue needs a client");
    const job = await this.require(name, namespace);
    return enqueueCronJob(this.redis, this.client, job, this.options, this.now());
  }

  /** `jid_history_from_redis`: newest first. */
  async jidHistory(
    name: string,
    namespace = DEFAULT_NAMESPACE,
  ): Promise<Array<{ jid: string | null; enqueued: string }>> {
    const raw = await this.redis.lrange(jidHistoryKey(name, namespace), 0, -1);
    return raw.flatMap((r) => {
      try {
        return [JSON.parse(r) as { jid: string | null; enqueued: string }];
      } catch {
        return [];
      }
    });
  }

  /**
   * `Job.migrate_old_jobs_if_needed!` (run by the gem's poller at start):
   * jobs of sidekiq-cron 1.x's un-namespaced `cron_jobs` set are created again
   * in the default namespace and leave that set (their old hash stays, as Ruby leaves it).
   */
  async migrateLegacyJobs(): Promise<{ moved: string[]; unreadable: UnreadableCronJob[] }> {
    const moved: string[] = [];
    const unreadable: UnreadableCronJob[] = [];
    for (const oldKey of await this.redis.smembers(LEGACY_JOBS_KEY)) {
      let job: CronJob;
      try {
        job = CronJob.fromHash({ ...(await this.redis.hgetall(oldKey)), namespace: DEFAULT_NAMESPACE });
      } catch (e) {
        // Ruby's migration raises here; Node leaves the entry where it is and says so.
        unreadable.push({ key: oldKey, namespace: LEGACY_JOBS_KEY, error: (e as Error).message });
        continue;
      }
      // Ruby's create returns false for an invalid job and still takes it out of the old set.
      if (job.errors().length === 0) {
        await this.save(job);
        moved.push(job.name);
      }
      await this.redis.srem(LEGACY_JOBS_KEY, oldKey);
    }
    return { moved, unreadable };
  }
}
