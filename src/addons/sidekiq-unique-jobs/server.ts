// The gem's server middleware for Node workers: each lock type takes and
// releases its lock around the job exactly where the gem's lock classes
// (lib/sidekiq_unique_jobs/lock/*.rb) do, with the gem's scripts; a death
// handler removes a dead job's lock as the gem's Server::DEATH_HANDLER does.
import type { ServerMiddleware, ServerMiddlewareContext } from "../../core/server/processor.js";
import type { DeathHandler } from "../../core/server/types.js";
import type { JobRecord } from "../../core/wire/job-record.js";
import { resolveConfig, type UniqueJobsConfig, type UniqueJobsOptions } from "./config.js";
import { onConflict } from "./conflict.js";
import { deleteByDigest } from "./digests.js";
import { UniqueJobsLockError, UnknownLockError } from "./errors.js";
import { type LockConfig, lockConfig } from "./lock-config.js";
import { locksmith } from "./locksmith.js";
import { markUniqueJobs } from "./marker.js";

/** The worker side of sidekiq-unique-jobs: a server middleware and a death handler. */
export interface UniqueJobs {
  /** For `worker.use(...)`. */
  middleware: ServerMiddleware;
  /** For `worker.onDeath(...)`. */
  onDeath: DeathHandler;
  config: UniqueJobsConfig;
}

/** Turns on sidekiq-unique-jobs on a Node worker: `worker.use(u.middleware).onDeath(u.onDeath)`. */
export function uniqueJobs(options: UniqueJobsOptions = {}): UniqueJobs {
  const cfg = resolveConfig(options);
  const middleware = markUniqueJobs((ctx, next) => runLocked(ctx, next, cfg));
  const onDeath: DeathHandler = async (job, _error, redis) => {
    const digest = job.get("lock_digest");
    if (typeof digest !== "string" || digest === "") return;
    await deleteByDigest(redis, digest, cfg);
  };
  return { middleware, onDeath, config: cfg };
}

async function guarded<T>(lc: LockConfig, what: string, p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    if ((e as Error).name.startsWith("SidekiqUniqueJobs::")) throw e;
    throw new UniqueJobsLockError(`could not ${what} the lock ${lc.digest} of job ${lc.jid}: ${(e as Error).message}`);
  }
}

async function afterUnlock(job: JobRecord, cfg: UniqueJobsConfig): Promise<void> {
  if (!cfg.afterUnlock) return;
  try {
    await cfg.afterUnlock(job);
  } catch (e) {
    cfg.logger.warn(`After unlock callback failed: ${(e as Error).name} - ${(e as Error).message}`);
  }
}

async function runLocked(ctx: ServerMiddlewareContext, next: () => Promise<void>, cfg: UniqueJobsConfig) {
  const job = ctx.job;
  // Middleware#call: a rescheduled job and a job without `lock` pass through.
  if (job.get("rescheduled")) {
    job.delete("rescheduled");
    return next();
  }
  const type = job.get("lock");
  if (type === undefined || type === null || type === false) return next();
  const lc = lockConfig((k) => job.get(k), cfg);
  if (!lc.kind) throw new UnknownLockError(`No implementation for \`lock: :${lc.type}\``);
  const redis = ctx.redis;
  const smith = locksmith(redis, lc, cfg);
  const log = cfg.logger;
  const payload = () => job.toString();

  const unlockAndCallback = async (s = smith) => {
    if (await guarded(lc, "release", s.unlock())) await afterUnlock(job, cfg);
    else log.warn("sidekiq-unique-jobs: unlock failed: another job holds the lock", { digest: lc.digest, jid: lc.jid });
  };

  // The `:RUN` digest's lock, made only for the lock types that take it.
  const runtimeLock = () => {
    const run = { ...lc, digest: lc.digest.endsWith(":RUN") ? lc.digest : `${lc.digest}:RUN` };
    return { run, runSmith: locksmith(redis, run, cfg) };
  };
  const runtimeLockHeld = () => {
    const { run, runSmith } = runtimeLock();
    return guarded(run, "check", runSmith.locked());
  };
  // Lock::WhileExecuting#execute on the `:RUN` digest.
  const whileExecuting = async (): Promise<void> => {
    const { run, runSmith } = runtimeLock();
    {
      const executed = await guarded(
        run,
        "take",
        runSmith.execute(async () => {
          try {
            await next();
          } finally {
            await unlockAndCallback(runSmith);
          }
        }),
      );
      if (executed) return;
      log.warn("sidekiq-unique-jobs: the job is already running elsewhere (while_executing lock taken)", {
        digest: run.digest,
        jid: lc.jid,
      });
      const strategy = lc.kind === "while_executing_reject" ? "reject" : lc.onServerConflict;
      const replaced = await onConflict(strategy, { redis, lc: run, cfg, payload });
      // Replace made room: WhileExecuting#lock hands the job straight on.
      if (replaced) return next();
    }
  };

  switch (lc.kind) {
    case "until_executing": {
      if (await guarded(lc, "release", smith.unlock())) await afterUnlock(job, cfg);
      try {
        await next();
      } catch (e) {
        await guarded(lc, "retake", smith.relock());
        throw e;
      }
      return;
    }
    case "until_executed":
    case "until_expired": {
      const executed = await guarded(lc, "take", smith.execute(next));
      if (!executed) {
        // The gem's UntilExecuted#execute: no lock, no run; the job is done with.
        log.warn("sidekiq-unique-jobs: could not take the lock; the job was not run (as the gem does)", {
          digest: lc.digest,
          jid: lc.jid,
          class: lc.className,
        });
        return;
      }
      if (lc.kind === "until_executed") await unlockAndCallback();
      return;
    }
    case "until_and_while_executing": {
      try {
        if (await guarded(lc, "release", smith.unlock())) await whileExecuting();
        // Re-run by reliable-fetch recovery after its process died mid-job: it
        // released the queue lock (another push may hold it now) and still
        // holds its runtime lock, which only its own run can release.
        else if (await runtimeLockHeld()) await whileExecuting();
        else
          log.warn(
            "sidekiq-unique-jobs: unlock failed: another job holds the lock; the job was not run (as the gem does)",
            {
              digest: lc.digest,
              jid: lc.jid,
            },
          );
      } catch (e) {
        await guarded(lc, "retake", smith.relock());
        throw e;
      }
      return;
    }
    case "while_executing":
    case "while_executing_reject":
      return whileExecuting();
  }
}
