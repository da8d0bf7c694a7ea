// Sidekiq's JobLogger, and only that (sidekiq/job_logger.rb): the `start`,
// `done` and `fail` lines with the job's context (tid, class, jid, bid, tags,
// elapsed), and the logger a handler gets with that context bound. The
// server's job watch (server/job-watch.ts) calls it around each run, beside
// the job events and the error handlers.
import type { JobRecord } from "../wire/job-record.js";
import {
  isLogLevel,
  jobLineWriter,
  type JobLineWriter,
  LOG_LEVELS,
  type LogContext,
  type Logger,
  withContext,
} from "./logger.js";

/** A job about to run: what its lines name. */
export interface JobStart {
  jid: string;
  className: string;
  queue: string;
  tid: string;
  record: JobRecord;
}

/** One job's run as its lines see it. */
export interface JobRun extends JobStart {
  /** The logger with the job's context bound (what the handler gets as ctx.logger). */
  logger: Logger;
  /** Whether info lines are on for this job (its `log_level`). */
  logInfo: boolean;
}

export interface JobLoggerOptions {
  logger: Logger;
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

export class JobLogger {
  private readonly attributes: readonly string[];
  private readonly jobLine: JobLineWriter | undefined;
  constructor(private readonly options: JobLoggerOptions) {
    this.attributes = options.loggedJobAttributes ?? ["bid", "tags"];
    this.jobLine = jobLineWriter(options.logger);
  }

  /** Sidekiq's `prepare` and the `start` line. */
  start(job: JobStart): JobRun {
    const ctx: LogContext = { tid: job.tid, class: job.className, jid: job.jid };
    let plain = true;
    for (const a of this.attributes) {
      const v = job.record.get(a);
      if (v === undefined) continue;
      ctx[a] = v;
      plain = false;
    }
    const level = jobLevel(job.record);
    const logInfo = !this.options.skip && (level === undefined || level <= 1);
    const { jid, className, queue, tid, record } = job;
    // Plain job lines (tid, class, jid) skip the context object when the logger writes them from their parts.
    const jobLine = plain ? this.jobLine : undefined;
    const run = new Run(jid, className, queue, tid, record, ctx, plain, logInfo, this.options.logger, jobLine);
    if (logInfo) {
      if (jobLine) jobLine("start", tid, className, jid);
      else this.options.logger.info("start", ctx);
    }
    return run;
  }

  done(run: JobRun, elapsed: number): void {
    if (run.logInfo) line(run, "done", elapsed);
  }

  fail(run: JobRun, elapsed: number): void {
    if (run.logInfo) line(run, "fail", elapsed);
  }
}

/** The `done`/`fail` line: through the run's own merge when it is ours, else its bound logger. */
function line(run: JobRun, msg: string, elapsed: number): void {
  if (run instanceof Run) run.info(msg, elapsed);
  else run.logger.info(msg, { elapsed });
}
