// A gate decides, once a job is fetched and before it runs, whether this
// worker may run it now (sidekiq-throttled's check in its fetcher is one):
// "run", "hand-back" (back to its queue for later or for another process,
// with the manager's bounded backoff), or "done" (the gate moved the job
// itself, e.g. to the schedule set, so the fetch is acknowledged).
import type { Redis } from "ioredis";
import type { JobRecord } from "../wire/job-record.js";

/** What a gate sees of a fetched job. */
export interface GateContext {
  jid: string;
  /** The class the job is routed by (`wrapped` for ActiveJob). */
  className: string;
  queue: string;
  record: JobRecord;
  /** The job as fetched. */
  job: string;
  redis: Redis;
}

export type GateVerdict = "run" | "hand-back" | "done";

export interface JobGate {
  /** For log lines. */
  readonly name: string;
  admit(job: GateContext): GateVerdict | Promise<GateVerdict>;
}

/**
 * The first verdict that is not "run", asking the gates in order. Synchronous
 * while the gates answer synchronously (a gate with nothing to check), so the
 * per-job path makes no promise for them.
 */
export function admit(gates: readonly JobGate[], job: GateContext, from = 0): GateVerdict | Promise<GateVerdict> {
  for (let i = from; i < gates.length; i++) {
    const v = gates[i]!.admit(job);
    if (typeof v !== "string") return v.then((r) => (r === "run" ? admit(gates, job, i + 1) : r));
    if (v !== "run") return v;
  }
  return "run";
}
