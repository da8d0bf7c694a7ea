// "sidekiq-bridge/testing": Sidekiq's fake and inline testing modes, with no
// Redis. Importing it installs the recorder (before the code under test makes
// its Client): every client made afterwards records its pushes, the exact
// payloads it would have written, instead of connecting. It stands on the
// top layer because draining runs a Worker's handlers.
import { installPushRecorder } from "../core/client/atomic-push.js";
import { drain, drainAll, EmptyQueueError, performOne, serverMiddleware } from "./drain.js";
import { appOf, Queues, type TestJob } from "./queues.js";
import {
  assertEnqueuedEmailWith,
  assertEnqueuedJobs,
  assertEnqueuedWith,
  type EnqueuedEmailQuery,
} from "./assertions.js";
import { enqueuedJobs, type EnqueuedJob, type EnqueuedQuery } from "./enqueued.js";
import { testingRecorder } from "./recorder.js";
import { testing, TestModeAlreadySetError, type TestMode } from "./test-mode.js";

installPushRecorder(testingRecorder);

/** Which jobs `jobs()` returns: those of a class (`wrapped` for ActiveJob counts too), of a queue, of a contract app. */
export interface JobQuery {
  className?: string;
  queue?: string;
  /** The app whose contract the pushing client gave the job to (a client with `contract`). */
  app?: string;
}

/**
 * The fake's jobs: all of them (`Sidekiq::Job.jobs`), a class's
 * (`HardJob.jobs`, the live array), or those matching a query.
 */
export function jobs(query?: string | JobQuery): readonly TestJob[] {
  if (typeof query === "string") return Queues.forClass(query);
  if (query === undefined) return Queues.all();
  const { className, queue, app } = query;
  const from = className !== undefined ? Queues.forClass(className) : Queues.all();
  if (queue === undefined && app === undefined) return from;
  return from.filter((j) => (queue === undefined || j.queue === queue) && (app === undefined || appOf(j) === app));
}

/** Drops a class's jobs (`HardJob.clear`). */
export function clear(className: string): void {
  for (const job of [...Queues.forClass(className)]) Queues.delete(job);
}

/** Drops every job (`Sidekiq::Job.clear_all`). */
export function clearAll(): void {
  Queues.clearAll();
}

export { drain, drainAll, performOne, EmptyQueueError, serverMiddleware };
export { Queues, type TestJob };
export { testing, TestModeAlreadySetError, type TestMode };
export { assertEnqueuedWith, assertEnqueuedJobs, assertEnqueuedEmailWith, enqueuedJobs };
export type { EnqueuedJob, EnqueuedQuery, EnqueuedEmailQuery };
