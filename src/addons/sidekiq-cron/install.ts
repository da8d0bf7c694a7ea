// sidekiq-cron on a worker: its poller as a service (loaded by the worker
// alone, through src/assembly/installers.ts).
import type { AddonInstaller } from "../addon.js";
import { pollerOptions } from "../pollers/poller-options.js";
import type { CronSettings } from "./addon.js";
import { CronPoller } from "./poller.js";

export const installCron: AddonInstaller<boolean | CronSettings> = (seams, option) => {
  const settings = option === true ? {} : option;
  seams.service((ctx) => new CronPoller(pollerOptions(seams, settings, ctx)));
};
