// The seam that watches each job run (Sidekiq's `config[:job_logger]` and
// `error_handlers`): the processor tells it when a job starts, ends and what
// the retry path did; the default, job-watch.ts, has the job logger write
// Sidekiq's start/done/fail lines, emits the job events and calls the error
// handlers.
import type { JobEventBase } from "./events.js";
import type { RetryOutcome } from "./job-retry.js";
import type { LoggedRun } from "../logging/job-logger.js";
import type { LogContext } from "../logging/logger.js";

/** Sidekiq's error handler: `(error, context)`, context like `{ context: "Job raised exception", job }`. */
export type ErrorHandler = (error: unknown, context: LogContext) => void | Promise<void>;

/** One job's run as the observer sees it: its lines' run (the bound logger, whether info lines are on). */
export type JobRun = LoggedRun;

/** What watches every job: Sidekiq's JobLogger plus its error handlers. */
export interface JobObserver {
  /** Sidekiq's `prepare` and the `start` line. */
  start(base: JobEventBase): JobRun;
  success(run: JobRun, ms: number): void;
  /** The `fail` line; `reported` false for Sidekiq::JobRetry::Skip (not an error). */
  failure(run: JobRun, ms: number, error: unknown, reported?: boolean): void;
  /** What the retry path did with the failed job. */
  outcome(run: JobRun, outcome: RetryOutcome, error: unknown, retryAt?: number): void;
  /** Sidekiq's `handle_exception`: every error handler; `logged` when the caller already logged it. */
  handleException(error: unknown, context: LogContext, logged?: boolean): void;
}
