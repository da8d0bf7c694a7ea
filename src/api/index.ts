// Sidekiq::API for Node: stats, queues, the scheduled/retry/dead sets,
// processes and running work, with Ruby's semantics per release.
export * from "./sidekiq-api.js";
export type { ApiContext } from "./context.js";
export * from "./latency.js";
export * from "./job-entry.js";
export * from "./stats.js";
export * from "./queue.js";
export * from "./sorted-set.js";
export * from "./process-set.js";
