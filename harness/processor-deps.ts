// ProcessorDeps for running processJob on ready payloads in one process,
// with no Redis: a unit test of the handler's ctx and a bench of the
// processor's per-job cost. Only jobs that succeed may run (the retry path
// needs Redis); stats and the running-job map are fresh.
import type { Redis } from "ioredis";
import { Stats } from "../src/server/execution-stats.js";
import type { JobObserver } from "../src/server/job-observer.js";
import type { RetryConfig } from "../src/server/job-retry.js";
import type { Logger } from "../src/logging/logger.js";
import type { ProcessorDeps, ServerMiddleware } from "../src/server/processor.js";
import type { JobHandler } from "../src/server/types.js";

export function offlineProcessorDeps(o: {
  /** Handlers by job class. */
  handlers: Record<string, JobHandler<never>>;
  logger: Logger;
  middleware?: ServerMiddleware[];
  stopping?: () => boolean;
  /** What watches each run (server/job-watch.ts: the job logger's lines, the events, the error handlers). */
  observer?: JobObserver;
}): ProcessorDeps {
  return {
    redis: undefined as unknown as Redis,
    handlers: new Map(Object.entries(o.handlers).map(([k, handler]) => [k, { handler, options: {} }])),
    activeJobHandlers: new Map(),
    middleware: o.middleware ?? [],
    retry: undefined as unknown as RetryConfig,
    stats: new Stats(),
    unknownClass: "retry",
    logger: o.logger,
    work: new Map(),
    stopping: o.stopping ?? (() => false),
    ...(o.observer ? { observer: o.observer } : {}),
  };
}
