// Moving payload timestamps between dialects: float seconds (6, 7) and
// integer milliseconds (8). Only time fields change; every other byte stays.
import { profileFor, type DialectLike } from "./dialect.js";
import { JobRecord } from "./job-record.js";
import { decodePayloadTime, encodePayloadTime, PAYLOAD_TIME_FIELDS } from "./timestamps.js";
import { isFloatLexeme } from "./json-scan.js";

export interface MigrationResult {
  record: JobRecord;
  /** Names of the fields that were rewritten. */
  changed: string[];
}

/** Rewrites a payload's time fields into the unit of the target dialect. */
export function migratePayloadTimes(input: string | JobRecord, to: DialectLike): MigrationResult {
  const record = typeof input === "string" ? JobRecord.parse(input) : input;
  const target = profileFor(to);
  const changed: string[] = [];
  for (const field of PAYLOAD_TIME_FIELDS) {
    const raw = record.raw(field);
    if (raw === undefined || raw === "null" || !/^-?\d/.test(raw)) continue;
    // Already in the target unit: leave the bytes alone (re-encoding could drop digits).
    if (isFloatLexeme(raw) === (target.payloadTime === "seconds")) continue;
    // Round: s -> ms arithmetic can land a hair below the integer (x.9999).
    const ms = Math.round(decodePayloadTime(raw) * 1000) / 1000;
    const next = encodePayloadTime(ms, target);
    const before = raw;
    record.set(field, next);
    if (record.raw(field) !== before) changed.push(field);
  }
  return { record, changed };
}
