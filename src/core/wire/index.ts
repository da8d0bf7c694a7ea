// The wire contract: what Sidekiq stores in Redis, read and written losslessly.
export * from "./dialect.js";
export * from "./release-rules.js";
export * from "./json-scan.js";
export * from "./ruby-json.js";
export * from "./job-record.js";
export * from "./jid.js";
export * from "./timestamps.js";
export * from "./backtrace.js";
export * from "./retry-fields.js";
export * from "./time-unit-rewrite.js";
export * from "./validate.js";
export * from "./bridge-label.js";
export type * from "./generated/index.js";
