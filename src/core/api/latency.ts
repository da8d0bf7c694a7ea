// Queue latency as Ruby's API computes it, per release (api.rb):
//
//   6.x – 7.x        `now = Time.now.to_f; now - (job["enqueued_at"] || now)`:
//                    enqueued_at only, its number taken as seconds whatever its
//                    type (an 8.x millisecond value gives about -1.7e12).
//   8.0.0 – 8.1.0    enqueued_at only; a Float is seconds, anything else ms
//                    (`(now_ms - enqueued_at) / 1000.0`); none: 0.0.
//   8.1.1+           `ApiUtils#calculate_latency`: `enqueued_at || created_at`,
//                    same Float/Integer rule; none: 0.0.
//
// The Float/Integer test is made on the raw JSON lexeme (`1.0` is a Float to
// Ruby, `1` an Integer), which a JavaScript number cannot tell apart.
import type { WireProfile } from "../wire/dialect.js";
import { JobRecord } from "../wire/job-record.js";
import { isFloatLexeme } from "../wire/json-scan.js";
import { type LatencyRule, releaseRules } from "../wire/release-rules.js";
import { decodePayloadTime } from "../wire/timestamps.js";

export type { LatencyRule };

/** The latency rule of a Sidekiq release's API (`api.latency` of its release rules). */
export function latencyRuleFor(rules: WireProfile | string): LatencyRule {
  return releaseRules(rules).api.latency;
}

const NUMBER_LEXEME = /^-?\d/;

/** A member's raw text when Ruby would see a truthy value there (not absent, null or false). */
function truthyRaw(rec: JobRecord, key: string): string | undefined {
  const raw = rec.raw(key);
  if (raw === undefined || raw === "null" || raw === "false") return undefined;
  return raw;
}

/**
 * The latency in seconds of a job (its raw string as stored in the queue), as
 * the release's `Queue#latency` / `Stats#default_queue_latency` compute it.
 * `nowMs` is the epoch time in milliseconds. Text that is not a JSON object
 * counts as `{}` (Stats rescues the parse error; Queue#latency would raise),
 * and a timestamp that is not a number gives 0 (Ruby would raise).
 */
export function jobLatency(raw: string | null | undefined, rule: LatencyRule, nowMs: number): number {
  if (raw === null || raw === undefined) return 0;
  let rec: JobRecord;
  try {
    rec = JobRecord.parse(raw);
  } catch {
    return 0;
  }
  return recordLatency(rec, rule, nowMs);
}

/** `jobLatency` for a parsed record. */
export function recordLatency(rec: JobRecord, rule: LatencyRule, nowMs: number): number {
  const ts =
    rule === "enqueued-or-created-typed"
      ? (truthyRaw(rec, "enqueued_at") ?? truthyRaw(rec, "created_at"))
      : truthyRaw(rec, "enqueued_at");
  if (ts === undefined || !NUMBER_LEXEME.test(ts)) return 0;
  if (rule === "enqueued-seconds") return nowMs / 1000 - Number(ts);
  // Float: `Time.now.to_f - timestamp`; Integer: `(clock_gettime(:millisecond) - timestamp) / 1000.0`.
  if (isFloatLexeme(ts)) return nowMs / 1000 - Number(ts);
  return (Math.floor(nowMs) - decodePayloadTime(ts)) / 1000;
}
