// Sidekiq's BasicFetch: BRPOP across the capsule's queues with a 2 s timeout.
// A fetched job lives only in this process until acknowledged: requeue pushes
// the raw string back with RPUSH, so it runs next.
import type { Redis } from "ioredis";
import { queuesCommand, type Capsule } from "./capsule.js";

export const FETCH_TIMEOUT_SECONDS = 2;

export interface UnitOfWork {
  /** The Redis key, e.g. "queue:default". */
  queue: string;
  /** The queue name, e.g. "default". */
  queueName: string;
  /** The raw job string, exactly as fetched. */
  job: string;
}

export class BasicFetch {
  constructor(
    /** A connection of its own: BRPOP blocks it. */
    private readonly blocking: Redis,
    private readonly capsule: Capsule,
  ) {}

  async retrieveWork(): Promise<UnitOfWork | null> {
    const keys = queuesCommand(this.capsule);
    const r = await this.blocking.brpop(...keys, FETCH_TIMEOUT_SECONDS);
    if (!r) return null;
    const [queue, job] = r;
    return { queue, queueName: queue.slice("queue:".length), job };
  }
}

/** Pushes unfinished jobs back to their queues (one pipeline), so they run next. */
export async function bulkRequeue(redis: Redis, work: readonly UnitOfWork[]): Promise<void> {
  if (work.length === 0) return;
  const byQueue = new Map<string, string[]>();
  for (const w of work) {
    let list = byQueue.get(w.queue);
    if (!list) byQueue.set(w.queue, (list = []));
    list.push(w.job);
  }
  const pipe = redis.pipeline();
  for (const [q, jobs] of byQueue) pipe.rpush(q, ...jobs);
  const res = (await pipe.exec()) ?? [];
  const err = res.find(([e]) => e)?.[0];
  if (err) throw err;
}
