// What watches each job run, as Sidekiq's processor does around it: the job
// logger's lines (its `config[:job_logger]`), the worker's job events, and
// the error handlers (`handle_exception`).
import type { JobLogger, JobRun } from "../logging/job-logger.js";
import type { LogContext, Logger } from "../logging/logger.js";
import type { JobEventBase, JobFinishedEvent, WorkerEvents } from "./events.js";
import type { ErrorHandler } from "./error-handler.js";
import type { RetryOutcome } from "./job-retry.js";

export interface JobWatchOptions {
  jobLogger: JobLogger;
  events: WorkerEvents;
  errorHandlers: readonly ErrorHandler[];
  /** Where an error goes when no error handler is set (Sidekiq's default handler logs it). */
  logger: Logger;
}

export class JobWatch {
  constructor(private readonly options: JobWatchOptions) {}

  start(base: JobEventBase): JobRun {
    const run = this.options.jobLogger.start(base);
    this.options.events.emit("job:start", base);
    return run;
  }

  success(run: JobRun, ms: number): void {
    const elapsed = round3(ms);
    this.options.jobLogger.done(run, elapsed);
    if (this.options.events.has("job:success")) this.options.events.emit("job:success", finished(run, elapsed));
  }

  /** `reported` false for Sidekiq::JobRetry::Skip (not an error). */
  failure(run: JobRun, ms: number, error: unknown, reported = true): void {
    const elapsed = round3(ms);
    this.options.jobLogger.fail(run, elapsed);
    if (!reported) return;
    if (this.options.events.has("job:failure"))
      this.options.events.emit("job:failure", { ...finished(run, elapsed), error });
    // The processor logs "Job raised exception" itself.
    this.handleException(error, { context: "Job raised exception", job: run.record }, true);
  }

  outcome(run: JobRun, outcome: RetryOutcome, error: unknown, retryAt?: number): void {
    if (outcome === "retry") this.options.events.emit("job:retry", { ...strip(run), error, retryAt: retryAt ?? 0 });
    else if (outcome === "dead" || outcome === "discarded")
      this.options.events.emit("job:dead", { ...strip(run), error, outcome });
  }

  /**
   * Sidekiq's `handle_exception`: every error handler, each guarded; with
   * none, the error is logged (Sidekiq's default handler) unless it was already.
   */
  handleException(error: unknown, context: LogContext, logged = false): void {
    this.options.events.emit("error", { error, context });
    if (this.options.errorHandlers.length === 0 && !logged) {
      const { job: _job, context: what, ...rest } = context;
      this.options.logger.warn(typeof what === "string" ? what : "error", {
        ...rest,
        error_class: (error as Error)?.name ?? "Error",
        error_message: (error as Error)?.message ?? String(error),
      });
    }
    for (const h of this.options.errorHandlers) {
      try {
        const r = h(error, context);
        if (r instanceof Promise) r.catch(() => undefined);
      } catch {
        // An error handler that fails must not change what happens to the job.
      }
    }
  }
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
