// sidekiq-bridge/sidekiq-scheduler: its settings from a sidekiq.yml, as
// Sidekiq reads it (docs/SCHEDULER.md).
export { schedulerSettingsFromFile, schedulerSettingsFromSidekiqYml, SidekiqYmlError } from "./sidekiq-yml.js";
export type { SidekiqSchedulerSettings } from "./poller.js";
