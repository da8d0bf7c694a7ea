// Client middleware, as Sidekiq's: each link may change the job, and the push
// happens only if every link calls next(). Links are async. The chain that
// runs them is the server's too (../middleware/chain.ts).
import type { Redis } from "ioredis";
import type { JobHash } from "./normalize.js";

/** What client middleware sees: the job hash about to be pushed, its class and queue, and the connection. */
export interface ClientMiddlewareContext {
  /** The job class name (`wrapped` is in the job for ActiveJob). */
  className: string;
  /** The normalized payload; change it in place. */
  job: JobHash;
  queue: string;
  redis: Redis;
}

/** Client middleware: change `ctx.job` and call `next()`; not calling it stops the push (Sidekiq's client middleware). */
export type ClientMiddleware = (ctx: ClientMiddlewareContext, next: () => Promise<void>) => Promise<void> | void;
