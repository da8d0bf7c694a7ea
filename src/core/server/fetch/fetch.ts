// Sidekiq's fetch.rb: what a fetcher is (retrieve work, acknowledge it, put
// it back) and the unit of work it hands the manager. Two fetchers implement
// it: basic-fetch.ts is Sidekiq's BRPOP; reliable-fetch.ts (the worker's
// default) keeps each job in a working hash or list of this process until it
// is done, so a crash loses nothing. Both take as many jobs as the capsule has
// free slots in one round trip; only reliable fetch may take more (fetch-ahead
// in fetch-ahead.ts), since a job it holds is never lost.
// Jobs travel as raw bytes, so even a payload that is not UTF-8 is requeued
// or buried exactly as it came.
import type { Redis } from "ioredis";
import { strictUtf8 } from "../../wire/sidekiq-constants.js";
import { queueNameOf } from "../../wire/keys.js";
import { execReplies } from "../../redis/replies.js";

/** Sidekiq's TIMEOUT: a blocking fetch returns after this, so the loop can see a shutdown. */
export const FETCH_TIMEOUT_SECONDS = 2;

export interface UnitOfWork {
  /** The Redis key, e.g. "queue:default". */
  queue: string;
  /** The queue name, e.g. "default". */
  queueName: string;
  /** The job as text, or null when its bytes are not valid UTF-8. */
  job: string | null;
  /** The job's bytes exactly as fetched. */
  raw: Buffer;
  /** Reliable fetch: its field in the working hash; undefined when in the working list (or basic fetch). */
  field: string | undefined;
}

export interface Fetcher {
  /** Up to `max` jobs (at least one slot is free); none after the fetch timeout. */
  retrieveWork(max: number): Promise<UnitOfWork[]>;
  /** The job is done with (ran, retried, dead): forget it. */
  acknowledge(uow: UnitOfWork): Promise<void>;
  /** Not done: back to its queue's BRPOP end, so it runs next. */
  bulkRequeue(work: readonly UnitOfWork[]): Promise<void>;
  /** Handed to another process: to the far end of its queue. */
  handBack(uow: UnitOfWork): Promise<void>;
  /** Called once at shutdown, after every job is acknowledged or requeued. */
  close(): Promise<void>;
  /**
   * After a lost connection: jobs moved into our working list whose reply never
   * arrived, i.e. not in `running`, go back to their queue. Returns how many.
   */
  recover?(running: ReadonlySet<string>): Promise<number>;
}

export function unitOfWork(queue: string, raw: Buffer, field?: string): UnitOfWork {
  const job = strictUtf8(raw) ?? null;
  return { queue, queueName: queueNameOf(queue), job, raw, field };
}

/**
 * Pushes unfinished jobs back to their queues' BRPOP end (one pipeline), so
 * they run next, the first fetched first.
 */
export async function requeuePipelined(redis: Redis, work: readonly UnitOfWork[]): Promise<void> {
  if (work.length === 0) return;
  const pipe = redis.pipeline();
  for (let i = work.length - 1; i >= 0; i--) pipe.rpush(work[i]!.queue, work[i]!.raw);
  execReplies(await pipe.exec(), "requeue");
}
