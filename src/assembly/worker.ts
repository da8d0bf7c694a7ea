// The worker: what a user creates to run Sidekiq jobs in Node, and the
// composition root of a worker process. It resolves the options once into a
// frozen ResolvedOptions (src/core/config/), builds the one runtime object every part
// holds (server/config.ts, Sidekiq::Config), installs into it the add-ons
// that are turned on (src/assembly/registry.ts), and hands it to the launcher
// (src/core/server/), which knows no add-on by name.
import type { Addon } from "../addons/addon.js";
import { addons, type AddonOptions } from "./registry.js";
import { Client } from "../core/client/client.js";
import type { MiddlewareChain } from "../core/middleware/chain.js";
import { installerOf } from "./installers.js";
import { resolveOptions, type ResolvedOptions } from "../core/config/resolve.js";
import type { CoreWorkerOptions } from "../core/config/worker-options.js";
import { type IterableJob, type IterableOptions, iterableHandler } from "../core/iterable/iterable.js";
import { JobLogger } from "../core/logging/job-logger.js";
import { consoleLogger, safeLogger, toLogger } from "../core/logging/logger.js";
import { aclRefusal } from "../core/redis/availability.js";
import { connectRedis } from "../core/redis/connection.js";
import { warnIfUntimed } from "../core/redis/network.js";
import type { WorkerEventName, WorkerListener } from "../core/server/events.js";
import { newIdentity } from "../core/server/heartbeat.js";
import type { ErrorHandler } from "../core/server/error-handler.js";
import { Launcher } from "../core/server/launcher.js";
import { Config } from "../core/server/config.js";
import type { PayloadMarker } from "../core/server/payload-marker.js";
import type { ServerMiddleware } from "../core/server/processor.js";
import type { StopResult } from "../core/server/stop-result.js";
import type { DeathHandler, HandlerOptions, JobHandler } from "../core/server/types.js";
import type { JsonValue } from "../core/wire/json-scan.js";
import type { JobRecord } from "../core/wire/job-record.js";

/**
 * Options of `Worker`: the Redis, the dialect, queues and concurrency (or
 * capsules), the shutdown timeout, fetch mode, poller and logger, and each
 * add-on's option by its name (`cron`, `uniqueJobs`).
 */
export type WorkerOptions = CoreWorkerOptions & AddonOptions;

/**
 * A Sidekiq process in Node: register handlers, then `start()`. The launcher
 * (server/launcher.ts) runs the heartbeat, poller, services and recovery; one
 * manager per capsule (server/manager.ts) fetches and runs the jobs.
 */
export class Worker {
  readonly identity = newIdentity();
  /** The options, resolved once and frozen. */
  readonly options: ResolvedOptions;
  /** Sidekiq::Config: what the launcher, its managers and processors and the add-ons hold by reference. */
  private readonly config: Config;
  /** Sidekiq's `server_middleware`: add, remove, exists, insertBefore, insertAfter. */
  readonly serverMiddleware: MiddlewareChain<ServerMiddleware>;
  /** The add-ons installed from the options. */
  private readonly installed: Array<Addon<unknown>> = [];
  private readonly launcher: Launcher;
  private closing = false;

  constructor(options: WorkerOptions) {
    const resolved = (this.options = resolveOptions(options));
    const conn = connectRedis(options.redis);
    const logging = resolved.logging;
    const logger = options.logger
      ? safeLogger(toLogger(options.logger))
      : consoleLogger({ level: logging.level, format: logging.format });
    if (!conn.owned) warnIfUntimed(conn.redis, (m) => logger.warn(m));
    const client = new Client({
      redis: conn.redis,
      ...(options.dialect !== undefined ? { dialect: options.dialect } : {}),
      ...(options.autoFallback !== undefined ? { autoFallback: options.autoFallback } : {}),
      ...(options.autoRefreshMs !== undefined ? { autoRefreshMs: options.autoRefreshMs } : {}),
      // Payloads the poller moves were checked when they were written.
      validate: false,
    });
    const jobLogger = new JobLogger({
      logger,
      skip: logging.skipDefaultJobLogging,
      ...(logging.loggedJobAttributes ? { loggedJobAttributes: logging.loggedJobAttributes } : {}),
    });
    this.config = new Config({
      options: resolved,
      identity: this.identity,
      conn,
      client,
      logger,
      jobLogger: jobLogger,
    });
    this.serverMiddleware = this.config.serverMiddleware;
    this.config.deathHandlers.push(...(options.deathHandlers ?? []));
    this.config.errorHandlers.push(...(options.errorHandlers ?? []));
    this.watchConnection();
    this.installAddons(options);
    this.launcher = new Launcher(this.config);
  }

  /** Installs each add-on whose option is on (or that is on by default), handing it the runtime. */
  private installAddons(options: WorkerOptions): void {
    const given = options as unknown as Record<string, unknown>;
    for (const addon of addons()) {
      const option = given[addon.name];
      if (option === false || (option === undefined && !addon.onByDefault)) continue;
      installerOf(addon.name)?.(this.config, option ?? true);
      this.installed.push(addon);
    }
  }

  /** Whether the worker runs an add-on: installed from the options, or its middleware added by hand. */
  private runs(a: Addon<unknown>): boolean {
    return this.installed.includes(a) || (!!a.middleware && this.serverMiddleware.exists(a.middleware));
  }

  /** The payload markers of add-ons this worker does not run: handed back, or run where the user opted out. */
  private unclaimedMarkers(): PayloadMarker[] {
    return addons().flatMap((a) => {
      if (this.runs(a)) return [];
      const handBack = !this.options.runWithout.includes(a.name);
      const enable = a.enable ? `Turn it on with ${a.enable}` : "Leave such jobs to Ruby processes";
      return (a.markers ?? []).map((m) => ({
        field: m.field,
        addon: a.gem,
        handBack,
        message: handBack
          ? `This job carries ${m.what}, but this worker does not run ${a.gem}: ${m.breaks}. Handed back to its queue for a process that runs it. ${enable}, or run such jobs anyway with runWithout: ["${a.name}"] (--run-without ${a.name}).`
          : `This job carries ${m.what}, but this worker does not run ${a.gem}: ${m.breaks}. Run anyway (runWithout: ${a.name}). ${enable}.`,
      }));
    });
  }

  /** One line at start: the add-ons this worker runs, and whose marked jobs it hands back. */
  private logAddons(markers: readonly PayloadMarker[]): void {
    const running = addons()
      .filter((a) => this.runs(a) && (installerOf(a.name) || a.middleware))
      .map((a) => a.gem);
    const handedBack = [...new Set(markers.filter((m) => m.handBack).map((m) => m.addon))];
    this.config.logger.info(`add-ons: ${running.length ? running.join(", ") : "none"}`, {
      ...(handedBack.length ? { handing_back_jobs_of: handedBack } : {}),
    });
  }

  /** Listens to a worker event (see WorkerEventMap); a listener that throws is logged and skipped. */
  on<E extends WorkerEventName>(event: E, fn: WorkerListener<E>): this {
    this.config.events.on(event, fn);
    return this;
  }

  off<E extends WorkerEventName>(event: E, fn: WorkerListener<E>): this {
    this.config.events.off(event, fn);
    return this;
  }

  once<E extends WorkerEventName>(event: E, fn: WorkerListener<E>): this {
    this.config.events.once(event, fn);
    return this;
  }

  /** Adds a Sidekiq error handler: `(error, { context, job })`. */
  onError(handler: ErrorHandler): this {
    this.config.errorHandlers.push(handler);
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
    const { events, conn } = this.config;
    const redis = conn.redis;
    redis.on("error", (e: unknown) => {
      lastError = e;
    });
    redis.on("close", () => {
      if (lost || this.closing) return;
      lost = true;
      events.emit("redis:lost", lastError === undefined ? {} : { error: lastError });
    });
    redis.on("ready", () => {
      if (!lost) return;
      lost = false;
      lastError = undefined;
      events.emit("redis:regained", {});
    });
  }

  /** Handles jobs of a Ruby class name: `handler(args, ctx)`. */
  register<A extends unknown[] = JsonValue[]>(
    className: string,
    handler: JobHandler<A>,
    options: HandlerOptions = {},
  ): this {
    this.config.handlers.set(className, { handler: handler as JobHandler<never>, options });
    return this;
  }

  /** Handles ActiveJob jobs of this class (routed by `wrapped`), with arguments decoded. */
  registerActiveJob<A extends unknown[] = unknown[]>(
    className: string,
    handler: JobHandler<A>,
    options: HandlerOptions = {},
  ): this {
    this.config.activeJobHandlers.set(className, { handler: handler as JobHandler<never>, options });
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
      redis: () => this.config.conn.redis,
      version: () => this.launcher.profile!.version,
      reenqueue: (record: JobRecord) => this.config.client.pushRecord(record),
      logger: this.config.logger,
      timeout: this.options.timeout,
    };
    return this.register(className, iterableHandler(className, job, options, deps), options);
  }

  /** Adds server middleware (Sidekiq's `server_middleware.add`). */
  use(mw: ServerMiddleware): this {
    this.serverMiddleware.add(mw);
    return this;
  }

  onDeath(handler: DeathHandler): this {
    this.config.deathHandlers.push(handler);
    return this;
  }

  get quiet(): boolean {
    return this.launcher.quiet;
  }

  /**
   * Starts the heartbeat, the poller, the add-ons' services, recovery, and
   * fetching (Sidekiq's Launcher#run). Rejects with a RedisUnavailableError
   * when Redis cannot be reached within `connectWaitMs`, with a
   * RedisPermissionError when its user's ACL lacks a command; once started, an
   * outage is retried with backoff and logged once.
   */
  async start(): Promise<void> {
    // Known only now: the handlers module may have added an add-on's middleware by hand.
    const markers = this.unclaimedMarkers();
    this.config.markers = markers;
    try {
      await this.launcher.run();
    } catch (e) {
      // A command the Redis user may not run: one line naming the permission.
      throw aclRefusal(this.config.conn.redis, e) ?? e;
    }
    this.logAddons(markers);
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
   * Settles within `timeout` + 3 s and a little, whatever Redis does, and
   * never rejects: with Redis unreachable it resolves with `clean: false` and
   * says what could not be done (unfinished jobs then wait in the working
   * lists, with reliable fetch, for recovery).
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
   * a stop, `exit` gets 0 (stopped) or 3 (something could not be done, see
   * the log); a second TERM or INT calls it at once with 128 + the signal's
   * number (143, 130).
   */
  handleSignals(exit: (code: number) => void = (c) => process.exit(c)): () => void {
    return this.launcher.handleSignals(exit);
  }
}
