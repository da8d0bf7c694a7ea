// What `migrate audit` says about sidekiq-throttled. The gem writes nothing
// into the payload: a class's limits live in its Ruby code, and the only trace
// in Redis is its keys (`throttled:<class>:concurrency.v2`, `:threshold`),
// which exist while the class has jobs running or recently started. A queue
// holding jobs of a class with such keys, which Node has a handler for, gets
// a warning naming the throttle to give the Node worker. A warning and not a
// BLOCKED verdict: the audit cannot see whether the Node worker was given the
// throttle (a handlers module's `throttled` export is not read by it), and
// the keys prove a throttle only while they live, so a verdict built on them
// could neither be cleared by doing the fix nor be trusted when they are gone.
import type { Redis } from "ioredis";
import type { AuditCheck } from "../migration/audit-check.js";
import { concurrencyKey, strategyNameOf, THROTTLED_PATTERN, thresholdKey } from "./keys.js";

/** A throttle found in Redis: the keys of one strategy name (a class, or a shared throttle's name). */
export interface RubyThrottle {
  keys: string[];
}

/** Every strategy name with keys in Redis (SCAN, read-only). */
export async function rubyThrottles(redis: Redis): Promise<Map<string, RubyThrottle>> {
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

export function throttledAuditWarning(className: string, keys: readonly string[]): string {
  return (
    `${className} is throttled by sidekiq-throttled in Ruby (${keys.join(", ")} in Redis): a Node worker keeps ` +
    `its limits only when given the same throttle, throttled: { classes: { "${className}": { concurrency: ..., ` +
    `threshold: ... } } } as its sidekiq_throttle reads; without it Node runs ${className} unthrottled ` +
    `(${concurrencyKey(className)} and ${thresholdKey(className)} are the keys both sides share)`
  );
}

export const throttledAudit: AuditCheck<Map<string, RubyThrottle>> = {
  prepare: rubyThrottles,
  judgeQueue(audit, state, ctx) {
    const warnings = [...audit.warnings];
    for (const c of audit.classes) {
      const t = state.get(c.name);
      if (t && ctx.handled(c.name, c.activeJob)) warnings.push(throttledAuditWarning(c.name, t.keys));
    }
    return warnings.length === audit.warnings.length ? audit : { ...audit, warnings };
  },
};
