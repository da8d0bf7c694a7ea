// The three-minute soak of the Node scheduler beside sidekiq-scheduler's own, on
// Sidekiq 7.3.2 (see support/scheduler-soak.ts): one file per release, so the
// releases' soaks run side by side.
import { schedulerSoak } from "./support/scheduler-soak.js";

schedulerSoak((t) => t.version === "7.3.2");
