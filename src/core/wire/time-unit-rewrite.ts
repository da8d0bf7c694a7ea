// Moving payload timestamps between dialects: float seconds (6, 7) and
// integer milliseconds (8). The one rule every rewrite uses (the library's
// migratePayloadTimes and `sidekiq-bridge migrate timestamps`): only time
// fields in the other unit change; every other byte stays.
import { type DialectLike, profileFor } from "./dialect.js";
import { JobRecord } from "./job-record.js";
import { isFloatLexeme } from "./json-scan.js";
import { RubyFloat } from "./ruby-json.js";
import { MILLIS_THRESHOLD, PAYLOAD_TIME_FIELDS } from "./timestamps.js";

/** What `migratePayloadTimes` changed in a payload. */
export interface MigrationResult {
  record: JobRecord;
  /** Names of the fields that were rewritten. */
  changed: string[];
}

const NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * Rewrites a payload's time fields into the unit of the target dialect, and
 * only those in the other unit (a field already in the target unit keeps its
 * exact lexeme; re-encoding could drop digits).
 *
 * Ruby reads a float as seconds and, from 8.0, an integer as milliseconds;
 * before 8.0 any number is seconds. So an integer below 1e11 (1973 in ms)
 * cannot be milliseconds of this era: it is a foreign writer's integer
 * seconds. 6 and 7 already read it right, so it stays (dividing it by 1000
 * would put the job in January 1970); for 8 it becomes milliseconds.
 */
export function migratePayloadTimes(input: string | JobRecord, to: DialectLike): MigrationResult {
  const record = typeof input === "string" ? JobRecord.parse(input) : input;
  const toMillis = profileFor(to).payloadTime === "millis";
  const changed: string[] = [];
  for (const field of PAYLOAD_TIME_FIELDS) {
    const raw = record.raw(field);
    if (raw === undefined || !NUMBER.test(raw)) continue;
    const isFloat = isFloatLexeme(raw);
    const n = Number(raw);
    const integerSeconds = !isFloat && Math.abs(n) < MILLIS_THRESHOLD;
    if (toMillis) {
      if (!isFloat && !integerSeconds) continue;
      // Seconds -> integer ms; rounding first, as s*1000 can land at x.9999.
      record.set(field, Math.floor(Math.round(n * 1e6) / 1e3));
    } else {
      if (isFloat || integerSeconds) continue;
      record.set(field, new RubyFloat(n / 1000));
    }
    changed.push(field);
  }
  return { record, changed };
}
