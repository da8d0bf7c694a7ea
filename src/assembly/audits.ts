// What each add-on tells `migrate audit`, in registry order: its name, the
// check of its audit.ts, and the payload keys it writes (its markers' fields
// and its other keys). The migration tool takes this list as an argument and
// imports no add-on; only `migrate audit`, `contract export` and the
// "sidekiq-bridge/migration" entry load this module.
import { cronAudit } from "../addons/sidekiq-cron/audit.js";
import type { AuditAddon, AuditCheck } from "../tools/migration/extension.js";
import { proBatchesAudit } from "../addons/sidekiq-pro-batches/audit.js";
import { schedulerAudit } from "../addons/sidekiq-scheduler/audit.js";
import { throttledAudit } from "../addons/sidekiq-throttled/audit.js";
import { uniqueJobsAudit } from "../addons/sidekiq-unique-jobs/audit.js";
import { addons } from "./registry.js";

const AUDITS: Readonly<Record<string, AuditCheck>> = {
  cron: cronAudit as AuditCheck,
  uniqueJobs: uniqueJobsAudit as AuditCheck,
  proBatches: proBatchesAudit as AuditCheck,
  sidekiqScheduler: schedulerAudit as AuditCheck,
  throttled: throttledAudit as AuditCheck,
};

/** Every add-on as `migrate audit` sees it, in registry order. */
export function auditAddons(): AuditAddon[] {
  return addons().map((a) => ({
    name: a.name,
    check: AUDITS[a.name],
    payloadKeys: [...(a.markers ?? []).map((m) => m.field), ...(a.payloadKeys ?? [])],
  }));
}
