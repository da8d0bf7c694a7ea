// "sidekiq-bridge/wire": the wire contract, for code that reads or writes
// Sidekiq's records in Redis itself. A lossless codec (JobRecord), Ruby's JSON
// spelling, time units per dialect, retry fields, validation against schema/,
// and the table of what changed in which Sidekiq release. Named exports only:
// src/core/wire/index.ts is the internal barrel and holds more (the helpers
// the package's own tools share, and each release rule's own type, reached as
// `ReleaseRules["retry"]`).

export {
  profileForVersion,
  UnsupportedVersionError,
  type Dialect,
  type DialectLike,
  type RecordKind,
  type WireProfile,
} from "./dialect.js";
export { releaseRules, type ReleaseRules } from "./release-rules.js";
export { JobRecord } from "./job-record.js";
export { WireParseError, type JsonValue } from "./json-scan.js";
export { toRubyJson, RubyFloat, RawJson, WireEncodeError, type RubyJsonValue } from "./ruby-json.js";
export { newJid } from "./jid.js";
export { encodePayloadTime, decodePayloadTime } from "./timestamps.js";
export { encodeBacktrace, decodeBacktrace, BacktraceDecodeError } from "./backtrace.js";
export { applyFailure, type Failure } from "./retry-fields.js";
export { migratePayloadTimes } from "./time-unit-rewrite.js";
export { validateRecord, validateRaw, assertValidRecord, WireValidationError } from "./validate.js";
// The type of every wire record, generated from schema/ (npm run gen): one
// generic for all dialects and kinds, `WireRecord<8, "job">`.
export type { WireRecord, WireRecordTypes } from "./generated/index.js";
