// The worker: what a user creates to run Sidekiq jobs in Node. It holds the
// registered handlers and middleware and hands them to the launcher, which
// runs the process: heartbeat, poller, recovery, one manager per capsule.
import { Client } from "../client/client.js";
import { connectRedis, type OwnedRedis, type RedisSource } from "../redis/connection.js";
import type { DialectLike, WireProfile } from "../wire/dialect.js";
import type { JsonValue } from "../wire/json-scan.js";
import type { JobRecord } from "../wire/job-record.js";
import {
  DEFAULT_DEAD_MAX_JOBS,
  DEFAULT_DEAD_TIMEOUT_SECONDS,
  DEFAULT_MAX_RETRY_ATTEMPTS,
} from "../wire/sidekiq-constants.js";
import { type CapsuleConfig, makeCapsule } from "./capsule.js";
import { newIdentity } from "./heartbeat.js";
import type { RetryConfig } from "./job-retry.js";
import { type IterableJob, type IterableOptions, iterableHandler } from "./iterable.js";
import type { CronPollerOptions } from "../cron/poller.js";
import { Launcher, type StopResult } from "./launcher.js";
import { type WorkerEventName, WorkerEvents, type WorkerListener } from "./events.js";
import { type ErrorHandler, JobLogger } from "./job-logger.js";
import {
  consoleLogger,
  type LogFormat,
  type Logger,
  type LoggerLike,
  type LogLevel,
  safeLogger,
  toLogger,
} from "./logger.js";

export { EXIT_INCOMPLETE, EXIT_STOPPED, SHUTDOWN_GRACE_MS, type StopResult } from "./launcher.js";
import type { ServerMiddleware, UnknownClassPolicy } from "./processor.js";
import type { DeathHandler, HandlerOptions, JobHandler, RegisteredHandler } from "./types.js";

/** Options of `Worker`: the Redis, the dialect, queues and concurrency (or capsules), the shutdown timeout, fetch mode, poller and logger. */
export interface WorkerOptions {
  redis: RedisSource;
  /** 6, 7, 8, an exact version, or "auto" (default): the oldest live Ruby process's. */
  dialect?: DialectLike | "auto";
  autoFallback?: DialectLike;
  /** The default capsule: queues (with optional weights, "critical,2") and concurrency. */
  queues?: Array<string | [string, number]>;
  concurrency?: number;
  /** More capsules, each with its own queues and concurrency. */
  capsules?: CapsuleConfig[];
  tag?: string;
  labels?: string[];
  /**
   * Seconds to wait for running jobs at shutdown before aborting them
   * (Sidekiq's -t, 25). stop() settles within this plus a few seconds
   * (SHUTDOWN_GRACE_MS for Redis work) whatever Redis does.
   */
  timeout?: number;
  /** How long start() waits for Redis before it rejects with a RedisUnavailableError (default 5000 ms). */
  connectWaitMs?: number;
  unknownClass?: UnknownClassPolicy;
  /**
   * "reliable" (default): each fetched job waits in a working list of this
   * process until done, and a crashed process's jobs are recovered.
   * "basic": Sidekiq's BRPOP (a crash loses the jobs it was running).
   */
  fetch?: "reliable" | "basic";
  /**
   * Fetch connections per capsule: one's round trip overlaps the other's
   * jobs. Default: basic fetch 1 (each lane may fetch only its share of the
   * free slots, so more lanes mean smaller batches and more fetches);
   * reliable fetch 2 from concurrency 4, else 1, and with fetchAhead: false
   * 2 from 16. Reliable fetch with fetch-ahead: each lane fetches up to the
   * whole concurrency (what finds no free slot waits, see fetchAhead).
   */
  fetchLanes?: number;
  /**
   * Reliable fetch only (default true): while the queues have a backlog and
   * jobs take under 5 ms on average, fetch the next batch before the slots
   * free, so no slot waits for a round trip to Redis. At most one batch per
   * fetch lane waits (the concurrency times the lanes), in this process's
   * working hash (a crash loses none); a job still waiting after a second
   * goes back to the head of its queue.
   */
  fetchAhead?: boolean;
  /** How often (ms) to look for dead processes' working lists (default 60 s). */
  recoveryIntervalMs?: number;
  /** Run the scheduled/retry poller (default true). */
  scheduler?: boolean;
  pollIntervalAverage?: number;
  averageScheduledPollInterval?: number;
  maxRetries?: number;
  deadTimeoutSeconds?: number;
  deadMaxJobs?: number;
  /**
   * sidekiq-cron's poller: on by default (it idles while Redis holds no cron
   * jobs), `false` to turn it off, or its options (poll interval, namespaces...).
   */
  cron?: boolean | Omit<CronPollerOptions, "redis" | "client" | "logger">;
  /** Embedded processes hide Quiet/Stop in the Web UI and ignore remote signals' kill (default false). */
  embedded?: boolean;
  /**
   * Any `(msg, ctx)` logger, or a pino-style `(obj, msg)` one (recognised by
   * its `child` and `bindings`; wrap others with objectFirstLogger). Default:
   * Sidekiq's text lines on stderr.
   */
  logger?: LoggerLike;
  /** For the default logger: "info" (default), "debug", "warn", "error". */
  logLevel?: LogLevel;
  /** For the default logger: "text" (Sidekiq's Pretty lines, default) or "json" (Sidekiq's JSON formatter). */
  logFormat?: LogFormat;
  /** Sidekiq's `skip_default_job_logging`: no `start`/`done`/`fail` line per job. */
  skipDefaultJobLogging?: boolean;
  /** Sidekiq's `logged_job_attributes`: payload keys added to a job's log context (default bid, tags). */
  loggedJobAttributes?: string[];
  /** Sidekiq's `error_handlers`: `(error, { context, job })` for every error the worker reports. */
  errorHandlers?: ErrorHandler[];
  /** Sidekiq's `death_handlers`: `(job, error)` for every job that dies (same as onDeath). */
  deathHandlers?: DeathHandler[];
}

/**
 * A Sidekiq process in Node: register handlers, then `start()`. The launcher
 * (launcher.ts) runs the heartbeat, poller and recovery; one manager per
 * capsule (manager.ts) fetches and runs the jobs.
 */
export class Worker {
  readonly identity = newIdentity();
  private readonly conn: OwnedRedis;
  private readonly handlers = new Map<string, RegisteredHandler>();
  private readonly activeJobHandlers = new Map<string, RegisteredHandler>();
  private readonly middleware: ServerMiddleware[] = [];
  private readonly deathHandlers: DeathHandler[] = [];
  private readonly launcher: Launcher;
  private readonly client: Client;
  private readonly logger: Logger;
  private readonly events = new WorkerEvents();
  private readonly errorHandlers: ErrorHandler[];
  private readonly jobLogger: JobLogger;
  private closing = false;

  constructor(private readonly options: WorkerOptions) {
    this.conn = connectRedis(options.redis);
    const configs = options.capsules?.length
      ? options.capsules
      : [{ name: "default", concurrency: options.concurrency ?? 5, queues: options.queues ?? ["default"] }];
    this.logger = options.logger
      ? safeLogger(toLogger(options.logger))
      : consoleLogger({ level: options.logLevel ?? "info", format: options.logFormat ?? "text" });
    this.deathHandlers.push(...(options.deathHandlers ?? []));
    this.errorHandlers = [...(options.errorHandlers ?? [])];
    this.events.onListenerError = (e, event) =>
      this.logger.error(`a "${event}" listener threw; ignored`, { error: (e as Error)?.message ?? String(e) });
    this.jobLogger = new JobLogger({
      logger: this.logger,
      events: this.events,
      errorHandlers: this.errorHandlers,
      skip: options.skipDefaultJobLogging ?? false,
      ...(options.loggedJobAttributes ? { loggedJobAttributes: options.loggedJobAttributes } : {}),
    });
    this.watchConnection();
    const client = new Client({
      redis: this.conn.redis,
      ...(options.dialect !== undefined ? { dialect: options.dialect } : {}),
      ...(options.autoFallback !== undefined ? { autoFallback: options.autoFallback } : {}),
      // Payloads the poller moves were checked when they were written.
      validate: false,
    });
    this.client = client;
    this.launcher = new Launcher({
      conn: this.conn,
      client,
      identity: this.identity,
      capsules: configs.map(makeCapsule),
      registry: {
        handlers: this.handlers,
        activeJobHandlers: this.activeJobHandlers,
        middleware: this.middleware,
        deathHandlers: this.deathHandlers,
      },
      logger: this.logger,
      retryConfig: (profile) => this.retryConfig(profile),
      reliable: (options.fetch ?? "reliable") === "reliable",
      fetchLanes: options.fetchLanes,
      fetchAhead: options.fetchAhead !== false,
      recoveryIntervalMs: options.recoveryIntervalMs ?? 60_000,
      scheduler: options.scheduler !== false,
      cron: options.cron === false ? false : typeof options.cron === "object" ? options.cron : {},
      pollIntervalAverage: options.pollIntervalAverage,
      averageScheduledPollInterval: options.averageScheduledPollInterval,
      unknownClass: options.unknownClass ?? "retry",
      timeout: options.timeout ?? 25,
      tag: options.tag ?? "",
      labels: options.labels ?? [],
      embedded: options.embedded ?? false,
      connectWaitMs: options.connectWaitMs ?? 5000,
      jobLogger: this.jobLogger,
      events: this.events,
    });
  }

  /** Listens to a worker event (see WorkerEventMap); a listener that throws is logged and skipped. */
  on<E extends WorkerEventName>(event: E, fn: WorkerListener<E>): this {
    this.events.on(event, fn);
    return this;
  }

  off<E extends WorkerEventName>(event: E, fn: WorkerListener<E>): this {
    this.events.off(event, fn);
    return this;
  }

  once<E extends WorkerEventName>(event: E, fn: WorkerListener<E>): this {
    this.events.once(event, fn);
    return this;
  }

  /** Adds a Sidekiq error handler: `(error, { context, job })`. */
  onError(handler: ErrorHandler): this {
    this.errorHandlers.push(handler);
    return this;
  }

  /** Busy slots and concurrency per capsule (empty before start). */
  slots(): Array<{ capsule: string; busy: number; concurrency: number }> {
    return this.launcher.slots();
  }

  /** redis:lost when the command connection drops, redis:regained when it is ready again. */
  private watchConnection(): void {
    let lost = false;
    let lastError: unknown;
    const redis = this.conn.redis;
    redis.on("error", (e: unknown) => {
      lastError = e;
    });
    redis.on("close", () => {
      if (lost || this.closing) return;
      lost = true;
      this.events.emit("redis:lost", lastError === undefined ? {} : { error: lastError });
    });
    redis.on("ready", () => {
      if (!lost) return;
      lost = false;
      lastError = undefined;
      this.events.emit("redis:regained", {});
    });
  }

  /** Handles jobs of a Ruby class name: `handler(args, ctx)`. */
  register<A extends unknown[] = JsonValue[]>(
    className: string,
    handler: JobHandler<A>,
    options: HandlerOptions = {},
  ): this {
    this.handlers.set(className, { handler: handler as JobHandler<never>, options });
    return this;
  }

  /** Handles ActiveJob jobs of this class (routed by `wrapped`), with arguments decoded. */
  registerActiveJob<A extends unknown[] = unknown[]>(
    jobClass: string,
    handler: JobHandler<A>,
    options: HandlerOptions = {},
  ): this {
    this.activeJobHandlers.set(jobClass, { handler: handler as JobHandler<never>, options });
    return this;
  }

  /**
   * Handles an IterableJob class (`include Sidekiq::IterableJob`): its cursor
   * lives in `it-<jid>` as in Ruby, so either side resumes the other's work.
   */
  registerIterable<A extends unknown[] = JsonValue[], Item = unknown>(
    className: string,
    job: IterableJob<A, Item>,
    options: HandlerOptions & IterableOptions = {},
  ): this {
    const deps = {
      redis: () => this.conn.redis,
      version: () => this.launcher.profile!.version,
      pushBack: (record: JobRecord) => this.client.pushRecord(record),
      logger: this.logger,
      timeout: this.options.timeout ?? 25,
    };
    return this.register(className, iterableHandler(className, job, options, deps), options);
  }

  use(mw: ServerMiddleware): this {
    this.middleware.push(mw);
    return this;
  }

  onDeath(handler: DeathHandler): this {
    this.deathHandlers.push(handler);
    return this;
  }

  get quiet(): boolean {
    return this.launcher.quiet;
  }

  private retryConfig(profile: WireProfile): RetryConfig {
    return {
      profile,
      maxRetries: this.options.maxRetries ?? DEFAULT_MAX_RETRY_ATTEMPTS,
      deadTimeoutSeconds: this.options.deadTimeoutSeconds ?? DEFAULT_DEAD_TIMEOUT_SECONDS,
      deadMaxJobs: this.options.deadMaxJobs ?? DEFAULT_DEAD_MAX_JOBS,
      deathHandlers: this.deathHandlers,
      onHandlerError: (e, c) => this.jobLogger.handleException(e, { context: c.context, job: c.job }),
    };
  }

  /**
   * Starts the heartbeat, the poller, recovery, and fetching (Sidekiq's
   * Launcher#run). Rejects with a RedisUnavailableError when Redis cannot be
   * reached within `connectWaitMs`; once started, an outage is retried with
   * backoff and logged once.
   */
  start(): Promise<void> {
    return this.launcher.run();
  }

  /**
   * Stop fetching new work and stop the poller; running jobs continue
   * (Sidekiq's TSTP). Jobs fetched ahead and not started are back in their
   * queues when it resolves.
   */
  quietDown(): Promise<void> {
    return this.launcher.quietDown();
  }

  /**
   * Sidekiq's shutdown: quiet, wait up to `timeout` for running jobs, abort
   * the rest and push their raw jobs back to their queues, clear the heartbeat.
   * Settles within `timeout` + SHUTDOWN_GRACE_MS (3 s) and a little, whatever
   * Redis does, and never rejects: with Redis unreachable it resolves with
   * `clean: false` and says what could not be done (unfinished jobs then wait
   * in the working lists, with reliable fetch, for recovery).
   */
  stop(): Promise<StopResult> {
    this.closing = true;
    return this.launcher.stop();
  }

  /** What each slot is doing (Sidekiq's TTIN dump). */
  dump(): Array<{ tid: string; queue: string; jid?: string | undefined; runningFor: number }> {
    return this.launcher.dump();
  }

  /**
   * OS signals as Sidekiq's CLI: TERM/INT stop, TSTP quiet, TTIN dump. After
   * a stop, `exit` gets EXIT_STOPPED (0) or EXIT_INCOMPLETE (3: something
   * could not be done, see the log); a second TERM or INT calls it at once
   * with 128 + the signal's number (143, 130).
   */
  handleSignals(exit: (code: number) => void = (c) => process.exit(c)): () => void {
    return this.launcher.handleSignals(exit);
  }
}
