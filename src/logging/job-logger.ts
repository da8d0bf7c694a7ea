// Sidekiq's JobLogger and what else watches a job run: the `start`, `done`
// and `fail` lines with the job's context (tid, class, jid, bid, tags,
// elapsed), the worker's job events, and Sidekiq's error handlers. The
// worker plugs it into the processor's job-observer seam
// (server/job-observer.ts), as Sidekiq's `config[:job_logger]`.
import type { JobRecord } from "../wire/job-record.js";
import type { JobEventBase, JobFinishedEvent, WorkerEvents } from "../server/events.js";
import type { ErrorHandler, JobObserver, JobRun } from "../server/job-observer.js";
import {
  isLogLevel,
  jobLineWriter,
  type JobLineWriter,
  LOG_LEVELS,
  type LogContext,
  type Logger,
  withContext,
} from "./logger.js";
import type { RetryOutcome } from "../server/job-retry.js";

export interface JobLoggerOptions {
  logger: Logger;
  events: WorkerEvents;
  errorHandlers: readonly ErrorHandler[];
  /** Sidekiq's `skip_default_job_logging`: no start/done/fail lines. */
  skip?: boolean;
  /** Sidekiq's `logged_job_attributes` (default bid, tags): payload keys added to the context. */
  loggedJobAttributes?: readonly string[];
}

/** Ruby's Logger levels by number, as a job's `log_level` may give them. */
const RUBY_LEVELS: Record<number, number> = { 0: 0, 1: 1, 2: 2, 3: 3, 4: 3 };

function jobLevel(record: JobRecord): number | undefined {
  const v = record.get("log_level");
  if (typeof v === "number") return RUBY_LEVELS[v];
  if (isLogLevel(v)) return LOG_LEVELS.indexOf(v);
  if (v === "fatal") return 3;
  return undefined;
}

/**
 * A run, made once per job: its bound logger is only built when the handler
 * asks for it (most never log), and the `done`/`fail` lines merge the
 * context themselves, with the same keys in the same order.
 */
class Run implements JobRun {
  private bound: Logger | undefined;
  constructor(
    readonly jid: string,
    readonly className: string,
    readonly queue: string,
    readonly tid: string,
    readonly record: JobRecord,
    readonly ctx: LogContext,
    /** ctx holds only tid, class and jid. */
    private readonly plain: boolean,
    readonly logInfo: boolean,
    private readonly root: Logger,
    /** Set when ctx is plain and the logger writes job lines from their parts. */
    private readonly jobLine: JobLineWriter | undefined,
  ) {}

  get logger(): Logger {
    return (this.bound ??= withContext(this.root, this.ctx));
  }

  /** A line with the job's context and `elapsed` (withContext's merge, without the closures). */
  info(msg: string, elapsed: number): void {
    if (this.jobLine) return this.jobLine(msg, this.tid, this.className, this.jid, elapsed);
    const c = this.ctx;
    // Most jobs have no logged attributes: a literal of one shape is cheaper than a spread.
    this.root.info(msg, this.plain ? { tid: c.tid, class: c.class, jid: c.jid, elapsed } : { ...c, elapsed });
  }
}

export class JobLogger implements JobObserver {
  private readonly attributes: readonly string[];
  private readonly jobLine: JobLineWriter | undefined;
  constructor(private readonly o: JobLoggerOptions) {
    this.attributes = o.loggedJobAttributes ?? ["bid", "tags"];
    this.jobLine = jobLineWriter(o.logger);
  }

  /** Sidekiq's `prepare` and the `start` line. */
  start(base: JobEventBase): JobRun {
    const ctx: LogContext = { tid: base.tid, class: base.className, jid: base.jid };
    let plain = true;
    for (const a of this.attributes) {
      const v = base.record.get(a);
      if (v === undefined) continue;
      ctx[a] = v;
      plain = false;
    }
    const level = jobLevel(base.record);
    const logInfo = !this.o.skip && (level === undefined || level <= 1);
    const { jid, className, queue, tid, record } = base;
    // Plain job lines (tid, class, jid) skip the context object when the logger writes them from their parts.
    const jobLine = plain ? this.jobLine : undefined;
    const run = new Run(jid, className, queue, tid, record, ctx, plain, logInfo, this.o.logger, jobLine);
    if (logInfo) {
      if (jobLine) jobLine("start", tid, className, jid);
      else this.o.logger.info("start", ctx);
    }
    this.o.events.emit("job:start", base);
    return run;
  }

  success(run: JobRun, ms: number): void {
    const elapsed = round3(ms);
    if (run.logInfo) line(run, "done", elapsed);
    if (this.o.events.has("job:success")) this.o.events.emit("job:success", finished(run, elapsed));
  }

  /** The `fail` line; `reported` false for Sidekiq::JobRetry::Skip (not an error). */
  failure(run: JobRun, ms: number, error: unknown, reported = true): void {
    const elapsed = round3(ms);
    if (run.logInfo) line(run, "fail", elapsed);
    if (!reported) return;
    if (this.o.events.has("job:failure")) this.o.events.emit("job:failure", { ...finished(run, elapsed), error });
    // The processor logs "Job raised exception" itself.
    this.handleException(error, { context: "Job raised exception", job: run.record }, true);
  }

  /** What the retry path did with the failed job. */
  outcome(run: JobRun, outcome: RetryOutcome, error: unknown, retryAt?: number): void {
    if (outcome === "retry") this.o.events.emit("job:retry", { ...strip(run), error, retryAt: retryAt ?? 0 });
    else if (outcome === "dead" || outcome === "discarded")
      this.o.events.emit("job:dead", { ...strip(run), error, outcome });
  }

  /**
   * Sidekiq's `handle_exception`: every error handler, each guarded; with
   * none, the error is logged (Sidekiq's default handler) unless it was already.
   */
  handleException(error: unknown, context: LogContext, logged = false): void {
    this.o.events.emit("error", { error, context });
    if (this.o.errorHandlers.length === 0 && !logged) {
      const { job: _job, context: what, ...rest } = context;
      this.o.logger.warn(typeof what === "string" ? what : "error", {
        ...rest,
        error_class: (error as Error)?.name ?? "Error",
        error_message: (error as Error)?.message ?? String(error),
      });
    }
    for (const h of this.o.errorHandlers) {
      try {
        const r = h(error, context);
        if (r instanceof Promise) r.catch(() => undefined);
      } catch {
        // An error handler that fails must not change what happens to the job.
      }
    }
  }
}

/** The `done`/`fail` line: through the run's own merge when it is ours, else its bound logger. */
function line(run: JobRun, msg: string, elapsed: number): void {
  if (run instanceof Run) run.info(msg, elapsed);
  else run.logger.info(msg, { elapsed });
}

/** The job:success event (and job:failure's base): a literal of one shape, no spread. */
function finished(run: JobRun, elapsed: number): JobFinishedEvent {
  return {
    jid: run.jid,
    className: run.className,
    queue: run.queue,
    tid: run.tid,
    record: run.record,
    elapsed,
  };
}

function strip(run: JobRun): JobEventBase {
  return { jid: run.jid, className: run.className, queue: run.queue, tid: run.tid, record: run.record };
}

/** Sidekiq's `elapsed`: seconds rounded to milliseconds. */
function round3(ms: number): number {
  return Math.round(ms) / 1000;
}
