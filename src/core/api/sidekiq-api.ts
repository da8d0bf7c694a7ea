// Sidekiq::API for Node: one object over a Redis connection that hands out
// the pieces (stats and their history, queues, the three sorted sets,
// processes, work, execution metrics).
//
//   const api = new SidekiqApi({ redis: process.env.REDIS_URL! });
//   (await api.stats()).enqueued;
//   for (const e of await api.retries.list({ filter: { className: "HardJob" } })) await api.retries.retry(e);
//   await api.processes.quiet(identity);
//   (await api.history(7).days())[0].processed; // today
//   (await api.metrics().topJobs({ period: "1h" })).jobs;
import type { Redis } from "ioredis";
import { Client } from "../client/client.js";
import { connectRedis, type OwnedRedis, type RedisSource } from "../redis/connection.js";
import { DialectDetectionError } from "../client/errors.js";
import { DIALECT_VERSION, profileFor, type DialectLike, type WireProfile } from "../wire/dialect.js";
import type { JobRecord } from "../wire/job-record.js";
import { isFloatLexeme } from "../wire/json-scan.js";
import { RETRY_KEY, SCHEDULE_KEY } from "../wire/keys.js";
import { PAYLOAD_TIME_FIELDS } from "../wire/timestamps.js";
import type { ApiContext } from "./context.js";
import { ProcessSet } from "./process-set.js";
import type { RunningWork } from "./process-hash.js";
import { Queue, allQueueNames } from "./queue.js";
import { DeadSet, RetrySet, ScheduledSet } from "./job-sets.js";
import type { DeadSetConfig } from "./morgue.js";
import type { JobSetName } from "./sorted-entry.js";
import type { SortedJobSet } from "./sorted-set.js";
import { fetchStats, queueSummaries, type QueueSummary, type StatsSnapshot } from "./stats.js";
import { StatsHistory } from "./history.js";
import { MetricsQuery } from "./metrics-query.js";

/** Options of `SidekiqApi`: the Redis, the release whose API rules to follow, the client for re-queued jobs, and the dead set's limits. */
export interface ApiOptions extends DeadSetConfig {
  /** The Redis (ioredis instance, URL, or connection options). */
  redis: RedisSource;
  /**
   * The Sidekiq release whose Ruby API rules to follow where releases differ
   * (latency, the cleanup lock, the dead-set trim): a version ("7.3.2") or a
   * dialect (6, 7, 8). Default: 8.1.7.
   */
  apiVersion?: DialectLike;
  /** The client that pushes retried / re-queued jobs (its middleware runs). Default: one on `redis`. */
  client?: Client;
  /**
   * Without `client`: the dialect pushes write (`enqueued_at`'s unit). "auto"
   * (default) reads the live fleet, and with no live Ruby process keeps the
   * job's own unit (a float `created_at` stays seconds, an integer ms).
   */
  dialect?: DialectLike | "auto";
  /** With dialect "auto": the dialect to use when no Ruby process is live, instead of the job's own unit. */
  autoFallback?: DialectLike;
  /** Epoch milliseconds (for tests). */
  now?: () => number;
}

/** The dialect whose unit a job already uses: float times are seconds (7), integers ms (8). */
export function ownDialect(rec: JobRecord): 7 | 8 {
  for (const f of PAYLOAD_TIME_FIELDS) {
    const raw = rec.raw(f);
    if (raw !== undefined && /^-?\d/.test(raw)) return isFloatLexeme(raw) ? 7 : 8;
  }
  return 8;
}

/** Sidekiq's Ruby API for Node (`Sidekiq::Stats`, `Queue`, `ScheduledSet`, `RetrySet`, `DeadSet`, `ProcessSet`), with the semantics of the fleet's release. */
export class SidekiqApi implements ApiContext {
  readonly redis: Redis;
  readonly rules: WireProfile;
  readonly scheduled: ScheduledSet;
  readonly retries: RetrySet;
  readonly dead: DeadSet;
  readonly processes: ProcessSet;
  private readonly conn: OwnedRedis;
  private readonly clients = new Map<string, Client>();

  constructor(private readonly options: ApiOptions) {
    this.conn = connectRedis(options.redis);
    this.redis = this.conn.redis;
    this.rules = profileFor(options.apiVersion ?? DIALECT_VERSION[8]);
    if (options.dialect !== undefined && options.dialect !== "auto") profileFor(options.dialect); // fail fast on a typo
    this.scheduled = new ScheduledSet(this, options);
    this.retries = new RetrySet(this, options);
    this.dead = new DeadSet(this, options);
    this.processes = new ProcessSet(this);
  }

  now(): number {
    return this.options.now ? this.options.now() : Date.now();
  }

  private client(key: string, dialect: DialectLike | "auto"): Client {
    let c = this.clients.get(key);
    if (!c) {
      c = new Client({
        redis: this.redis,
        dialect,
        validate: false,
        ...(this.options.autoFallback !== undefined ? { autoFallback: this.options.autoFallback } : {}),
      });
      this.clients.set(key, c);
    }
    return c;
  }

  async clientFor(record: JobRecord): Promise<Client> {
    if (this.options.client) return this.options.client;
    const d = this.options.dialect ?? "auto";
    if (d !== "auto") return this.client(`d:${String(d)}`, d);
    const auto = this.client("auto", "auto");
    try {
      await auto.profile(record.getString("queue") ?? "default");
      return auto;
    } catch (e) {
      if (!(e instanceof DialectDetectionError)) throw e;
      const own = ownDialect(record);
      return this.client(`d:${own}`, own);
    }
  }

  /** `Sidekiq::Stats.new` (every value). */
  stats(): Promise<StatsSnapshot> {
    return fetchStats(this);
  }

  /** `Stats#queue_summaries`: name, size, latency, paused; largest first. */
  queueSummaries(): Promise<QueueSummary[]> {
    return queueSummaries(this);
  }

  /** `Sidekiq::Stats::History.new(days, start_date)`: jobs processed and failed per day, `days` days up to `startDate` (default today). */
  history(days: number, startDate?: number | Date): StatsHistory {
    return new StatsHistory(this, days, startDate);
  }

  /** `Sidekiq::Metrics::Query.new(now:)`: execution metrics per class, over periods ending `now` (epoch ms, default now). */
  metrics(opts: { now?: number } = {}): MetricsQuery {
    return new MetricsQuery(this, opts);
  }

  /** `Sidekiq::Queue.all`. */
  async queues(): Promise<Queue[]> {
    return (await allQueueNames(this)).map((n) => new Queue(this, n));
  }

  /** `Sidekiq::Queue.new(name)`. */
  queue(name = "default"): Queue {
    return new Queue(this, name);
  }

  /** The set by key name. */
  set(name: JobSetName): SortedJobSet {
    return name === SCHEDULE_KEY ? this.scheduled : name === RETRY_KEY ? this.retries : this.dead;
  }

  /** `Sidekiq::WorkSet`: the jobs running now, oldest first. */
  work(): Promise<RunningWork[]> {
    return this.processes.work();
  }

  /** Closes the connection if this API opened it (not an ioredis instance you passed). */
  async close(): Promise<void> {
    for (const c of this.clients.values()) await c.close();
    if (this.conn.owned) await this.conn.redis.quit().catch(() => this.conn.redis.disconnect());
  }
}
