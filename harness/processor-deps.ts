// ProcessorDeps for running processJob on ready payloads in one process,
// with no Redis: a unit test of the handler's ctx and a bench of the
// processor's per-job cost. Only jobs that succeed may run (the retry path
// needs Redis); the runtime and stats are fresh. offlineWork is the entry a
// manager would have put in its WorkState for the job.
import type { Client } from "../src/core/client/client.js";
import type { Capsule } from "../src/core/server/capsule.js";
import type { Fetcher, UnitOfWork } from "../src/core/server/fetch/index.js";
import { Work } from "../src/core/server/work-state.js";
import { resolveOptions } from "../src/core/config/resolve.js";
import { JobLogger } from "../src/core/logging/job-logger.js";
import type { Logger } from "../src/core/logging/logger.js";
import type { OwnedRedis } from "../src/core/redis/connection.js";
import { ExecutionStats } from "../src/core/server/execution-stats.js";
import type { RetryConfig } from "../src/core/server/job-retry.js";
import type { ProcessorDeps, ServerMiddleware } from "../src/core/server/processor.js";
import { Config } from "../src/core/server/config.js";
import type { JobHandler } from "../src/core/server/types.js";

export function offlineProcessorDeps(o: {
  /** Handlers by job class. */
  handlers: Record<string, JobHandler<never>>;
  logger: Logger;
  middleware?: ServerMiddleware[];
  stopping?: () => boolean;
  /** Each job's start/done/fail lines (default: the job logger, its lines skipped). */
  lines?: JobLogger;
}): ProcessorDeps {
  const runtime = new Config({
    options: resolveOptions({ redis: "redis://127.0.0.1:1" }),
    identity: "offline:1:0",
    conn: { redis: undefined, owned: false } as unknown as OwnedRedis,
    client: undefined as unknown as Client,
    logger: o.logger,
    jobLogger: o.lines ?? new JobLogger({ logger: o.logger, skip: true }),
  });
  for (const [k, handler] of Object.entries(o.handlers)) runtime.handlers.set(k, { handler, options: {} });
  for (const mw of o.middleware ?? []) runtime.useServer(mw);
  return {
    config: runtime,
    retry: undefined as unknown as RetryConfig,
    stats: new ExecutionStats(),
    logger: o.logger,
    stopping: o.stopping ?? (() => false),
  };
}

/** A job in a slot, with no fetcher and no capsule: processJob reads neither. */
export function offlineWork(uow: UnitOfWork, tid = "t1"): Work {
  return new Work(tid, uow, undefined as unknown as Fetcher, undefined as unknown as Capsule);
}
