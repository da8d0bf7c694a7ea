// What each add-on does on a worker, by its name: the install functions of
// the add-ons' install.ts files. Only the worker loads this module, so the
// dashboard and the CLI's other commands never load an add-on's runtime.
import { installCron } from "../addons/sidekiq-cron/install.js";
import { installSidekiqScheduler } from "../addons/sidekiq-scheduler/install.js";
import { installThrottled } from "../addons/sidekiq-throttled/install.js";
import { installUniqueJobs } from "../addons/sidekiq-unique-jobs/install.js";
import type { AddonInstaller } from "../addons/addon.js";
import type { AddonOptions } from "./registry.js";

type Installers = { [K in keyof AddonOptions]-?: AddonInstaller<NonNullable<AddonOptions[K]>> };

const INSTALLERS: Partial<Installers> = {
  cron: installCron,
  uniqueJobs: installUniqueJobs,
  sidekiqScheduler: installSidekiqScheduler,
  throttled: installThrottled,
};

/** The install of the add-on named `name`, or undefined for one that only marks or declares payload fields. */
export function installerOf(name: string): AddonInstaller<unknown> | undefined {
  return (INSTALLERS as Record<string, AddonInstaller<unknown> | undefined>)[name];
}
