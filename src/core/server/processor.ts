// Sidekiq's Processor for one fetched job: parse (malformed JSON goes to the
// dead set as the raw string), route by class (or `wrapped` for ActiveJob),
// server middleware, the handler, stats, and the retry path on failure.
import { inspect } from "node:util";
import { JobRecord } from "../wire/job-record.js";
import type { JsonValue } from "../wire/json-scan.js";
import { applyFailure } from "../wire/retry-fields.js";
import { ACTIVEJOB_WRAPPER_CLASSES } from "../wire/sidekiq-constants.js";
import { activeJobArguments } from "./activejob-args.js";
import { LazyAbort } from "./lazy-abort.js";
import type { Redis } from "ioredis";
import type { MiddlewareChain } from "../middleware/chain.js";
import { handleFailure, sendToDead, type RetryConfig } from "./job-retry.js";
import type { Config } from "./config.js";
import type { Logger } from "../logging/logger.js";
import { markerOf, type PayloadMarker } from "./payload-marker.js";
import { admit } from "./job-gate.js";
import type { ExecutionStats } from "./execution-stats.js";
import type { Work } from "./work-state.js";
import {
  describeError,
  JobRetrySkip,
  type JobContext,
  type RegisteredHandler,
  type ServerMiddleware,
} from "./types.js";
import type { JobRun } from "../logging/job-logger.js";

export type { ServerMiddleware, ServerMiddlewareContext, UnknownClassPolicy } from "./types.js";

/**
 * What a processor is given: the worker's Config, by reference (handlers,
 * middleware, markers, gates, the job watch, the unknown-class policy), and
 * what its launcher keeps for the process (retry rules, stats). The job it
 * runs is an entry of the launcher's WorkState, which it marks busy.
 */
export interface ProcessorDeps {
  config: Config;
  retry: RetryConfig;
  stats: ExecutionStats;
  /** The launcher's logger (silent once a shutdown gave up on Redis). */
  logger: Logger;
  /** The worker is quieting or stopping (handlers read it as ctx.stopping). */
  stopping?: () => boolean;
}

/**
 * "ack": done with (ran, retried, dead).
 * "requeue": not finished (hard shutdown, or Redis failed while recording the
 * failure): the caller must push the raw job back.
 * "hand-back": no handler and the requeue policy, an add-on's marker this
 * worker does not run, or a gate said so: the caller hands it to the far end
 * of its queue for another process, and backs off.
 */
export type ProcessResult = "ack" | "requeue" | "hand-back";

/** What each worker (by its marker list) already logged: one line per marker and class. */
const markerLogged = new WeakMap<readonly PayloadMarker[], Set<string>>();

/**
 * A job carrying the marker of an add-on this worker does not run: handed
 * back (or, where the user opted out, run), with one line per marker and class.
 */
function checkMarkers(record: JobRecord, className: string, jid: string, deps: ProcessorDeps): "hand-back" | "run" {
  const markers = deps.config.markers;
  const marker = markerOf(record, markers);
  if (!marker) return "run";
  let logged = markerLogged.get(markers);
  if (!logged) markerLogged.set(markers, (logged = new Set()));
  const key = `${marker.field}\0${className}`;
  if (!logged.has(key)) {
    logged.add(key);
    deps.logger.warn(marker.message, { class: className, jid, [marker.field]: String(record.get(marker.field)) });
  }
  return marker.handBack ? "hand-back" : "run";
}

/** A job whose class has no Node handler (Ruby's NameError in Sidekiq's retry records). */
export class UnknownJobClassError extends Error {
  override name = "NameError";
}

/**
 * A handler's ctx. A class rather than an object literal with getters: a
 * literal's getters are new closures for every job, V8 then gives each ctx
 * a hidden class of its own, and that kept each job's objects alive across
 * young-generation collections (processJob alone: about 550 KB of every
 * 1.3 MB allocated survived a scavenge, 1 KB with this class), which made
 * every scavenge copy and promote them and pause the worker about 2 ms.
 */
class HandlerContext implements JobContext {
  // Plain fields, not #private ones: an iterable job's ctx is built with
  // Object.create(this ctx), and a getter reached through it has that object
  // as `this`, which has no #private fields.
  constructor(
    readonly jid: string,
    readonly className: string,
    readonly queue: string,
    readonly record: JobRecord,
    readonly raw: string,
    private readonly jobRun: JobRun | undefined,
    private readonly workerLogger: Logger,
    private readonly abort: LazyAbort,
    private readonly isStopping: (() => boolean) | undefined,
  ) {}

  /** Built on first use: most handlers never log. */
  get logger(): Logger {
    return this.jobRun?.logger ?? this.workerLogger;
  }
  get signal(): AbortSignal {
    return this.abort.signal;
  }
  get stopping(): boolean {
    return this.isStopping?.() ?? false;
  }

  /** What the object literal this replaced serialised to; never the worker's internals. */
  toJSON(): Record<string, unknown> {
    const { jid, className, queue, record, raw, logger, signal, stopping } = this;
    return { jid, className, queue, record, raw, logger, signal, stopping };
  }

  [inspect.custom](): Record<string, unknown> {
    return this.toJSON();
  }
}

/** The class a job routes by (`wrapped` for ActiveJob's wrapper); a payload without a class or an args array throws. */
function routeOf(record: JobRecord): { className: string; isActiveJob: boolean } {
  const payloadClass = record.get("class");
  if (typeof payloadClass !== "string" || payloadClass === "") throw new Error("the job has no class");
  // Cheap shape check on the raw text: args must be a JSON array.
  if (record.raw("args")?.[0] !== "[") throw new Error("the job's args is not an array");
  const wrapped = record.get("wrapped");
  const isActiveJob = ACTIVEJOB_WRAPPER_CLASSES.has(payloadClass);
  return { className: isActiveJob && typeof wrapped === "string" ? wrapped : payloadClass, isActiveJob };
}

/**
 * The handler's arguments (ActiveJob's decoded), and the handler run inside
 * the server middleware unless it is empty. Not async: the caller awaits the
 * handler's own result, with no promise of this frame between.
 */
function perform(
  registered: RegisteredHandler,
  record: JobRecord,
  isActiveJob: boolean,
  ctx: HandlerContext,
  chain: MiddlewareChain<ServerMiddleware>,
  redis: Redis,
): unknown {
  const args = isActiveJob
    ? activeJobArguments(record.raw("args") ?? "null")
    : ((record.get("args") ?? []) as JsonValue[]);
  if (chain.empty) return registered.handler(args as never, ctx);
  return chain.invoke({ jid: ctx.jid, className: ctx.className, queue: ctx.queue, job: record, redis }, () =>
    registered.handler(args as never, ctx),
  );
}

/**
 * One job run now, outside any fetch (the testing entry's drain and inline
 * mode, as Sidekiq's `process_job`): routed, its arguments decoded and its
 * handler run inside `chain` by the steps processJob takes; an error reaches
 * the caller (no retry, no stats, no job events).
 */
export async function performNow(config: Config, raw: string, chain: MiddlewareChain<ServerMiddleware>): Promise<void> {
  const record = JobRecord.parse(raw);
  const { className, isActiveJob } = routeOf(record);
  const registered = (isActiveJob ? config.activeJobHandlers : config.handlers).get(className);
  if (!registered) throw new UnknownJobClassError(`uninitialized constant ${className}`);
  const jid = record.getString("jid") ?? "";
  const queue = record.getString("queue") ?? "default";
  const ctx = new HandlerContext(
    jid,
    className,
    queue,
    record,
    raw,
    undefined,
    config.logger,
    new LazyAbort(),
    undefined,
  );
  await perform(registered, record, isActiveJob, ctx, chain, config.conn.redis);
}

export async function processJob(work: Work, deps: ProcessorDeps): Promise<ProcessResult> {
  const { uow, tid, abort } = work;
  const { logger, config } = deps;
  const redis = config.conn.redis;
  const watch = config.jobWatch;
  let record: JobRecord;
  let className: string;
  let jid: string;
  let isActiveJob: boolean;
  if (uow.job === null) {
    await sendToDead(redis, uow.raw, deps.retry);
    logger.error("Invalid JSON for job: its bytes are not UTF-8", { queue: uow.queueName, bytes: uow.raw.length });
    return "ack";
  }
  const jobstr = uow.job;
  try {
    record = JobRecord.parse(jobstr);
    ({ className, isActiveJob } = routeOf(record));
    work.jid = record.getString("jid");
    jid = work.jid ?? "";
  } catch (e) {
    // Malformed payloads go to the morgue as they are, as Sidekiq's processor does.
    await sendToDead(redis, uow.raw, deps.retry);
    logger.error("Invalid JSON for job", {
      queue: uow.queueName,
      error: (e as Error).message,
      jobstr: jobstr.slice(0, 200),
    });
    return "ack";
  }

  if (config.markers.length && checkMarkers(record, className, jid, deps) === "hand-back") return "hand-back";
  const registered = (isActiveJob ? config.activeJobHandlers : config.handlers).get(className);
  if (!registered && config.options.unknownClass === "requeue") {
    logger.warn("No handler for job class; handed back to its queue", { class: className, jid, queue: uow.queueName });
    return "hand-back";
  }
  // After the no-handler hand-back: a gate (a throttle) takes nothing for a job this worker will not run.
  if (config.gates.length) {
    let verdict = admit(config.gates, { jid, className, queue: uow.queueName, record, job: jobstr, redis });
    if (typeof verdict !== "string") verdict = await verdict;
    if (verdict !== "run") return verdict === "done" ? "ack" : "hand-back";
  }

  // Busy from here (Sidekiq's WORK_STATE.set): the heartbeat shows it.
  work.runAt = Math.floor(Date.now() / 1000);
  const run: JobRun = watch.start({ jid, className, queue: uow.queueName, tid, record });
  const started = performance.now();
  try {
    if (!registered) throw new UnknownJobClassError(`uninitialized constant ${className}`);
    const ctx = new HandlerContext(jid, className, uow.queueName, record, jobstr, run, logger, abort, deps.stopping);
    await perform(registered, record, isActiveJob, ctx, config.serverMiddleware, redis);
    const ms = performance.now() - started;
    deps.stats.record(className, ms, true);
    watch.success(run, ms);
    return "ack";
  } catch (error) {
    if (abort.aborted) {
      // Hard shutdown: not finished, so not acknowledged; the launcher requeues it.
      return "requeue";
    }
    const ms = performance.now() - started;
    if (error instanceof JobRetrySkip) {
      deps.stats.recordSkip(className, ms);
      watch.failure(run, ms, error, false);
      return "ack";
    }
    deps.stats.record(className, ms, false);
    watch.failure(run, ms, error);
    const err = describeError(error);
    logger.warn("Job raised exception", {
      tid,
      class: className,
      jid,
      queue: uow.queueName,
      error_class: err.errorClass,
      error_message: err.message,
    });
    try {
      // The retry rewrite starts from the job as fetched: middleware changes are not stored.
      const original = JobRecord.parse(jobstr);
      if (!registered && config.options.unknownClass === "dead") {
        applyFailure(original, { ...err, backtrace: err.backtrace }, deps.retry.profile);
        await sendToDead(redis, original.toString(), deps.retry);
        watch.outcome(run, "dead", error);
        logger.warn("No handler for job class; sent to the dead set", { class: className, jid });
        return "ack";
      }
      const { outcome, retryAt } = await handleFailure(redis, original, error, {
        queue: uow.queueName,
        handler: registered?.options,
        config: deps.retry,
      });
      watch.outcome(run, outcome, error, retryAt);
      if (!registered) logger.warn(`No handler for job class; ${outcome}`, { class: className, jid });
      return "ack";
    } catch (e) {
      logger.error("Could not record the failure; the job goes back to its queue", {
        class: className,
        jid,
        error: (e as Error).message,
      });
      return "requeue";
    }
  } finally {
    work.runAt = undefined;
  }
}
