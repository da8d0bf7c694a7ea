// The gem's on_conflict strategies (OnConflict::Log, Raise, Reject, Replace,
// Reschedule; none set is its NullStrategy), for the client and the server.
import type { Redis } from "ioredis";
import { newJid } from "../../core/wire/jid.js";
import { JobRecord } from "../../core/wire/job-record.js";
import { rubyFloatToS } from "../../core/wire/ruby-json.js";
import { queueKey, RETRY_KEY, SCHEDULE_KEY } from "../../core/wire/keys.js";
import { sendToDead, type RetryConfig } from "../../core/server/job-retry.js";
import type { UniqueJobsConfig } from "./config.js";
import type { LockConfig } from "./lock-config.js";
import { deleteByDigest } from "./digests.js";
import { UniqueJobsConflict } from "./errors.js";
import { V8_DELETE_JOB_BY_DIGEST } from "./lua-v8.js";
import { V9_DELETE_JOB_BY_DIGEST } from "./lua-v9.js";
import { injected, runScript } from "./scripts.js";

export const STRATEGIES = ["log", "raise", "reject", "replace", "reschedule"] as const;

export interface ConflictContext {
  redis: Redis;
  lc: LockConfig;
  cfg: UniqueJobsConfig;
  /** The payload as Ruby would dump it (for reject and reschedule). */
  payload: () => string;
}

/**
 * Runs the strategy; true when it made room for the job (replace), in which
 * case the caller tries once more.
 */
export async function onConflict(name: string | null, c: ConflictContext): Promise<boolean> {
  const { lc, cfg } = c;
  switch (name) {
    case null:
      return false;
    case "log":
      cfg.logger.info(`Skipping job with id (${lc.jid}) because lock_digest: (${lc.digest}) already exists`);
      return false;
    case "raise":
      throw new UniqueJobsConflict(lc.digest);
    case "reject":
      cfg.logger.info(`Adding dead ${lc.className} job ${lc.jid}`);
      await sendToDead(c.redis, c.payload(), {} as RetryConfig);
      return false;
    case "replace": {
      const lua = cfg.gem === 9 ? V9_DELETE_JOB_BY_DIGEST : V8_DELETE_JOB_BY_DIGEST;
      const deleted = await runScript(
        c.redis,
        lua,
        [queueKey(lc.queue), SCHEDULE_KEY, RETRY_KEY],
        [lc.digest, ...injected("delete_job_by_digest", cfg.maxHistory)],
      );
      if (!deleted) return false;
      cfg.logger.info(`Deleted job: ${String(deleted)}`);
      const n = await deleteByDigest(c.redis, lc.digest, cfg, { runtime: false });
      cfg.logger.info(`Deleted \`${n}\` keys for ${lc.digest}`);
      return true;
    }
    case "reschedule":
      await reschedule(c);
      return false;
    default:
      cfg.logger.warn(
        `No matching implementation for strategy: ${name}, returning OnConflict::NullStrategy. Available strategies are (${STRATEGIES.join(", ")})`,
      );
      return false;
  }
}

/**
 * OnConflict::Reschedule: the same job again in 5 seconds (the gem's
 * default `schedule_in`), as a new job the client middleware lets through.
 */
async function reschedule(c: ConflictContext): Promise<void> {
  const rec = JobRecord.parse(c.payload());
  for (const k of [
    "enqueued_at",
    "retry_count",
    "error_message",
    "error_class",
    "failed_at",
    "retried_at",
    "error_backtrace",
  ])
    rec.delete(k);
  rec.set("jid", newJid());
  const at = Date.now() / 1000 + 5;
  await c.redis.zadd(SCHEDULE_KEY, rubyFloatToS(at), rec.toString());
  c.cfg.logger.info(`Rescheduled ${c.lc.className} job ${c.lc.jid} as ${rec.getString("jid")} in 5 seconds`);
}
