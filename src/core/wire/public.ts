// "sidekiq-bridge/wire": the wire contract, for code that reads or writes
// Sidekiq's records in Redis itself. A lossless codec (JobRecord), Ruby's JSON
// spelling, time units per dialect, retry fields, validation against schema/,
// and the table of what changed in which Sidekiq release. Named exports only:
// src/core/wire/index.ts is the internal barrel and holds more.

export {
  profileForVersion,
  DIALECTS,
  DIALECT_VERSION,
  RECORD_KINDS,
  UnsupportedVersionError,
  type Dialect,
  type DialectLike,
  type RecordKind,
  type WireProfile,
} from "./dialect.js";
export {
  releaseRules,
  versionAtLeast,
  type ReleaseRules,
  type PayloadRules,
  type ClientRules,
  type ActiveJobRules,
  type RetryRules,
  type ScheduledRules,
  type MetricsRules,
  type LauncherRules,
  type ApiRules,
  type IterationRules,
  type LatencyRule,
} from "./release-rules.js";
export { JobRecord } from "./job-record.js";
export { WireParseError, type JsonValue } from "./json-scan.js";
export { toRubyJson, rubyFloatToS, RubyFloat, RawJson, WireEncodeError, type RubyJsonValue } from "./ruby-json.js";
export { newJid, JID_PATTERN } from "./jid.js";
export {
  encodePayloadTime,
  decodePayloadTime,
  secondsString,
  intSeconds,
  nowMs,
  PAYLOAD_TIME_FIELDS,
  MILLIS_THRESHOLD,
} from "./timestamps.js";
export { encodeBacktrace, decodeBacktrace, BacktraceDecodeError } from "./backtrace.js";
export { applyFailure, truncateMessage, MAX_ERROR_MESSAGE, type Failure } from "./retry-fields.js";
export { migratePayloadTimes, type MigrationResult } from "./time-unit-rewrite.js";
export {
  validateRecord,
  validateRaw,
  assertValidRecord,
  formatIssues,
  WireValidationError,
  type WireSchemaIssue,
  type WireValidationResult,
} from "./validate.js";
export { BRIDGE_LABEL } from "./bridge-label.js";
// Types of every wire record by dialect, generated from schema/ (npm run gen).
export type {
  WireRecord,
  WireRecordTypes,
  V6ActiveJob,
  V6Dead,
  V6Job,
  V6ProcessInfo,
  V6Process,
  V6Retry,
  V6Scheduled,
  V6Work,
  V7ActiveJob,
  V7Dead,
  V7Job,
  V7ProcessInfo,
  V7Process,
  V7Retry,
  V7Scheduled,
  V7Work,
  V8ActiveJob,
  V8Dead,
  V8Job,
  V8ProcessInfo,
  V8Process,
  V8Retry,
  V8Scheduled,
  V8Work,
} from "./generated/index.js";
