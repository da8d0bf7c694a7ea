// Time units on the wire. Sidekiq 8 writes payload times as integer
// milliseconds; 6 and 7 as float seconds. Scores, `at`, `beat`, `started_at`
// stay float seconds in every version; work `run_at` is integer seconds.
import { isFloatLexeme } from "./json-scan.js";
import { RubyFloat, rubyFloatToS } from "./ruby-json.js";
import { profileFor, type DialectLike } from "./dialect.js";

/** Payload fields holding a time in the dialect's payload unit. */
export const PAYLOAD_TIME_FIELDS = ["created_at", "enqueued_at", "failed_at", "retried_at", "discarded_at"] as const;

/** Below this a bare number is seconds, at or above it milliseconds (year 5138 in seconds, 1973 in ms). */
export const MILLIS_THRESHOLD = 1e11;

/** Encodes an epoch time (ms) in the payload unit of a dialect. */
export function encodePayloadTime(epochMs: number, dialect: DialectLike): RubyFloat | number {
  // Ruby's clock_gettime(..., :millisecond) truncates.
  return profileFor(dialect).payloadTime === "millis" ? Math.floor(epochMs) : new RubyFloat(epochMs / 1000);
}

/**
 * Decodes a payload time to epoch milliseconds. From raw JSON text, Ruby's
 * rule applies: a float lexeme is seconds, an integer is milliseconds.
 * From a bare number (lexeme gone), magnitude decides.
 */
export function decodePayloadTime(value: string | number | bigint): number {
  if (typeof value === "string") {
    const n = Number(value);
    if (!Number.isFinite(n)) throw new RangeError(`not a timestamp: ${value}`);
    return isFloatLexeme(value) ? n * 1000 : n;
  }
  const n = Number(value);
  return n >= MILLIS_THRESHOLD ? n : n * 1000;
}

/** A sorted-set score or `at`/`beat`/`started_at`: float seconds, written as Ruby's `Float#to_s`. */
export function secondsString(epochMs: number): string {
  return rubyFloatToS(epochMs / 1000);
}

/** Work `run_at`: integer seconds. */
export function intSeconds(epochMs: number): number {
  return Math.floor(epochMs / 1000);
}

// The wall clock's offset from the monotonic one, in ms. Date.now() - performance.now()
// is at most 1 ms below it (Date.now() truncates); the largest value seen is kept,
// and a drop of a millisecond or more means the wall clock moved back.
let wallOffset = Number.NEGATIVE_INFINITY;

/**
 * Wall-clock epoch ms with sub-millisecond precision, so float-second stamps
 * are as fine as Ruby's Time.now: always within the millisecond Date.now()
 * reads. The monotonic clock alone (performance.timeOrigin + now()) drifts
 * from the wall clock in a long-lived process: NTP slews the wall clock, and a
 * suspended laptop or a paused VM stops the monotonic one, which would leave
 * heartbeats, retry scores and payload times behind Ruby's by that much.
 */
export function nowMs(): number {
  const mono = performance.now();
  const sample = Date.now() - mono;
  if (sample > wallOffset || sample <= wallOffset - 1) wallOffset = sample;
  return wallOffset + mono;
}

/** Epoch seconds to the microsecond, as Ruby's Time.now.to_f. */
export function nowSecondsF(): number {
  return Math.round(nowMs() * 1000) / 1e6;
}
