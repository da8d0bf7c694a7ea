// Reliable fetch (the worker's default): each job moves atomically into a
// working hash (a batch) or list (one job) of this process and leaves it only
// when done, so a crash loses nothing: ../recovery.ts returns those of dead
// processes to their queues. With several free slots one Lua call moves a
// batch into the working hash (3 commands) and acknowledges the jobs that
// finished since the last fetch (one HDEL for them all: ack-queue.ts). One
// job at a time (one free slot, an empty queue, an old server) goes by
// RPOPLPUSH (BRPOPLPUSH for a single queue) into the working list,
// acknowledged by LREM. It keeps the capsule's queue order.
import type { Redis } from "ioredis";
import { WORKING_REGISTRY } from "../../wire/bridge-keys.js";
import { fetchBatchIntoWorkingHash, fetchOneIntoWorkingList, requeueFromWorking } from "../../redis/scripts/index.js";
import { ACK_DELAY_MS, AckQueue, sendAcks, settleAcks, type TakenAcks } from "./ack-queue.js";
import type { Capsule } from "../capsule.js";
import { FETCH_TIMEOUT_SECONDS, unitOfWork, type Fetcher, type UnitOfWork } from "./fetch.js";
import type { ServerFeatures } from "./server-features.js";
import { WorkingKeys, type FetchKeys } from "./working-keys.js";

/** Below this many free slots the one-job move is cheaper in Redis commands (1 vs 3 a batch). */
export const MIN_BATCH = 3;

/** Field numbers in the working hashes: unique in the process, so no two jobs share one. */
let nextField = 1;

/**
 * The batch move's ARGV: how many, the first field number, the working-list
 * acknowledgements as (queue index, raw job) pairs, then the working-hash
 * ones in one string of "index field" pairs (each argument costs ioredis
 * more than the bytes it holds).
 */
function batchArgs(
  max: number,
  first: number,
  queues: readonly string[],
  acks: TakenAcks,
): [number, number, number, ...Array<number | string | Buffer>] {
  const args: [number, number, number, ...Array<number | string | Buffer>] = [max, first, acks.listed.length];
  for (const a of acks.listed) args.push(queues.indexOf(a.uow.queue) + 1, a.uow.raw);
  let fields = "";
  for (const u of acks.fields) fields += `${fields === "" ? "" : " "}${queues.indexOf(u.queue) + 1} ${u.field!}`;
  args.push(fields);
  return args;
}

export class ReliableFetch implements Fetcher {
  private idleMs = 0;
  /** The last batch found nothing: wait for one job before batching again. */
  private drained = false;
  private readonly keys: WorkingKeys;

  constructor(
    private readonly redis: Redis,
    /** The fetch connection: it must not resend a command after a reconnect. */
    private readonly blocking: Redis,
    capsule: Capsule,
    identity: string,
    private readonly features: ServerFeatures,
    /** Shared with the capsule's other fetch lanes. */
    private readonly acks = new AckQueue(),
    /** Longest pause between polls of several empty queues. */
    private readonly maxIdleMs = 1000,
    /** How long finished jobs wait for a fetch to carry their acknowledgement. */
    private readonly ackDelayMs = ACK_DELAY_MS,
  ) {
    this.keys = new WorkingKeys(capsule, identity);
  }

  /** Announces this process's working lists and hashes (before the first fetch). */
  async register(): Promise<void> {
    await this.redis.sadd(WORKING_REGISTRY, ...this.keys.all());
  }

  async retrieveWork(max: number): Promise<UnitOfWork[]> {
    const keys = this.keys.forFetch();
    if (max >= MIN_BATCH && this.features.popCount && !this.drained) {
      const batch = await this.fetchBatch(max, keys);
      if (batch) {
        this.idleMs = 0;
        return batch;
      }
      // Empty: block (one queue) or back off (several) below, until a job turns up.
      this.drained = true;
    }
    return this.fetchOne(keys);
  }

  /**
   * Moves up to `max` jobs into the working hash, carrying the
   * acknowledgements waiting for their timer (all of them: the queues are the
   * capsule's, so are their working lists and hashes). Null: every queue was
   * empty. Kept apart from the one-job path so each stays small enough for
   * V8 to optimise once and keep.
   */
  private async fetchBatch(max: number, keys: FetchKeys): Promise<UnitOfWork[] | null> {
    const acks = this.acks.take();
    const first = nextField;
    nextField += max;
    let r: [Buffer, Buffer[]] | null;
    try {
      r = await fetchBatchIntoWorkingHash(this.blocking, keys.batch, batchArgs(max, first, keys.queues, acks));
    } catch (e) {
      settleAcks(acks, e as Error);
      throw e;
    }
    settleAcks(acks);
    if (!r) return null;
    const queue = r[0].toString();
    const jobs = r[1];
    const work: UnitOfWork[] = new Array(jobs.length);
    for (let j = 0; j < jobs.length; j++) work[j] = unitOfWork(queue, jobs[j]!, String(first + j));
    return work;
  }

  /** One job into the working list: blocking on one queue, else polling with a backoff while idle. */
  private async fetchOne(keys: FetchKeys): Promise<UnitOfWork[]> {
    const queues = keys.queues;
    if (queues.length === 1) {
      // One queue: block in Redis, exactly like BRPOP.
      const q = queues[0]!;
      const job = await this.blocking.brpoplpushBuffer(q, keys.one[1]!, FETCH_TIMEOUT_SECONDS);
      if (job) this.drained = false;
      return job ? [unitOfWork(q, job)] : [];
    }
    if (this.idleMs > 0) await new Promise((r) => setTimeout(r, this.idleMs));
    const r = await fetchOneIntoWorkingList(this.blocking, keys.one, []);
    if (!r) {
      // Several queues cannot be blocked on atomically: poll, backing off while idle.
      this.idleMs = Math.min(Math.max(this.idleMs * 2, 25), this.maxIdleMs);
      return [];
    }
    this.idleMs = 0;
    this.drained = false;
    return [unitOfWork(r[0].toString(), r[1])];
  }

  acknowledge(uow: UnitOfWork): Promise<void> {
    // Jobs that finish are acknowledged by the next batch fetch of any lane
    // (the slots they freed start one at once), or else, after ACK_DELAY_MS,
    // in one pipeline of their own: one HDEL per working hash either way.
    const done = this.acks.add(uow);
    this.acks.timer ??= setTimeout(() => sendAcks(this.redis, this.keys, this.acks.take()), this.ackDelayMs);
    return done;
  }

  async bulkRequeue(work: readonly UnitOfWork[]): Promise<void> {
    if (work.length === 0) return;
    // Last first, so the first fetched ends up at the BRPOP end and runs next.
    const rev = [...work].reverse();
    await this.requeueAt("rpush", rev);
  }

  async handBack(uow: UnitOfWork): Promise<void> {
    await this.requeueAt("lpush", [uow]);
  }

  /**
   * Moves jobs from the working list back to their queues, each only if it is
   * still in the working list: ioredis resends an unanswered command after a
   * reconnect, and a plain LREM + RPUSH run twice would queue a job twice.
   */
  private async requeueAt(push: "rpush" | "lpush", work: readonly UnitOfWork[]): Promise<void> {
    const keys = work.flatMap((w) => [this.keys.holder(w), w.queue]);
    await requeueFromWorking(this.redis, keys, [push, ...work.flatMap((w) => [w.field ?? "", w.raw])]);
  }

  async recover(running: ReadonlySet<string>): Promise<number> {
    let n = 0;
    for (const queue of this.keys.queues()) {
      const listed = (await this.redis.lrangeBuffer(this.keys.list(queue), 0, -1)).map((raw) => unitOfWork(queue, raw));
      const flat = await this.redis.hgetallBuffer(this.keys.hash(queue));
      const hashed = Object.entries(flat)
        .sort((a, b) => Number(a[0]) - Number(b[0]))
        .map(([field, raw]) => unitOfWork(queue, raw, field));
      // In fetch order as far as it is known: the hash by field number, then
      // the working list (it holds the newest first).
      const stray = [...hashed, ...listed.reverse()].filter((u) => !running.has(u.raw.toString("base64")));
      if (stray.length) {
        await this.bulkRequeue(stray);
        n += stray.length;
      }
    }
    return n;
  }

  /** Leaves the registry; any job still in a working list or hash stays for recovery. */
  async close(): Promise<void> {
    const keys = this.keys.all();
    // EXISTS: an empty list or hash does not exist.
    const held = await Promise.all(keys.map((k) => this.redis.exists(k)));
    const empty = keys.filter((_, i) => held[i] === 0);
    if (empty.length) await this.redis.srem(WORKING_REGISTRY, ...empty);
  }
}
