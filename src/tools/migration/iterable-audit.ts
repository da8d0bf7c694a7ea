// What `migrate audit` says about IterableJob: a class whose jobs carry a
// saved cursor (`it-<jid>`) needs an iterable Node handler, or Node would run
// them from the first item again and leave the state behind.
import type { AuditCheck } from "./extension.js";
import type { ClassUsage } from "./extension.js";
import { iterationKey } from "../../core/wire/keys.js";

export const iterableAudit: AuditCheck = {
  initUsage(u, handlers) {
    u.iterating = 0;
    u.iterableHandler = !u.activeJob && !!handlers.iterableClasses?.has(u.name);
  },

  // The IterableJob state of the jobs of a page, counted on their class (read-only EXISTS).
  async countPage(redis, jobs) {
    const pipe = redis.pipeline();
    for (const [jid] of jobs) pipe.exists(iterationKey(jid));
    const res = (await pipe.exec()) ?? [];
    jobs.forEach(([, u]: readonly [string, ClassUsage], i) => {
      if (res[i]?.[1] === 1) u.iterating = (u.iterating ?? 0) + 1;
    });
  },

  judgeClass(c, out) {
    if (!c.iterating || c.iterableHandler) return undefined;
    const label = c.activeJob ? `${c.name} (ActiveJob)` : c.name;
    const saved = `${c.iterating} job(s) with a saved IterableJob cursor (it-<jid>)`;
    if (c.handled) {
      // A plain handler would run them from the first item again and leave the state behind.
      out.missing.push(c.name);
      out.reasons.push(`${label} has ${saved} but its Node handler is not iterable: register it with registerIterable`);
      return "decided";
    }
    out.warnings.push(`${label} is an IterableJob (${saved}): its Node handler must use registerIterable`);
    return undefined;
  },
};
