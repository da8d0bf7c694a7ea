// sidekiq-cron 2.x for Node: its jobs (CronApi), its poller (CronPoller) and
// its cron syntax (fugit's, on croner).
export * from "./keys.js";
export * from "../fugit/cron.js";
export * from "./cron-job.js";
export * from "./enqueue.js";
export * from "./cron-api.js";
export * from "./poller.js";
