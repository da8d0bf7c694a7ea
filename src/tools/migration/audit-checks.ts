// Every check `migrate audit` runs besides its own: the add-ons' (in registry
// order), then IterableJob's saved cursors and the job contract's, which are
// Sidekiq's and the bridge's own, not add-ons.
import { addonAuditChecks } from "../../assembly/audits.js";
import { contractAuditCheck } from "../contract/audit-check.js";
import { iterableAudit } from "./iterable-audit.js";
import type { AuditCheck } from "./audit-check.js";

export function auditChecks(): AuditCheck[] {
  return [...addonAuditChecks(), iterableAudit, contractAuditCheck];
}
