// The fields Sidekiq's JobRetry writes into a failed job, in Ruby's order:
// queue (retry_queue), error_message, error_class, failed_at | retried_at,
// retry_count, error_backtrace. Only the touched members change; the rest of
// the payload stays byte for byte.
import { encodeBacktrace } from "./backtrace.js";
import { profileFor, type DialectLike } from "./dialect.js";
import type { JobRecord } from "./job-record.js";
import { RawJson } from "./ruby-json.js";
import { encodePayloadTime, nowMs } from "./timestamps.js";

/** A failure to record on a job: error class, message and optional backtrace. */
export interface Failure {
  /** Ruby's `exception.class.name`, e.g. "NoMethodError"; for JS errors, the error's name. */
  errorClass: string;
  message: string;
  /** Stack lines, most recent first; stored only when the job's `backtrace` option says so. */
  backtrace?: readonly string[];
}

/** Longest `error_message` Sidekiq keeps (longer ones are truncated). */
export const MAX_ERROR_MESSAGE = 10_000;

/** Ruby's `message.to_s[0, 10_000]` counts characters (code points), not UTF-16 units. */
export function truncateMessage(m: string): string {
  if (m.length <= MAX_ERROR_MESSAGE) return m;
  return Array.from(m).slice(0, MAX_ERROR_MESSAGE).join("");
}

/**
 * Writes the failure into the payload as the dialect's JobRetry does and
 * returns the new retry_count (0 on the first failure).
 */
export function applyFailure(rec: JobRecord, failure: Failure, dialect: DialectLike, at: number = nowMs()): number {
  const profile = profileFor(dialect);
  // Ruby: msg["queue"] = msg["retry_queue"] || queue; any value but nil/false wins ("" too).
  const retryQueue = rec.raw("retry_queue");
  if (retryQueue !== undefined && retryQueue !== "null" && retryQueue !== "false")
    rec.set("queue", new RawJson(retryQueue));
  rec.set("error_message", truncateMessage(failure.message));
  rec.set("error_class", failure.errorClass);
  const prev = rec.get("retry_count");
  let count: number;
  if (prev !== undefined && prev !== null && prev !== false) {
    // Ruby: msg["retry_count"] += 1 whenever the key holds a value.
    rec.set("retried_at", encodePayloadTime(at, profile));
    count = Number(prev) + 1;
  } else {
    rec.set("failed_at", encodePayloadTime(at, profile));
    count = 0;
  }
  rec.set("retry_count", count);
  const bt = rec.get("backtrace");
  if (bt !== undefined && bt !== null && bt !== false && failure.backtrace) {
    // Ruby's backtrace[0...n]: a negative n drops the last |n| lines, as slice does.
    const lines = bt === true ? failure.backtrace : failure.backtrace.slice(0, Math.trunc(Number(bt)));
    rec.set("error_backtrace", encodeBacktrace(lines, profile));
  }
  return count;
}
