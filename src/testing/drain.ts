// Sidekiq's drain, perform_one and drain_all (lib/sidekiq/test_api.rb): the
// fake's jobs run through a Worker's handlers by the processor's own steps
// (Worker#performNow), the arguments as the JSON the client would have
// written. An error reaches the test and the job stays taken (no retry);
// jobs pushed while draining are drained too.
import type { Worker } from "../assembly/worker.js";
import { MiddlewareChain } from "../core/middleware/chain.js";
import type { ServerMiddleware } from "../core/server/processor.js";
import { payloadOf, Queues, type TestJob } from "./queues.js";

/** Sidekiq::EmptyQueueError: performOne with no job of that class. */
export class EmptyQueueError extends Error {
  override name = "Sidekiq::EmptyQueueError";
}

/**
 * Sidekiq::Testing.server_middleware: the chain drained and inline jobs run
 * in. Empty unless a test adds to it, as in Ruby (the worker's own chain, its
 * add-ons' included, is not run: they would need Redis).
 */
export const serverMiddleware = new MiddlewareChain<ServerMiddleware>("server");

/** Runs one recorded job now, taken out of the fake first (Sidekiq's `process_job`). */
function perform(worker: Worker, job: TestJob): Promise<void> {
  Queues.delete(job);
  return worker.performNow(payloadOf(job), serverMiddleware);
}

/** Runs every job of a class, those its jobs push included (`HardJob.drain`). */
export async function drain(worker: Worker, className: string): Promise<void> {
  const jobs = Queues.forClass(className);
  while (jobs.length > 0) await perform(worker, jobs[0]!);
}

/** Runs the oldest job of a class (`HardJob.perform_one`); EmptyQueueError when there is none. */
export async function performOne(worker: Worker, className: string): Promise<void> {
  const job = Queues.forClass(className)[0];
  if (job === undefined) throw new EmptyQueueError("perform_one called with empty job queue");
  await perform(worker, job);
}

/** Runs every job of every class until none is left (`Sidekiq::Job.drain_all`). */
export async function drainAll(worker: Worker): Promise<void> {
  for (let jobs = Queues.all(); jobs.length > 0; jobs = Queues.all()) {
    for (const className of new Set(jobs.map((j) => String(j.class)))) await drain(worker, className);
  }
}
