// Fetching jobs. BasicFetch is Sidekiq's: BRPOP across the capsule's queues
// with a 2 s timeout; a fetched job lives only in this process until done.
// Both fetchers take as many jobs as the capsule has free slots in one round
// trip (BLMPOP, or a Lua move into the working list), never more: each
// fetched job starts at once, as with Sidekiq's one BRPOP per idle processor,
// so a crash can lose no more than Sidekiq's would.
// ReliableFetch (the worker's default) moves each job atomically into a
// working hash (a batch) or list (one job) owned by this process and removes
// it only when done, so a crash loses nothing: orphaned ones are recovered
// (recovery.ts).
// Jobs travel as raw bytes, so even a payload that is not UTF-8 is requeued
// or buried exactly as it came.
import type { Redis } from "ioredis";
import { strictUtf8 } from "../wire/sidekiq-constants.js";
import { queueKey, queueNameOf } from "../wire/keys.js";
import { WIP_REGISTRY, wipKey, workingHashKey } from "../wire/bridge-keys.js";
import { execReplies } from "../redis/replies.js";
import { fetchBatchIntoWorkingList, fetchOneIntoWorkingList, putBackFromWorkingList } from "../redis/scripts/index.js";
import { queuesCommand, type Capsule } from "./capsule.js";
import { isUnknownCommand, type ServerFeatures } from "./server-features.js";

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
  requeue(work: readonly UnitOfWork[]): Promise<void>;
  /** Handed to another process: to the far end of its queue. */
  handBack(uow: UnitOfWork): Promise<void>;
  /** Called once at shutdown, after every job is acknowledged or requeued. */
  close(): Promise<void>;
  /**
   * After a lost connection: jobs moved into our working list whose reply never
   * arrived, i.e. not in `running`, go back to their queue. Returns how many.
   */
  reclaim?(running: ReadonlySet<string>): Promise<number>;
}

export function unitOfWork(queue: string, raw: Buffer, field?: string): UnitOfWork {
  const job = strictUtf8(raw) ?? null;
  return { queue, queueName: queueNameOf(queue), job, raw, field };
}

/**
 * Pushes unfinished jobs back to their queues' BRPOP end (one pipeline), so
 * they run next, the first fetched first.
 */
export async function bulkRequeue(redis: Redis, work: readonly UnitOfWork[]): Promise<void> {
  if (work.length === 0) return;
  const pipe = redis.pipeline();
  for (let i = work.length - 1; i >= 0; i--) pipe.rpush(work[i]!.queue, work[i]!.raw);
  execReplies(await pipe.exec(), "requeue");
}

export class BasicFetch implements Fetcher {
  constructor(
    private readonly redis: Redis,
    /** A connection of its own: BRPOP blocks it. */
    private readonly blocking: Redis,
    private readonly capsule: Capsule,
    private readonly features: ServerFeatures,
  ) {}

  async retrieveWork(max: number): Promise<UnitOfWork[]> {
    const queues = queuesCommand(this.capsule);
    if (max > 1 && this.features.lmpop) {
      // BLMPOP takes from the first non-empty queue in the same order BRPOP would,
      // from the same end, up to `max` jobs.
      try {
        const r = (await this.blocking.callBuffer(
          "blmpop",
          FETCH_TIMEOUT_SECONDS,
          queues.length,
          ...queues,
          "RIGHT",
          "COUNT",
          max,
        )) as [Buffer, Buffer[]] | null;
        if (!r) return [];
        const queue = r[0].toString();
        return r[1].map((raw) => unitOfWork(queue, raw));
      } catch (e) {
        if (!isUnknownCommand(e)) throw e;
        this.features.lmpop = false; // a server that claims 7.0 but lacks it (a proxy, a clone)
      }
    }
    const r = await this.blocking.brpopBuffer(...queues, FETCH_TIMEOUT_SECONDS);
    return r ? [unitOfWork(r[0].toString(), r[1])] : [];
  }

  async acknowledge(): Promise<void> {}

  requeue(work: readonly UnitOfWork[]): Promise<void> {
    return bulkRequeue(this.redis, work);
  }

  async handBack(uow: UnitOfWork): Promise<void> {
    await this.redis.lpush(uow.queue, uow.raw);
  }

  async close(): Promise<void> {}
}

/**
 * How many fetch lanes (connections, each fetching for the capsule's shared
 * slots) a capsule gets unless told. A second lane lets one lane's round trip
 * overlap the other's, but only pays where each lane can still fetch large
 * batches. Basic fetch never holds more jobs than free slots, so two lanes
 * halve each batch and double the fetches: each fetch costs a socket write
 * and a reply to parse. One lane drained 14-15% faster at concurrency 10,
 * and as fast or faster with jobs that wait or compute, from concurrency 4
 * to 100 (bench/results/basic-one-lane.md).
 * Reliable fetch pays 4 commands a batch (the Lua call, its RPOP, HSET, and
 * the HDEL of the acknowledgements it carries). With fetch-ahead each lane
 * fetches batches as large as the capsule's concurrency (laneBatch), so two
 * lanes cost no more commands than one and their round trips overlap: at
 * concurrency 10 one lane spent a third of a drain waiting for Redis
 * (bench/results/reliable-two-lanes.md). Without fetch-ahead a lane's batch
 * cannot exceed its share of free slots, so the second lane comes only from
 * concurrency 16, where each batch still holds 8 jobs (bench/results/
 * hot-path-allocation.md, section 3).
 */
export function defaultFetchLanes(concurrency: number, reliable: boolean, fetchAhead = false): number {
  if (!reliable) return 1;
  return concurrency >= (fetchAhead ? 4 : 16) ? 2 : 1;
}

/**
 * The most jobs one lane's fetch asks for: its share of the slots, or, for
 * reliable fetch with fetch-ahead, the whole concurrency (the lanes share the
 * slots; what finds no free slot waits as a fetch ahead).
 */
export function laneBatch(concurrency: number, lanes: number, wholeBatches: boolean): number {
  return wholeBatches ? concurrency : Math.ceil(concurrency / lanes);
}

/** Below this many free slots the one-job move is cheaper in Redis commands (1 vs 3 a batch). */
export const MIN_BATCH = 3;

/**
 * How long finished jobs wait for a fetch to carry their acknowledgement
 * before they are sent on their own: a busy worker fetches again within
 * this, and an idle one can wait.
 */
export const ACK_DELAY_MS = 2;

/** Field numbers in the working hashes: unique in the process, so no two jobs share one. */
let nextField = 1;

/** One promise settled for many acknowledgements at once. */
class Settlement {
  resolve!: () => void;
  reject!: (e: Error) => void;
  readonly promise = new Promise<void>((resolve, reject) => {
    this.resolve = resolve;
    this.reject = reject;
  });
}

interface ListAck {
  uow: UnitOfWork;
  settle: Settlement;
}

/**
 * Acknowledgements waiting to be sent, shared by the fetch lanes of a capsule
 * (they share its working lists): whichever lane fetches next carries them.
 * Jobs held in a working hash are acknowledged together (one HDEL per hash,
 * idempotent if retried), so they share one promise; a job in a working list
 * (LREM) has its own.
 */
export class AckQueue {
  fields: UnitOfWork[] = [];
  fieldsSettle: Settlement | undefined;
  listed: ListAck[] = [];
  /**
   * The one flush timer, armed by the first acknowledgement after a take and
   * cleared by the next take: a timer left from acknowledgements a fetch
   * already carried would flush the newer ones early, in a pipeline of their
   * own, where the next fetch would have carried them for nothing.
   */
  timer: NodeJS.Timeout | undefined;

  add(uow: UnitOfWork): Promise<void> {
    if (uow.field === undefined) {
      const settle = new Settlement();
      this.listed.push({ uow, settle });
      return settle.promise;
    }
    this.fields.push(uow);
    return (this.fieldsSettle ??= new Settlement()).promise;
  }

  /** Takes every pending acknowledgement. */
  take(): { fields: UnitOfWork[]; fieldsSettle: Settlement | undefined; listed: ListAck[] } {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const taken = { fields: this.fields, fieldsSettle: this.fieldsSettle, listed: this.listed };
    this.fields = [];
    this.fieldsSettle = undefined;
    this.listed = [];
    return taken;
  }
}

/** A fetch's key lists (ReliableFetch.fetchKeys). */
interface FetchKeys {
  /** The queues, "queue:<name>", in this fetch's order. */
  queues: string[];
  /** The queues, then their working lists: the one-job move's KEYS. */
  one: string[];
  /** The queues, their working lists, then their working hashes: the batch move's KEYS. */
  batch: string[];
}

type TakenAcks = ReturnType<AckQueue["take"]>;

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

/** Settles taken acknowledgements all at once: all made, or all failed with `e` (a batch fetch, a pipeline that failed whole). */
function settleAcks(acks: TakenAcks, e?: Error): void {
  for (const a of acks.listed)
    if (e) a.settle.reject(e);
    else a.settle.resolve();
  if (e) acks.fieldsSettle?.reject(e);
  else acks.fieldsSettle?.resolve();
}

/**
 * Reliable fetch. With several free slots one Lua call moves a batch into the
 * working hash `bridge:working:<identity>|queue:<name>` (3 commands) and
 * acknowledges the jobs that finished since the last fetch (one HDEL for
 * them all). One job at a time (one free slot, an empty queue, an old
 * server) goes by RPOPLPUSH (BRPOPLPUSH for a single queue) into the working
 * list `bridge:wip:<identity>|queue:<name>`, acknowledged by LREM. It keeps
 * the capsule's queue order.
 */
export class ReliableFetch implements Fetcher {
  private idleMs = 0;
  /** The last batch found nothing: wait for one job before batching again. */
  private drained = false;
  /** The key lists, when the queue order never changes. */
  private fixedKeys: FetchKeys | undefined;

  constructor(
    private readonly redis: Redis,
    /** The fetch connection: it must not resend a command after a reconnect. */
    private readonly blocking: Redis,
    private readonly capsule: Capsule,
    private readonly identity: string,
    private readonly features: ServerFeatures,
    /** Shared with the capsule's other fetch lanes. */
    private readonly acks = new AckQueue(),
    /** Longest pause between polls of several empty queues. */
    private readonly maxIdleMs = 1000,
    /** How long finished jobs wait for a fetch to carry their acknowledgement. */
    private readonly ackDelayMs = ACK_DELAY_MS,
  ) {}

  wip(queue: string): string {
    return wipKey(this.identity, queue);
  }

  working(queue: string): string {
    return workingHashKey(this.identity, queue);
  }

  /** Where a fetched job is kept: the working hash or the working list of its queue. */
  private holder(uow: UnitOfWork): string {
    return uow.field === undefined ? this.wip(uow.queue) : this.working(uow.queue);
  }

  /** This process's working lists and hashes for the capsule's queues. */
  private keys(): string[] {
    const queues = [...new Set(this.capsule.queues)].map(queueKey);
    return [...queues.map((q) => this.wip(q)), ...queues.map((q) => this.working(q))];
  }

  /** Announces this process's working lists and hashes (before the first fetch). */
  async register(): Promise<void> {
    await this.redis.sadd(WIP_REGISTRY, ...this.keys());
  }

  /**
   * The fetch's key lists: the queues in this fetch's order, then their
   * working lists (the one-job move), then their working hashes (a batch).
   * Built once when the order never changes (strict, or one queue): a busy
   * worker fetches thousands of times a second.
   */
  private fetchKeys(): FetchKeys {
    if (this.fixedKeys) return this.fixedKeys;
    const queues = queuesCommand(this.capsule);
    const one = [...queues];
    for (const q of queues) one.push(this.wip(q));
    const batch = [...one];
    for (const q of queues) batch.push(this.working(q));
    const keys: FetchKeys = { queues, one, batch };
    if (this.capsule.mode === "strict" || queues.length === 1) this.fixedKeys = keys;
    return keys;
  }

  async retrieveWork(max: number): Promise<UnitOfWork[]> {
    const keys = this.fetchKeys();
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
      r = await fetchBatchIntoWorkingList(this.blocking, keys.batch, batchArgs(max, first, keys.queues, acks));
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
    this.acks.timer ??= setTimeout(() => this.flushAcks(), this.ackDelayMs);
    return done;
  }

  private flushAcks(): void {
    const acks = this.acks.take();
    const { fields, fieldsSettle, listed } = acks;
    if (fields.length === 0 && listed.length === 0) return;
    const pipe = this.redis.pipeline();
    for (const a of listed) pipe.lrem(this.wip(a.uow.queue), 1, a.uow.raw);
    const byHash = new Map<string, Array<string | undefined>>();
    for (const u of fields) {
      const key = this.working(u.queue);
      const group = byHash.get(key);
      if (group) group.push(u.field);
      else byHash.set(key, [u.field]);
    }
    for (const [key, group] of byHash) pipe.hdel(key, ...(group as string[]));
    pipe.exec().then(
      (res) => {
        const err = (i: number) => (res ? res[i]?.[0] : new Error("pipeline discarded"));
        listed.forEach((a, i) => {
          const e = err(i);
          if (e) a.settle.reject(e);
          else a.settle.resolve();
        });
        let failed: Error | null | undefined;
        for (let i = listed.length; i < listed.length + byHash.size; i++) failed ??= err(i);
        if (failed) fieldsSettle?.reject(failed);
        else fieldsSettle?.resolve();
      },
      (e: Error) => settleAcks(acks, e),
    );
  }

  async requeue(work: readonly UnitOfWork[]): Promise<void> {
    if (work.length === 0) return;
    // Last first, so the first fetched ends up at the BRPOP end and runs next.
    const rev = [...work].reverse();
    await this.putBack("rpush", rev);
  }

  async handBack(uow: UnitOfWork): Promise<void> {
    await this.putBack("lpush", [uow]);
  }

  /**
   * Moves jobs from the working list back to their queues, each only if it is
   * still in the working list: ioredis resends an unanswered command after a
   * reconnect, and a plain LREM + RPUSH run twice would queue a job twice.
   */
  private async putBack(push: "rpush" | "lpush", work: readonly UnitOfWork[]): Promise<void> {
    const keys = work.flatMap((w) => [this.holder(w), w.queue]);
    await putBackFromWorkingList(this.redis, keys, [push, ...work.flatMap((w) => [w.field ?? "", w.raw])]);
  }

  async reclaim(running: ReadonlySet<string>): Promise<number> {
    let n = 0;
    for (const q of new Set(this.capsule.queues)) {
      const queue = queueKey(q);
      const listed = (await this.redis.lrangeBuffer(this.wip(queue), 0, -1)).map((raw) => unitOfWork(queue, raw));
      const flat = await this.redis.hgetallBuffer(this.working(queue));
      const hashed = Object.entries(flat)
        .sort((a, b) => Number(a[0]) - Number(b[0]))
        .map(([field, raw]) => unitOfWork(queue, raw, field));
      // In fetch order as far as it is known: the hash by field number, then
      // the working list (it holds the newest first).
      const stray = [...hashed, ...listed.reverse()].filter((u) => !running.has(u.raw.toString("base64")));
      if (stray.length) {
        await this.requeue(stray);
        n += stray.length;
      }
    }
    return n;
  }

  /** Leaves the registry; any job still in a working list or hash stays for recovery. */
  async close(): Promise<void> {
    const keys = this.keys();
    // EXISTS: an empty list or hash does not exist.
    const held = await Promise.all(keys.map((k) => this.redis.exists(k)));
    const empty = keys.filter((_, i) => held[i] === 0);
    if (empty.length) await this.redis.srem(WIP_REGISTRY, ...empty);
  }
}
