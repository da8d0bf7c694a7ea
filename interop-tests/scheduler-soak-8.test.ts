// The three-minute soak of the Node scheduler beside sidekiq-scheduler's own, on
// Sidekiq 8.1.7 (see support/scheduler-soak.ts): one file per release, so the
// releases' soaks run side by side.
import { schedulerSoak } from "./support/scheduler-soak.js";

schedulerSoak((t) => t.version === "8.1.7");
