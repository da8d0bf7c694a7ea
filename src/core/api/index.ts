// Sidekiq::API for Node: stats and their history, queues, the
// scheduled/retry/dead sets, processes and running work, execution metrics,
// with Ruby's semantics per release.
export * from "./sidekiq-api.js";
export type { ApiContext } from "./context.js";
export * from "./latency.js";
export * from "./job-entry.js";
export * from "./stats.js";
export * from "./history.js";
export * from "./metrics-query.js";
export * from "./queue.js";
export * from "./sorted-entry.js";
export * from "./sorted-set.js";
export * from "./job-sets.js";
export * from "./morgue.js";
export * from "./process-set.js";
export * from "./process-hash.js";
