// A push's write, bounded. The connection notices a silent socket within its
// network timeout and ioredis sends the command again on a new connection
// (Sidekiq's client does the same: one retry, at-least-once). Where no new
// connection comes, the push must not wait on: after twice the timeout it
// rejects, saying the job may have been written.
import type { Redis } from "ioredis";
import {
  bounded,
  describeRedis,
  explain,
  isClosedByAcl,
  isConnectionError,
  lastErrorOf,
  reasonOf,
  TIMED_OUT,
} from "../redis/availability.js";
import { PushUncertainError } from "./errors.js";

/** How long a push's write may wait for its reply: the timeout to notice the loss, and one more for the resend. */
export function writeBoundMs(networkTimeoutMs: number): number {
  return 2 * networkTimeoutMs;
}

/**
 * Runs `write` (the commands that push `jids`); a connection failure or no
 * reply within `ms` becomes a PushUncertainError naming the jids. Any other
 * error (a refusal at maxmemory, a reply error) passes through explained.
 */
export async function boundedWrite(redis: Redis, jids: readonly string[], ms: number, write: () => Promise<unknown>) {
  let r: unknown;
  try {
    r = await bounded(write(), Date.now() + ms);
  } catch (e) {
    // A reply error, or a connection its user's ACL closed (a refused SELECT: nothing was written).
    if (!isConnectionError(e) || isClosedByAcl(redis)) throw explain(redis, e);
    throw uncertain(redis, jids, e);
  }
  if (r === TIMED_OUT) throw uncertain(redis, jids, new Error(`no reply within ${ms} ms`));
}

function uncertain(redis: Redis, jids: readonly string[], cause: unknown): PushUncertainError {
  const what = jids.length === 1 ? `job ${jids[0]}` : `${jids.length} jobs`;
  return new PushUncertainError(
    `Redis unreachable at ${describeRedis(redis)} (${reasonOf(lastErrorOf(redis) ?? cause)}) after the push of ${what} was sent: ` +
      `it may or may not be written`,
    jids,
    { cause },
  );
}
