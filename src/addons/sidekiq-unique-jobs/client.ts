// The gem's client middleware for Node pushes: fills in the lock fields as
// SidekiqUniqueJobs::Job.prepare does, takes the lock with the gem's script,
// and on a conflict answers as the gem does: the push returns null (Ruby's
// nil jid) after the job's on_conflict strategy ran (raise throws).
import type { ClientMiddleware } from "../../core/client/middleware.js";
import type { JobHash } from "../../core/client/normalize.js";
import type { JsonValue } from "../../core/wire/json-scan.js";
import { RubyFloat, rubyFloatToS, toRubyJson, type RubyJsonValue } from "../../core/wire/ruby-json.js";
import { resolveConfig, type UniqueJobsOptions } from "./config.js";
import { onConflict } from "./conflict.js";
import { lockDigest } from "./digest.js";
import { UnknownLockError } from "./errors.js";
import { lockConfig, rubyToI } from "./lock-config.js";
import { locksmith } from "./locksmith.js";

/** Options of the client middleware that pushes unique jobs for Ruby workers. */
export interface UniqueJobsClientOptions extends UniqueJobsOptions {
  /**
   * A class's `lock_args_method`, by class name: the arguments that make a
   * job unique (the gem passes them through JSON first, as here).
   */
  lockArgs?: Record<string, (args: JsonValue[]) => RubyJsonValue>;
}

/** SidekiqUniqueJobs::Job.prepare on a Node payload. */
export function prepareJob(job: JobHash, options: UniqueJobsClientOptions = {}, now = Date.now()): void {
  const cfg = resolveConfig(options);
  job.lock_timeout = job.lock_timeout !== undefined ? job.lock_timeout : cfg.lockTimeout;
  const ttl = job.lock_ttl ?? job.lock_expiration ?? cfg.lockTtl;
  if (ttl === null || ttl === undefined) job.lock_ttl = null;
  else {
    const at = typeof job.at === "number" ? Math.trunc(job.at) : 0;
    job.lock_ttl = rubyToI(ttl as JsonValue) + (at ? Math.max(0, at - Math.trunc(now / 1000)) : 0);
  }
  job.lock_prefix ??= cfg.lockPrefix;
  const args = (job.args ?? []) as RubyJsonValue[];
  const filter = options.lockArgs?.[String(job.class)];
  job.lock_args = filter ? filter(JSON.parse(toRubyJson(args)) as JsonValue[]) : args;
  job.lock_digest = lockDigest({
    class: String(job.class),
    queue: String(job.queue),
    lockArgs: job.lock_args,
    ...(job.apartment !== undefined ? { apartment: job.apartment } : {}),
    lockPrefix: String(job.lock_prefix),
    algorithm: cfg.digestAlgorithm,
    jsonFloats: cfg.jsonFloats,
    uniqueAcrossQueues: Boolean(job.unique_across_queues),
    uniqueAcrossWorkers: Boolean(job.unique_across_workers),
  });
}

/** `client.use(uniqueJobsClient())`: Node pushes take the gem's locks. */
export function uniqueJobsClient(options: UniqueJobsClientOptions = {}): ClientMiddleware {
  const cfg = resolveConfig(options);
  return async (ctx, next) => {
    const job = ctx.job;
    if (job.rescheduled) {
      delete job.rescheduled;
      return next();
    }
    if (!job.lock) return next();
    prepareJob(job, options);
    // The payload's values as they are (bigints stay exact); a Float option is its number.
    const get = (k: string) => {
      const v = job[k];
      return (v instanceof RubyFloat ? v.value : v) as JsonValue | undefined;
    };
    const lc = lockConfig(get, cfg);
    if (typeof job.at === "number") lc.lockScore = rubyFloatToS(job.at);
    if (!lc.kind) {
      throw new UnknownLockError(`No implementation for \`lock: :${lc.type}\``);
    }
    // WhileExecuting#lock takes nothing at push time.
    if (lc.kind === "while_executing" || lc.kind === "while_executing_reject") return next();
    const smith = locksmith(ctx.redis, lc, cfg);
    if (await smith.lock()) return next();
    const replaced = await onConflict(lc.onClientConflict, {
      redis: ctx.redis,
      lc,
      cfg,
      payload: () => toRubyJson(job),
    });
    // Replace removed the queued duplicate and its lock: one more try.
    if (replaced && (await smith.lock())) return next();
  };
}
