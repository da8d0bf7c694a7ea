// Shared shapes of the server side (Sidekiq's processor, retry, launcher).
import type { Redis } from "ioredis";
import type { JsonValue } from "../wire/json-scan.js";
import type { JobRecord } from "../wire/job-record.js";
import type { Logger } from "../logging/logger.js";
import type { HandlerContract } from "../contract/handlers.js";

/** What a handler gets besides its arguments. */
export interface JobContext {
  jid: string;
  /** The class name the job was routed by (`wrapped` for ActiveJob). */
  className: string;
  queue: string;
  /** The payload as stored (lossless; read any field with `record.get`). */
  record: JobRecord;
  /** The raw job string fetched from Redis. */
  raw: string;
  /** The worker's logger with this job's context (tid, class, jid) on every line. */
  logger: Logger;
  /** Aborted when the worker hard-stops (timeout after TERM): finish or give up quickly. */
  signal: AbortSignal;
  /** True once the worker quiets or stops (Ruby's `interrupted?`): long jobs may stop early and hand back. */
  readonly stopping: boolean;
}

/**
 * Sidekiq::JobRetry::Skip: the handler dealt with the job itself (an
 * interrupted iterable job pushed itself back): acknowledged, no retry,
 * counted failed in the process stats but timed like a success in metrics.
 */
export class JobRetrySkip extends Error {
  override name = "Sidekiq::JobRetry::Skip";
}

/** A job's handler: gets the job's arguments and context; a throw fails the job with Sidekiq's retry rules. */
export type JobHandler<A extends unknown[] = JsonValue[]> = (args: A, ctx: JobContext) => unknown | Promise<unknown>;

/** Sidekiq's `sidekiq_retry_in` answer: seconds until the next try, or what to do instead. */
export type RetryInResult = number | "discard" | "kill" | undefined | null;

/** Per-class hooks: `retryIn` (`sidekiq_retry_in`) and `retriesExhausted` (`sidekiq_retries_exhausted`). */
export interface HandlerOptions {
  /** Like `sidekiq_retry_in { |count, exception, job| ... }`; undefined means the default delay. */
  retryIn?: (count: number, error: unknown, job: JobRecord) => RetryInResult | Promise<RetryInResult>;
  /** Like `sidekiq_retries_exhausted { |job, exception| ... }`; "discard" keeps it out of the dead set. */
  retriesExhausted?: (job: JobRecord, error: unknown) => void | "discard" | Promise<void | "discard">;
  /** The arguments it accepts (a JSON Schema) and the options Ruby pushes with: see docs/CONTRACT.md. */
  contract?: HandlerContract;
}

export interface RegisteredHandler {
  handler: JobHandler<never>;
  options: HandlerOptions;
}

/** Like Sidekiq's death handlers: called for every job that dies (or is discarded), with the worker's Redis. */
export type DeathHandler = (job: JobRecord, error: unknown, redis: Redis) => void | Promise<void>;

/** The error Sidekiq reports for a job; JS errors map to their name. */
export interface FailureSource {
  errorClass: string;
  message: string;
  backtrace: string[];
}

export function describeError(e: unknown): FailureSource {
  if (e instanceof Error) {
    const lines = (e.stack ?? "")
      .split("\n")
      .slice(1)
      .map((l) => l.trim().replace(/^at /, ""))
      .filter(Boolean);
    return { errorClass: e.name || e.constructor?.name || "Error", message: e.message, backtrace: lines };
  }
  return {
    errorClass: "RuntimeError",
    message: typeof e === "string" ? e : (JSON.stringify(e) ?? String(e)),
    backtrace: [],
  };
}

/** What server middleware sees: jid, class, queue and the payload. */
export interface ServerMiddlewareContext {
  jid: string;
  className: string;
  queue: string;
  /** The payload; changes here are seen by the handler's ctx.record, never stored. */
  job: JobRecord;
  /** The worker's Redis connection. */
  redis: Redis;
}

/** Server middleware: wraps each job's run; call `next()` to run it (Sidekiq's server middleware). */
export type ServerMiddleware = (ctx: ServerMiddlewareContext, next: () => Promise<void>) => Promise<void> | void;

/**
 * What to do with a job whose class has no handler here:
 * "retry" (Sidekiq's behaviour: a NameError through the retry path),
 * "requeue" (hand it back to its queue for another process, with a bounded
 * backoff), or "dead" (straight to the dead set).
 */
export type UnknownClassPolicy = "retry" | "requeue" | "dead";
