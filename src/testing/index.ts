// "sidekiq-bridge/testing": Sidekiq's fake and inline testing modes, with no
// Redis. Importing it installs the recorder (before the code under test makes
// its Client): every client made afterwards records its pushes, the exact
// payloads it would have written, instead of connecting. It stands on the
// top layer because draining runs a Worker's handlers.
import { installPushRecorder } from "../core/client/atomic-push.js";
import { drain, drainAll, EmptyQueueError, performOne, serverMiddleware } from "./drain.js";
import { Queues, type TestJob } from "./queues.js";
import { testingRecorder } from "./recorder.js";
import { testing, TestModeAlreadySetError, type TestMode } from "./test-mode.js";

installPushRecorder(testingRecorder);

/** Which jobs `jobs()` returns: those of a class (`wrapped` for ActiveJob counts too) and of a queue. */
export interface JobQuery {
  className?: string;
  queue?: string;
}

/**
 * The fake's jobs: all of them (`Sidekiq::Job.jobs`), a class's
 * (`HardJob.jobs`, the live array), or those matching a query.
 */
export function jobs(query?: string | JobQuery): readonly TestJob[] {
  if (typeof query === "string") return Queues.forClass(query);
  if (query === undefined) return Queues.all();
  const { className, queue } = query;
  const from = className !== undefined ? Queues.forClass(className) : Queues.all();
  return queue === undefined ? from : from.filter((j) => j.queue === queue);
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
