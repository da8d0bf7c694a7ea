// Top-level payload fields an add-on writes (sidekiq-unique-jobs' `lock`, a
// Sidekiq Pro batch's `bid`): a job carrying one belongs to that add-on too.
// The worker is handed the markers of the add-ons it does NOT run, and says
// so once per marker, so a job is never run blindly without anyone knowing.
import type { JobRecord } from "../wire/job-record.js";
import { truthy } from "../wire/sidekiq-constants.js";

export interface PayloadMarker {
  /** The top-level payload key. */
  field: string;
  /** The add-on (gem) that writes it. */
  addon: string;
  /** What running the job without the add-on breaks, and how to turn support on. */
  warning: string;
}

/** The first marker the job carries (a Ruby-truthy value), if any. */
export function markerOf(record: JobRecord, markers: readonly PayloadMarker[]): PayloadMarker | undefined {
  for (const m of markers) if (truthy(record.get(m.field))) return m;
  return undefined;
}
