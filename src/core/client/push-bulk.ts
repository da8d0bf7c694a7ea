// Sidekiq's push_bulk once Client has found the queue's shard and dialect:
// its arguments checked with Ruby's own messages, then the jobs in batches of
// batchSize, one round trip each, and the error for a bulk Redis failed
// part-way. Without middleware a batch is encoded through a template (the
// shared members once); with middleware every job passes the chain first.
import type { Redis } from "ioredis";
import type { WireProfile } from "../wire/dialect.js";
import { newJid } from "../wire/jid.js";
import type { RubyJsonValue } from "../wire/ruby-json.js";
import type { MiddlewareChain } from "../middleware/chain.js";
import { explain, isConnectionError } from "../redis/availability.js";
import { atomicPush, atomicPushTemplate, recordPush, type PushRecorder } from "./atomic-push.js";
import { boundedWrite } from "./bounded-write.js";
import type { BulkItem } from "./client-types.js";
import { BulkPushError, SidekiqArgumentError } from "./errors.js";
import type { ClientMiddleware } from "./middleware.js";
import { bulkTemplate, type BulkTemplate, type JobHash } from "./normalize.js";
import type { Shard } from "./shard.js";
import { verifyArgs, type StrictArgsMode } from "./strict-args.js";

/** A bulk's arguments, checked as Client.push_bulk checks them; `at` filled in from spreadInterval. */
export function checkBulk(bulk: BulkItem): {
  args: unknown[][];
  rest: Omit<BulkItem, "args" | "at" | "spreadInterval" | "batchSize" | "jid"> & { class: string };
  at: number | number[] | undefined;
  batchSize: number;
} {
  const { args, at: atIn, spreadInterval, batchSize: bs, jid, ...rest } = bulk;
  if (!Array.isArray(args))
    throw new SidekiqArgumentError(`Job args must be an Array: \`${JSON.stringify(bulk.class)}\``);
  let at = atIn;
  if (
    at !== undefined &&
    (Array.isArray(at)
      ? at.length === 0 || !at.every((x) => typeof x === "number" && Number.isFinite(x))
      : typeof at !== "number")
  ) {
    throw new SidekiqArgumentError("Job 'at' must be a Numeric or an Array of Numeric timestamps");
  }
  if (Array.isArray(at) && at.length !== args.length)
    throw new SidekiqArgumentError("Job 'at' Array must have same size as 'args' Array");
  if (jid !== undefined && args.length > 1)
    throw new SidekiqArgumentError("Explicitly passing 'jid' when pushing more than one job is not supported");
  if (spreadInterval !== undefined && (typeof spreadInterval !== "number" || !(spreadInterval > 0))) {
    throw new SidekiqArgumentError("Jobs 'spread_interval' must be a positive Numeric");
  }
  if (at !== undefined && spreadInterval !== undefined)
    throw new SidekiqArgumentError("Only one of 'at' or 'spread_interval' can be provided");
  if (at === undefined && spreadInterval !== undefined) {
    // Never spread over less than the poll interval.
    const interval = Math.max(spreadInterval, 5);
    const now = Date.now() / 1000;
    at = args.map(() => now + Math.random() * interval);
  }
  const batchSize = bs ?? (at !== undefined ? 100 : 1000);
  if (!(Number.isInteger(batchSize) && batchSize > 0))
    throw new SidekiqArgumentError("batch_size must be a positive Integer");
  return { args: args as unknown[][], rest, at, batchSize };
}

/**
 * The error for a push_bulk whose batch starting at `start` failed in Redis:
 * the cause alone when nothing was written and nothing is in doubt, else a
 * BulkPushError saying which jobs are in Redis.
 */
export function bulkPushFailure(
  redis: Redis,
  e: unknown,
  written: ReadonlyArray<string | null>,
  start: number,
  total: number,
  batchJids: string[],
): unknown {
  const cause = explain(redis, e);
  const uncertain = isConnectionError(e) ? batchJids : [];
  if (start === 0 && uncertain.length === 0) return cause;
  const doubt =
    uncertain.length > 0
      ? `; the ${uncertain.length} of the batch in flight when the connection was lost may or may not be written`
      : "";
  return new BulkPushError(
    `push_bulk wrote ${start} of ${total} jobs before Redis failed${doubt}: ${(cause as Error)?.message ?? String(cause)}`,
    [...written],
    start,
    uncertain,
    { cause },
  );
}

/** What a bulk takes from its client: the chain, the argument check, validation, and the testing entry's recorder. */
export interface BulkPusher {
  middleware: MiddlewareChain<ClientMiddleware>;
  mode: StrictArgsMode;
  warn: (m: string) => void;
  validate: boolean;
  recorder: PushRecorder | undefined;
  /** The contract app a recorded push belongs to (the testing entry's). */
  appOf?: (payload: JobHash) => string | undefined;
}

/**
 * Pushes `args` as jobs of `normed` (each with its own args and jid, and `at`
 * when given): one jid per args array, null where a middleware stopped the job.
 */
export async function pushBulkBatches(
  pusher: BulkPusher,
  shard: Shard,
  profile: WireProfile,
  normed: JobHash,
  args: RubyJsonValue[][],
  jid: BulkItem["jid"],
  at: number | number[] | undefined,
  batchSize: number,
): Promise<Array<string | null>> {
  const { middleware, mode, warn, validate, recorder, appOf } = pusher;
  const out: Array<string | null> = [];
  const redis = shard.conn.redis;
  const noMiddleware = middleware.empty;
  // atomicPush, or under the testing entry the same jobs to its recorder.
  const write = (payloads: JobHash[]) =>
    recorder === undefined
      ? atomicPush(redis, profile, payloads, validate)
      : recordPush(recorder, profile, payloads, validate, appOf);
  // Without middleware every job is `normed` with its own args and jid (and
  // enqueued_at or at): the shared members are encoded once (see payloadTemplate).
  let template: BulkTemplate | null | undefined;
  let start = 0;
  // A batch Redis failed to write: say which jobs are in Redis (BulkPushError).
  const partial = async (batchJids: string[], write: () => Promise<unknown>) => {
    if (recorder !== undefined) return void (await write());
    try {
      await boundedWrite(redis, batchJids, shard.deadlines, write);
    } catch (e) {
      throw bulkPushFailure(redis, e, out, start, args.length, batchJids);
    }
  };
  for (; start < args.length; start += batchSize) {
    const slice = args.slice(start, start + batchSize);
    if (!slice.every(Array.isArray))
      throw new SidekiqArgumentError("Bulk arguments must be an Array of Arrays: [[1], [2]]");
    if (noMiddleware) {
      const jids: RubyJsonValue[] = [];
      const jobArgs: RubyJsonValue[][] = [];
      for (const a of slice) {
        jids.push(jid ?? newJid());
        jobArgs.push(verifyArgs(String(normed.wrapped ?? normed.class), a, mode, warn) as RubyJsonValue[]);
      }
      // null: a shared member cannot be encoded (the generic path below says why).
      if (template === undefined) {
        try {
          template = bulkTemplate(normed, at !== undefined, profile);
        } catch {
          template = null;
        }
      }
      const ats =
        at === undefined ? undefined : jobArgs.map((_, i) => (Array.isArray(at) ? at[start + i]! : (at as number)));
      await partial(jids.map(String), async () => {
        if (
          template === null ||
          recorder !== undefined ||
          !(await atomicPushTemplate(redis, profile, template!, jobArgs, jids, jid !== undefined, ats, validate))
        ) {
          // An encoding error: the generic path names it exactly as it always has.
          const payloads = jobArgs.map((a, i) => {
            const copy: JobHash = { ...normed, args: a, jid: jids[i]! };
            if (ats !== undefined) copy.at = ats[i]!;
            return copy;
          });
          await write(payloads);
        }
      });
      for (const j of jids) out.push(String(j));
      continue;
    }
    const payloads: Array<JobHash | null> = [];
    for (const [i, jobArgs] of slice.entries()) {
      const copy: JobHash = { ...normed, args: jobArgs, jid: jid ?? newJid() };
      if (at !== undefined) copy.at = Array.isArray(at) ? at[start + i]! : at;
      const ok = await middleware.invoke({
        className: String(copy.class),
        job: copy,
        queue: String(copy.queue),
        redis,
      });
      if (ok)
        copy.args = verifyArgs(
          String(copy.wrapped ?? copy.class),
          copy.args as unknown[],
          mode,
          warn,
        ) as RubyJsonValue[];
      payloads.push(ok ? copy : null);
    }
    const toPush = payloads.filter((p): p is JobHash => p !== null);
    if (toPush.length > 0)
      await partial(
        toPush.map((p) => String(p.jid)),
        () => write(toPush),
      );
    for (const p of payloads) out.push(p ? String(p.jid) : null);
  }
  return out;
}
