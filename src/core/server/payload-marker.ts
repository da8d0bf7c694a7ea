// Top-level payload fields an add-on writes (sidekiq-unique-jobs' `lock`, a
// Sidekiq Pro batch's `bid`): a job carrying one belongs to that add-on too.
// The worker is handed the markers of the add-ons it does NOT run. By default
// such a job is handed back to its queue for a process that runs the add-on
// (never run in a way that breaks it); where the user opted out for that
// add-on, it runs and the worker says once what that breaks.
import type { JobRecord } from "../wire/job-record.js";
import { truthy } from "../wire/sidekiq-constants.js";

export interface PayloadMarker {
  /** The top-level payload key. */
  field: string;
  /** The add-on (gem) that writes it. */
  addon: string;
  /** true: hand such a job back to its queue; false: run it anyway (the user opted out). */
  handBack: boolean;
  /** The log line: what running the job without the add-on breaks, and how to turn support on. */
  message: string;
}

/** The first marker the job carries (a Ruby-truthy value), if any. */
export function markerOf(record: JobRecord, markers: readonly PayloadMarker[]): PayloadMarker | undefined {
  for (const m of markers) if (truthy(record.get(m.field))) return m;
  return undefined;
}
