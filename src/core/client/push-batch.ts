// Single pushes made in the same tick on one connection go out together (one
// socket write, one reply parse), on any connection, a caller's included: one
// `SADD queues` and one `LPUSH queue:<q>` per queue with the payloads in the
// order the pushes were made, as Sidekiq's push_bulk writes them. Redis ends
// up holding exactly what one raw_push per job would leave.
import type { ChainableCommander, Redis } from "ioredis";
import { QUEUES_KEY, queueKey } from "../wire/keys.js";
import { RECONNECT_ERRORS } from "../redis/retry-once.js";
import { NoReplyError, type PendingWrite, type WriteDeadlines } from "./bounded-write.js";

interface PendingPush {
  queue: string;
  json: string;
  /** Encodes the payload again (a new enqueued_at) for the one retry after a reconnect. */
  encode: () => string;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * Sidekiq's push_bulk writes for jobs grouped by queue, added to `pipe`: one
 * `SADD queues` with every queue's name, then one `LPUSH queue:<q>` per queue
 * with its payloads in push order (replies: the SADD's, then one per queue).
 */
export function pipeQueuePushes(
  pipe: ChainableCommander,
  byQueue: ReadonlyMap<string, readonly string[]>,
): ChainableCommander {
  pipe.sadd(QUEUES_KEY, ...byQueue.keys());
  for (const [q, list] of byQueue) pipe.lpush(queueKey(q), ...list);
  return pipe;
}

/** At most this many jobs per pipeline (pushBulk's default batch). */
const MAX_BATCH = 1000;

const open = new WeakMap<Redis, PendingPush[]>();

/**
 * LPUSHes one payload (after `SADD queues`) in the pipeline of this tick's
 * pushes to `redis`. Settles like execRetryingOnce: rejects with the first
 * error of this job's two commands; on READONLY/NOREPLICAS/UNBLOCKED it
 * reconnects (once for all such jobs of the pipeline) and pushes once more,
 * encoding the payload again. Rejects with a NoReplyError once the bound of
 * `deadlines` passes first.
 */
export function pushOnNextTick(
  redis: Redis,
  deadlines: WriteDeadlines,
  queue: string,
  encode: () => string,
): Promise<void> {
  const json = encode();
  return new Promise<void>((resolve, reject) => {
    let batch = open.get(redis);
    if (!batch || batch.length >= MAX_BATCH) batch = openBatch(redis, deadlines);
    batch.push({ queue, json, encode, resolve, reject });
  });
}

// The batch's pushes share one deadline, taken when the first is made: a
// push is bounded without a promise of its own around it.
function openBatch(redis: Redis, deadlines: WriteDeadlines): PendingPush[] {
  const batch: PendingPush[] = [];
  const deadline = deadlines.add(() => {
    const e = new NoReplyError(deadlines.ms);
    for (const p of batch) p.reject(e);
  });
  open.set(redis, batch);
  process.nextTick(() => {
    if (open.get(redis) === batch) open.delete(redis);
    // Settles every job even if something unforeseen throws (settling twice is a no-op).
    flush(redis, batch, deadlines, deadline).catch((e: unknown) => batch.forEach((p) => p.reject(e)));
  });
  return batch;
}

/**
 * Sends the batch as push_bulk does: one `SADD queues` with the tick's queue
 * names, then one `LPUSH queue:<q>` per queue with its payloads in call order
 * (what the per-job pairs leave in Redis, with two commands a tick instead of
 * two a job). Returns each job's first error (undefined when none).
 */
async function send(redis: Redis, batch: PendingPush[]): Promise<unknown[]> {
  const byQueue = new Map<string, string[]>();
  for (const p of batch) {
    const list = byQueue.get(p.queue);
    if (list) list.push(p.json);
    else byQueue.set(p.queue, [p.json]);
  }
  const pipe = pipeQueuePushes(redis.pipeline(), byQueue);
  let results: Array<[Error | null, unknown]>;
  try {
    results = (await pipe.exec()) ?? [];
  } catch (e) {
    return batch.map(() => e);
  }
  const queueError = new Map<string, unknown>();
  [...byQueue.keys()].forEach((q, i) => queueError.set(q, results[0]?.[0] || results[1 + i]?.[0] || undefined));
  return batch.map((p) => queueError.get(p.queue));
}

async function flush(
  redis: Redis,
  batch: PendingPush[],
  deadlines: WriteDeadlines,
  deadline: PendingWrite,
): Promise<void> {
  try {
    const errors = await send(redis, batch);
    const again: PendingPush[] = [];
    for (const [i, p] of batch.entries()) {
      const e = errors[i];
      if (e === undefined) p.resolve();
      else if (RECONNECT_ERRORS.test((e as Error)?.message ?? "")) again.push(p);
      else p.reject(e);
    }
    if (again.length === 0) return;
    // After a failover the socket may point at a replica: reconnect, push once more.
    redis.disconnect(true);
    const retry: PendingPush[] = [];
    for (const p of again) {
      try {
        p.json = p.encode();
        retry.push(p);
      } catch (e) {
        p.reject(e);
      }
    }
    if (retry.length === 0) return;
    const errors2 = await send(redis, retry);
    for (const [i, p] of retry.entries()) {
      const e = errors2[i];
      if (e === undefined) p.resolve();
      else p.reject(e);
    }
  } finally {
    // Here rather than in a .finally(): no promise of its own, and settled before the pushes' awaits resume.
    deadlines.settle(deadline);
  }
}
