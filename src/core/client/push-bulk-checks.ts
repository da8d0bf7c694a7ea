// push_bulk's argument checks (Ruby's own messages) and the error for a bulk
// that Redis failed part-way: kept apart from Client so each stays readable.
import type { Redis } from "ioredis";
import { explain, isConnectionError } from "../redis/availability.js";
import type { BulkItem } from "./client-types.js";
import { BulkPushError, SidekiqArgumentError } from "./errors.js";

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
