// What watches each job run, as Sidekiq's processor does around it: the job
// logger's lines (its `config[:job_logger]`), the worker's job events, and
// the error handlers (`handle_exception`). The processor calls it through
// the job-observer seam (job-observer.ts).
import type { JobLines } from "../logging/job-logger.js";
import type { LogContext, Logger } from "../logging/logger.js";
import type { JobEventBase, JobFinishedEvent, WorkerEvents } from "./events.js";
import type { ErrorHandler, JobObserver, JobRun } from "./job-observer.js";
import type { RetryOutcome } from "./job-retry.js";

export interface JobWatchOptions {
  lines: JobLines;
  events: WorkerEvents;
  errorHandlers: readonly ErrorHandler[];
  /** Where an error goes when no error handler is set (Sidekiq's default handler logs it). */
  logger: Logger;
}

export class JobWatch implements JobObserver {
  constructor(private readonly o: JobWatchOptions) {}

  start(base: JobEventBase): JobRun {
    const run = this.o.lines.start(base);
    this.o.events.emit("job:start", base);
    return run;
  }

  success(run: JobRun, ms: number): void {
    const elapsed = round3(ms);
    this.o.lines.done(run, elapsed);
    if (this.o.events.has("job:success")) this.o.events.emit("job:success", finished(run, elapsed));
  }

  /** `reported` false for Sidekiq::JobRetry::Skip (not an error). */
  failure(run: JobRun, ms: number, error: unknown, reported = true): void {
    const elapsed = round3(ms);
    this.o.lines.fail(run, elapsed);
    if (!reported) return;
    if (this.o.events.has("job:failure")) this.o.events.emit("job:failure", { ...finished(run, elapsed), error });
    // The processor logs "Job raised exception" itself.
    this.handleException(error, { context: "Job raised exception", job: run.record }, true);
  }

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
