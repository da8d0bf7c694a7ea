// sidekiq-cron on a worker: its poller as a service (loaded by the worker
// alone, through src/addon/installers.ts).
import type { AddonInstaller } from "../addon/addon.js";
import { pollerOptions } from "../addon/poller-options.js";
import type { CronSettings } from "./addon.js";
import { CronPoller } from "./poller.js";

export const installCron: AddonInstaller<boolean | CronSettings> = (seams, option) => {
  const settings = option === true ? {} : option;
  seams.service((ctx) => new CronPoller(pollerOptions(seams, settings, ctx)));
};
