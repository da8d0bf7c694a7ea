// Client middleware, as Sidekiq's: each link may change the job, and the push
// happens only if every link calls next(). Links are async.
import type { Redis } from "ioredis";
import type { JobHash } from "./normalize.js";

/** What client middleware sees: the job hash about to be pushed, its class and queue, and the connection. */
export interface ClientMiddlewareContext {
  /** The job class name (`wrapped` is in the job for ActiveJob). */
  jobClass: string;
  /** The normalized payload; change it in place. */
  job: JobHash;
  queue: string;
  redis: Redis;
}

/** Client middleware: change `ctx.job` and call `next()`; not calling it stops the push (Sidekiq's client middleware). */
export type ClientMiddleware = (ctx: ClientMiddlewareContext, next: () => Promise<void>) => Promise<void> | void;

/**
 * Runs the chain; true when it reached the end (no link stopped the push).
 * Callers with an empty chain skip the call (and its await) altogether: the
 * result would be `true` with nothing run.
 */
export async function runClientMiddleware(
  chain: readonly ClientMiddleware[],
  ctx: ClientMiddlewareContext,
): Promise<boolean> {
  if (chain.length === 0) return true;
  let reached = false;
  const step = async (i: number): Promise<void> => {
    if (i === chain.length) {
      reached = true;
      return;
    }
    let called = false;
    await chain[i]!(ctx, async () => {
      if (called) throw new Error("client middleware called next() twice");
      called = true;
      await step(i + 1);
    });
  };
  await step(0);
  return reached;
}
