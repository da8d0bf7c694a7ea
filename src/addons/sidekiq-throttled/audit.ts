// What `migrate audit` says about sidekiq-throttled. The gem writes nothing
// into the payload: a class's limits live in its Ruby code, and the only trace
// in Redis is its keys (`throttled:<class>:concurrency.v2`, `:threshold`),
// which exist while the class has jobs running or recently started. A queue
// holding jobs of a class with such keys, which Node has a handler for but no
// throttle (the handlers module's `throttled` export names none for it), is
// BLOCKED: moved to Node as it is, the class would run without the limit
// that protects whatever it calls, and nothing would say so. The fix (the
// throttle in the handlers module) clears it. The keys prove a throttle only
// while they live: a class whose keys have expired is not caught
// (docs/THROTTLED.md says so).
import type { Redis } from "ioredis";
import type { AuditCheck, QueueAudit } from "../../tools/migration/extension.js";
import { strategyNameOf, THROTTLED_PATTERN } from "./keys.js";

/** A throttle found in Redis: the keys of one strategy name (a class, or a shared throttle's name). */
export interface RubyThrottle {
  keys: string[];
}

/** Every strategy name with keys in Redis (SCAN, read-only). */
async function rubyThrottles(redis: Redis): Promise<Map<string, RubyThrottle>> {
  const out = new Map<string, RubyThrottle>();
  let cursor = "0";
  do {
    const [next, batch] = await redis.scan(cursor, "MATCH", THROTTLED_PATTERN, "COUNT", 1000);
    cursor = next;
    for (const key of batch) {
      const name = strategyNameOf(key);
      if (name === undefined) continue;
      const t = out.get(name) ?? { keys: [] };
      t.keys.push(key);
      out.set(name, t);
    }
  } while (cursor !== "0");
  for (const t of out.values()) t.keys.sort();
  return out;
}

// The add-on's own fields on the audit's records (declared here, filled by this check).
declare module "../../tools/migration/extension.js" {
  interface NodeHandlers {
    /** sidekiq-throttled: the classes the handlers module's `throttled` export gives a throttle. */
    throttledClasses?: Set<string>;
  }
  interface ClassUsage {
    /** sidekiq-throttled: the Node worker has a throttle for this class. */
    nodeThrottle?: boolean;
  }
}

function unthrottledReason(className: string, keys: readonly string[]): string {
  return (
    `${className} is throttled by sidekiq-throttled in Ruby (${keys.join(", ")} in Redis) but the Node worker has ` +
    `no throttle for it, so Node would run it without the limit: export throttled = { classes: { "${className}": ` +
    `{ concurrency: { limit: ... }, threshold: { limit: ..., period: ... } } } } from the handlers module, with ` +
    `the limits of the class's sidekiq_throttle (docs/THROTTLED.md)`
  );
}

/** The classes an exported `throttled` option names (read as the worker reads it, without checking it). */
function throttledClasses(option: unknown): Set<string> {
  const classes = option && typeof option === "object" ? (option as { classes?: unknown }).classes : undefined;
  return new Set(classes && typeof classes === "object" ? Object.keys(classes) : []);
}

function judge(audit: QueueAudit, state: Map<string, RubyThrottle>, handled: (c: string, aj: boolean) => boolean) {
  const reasons = [...audit.reasons];
  const missing = [...audit.missing];
  for (const c of audit.classes) {
    const t = state.get(c.name);
    if (!t || c.nodeThrottle || !handled(c.name, c.activeJob)) continue;
    reasons.push(unthrottledReason(c.name, t.keys));
    if (!missing.includes(c.name)) missing.push(c.name);
  }
  if (reasons.length === audit.reasons.length) return audit;
  return { ...audit, reasons, missing, verdict: "BLOCKED" as const };
}

export const throttledAudit: AuditCheck<Map<string, RubyThrottle>> = {
  prepare: rubyThrottles,
  onOption(option, into) {
    into.throttledClasses = throttledClasses(option);
  },
  initUsage(usage, handlers) {
    if (handlers.throttledClasses?.has(usage.name)) usage.nodeThrottle = true;
  },
  judgeQueue: (audit, state, ctx) => judge(audit, state, ctx.handled),
};
