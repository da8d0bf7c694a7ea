// The server: process Sidekiq jobs in Node.
export * from "./worker.js";
export * from "./types.js";
export * from "./processor.js";
export * from "./capsule.js";
export * from "./fetch.js";
export * from "./scheduled.js";
export * from "./job-retry.js";
export * from "./heartbeat.js";
export * from "./execution-stats.js";
export * from "./logger.js";
export * from "./events.js";
export * from "./job-logger.js";
export * from "./activejob-args.js";
export * from "./iterable.js";
export * from "./iterable-state.js";
