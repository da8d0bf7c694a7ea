// What each add-on tells `migrate audit`, in registry order: the audit checks
// of the add-ons' audit.ts files. Only `migrate audit` loads this module.
import { cronAudit } from "../addons/sidekiq-cron/audit.js";
import type { AuditCheck } from "../tools/migration/audit-check.js";
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

/** The add-ons' `migrate audit` checks, in registry order. */
export function addonAuditChecks(): AuditCheck[] {
  return addons().flatMap((a) => (AUDITS[a.name] ? [AUDITS[a.name]!] : []));
}

/** The `migrate audit` check of the add-on named `name`, if it has one. */
export function addonAuditCheckOf(name: string): AuditCheck | undefined {
  return AUDITS[name];
}
