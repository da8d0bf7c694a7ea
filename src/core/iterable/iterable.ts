// Sidekiq's IterableJob (`Sidekiq::Job::Iterable`, Sidekiq 7.3+) for Node
// handlers: `buildEnumerator(args, cursor)` yields [item, cursor] pairs and
// `eachIteration(item, args)` processes one item, with the cursor kept in
// `it-<jid>` as Ruby keeps it, so a job interrupted on one side resumes on the
// other at the same item. The cursor paired with an item is where iteration
// restarts to yield that item again (Ruby's `array_enumerator` pairs each
// item with its index).
//
// Per execution, as Ruby's `perform`: read the saved state, count the
// execution, build the enumerator (none: skip the job), on_start or on_resume,
// iterate, on_stop, then on_complete and delete the state, or (interrupted)
// save the state and push the job back to its queue. While iterating, the
// state is flushed every 5 seconds and before an interruption; the worker
// quieting or stopping interrupts before the next item. Sidekiq 8 also stops a
// job cancelled with `Sidekiq::Client#cancel!` (checked at the start and at
// every flush), flushes the state when an item raises, and interrupts a job
// that ran longer than `maxIterationRuntime`.
import type { Redis } from "ioredis";
import type { JsonValue } from "../wire/json-scan.js";
import type { JobRecord } from "../wire/job-record.js";
import { releaseRules } from "../wire/release-rules.js";
import { toRubyJson } from "../wire/ruby-json.js";
import {
  decodeIterationState,
  encodeIterationState,
  flushIterationState,
  ITERATION_STATE_FLUSH_INTERVAL,
} from "./iterable-state.js";
import { iterationKey } from "../wire/keys.js";
import type { Logger } from "../logging/logger.js";
import { JobRetrySkip, type JobContext, type JobHandler } from "../server/types.js";

/** An item and the cursor that resumes iteration at it. */
export type IterationPair<Item> = readonly [item: Item, cursor: JsonValue];
/** What `buildEnumerator` returns: `[item, cursor]` pairs, sync or async. */
export type IterationSource<Item> = Iterable<IterationPair<Item>> | AsyncIterable<IterationPair<Item>>;

/** The handler's view of one execution of an iterable job. */
export interface IterationContext<A extends unknown[] = JsonValue[]> extends JobContext {
  /** The job's arguments (Ruby's `arguments`). */
  readonly arguments: A;
  /** The cursor of the current item; at the start, the saved cursor (null when none). */
  readonly cursor: JsonValue;
  /** Executions so far, this one included (1 the first time). */
  readonly executions: number;
  /** The latest item (Ruby's `current_object`), kept for on_stop/on_complete. */
  readonly currentObject: unknown;
  /** True once this execution saw its cancellation (Sidekiq 8). */
  readonly cancelled: boolean;
}

type Hook<A extends unknown[]> = (ctx: IterationContext<A>) => unknown | Promise<unknown>;

/** An iterable job: Ruby's `build_enumerator(*args, cursor:)` and `each_iteration(item, *args)`, plus its hooks. */
export interface IterableJob<A extends unknown[] = JsonValue[], Item = unknown> {
  buildEnumerator(
    args: A,
    cursor: JsonValue,
    ctx: IterationContext<A>,
  ): IterationSource<Item> | null | undefined | Promise<IterationSource<Item> | null | undefined>;
  eachIteration(item: Item, args: A, ctx: IterationContext<A>): unknown | Promise<unknown>;
  /** Around each item (metrics, tracing): must call `next` once. */
  aroundIteration?(ctx: IterationContext<A>, next: () => Promise<void>): Promise<void>;
  /** The first execution, before the first item. */
  onStart?: Hook<A>;
  /** Every later execution (after an interruption or a retry), before its first item. */
  onResume?: Hook<A>;
  /** After iterating, whether completed, cancelled or interrupted (not after an error). */
  onStop?: Hook<A>;
  /** Sidekiq 8: the job was cancelled; on_complete follows. */
  onCancel?: Hook<A>;
  /** All items done (or cancelled); the state is deleted after it. */
  onComplete?: Hook<A>;
}

/** Options of `registerIterable`: Sidekiq 8's `maxIterationRuntime`. */
export interface IterableOptions {
  /**
   * Sidekiq 8's `max_iteration_runtime`, seconds: an execution running longer
   * is interrupted after the current item and pushed to the back of its queue.
   */
  maxIterationRuntime?: number;
}

/** What the worker lends an iterable handler. */
export interface IterableDeps {
  redis: () => Redis;
  /** The fleet's Sidekiq release (what the worker writes). */
  version: () => string;
  /** Ruby's InterruptHandler: `Sidekiq::Client.new.push(hash)`, enqueued_at renewed. */
  reenqueue: (record: JobRecord) => Promise<unknown>;
  logger: Logger;
  /** The worker's shutdown timeout, seconds: an item running longer is warned about. */
  timeout: number;
}

/** Ruby's `array_enumerator(array, cursor:)`: each item paired with its index, from the cursor. */
export function* arrayEnumerator<T>(array: readonly T[], cursor: JsonValue): Generator<IterationPair<T>> {
  const start = typeof cursor === "number" ? cursor : typeof cursor === "bigint" ? Number(cursor) : 0;
  for (let i = start; i < array.length; i++) yield [array[i]!, i];
}

async function* pairs<Item>(source: IterationSource<Item>): AsyncGenerator<IterationPair<Item>> {
  for await (const p of source as AsyncIterable<IterationPair<Item>>) yield p;
}

const monoNow = () => performance.now() / 1000;

/** A handler for `worker.register` that runs `job` the way Sidekiq runs an IterableJob. */
export function iterableHandler<A extends unknown[], Item>(
  className: string,
  job: IterableJob<A, Item>,
  options: IterableOptions,
  deps: IterableDeps,
): JobHandler<A> {
  return async (args, base) => {
    const redis = deps.redis();
    const version = deps.version();
    const rules = releaseRules(version).iteration;
    const fields = (extra: Record<string, unknown> = {}) => ({ class: className, jid: base.jid, ...extra });
    const jid = base.jid;

    let executions = 0;
    let cursor: JsonValue = null;
    let runtime = 0;
    let runtimeIsFloat = false;
    let currentObject: unknown;
    let cancelled = false;
    try {
      const saved = decodeIterationState(await redis.hgetall(iterationKey(jid)));
      if (saved) {
        ({ executions, cursor, runtime } = saved);
        runtimeIsFloat = true;
      }
    } catch (e) {
      // Ruby's perform raises here too: the job takes the retry path.
      deps.logger.error(
        `Cannot resume iterable job: its saved state ${iterationKey(jid)} is unreadable`,
        fields({ error_class: (e as Error).name, error_message: (e as Error).message }),
      );
      throw e;
    }
    executions++;
    const startedAt = monoNow();

    const ctx = Object.create(base, {
      arguments: { get: () => args },
      cursor: { get: () => cursor },
      executions: { get: () => executions },
      currentObject: { get: () => currentObject },
      cancelled: { get: () => cancelled },
    }) as IterationContext<A>;
    const flush = () =>
      flushIterationState(redis, jid, encodeIterationState({ executions, cursor, runtime }, runtimeIsFloat), version);

    const source = await job.buildEnumerator(args, cursor, ctx);
    if (source === null || source === undefined) {
      deps.logger.info("'#build_enumerator' returned nil, skipping the job.", fields());
      return;
    }
    if (
      typeof (source as Iterable<unknown>)[Symbol.iterator] !== "function" &&
      typeof (source as AsyncIterable<unknown>)[Symbol.asyncIterator] !== "function"
    ) {
      throw new TypeError(`${className}: buildEnumerator must return an iterable of [item, cursor] pairs`);
    }
    await (executions === 1 ? job.onStart : job.onResume)?.(ctx);

    const cancel = async () => {
      cancelled = true;
      await job.onCancel?.(ctx);
      deps.logger.info("Job cancelled", fields());
      return true;
    };
    const iterate = async (): Promise<boolean> => {
      try {
        if (rules.cancellation && (await redis.hget(iterationKey(jid), "cancelled"))) return await cancel();
        let flushedAt = monoNow();
        let found = false;
        for await (const [item, next] of pairs(source)) {
          found = true;
          cursor = next;
          currentObject = item;
          const interrupt =
            base.stopping ||
            (rules.maxIterationRuntime &&
              options.maxIterationRuntime !== undefined &&
              monoNow() - startedAt > options.maxIterationRuntime);
          if (monoNow() - flushedAt >= ITERATION_STATE_FLUSH_INTERVAL || interrupt) {
            const mark = await flush();
            flushedAt = monoNow();
            if (rules.cancellation && mark) return await cancel();
          }
          if (interrupt) return false;
          const t0 = monoNow();
          try {
            const each = () => Promise.resolve(job.eachIteration(item, args, ctx)).then(() => undefined);
            await (job.aroundIteration ? job.aroundIteration(ctx, each) : each());
          } catch (e) {
            // From 8.0.4 the failing item's cursor is saved: the retry resumes at it.
            if (rules.flushOnError) await flush();
            throw e;
          }
          const took = monoNow() - t0;
          if (rules.maxIterationRuntime && took > deps.timeout) {
            deps.logger.warn(
              `Iteration took longer (${took.toFixed(2)}) than Sidekiq's shutdown timeout (${deps.timeout}). This can lead to job processing problems during deploys`,
              fields(),
            );
          }
        }
        if (!found) deps.logger.debug("Enumerator found nothing to iterate!", fields());
        return true;
      } finally {
        runtime += monoNow() - startedAt;
        runtimeIsFloat = true;
      }
    };
    const completed = await iterate();
    await job.onStop?.(ctx);
    if (completed) {
      await job.onComplete?.(ctx);
      deps.logger.debug(`Completed iteration. executions=${executions} runtime=${runtime.toFixed(3)}`, fields());
      await redis.unlink(iterationKey(jid));
      return;
    }
    // Ruby's reenqueue_iteration_job and InterruptHandler: save, push the job
    // back (same jid, at the back of its queue), and end it without a retry.
    await flush();
    deps.logger.debug(`Interrupting job (cursor=${toRubyJson(cursor)})`, fields());
    await deps.reenqueue(base.record);
    throw new JobRetrySkip("Sidekiq::Job::Interrupted");
  };
}
