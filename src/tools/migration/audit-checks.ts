// Every check `migrate audit` runs besides its own: the add-ons' (as given,
// in registry order), then IterableJob's saved cursors and the job
// contract's, which are Sidekiq's and the bridge's own, not add-ons.
import { contractAuditCheck } from "../contract/audit-check.js";
import { iterableAudit } from "./iterable-audit.js";
import type { AuditAddon, AuditCheck } from "./extension.js";

export function auditChecks(addons: readonly AuditAddon[]): AuditCheck[] {
  return [...addons.flatMap((a) => (a.check ? [a.check] : [])), iterableAudit, contractAuditCheck];
}
