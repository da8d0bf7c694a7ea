// `migrate audit`'s check of top-level payload keys: a key that neither
// Sidekiq nor a known add-on writes belongs to middleware this bridge does not
// know (Sidekiq Enterprise's unique jobs, Sentry's trace headers, an app's
// own). Node runs such jobs without that middleware, so each is listed as a
// warning per queue: not a block, since most such keys are harmless.
import { isSidekiqPayloadKey } from "../../core/wire/sidekiq-payload-keys.js";
import type { AuditAddon, AuditCheck } from "./extension.js";

/** How many keys of one class are listed at most (a payload with thousands of keys is itself the finding). */
const MAX_KEYS_PER_CLASS = 20;

export function unknownKeysAudit(addons: readonly AuditAddon[]): AuditCheck {
  const known = new Set(addons.flatMap((a) => a.payloadKeys));
  return {
    countJob(u, record, where) {
      if (where === "dead") return;
      for (const k of record.keys()) {
        if (isSidekiqPayloadKey(k) || known.has(k)) continue;
        u.unknownKeys ??= {};
        if (!(k in u.unknownKeys) && Object.keys(u.unknownKeys).length >= MAX_KEYS_PER_CLASS) continue;
        u.unknownKeys[k] = (u.unknownKeys[k] ?? 0) + 1;
      }
    },

    judgeQueue(audit) {
      const warnings = [...audit.warnings];
      for (const c of audit.classes) {
        if (!c.unknownKeys) continue;
        const keys = Object.entries(c.unknownKeys)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([k, n]) => `${k} (${n})`)
          .join(", ");
        warnings.push(
          `${c.name} jobs carry top-level keys that neither Sidekiq nor a known add-on writes: ${keys}; Node runs them without the middleware that wrote them`,
        );
      }
      return warnings.length === audit.warnings.length ? audit : { ...audit, warnings };
    },
  };
}
