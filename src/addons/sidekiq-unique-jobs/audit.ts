// What `migrate audit` says about sidekiq-unique-jobs: a queue whose jobs
// carry locks is BLOCKED until the Node worker runs the unique-jobs
// middleware, or their locks would never be released.
import type { AuditCheck } from "../../tools/migration/extension.js";
import { isUniqueJobsMiddleware } from "./marker.js";

export const uniqueJobsAudit: AuditCheck = {
  onUse(mw, into) {
    if (typeof mw === "function" && isUniqueJobsMiddleware(mw as never)) into.uniqueJobs = true;
  },

  onOption(_option, into) {
    into.uniqueJobs = true;
  },

  /** Counts a job's lock by type, unless it is dead (a dead job's lock is gone). */
  countJob(u, record, where) {
    const lock = record.get("lock");
    if (where === "dead" || lock === undefined || lock === null || lock === false) return;
    u.locks ??= {};
    u.locks[String(lock)] = (u.locks[String(lock)] ?? 0) + 1;
  },

  judgeClass(c, out, handlers) {
    if (!c.locks || handlers.uniqueJobs) return undefined;
    const kinds = Object.entries(c.locks)
      .map(([t, n]) => `${n} with lock: ${t}`)
      .join(", ");
    out.reasons.push(
      `${c.name} jobs carry sidekiq-unique-jobs locks (${kinds}) but the Node worker does not run the unique-jobs middleware: their locks would never be released and later pushes rejected as duplicates (turn on uniqueJobs: the worker option uniqueJobs: true, or --unique-jobs 8 on the command line)`,
    );
    return undefined;
  },
};
