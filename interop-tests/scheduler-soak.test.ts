// The three-minute soak of the Node scheduler beside sidekiq-scheduler's own
// (see support/scheduler-soak.ts), on every release at once: the releases'
// soaks run side by side in this one file.
import { schedulerSoak } from "./support/scheduler-soak.js";

schedulerSoak();
