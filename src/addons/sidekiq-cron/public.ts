// sidekiq-bridge/sidekiq-cron: its jobs (CronApi), its poller, and the cron
// syntax it reads (fugit's).
export { CronApi, type CronApiOptions, type CronListing, type UnreadableCronJob } from "./cron-api.js";
export { CronJob, CronJobError, type CronJobInput, type CronJobHash } from "./cron-job.js";
export { CronPoller, type CronPollerOptions, type CronPollResult } from "./poller.js";
export { CronSchedule, CronSyntaxError, parseCron } from "../fugit/cron.js";
