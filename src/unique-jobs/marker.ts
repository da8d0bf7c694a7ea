// How a worker tells that sidekiq-unique-jobs support is in its middleware
// chain when a user adds it by hand (`worker.use(uniqueJobs().middleware)`).
import type { ServerMiddleware } from "../server/processor.js";

export const UNIQUE_JOBS_MIDDLEWARE = Symbol.for("sidekiq-bridge.unique-jobs");

export function markUniqueJobs(mw: ServerMiddleware): ServerMiddleware {
  Object.defineProperty(mw, UNIQUE_JOBS_MIDDLEWARE, { value: true });
  return mw;
}

export function isUniqueJobsMiddleware(mw: ServerMiddleware): boolean {
  return (mw as unknown as Record<symbol, unknown>)[UNIQUE_JOBS_MIDDLEWARE] === true;
}

/** The warning a worker without unique-jobs support logs once for a job carrying `lock`. */
export const UNHANDLED_LOCK_WARNING =
  "This job carries a sidekiq-unique-jobs lock, but this worker does not run the unique-jobs middleware: its lock will not be released (until_executed jobs with the same arguments stay rejected as duplicates). Turn it on with the worker option uniqueJobs: true (or worker.use(uniqueJobs().middleware).onDeath(uniqueJobs().onDeath)).";
