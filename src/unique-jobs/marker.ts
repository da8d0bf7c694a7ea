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
