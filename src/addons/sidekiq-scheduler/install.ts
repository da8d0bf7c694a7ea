// sidekiq-scheduler on a worker: its scheduler as a service, unless the
// section says enabled: false (loaded by the worker alone, through
// src/assembly/installers.ts).
import type { AddonInstaller } from "../addon.js";
import { pollerOptions } from "../pollers/poller-options.js";
import { SidekiqSchedulerPoller, type SidekiqSchedulerSettings } from "./poller.js";

export const installSidekiqScheduler: AddonInstaller<boolean | SidekiqSchedulerSettings> = (seams, option) => {
  const settings = option === true ? {} : option;
  if (settings.enabled === false) return;
  seams.service((ctx) => new SidekiqSchedulerPoller(pollerOptions(seams, settings, ctx)));
};
