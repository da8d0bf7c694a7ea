// Migration tools: audit a queue before Node takes it, move jobs between
// queues, rewrite payload timestamps between Sidekiq 7 and 8, and export /
// import queues and job sets byte for byte. All safe under live traffic
// (see each module's header for the argument).
export * from "./stored-jobs.js";
export * from "./audit.js";
export * from "./move.js";
export * from "./convert-timestamps.js";
export * from "./export-format.js";
export * from "./dump.js";
export * from "./restore.js";
export * from "./progress.js";
