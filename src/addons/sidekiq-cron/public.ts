// sidekiq-bridge/sidekiq-cron: its jobs (CronApi), its poller, and the cron
// syntax it reads (fugit's).
export { CronApi, type CronApiOptions } from "./cron-api.js";
export { CronJob, CronJobError, type CronJobInput } from "./cron-job.js";
export { CronPoller, type CronPollerOptions } from "./poller.js";
export { CronSchedule, CronSyntaxError, parseCron } from "../fugit/cron.js";
