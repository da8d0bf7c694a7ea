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
  raw: string;
  redis: Redis;
}

export type GateVerdict = "run" | "hand-back" | "done";

export interface JobGate {
  /** For log lines. */
  readonly name: string;
  admit(job: GateContext): GateVerdict | Promise<GateVerdict>;
}

/** The first verdict that is not "run", asking the gates in order. */
export async function admit(gates: readonly JobGate[], job: GateContext): Promise<GateVerdict> {
  for (const g of gates) {
    const v = await g.admit(job);
    if (v !== "run") return v;
  }
  return "run";
}
