// Bulk actions on a sorted job set (retry, add to queue, kill, delete), for
// every entry, the entries a filter matches, or selected ones, at any size.
//
// Each batch is one Lua call (redis/scripts/move-set-entries.ts) that ZREMs
// each entry and writes it to its destination only if this call removed it.
// So, whatever else acts on the set meanwhile (workers, the scheduled poller,
// Ruby's retry_all or Web UI) and wherever the process running the action
// dies, every entry is in its set or in its destination, exactly once; an
// interrupted action is finished by running it again.
//
// Before the move, each job going to a queue is prepared as Sidekiq's
// `SortedEntry#retry` / `#add_to_queue` push it (Client#prepareRecord, the
// per-entry path's own rewrite: `retry_count - 1` on retry, `at` dropped, a
// new `enqueued_at` in the fleet's unit), and the client's middleware chain
// runs on it, as Ruby's `retry_all` pushes through `Client#push`. Unlike
// Ruby, a job a middleware stops is left in its set (and counted), not
// dropped. A middleware runs before the move: if the entry is gone by then
// (another actor took it), or the process dies before the move, the
// middleware has run for a push that did not happen by this action (a
// re-run runs it again).
//
// The set is never read whole: "all" and filtered actions walk it in score
// order (lowest first, as Ruby's ZPOPMIN-based `retry_all`) by
// ZRANGEBYSCORE ... LIMIT, a batch at a time, up to the highest score it had
// when the action started; a text filter walks it by ZSCAN MATCH
// (bulk-walk.ts).
//
// At maxmemory (noeviction) the moves still run: Redis refuses a script's
// write only while it has written nothing, and each move's first write is a
// ZREM. When Redis does refuse a write (a client middleware's own, say), the
// action stops there and throws a BulkActionError with exact counts: a
// refused command wrote nothing and each batch is one atomic move, so the
// entries not moved are untouched in their set, and the same action run
// again once memory is freed finishes.
import type { Redis } from "ioredis";
import { moveSetEntries } from "../redis/scripts/index.js";
import { DEAD_KEY, QUEUES_KEY, queueKey } from "../wire/keys.js";
import { rubyFloatToS } from "../wire/ruby-json.js";
import { DEFAULT_DEAD_MAX_JOBS, DEFAULT_DEAD_TIMEOUT_SECONDS } from "../wire/sidekiq-constants.js";
import { explain, isOutOfMemory, RedisOutOfMemoryError } from "../redis/availability.js";
import type { ApiContext } from "./context.js";
import { hasFilter, matchesFilter, parseStored, viewOf, type JobFilter } from "./job-entry.js";
import { killLimits, type DeadSetConfig } from "./morgue.js";
import { walkByScan, walkByScore, type Member } from "./bulk-walk.js";
import { decrementRetryCount, type BulkResult, type EntryAction, type JobSetName } from "./sorted-entry.js";

/**
 * Entries one Lua call moves by default. At about 1 KB a job, a batch of
 * 1,000 holds Redis 2-4 ms (bench/results/bulk-actions.md), so workers'
 * fetches wait no longer than that.
 */
export const BULK_BATCH_SIZE = 1000;
/** Largest batch a caller may ask for (a batch must not stall Redis). */
export const MAX_BULK_BATCH_SIZE = 5000;
/** Failures kept with their member text in a summary (the count goes on). */
export const MAX_FAILURES_KEPT = 100;

/** Which entries a bulk action applies to; none given: every entry. */
export interface BulkSelection {
  /** Entries whose class / queue match (walked in score order). */
  filter?: JobFilter;
  /** Entries whose stored text contains this (the Web UI's filter: ZSCAN MATCH *text*). */
  substr?: string;
  /** Exactly these members (the selected entries); `score` is not needed. */
  entries?: ReadonlyArray<{ raw: string }>;
}

/** Options of a bulk action: the selection, the batch size, progress and cancellation. */
export interface BulkActionOptions extends BulkSelection {
  /** Entries per atomic Lua call (default 1,000, at most 5,000). */
  batchSize?: number;
  /** Called after each batch with the counts so far. */
  onProgress?: (progress: BulkSummary) => void;
  /** Stops after the batch in flight; the summary says `interrupted`. */
  signal?: AbortSignal;
}

/** What a bulk action did (also its progress, while it runs). */
export interface BulkSummary {
  set: JobSetName;
  action: EntryAction;
  scope: "all" | "filtered" | "selected";
  /** The set's size when the action started (all, filtered) or the number selected. */
  total: number;
  /** Members looked at so far. */
  scanned: number;
  /** Entries this action moved to their destination (or deleted). */
  moved: number;
  /** Entries another actor took between our read and our move: left to it. */
  gone: number;
  /** Entries a client middleware stopped: left in the set. */
  refused: number;
  /** Entries that could not be acted on (not JSON, a `retry_count` Ruby cannot decrement, ...): left in the set. */
  failed: number;
  /** The first failures, with the member's text. */
  failures: Array<{ raw: string; error: string }>;
  /** Lua calls made. */
  batches: number;
  /** True when stopped (signal, or Redis out of memory: BulkActionError) before the selection was walked to its end. */
  interrupted: boolean;
  elapsedMs: number;
}

/** One entry of a batch, ready for the Lua call. */
interface Planned {
  member: Member;
  /** push: the queue's key and the payload to LPUSH. */
  queueKey?: string;
  payload?: string;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The same Redis server and database (the client may hold its own connection to it). */
function sameRedis(a: Redis, b: Redis): boolean {
  if (a === b) return true;
  const x = a.options;
  const y = b.options;
  return (x.path ?? `${x.host}:${x.port}`) === (y.path ?? `${y.host}:${y.port}`) && (x.db ?? 0) === (y.db ?? 0);
}

/**
 * A bulk action stopped because Redis refused a write at maxmemory: the
 * `cause` is the RedisOutOfMemoryError, `summary` what the action did before
 * (`interrupted` is true). Entries not counted as moved are still in the set;
 * run the same action again once memory is freed.
 */
export class BulkActionError extends Error {
  override name = "BulkActionError";

  constructor(
    /** What the action did before it stopped: every entry not `moved` is still in the set. */
    readonly summary: BulkSummary,
    cause: RedisOutOfMemoryError,
  ) {
    super(
      `${summary.action} on ${summary.set} stopped after ${summary.moved} of ${summary.total} entries moved; ` +
        `the others are untouched in ${summary.set}: run the same action again once memory is freed. ${cause.message}`,
      { cause },
    );
  }
}

/**
 * The refusal at maxmemory behind `e` (a client middleware's own write may
 * wrap it), as a RedisOutOfMemoryError; undefined for any other failure.
 */
function outOfMemoryCause(redis: Redis, e: unknown): RedisOutOfMemoryError | undefined {
  for (let c = e, depth = 0; c instanceof Error && depth < 5; c = c.cause, depth++) {
    if (c instanceof RedisOutOfMemoryError) return c;
    if (isOutOfMemory(c)) return explain(redis, c) as RedisOutOfMemoryError;
  }
  return undefined;
}

/** A summary as the older `retryAll` / `killAll` / ... report it: moved, and the failures kept. */
export function bulkResult(s: BulkSummary): BulkResult {
  return { done: s.moved, failed: s.failures };
}

/** Runs one bulk action; see the module's header for what it guarantees. */
export async function runBulkAction(
  ctx: ApiContext,
  set: JobSetName,
  action: EntryAction,
  config: DeadSetConfig,
  opts: BulkActionOptions = {},
): Promise<BulkSummary> {
  const batchSize = opts.batchSize ?? BULK_BATCH_SIZE;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BULK_BATCH_SIZE)
    throw new RangeError(`batchSize must be an integer from 1 to ${MAX_BULK_BATCH_SIZE}, not ${batchSize}`);
  const started = Date.now();
  const filtered = hasFilter(opts.filter) || (opts.substr !== undefined && opts.substr !== "");
  const summary: BulkSummary = {
    set,
    action,
    scope: opts.entries ? "selected" : filtered ? "filtered" : "all",
    total: opts.entries ? opts.entries.length : await ctx.redis.zcard(set),
    scanned: 0,
    moved: 0,
    gone: 0,
    refused: 0,
    failed: 0,
    failures: [],
    batches: 0,
    interrupted: false,
    elapsedMs: 0,
  };
  const fail = (raw: string, error: string) => {
    summary.failed++;
    if (summary.failures.length < MAX_FAILURES_KEPT) summary.failures.push({ raw, error });
  };
  const matches = (m: Member) => !hasFilter(opts.filter) || matchesFilter(viewOf(m.raw), opts.filter);
  // Set when Redis refuses a write at maxmemory (a middleware's, or a move's): the action stops there.
  let outOfMemory: RedisOutOfMemoryError | undefined;

  /**
   * Prepares a batch and sends its Lua call; returns the members sent (none
   * of them is in the set once the call has run) and the call, which counts
   * its statuses and reports progress when Redis answers.
   */
  const sendBatch = async (members: Member[]): Promise<{ sent: Planned[]; moved: Promise<void> }> => {
    const planned: Planned[] = [];
    for (const m of members) {
      try {
        const p = await plan(ctx, action, m);
        if (p) planned.push(p);
        else summary.refused++;
      } catch (e) {
        // Out of memory is not this entry's fault: the rest are left in the set, and the ones planned are moved.
        if ((outOfMemory = outOfMemoryCause(ctx.redis, e))) break;
        fail(m.raw, message(e));
      }
    }
    const call = planned.length > 0 ? runMove(ctx, set, action, config, planned) : Promise.resolve([]);
    const moved = call.then((statuses) => {
      for (const s of statuses)
        if (s === 1) summary.moved++;
        else summary.gone++;
      if (statuses.length > 0) summary.batches++;
      summary.elapsedMs = Date.now() - started;
      opts.onProgress?.({ ...summary, failures: [...summary.failures] });
    });
    // Awaited by the caller later; marked handled so a failure meanwhile does not end the process.
    moved.catch(() => undefined);
    return { sent: planned, moved };
  };
  const moveBatch = async (members: Member[]): Promise<void> => (await sendBatch(members)).moved;

  const stop = () => {
    if (!opts.signal?.aborted && !outOfMemory) return false;
    summary.interrupted = true;
    return true;
  };

  try {
    await walk();
  } catch (e) {
    // A refused command wrote nothing, and walkByScore settles the move in flight first: the counts are exact.
    if (!(outOfMemory = outOfMemoryCause(ctx.redis, e))) throw e;
  }
  summary.elapsedMs = Date.now() - started;
  if (outOfMemory) {
    summary.interrupted = true;
    throw new BulkActionError(summary, outOfMemory);
  }
  return summary;

  async function walk(): Promise<void> {
    if (opts.entries) {
      for (let i = 0; i < opts.entries.length && !stop(); i += batchSize) {
        const slice: Member[] = opts.entries.slice(i, i + batchSize).map((e) => ({ raw: e.raw }));
        summary.scanned += slice.length;
        await moveBatch(slice.filter(matches));
      }
    } else if (opts.substr !== undefined && opts.substr !== "") {
      await walkByScan(ctx.redis, set, opts.substr, batchSize, stop, async (members) => {
        summary.scanned += members.length;
        await moveBatch(members.filter(matches));
      });
    } else if (!filtered && action === "delete") {
      // Deleting everything is Ruby's `clear`: one UNLINK (freed off Redis' main thread), in a
      // script, as Redis at maxmemory refuses every command queued in a MULTI.
      if (!stop()) {
        const [n] = await moveSetEntries(ctx.redis, [set, QUEUES_KEY, DEAD_KEY], ["clear"]);
        Object.assign(summary, { scanned: n, moved: n, batches: 1 });
      }
    } else {
      // Killing dead jobs scores them now: the walk stops before now, so none is met again.
      const below = set === DEAD_KEY && action === "kill" ? rubyFloatToS(ctx.now() / 1000) : undefined;
      await walkByScore(ctx.redis, set, batchSize, below, stop, async (page) => {
        summary.scanned += page.length;
        const { sent, moved } = await sendBatch(page.filter(matches));
        return { sent: new Set(sent.map((p) => p.member)), moved };
      });
    }
  }
}

/**
 * What one entry becomes: for a push, the payload Client#prepareRecord makes
 * (middleware run); null when a middleware stopped it. Throws when it cannot
 * be acted on.
 */
async function plan(ctx: ApiContext, action: EntryAction, member: Member): Promise<Planned | null> {
  if (action === "kill" || action === "delete") return { member };
  const raw = member.raw;
  const rec = parseStored(raw);
  if (!rec) throw new Error(`not a JSON object, so it cannot be pushed: ${raw.slice(0, 80)}`);
  if (action === "retry") decrementRetryCount(rec);
  const client = await ctx.clientFor(rec);
  const p = await client.prepareRecord(rec);
  if (!p) return null;
  if (!sameRedis(p.redis, ctx.redis))
    throw new Error(
      `queue "${p.queue}" is routed to another Redis: a bulk action moves jobs atomically only within one Redis (push it with Client#pushRecord)`,
    );
  return { member, queueKey: queueKey(p.queue), payload: p.json };
}

/** One Lua call: the batch's statuses, 1 moved, 0 gone. */
async function runMove(
  ctx: ApiContext,
  set: JobSetName,
  action: EntryAction,
  config: DeadSetConfig,
  planned: Planned[],
): Promise<number[]> {
  const keys: string[] = [set, QUEUES_KEY, DEAD_KEY];
  const args: Array<string | number | Buffer> = [];
  if (action === "delete") {
    args.push("delete");
    for (const p of planned) args.push(p.member.bytes ?? p.member.raw);
  } else if (action === "kill") {
    const nowS = ctx.now() / 1000;
    const limits = killLimits(ctx, config);
    const timeout = limits.deadTimeoutSeconds ?? DEFAULT_DEAD_TIMEOUT_SECONDS;
    const maxJobs = limits.deadMaxJobs ?? DEFAULT_DEAD_MAX_JOBS;
    args.push("kill", rubyFloatToS(nowS), rubyFloatToS(nowS - timeout), -maxJobs);
    for (const p of planned) args.push(p.member.bytes ?? p.member.raw);
  } else {
    args.push("push");
    const index = new Map<string, number>();
    for (const p of planned) {
      let i = index.get(p.queueKey!);
      if (i === undefined) {
        keys.push(p.queueKey!);
        index.set(p.queueKey!, (i = keys.length));
      }
      args.push(p.member.bytes ?? p.member.raw, i, p.payload!);
    }
  }
  return moveSetEntries(ctx.redis, keys as unknown as readonly [string, string, string, ...string[]], args);
}
