// How a worker tells that sidekiq-unique-jobs support is in its middleware
// chain when a user adds it by hand (`worker.use(uniqueJobs().middleware)`):
// its name in the chain, the gem's server middleware class.
import { middlewareName, named } from "../../core/middleware/chain.js";
import type { ServerMiddleware } from "../../core/server/processor.js";

export const UNIQUE_JOBS_MIDDLEWARE = "SidekiqUniqueJobs::Middleware::Server";

export function markUniqueJobs(mw: ServerMiddleware): ServerMiddleware {
  return named(UNIQUE_JOBS_MIDDLEWARE, mw);
}

export function isUniqueJobsMiddleware(mw: ServerMiddleware): boolean {
  return middlewareName(mw) === UNIQUE_JOBS_MIDDLEWARE;
}
