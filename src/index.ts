// sidekiq-bridge: Node.js in a Ruby Sidekiq fleet, on the same Redis.
export * from "./wire/index.js";
export * from "./client/index.js";
export * from "./server/index.js";
export * from "./api/index.js";
export * from "./migration/index.js";
export * from "./unique-jobs/index.js";
export * from "./cron/index.js";
