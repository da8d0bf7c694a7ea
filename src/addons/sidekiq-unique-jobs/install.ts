// sidekiq-unique-jobs on a worker: the gem's server middleware and death
// handler (loaded by the worker alone, through src/assembly/installers.ts).
import type { AddonInstaller } from "../addon.js";
import type { UniqueJobsOptions } from "./config.js";
import { uniqueJobs } from "./server.js";

export const installUniqueJobs: AddonInstaller<boolean | UniqueJobsOptions> = (seams, option) => {
  const u = uniqueJobs({ logger: seams.logger, ...(option === true ? {} : option) });
  seams.useServer(u.middleware);
  seams.onDeath(u.onDeath);
};
