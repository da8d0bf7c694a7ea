// What `migrate audit` says about Sidekiq Pro batches: a queue whose jobs
// carry a batch id stays BLOCKED, since Node cannot take part in a batch
// whose formats are closed (nothing here can prove it would work).
import type { AuditCheck } from "../../tools/migration/extension.js";
import { truthy } from "../../core/wire/sidekiq-constants.js";

export const proBatchesAudit: AuditCheck = {
  countJob(u, record, where) {
    if (where === "dead" || !truthy(record.get("bid"))) return;
    u.batches = (u.batches ?? 0) + 1;
  },

  judgeClass(c, out) {
    if (!c.batches) return undefined;
    out.reasons.push(
      `${c.name} has ${c.batches} job(s) in Sidekiq Pro batches (bid): Node cannot update a batch (Sidekiq Pro's formats are closed and cannot be proven here), so its callbacks would never run; leave this queue to Ruby while batches use it`,
    );
    return undefined;
  },
};
