// Sidekiq's answer to a failover: on READONLY, NOREPLICAS or UNBLOCKED it
// closes the connection and tries once more (after a failover the socket may
// still point at the old master, now a replica).
import type { ChainableCommander, Redis } from "ioredis";
import { execReplies } from "./replies.js";

/** Errors after which Sidekiq closes the connection and tries once more. */
export const RECONNECT_ERRORS = /READONLY|NOREPLICAS|UNBLOCKED/;

/**
 * Runs `op`; on READONLY/NOREPLICAS/UNBLOCKED reconnects and runs it once
 * more, as Sidekiq does (after a failover the socket may point at a replica).
 */
export async function retryingOnce<T>(redis: Redis, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (!RECONNECT_ERRORS.test((e as Error).message ?? "")) throw e;
    redis.disconnect(true);
    return op();
  }
}

/**
 * Runs the pipeline `build` makes, failing on its first error (execReplies);
 * built and run once more after READONLY & co (retryingOnce).
 */
export function execRetryingOnce(redis: Redis, build: () => ChainableCommander, what = "pipeline"): Promise<unknown[]> {
  return retryingOnce(redis, async () => execReplies(await build().exec(), what));
}
