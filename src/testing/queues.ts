// Sidekiq's Queues (lib/sidekiq/test_api.rb): the fake's jobs, kept twice, by
// queue and by class, so `jobs("HardJob")` is the very array the next push
// grows (a test may hold it). An ActiveJob is also kept under its `wrapped`
// class, the name a Node test knows it by. Each job keeps the text the client
// would have written, which drain runs.
import type { JsonValue } from "../core/wire/json-scan.js";

/**
 * A job as the fake recorded it: the payload the real client would have
 * written, through the JSON round trip, with `at` kept for a scheduled job
 * (Sidekiq's `jobs` hashes).
 */
export type TestJob = { [key: string]: JsonValue };

const byQueue = new Map<string, TestJob[]>();
const byClass = new Map<string, TestJob[]>();
const payloads = new WeakMap<TestJob, string>();
/** The contract app of each job whose client's contract named one (beside the job: Ruby's hash has no app). */
const apps = new WeakMap<TestJob, string>();

function listOf(map: Map<string, TestJob[]>, key: string): TestJob[] {
  let list = map.get(key);
  if (!list) map.set(key, (list = []));
  return list;
}

/** The classes a job is kept under: its class and, for an ActiveJob, the class it wraps. */
function classesOf(job: TestJob): string[] {
  const wrapped = job.wrapped;
  return typeof wrapped === "string" && wrapped !== job.class ? [String(job.class), wrapped] : [String(job.class)];
}

/** Sidekiq::Queues: the fake's jobs by queue (`Queues.get("default")`) and by class. */
export const Queues = {
  /** The jobs in a queue, oldest first (`Sidekiq::Queues["default"]`): the live array. */
  get(queue: string): readonly TestJob[] {
    return listOf(byQueue, queue);
  },
  /** The jobs of a class (an ActiveJob's also under its own class): the live array. */
  forClass(className: string): readonly TestJob[] {
    return listOf(byClass, className);
  },
  /** Every job, queue by queue (`Sidekiq::Job.jobs`). */
  all(): TestJob[] {
    return [...byQueue.values()].flat();
  },
  /** Records a job with the text the client would have written (and its contract app). */
  push(queue: string, job: TestJob, payload: string, app?: string): void {
    payloads.set(job, payload);
    if (app !== undefined) apps.set(job, app);
    listOf(byQueue, queue).push(job);
    for (const c of classesOf(job)) listOf(byClass, c).push(job);
  },
  /** Takes one job out of every list that holds it (`delete_for`). */
  delete(job: TestJob): void {
    const drop = (list: TestJob[] | undefined) => {
      const i = list?.indexOf(job) ?? -1;
      if (i >= 0) list!.splice(i, 1);
    };
    drop(byQueue.get(String(job.queue)));
    for (const c of classesOf(job)) drop(byClass.get(c));
  },
  /** Drops every job (`clear_all`). The live arrays are emptied, not replaced. */
  clearAll(): void {
    for (const list of byQueue.values()) list.length = 0;
    for (const list of byClass.values()) list.length = 0;
  },
};

/** The payload text the client would have written for a recorded job. */
export function payloadOf(job: TestJob): string {
  const text = payloads.get(job);
  if (text === undefined) throw new TypeError("not a job the fake recorded (see jobs())");
  return text;
}

/** The contract app a recorded job belongs to, when its client had a contract listing the class. */
export function appOf(job: TestJob): string | undefined {
  return apps.get(job);
}
