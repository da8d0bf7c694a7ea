// What a handlers module registers, read without a Redis connection, for
// `migrate audit`: the classes Node can run and the add-ons it turns on.
import type { AuditAddon } from "./extension.js";
import { auditChecks } from "./audit-checks.js";
import type { NodeHandlers } from "./extension.js";

export function emptyHandlers(): NodeHandlers {
  return { classes: new Set(), activeJobClasses: new Set(), iterableClasses: new Set() };
}

/**
 * Records what a handlers module registers, without a Redis connection: the
 * same module shape `sidekiq-bridge worker -r` loads (a default-export
 * function receiving the Worker, or an object of handlers by class name).
 * Calls other than register/registerActiveJob (use, onDeath, ...) are accepted
 * and ignored. `addons` are the add-ons the worker knows (src/assembly/audits.ts).
 */
export async function collectHandlers(
  moduleExport: unknown,
  into: NodeHandlers,
  addons: readonly AuditAddon[],
): Promise<NodeHandlers> {
  const mod = moduleExport as { default?: unknown } | undefined;
  const checks = auditChecks(addons);
  for (const check of checks) check.onModule?.(moduleExport, into);
  // Add-ons the module turns on under their option names (`export const uniqueJobs = true`), as the worker reads them.
  if (mod && typeof mod === "object")
    for (const a of addons) {
      const option = (mod as Record<string, unknown>)[a.name];
      if (option !== undefined && option !== false) a.check?.onOption?.(option, into);
    }
  const exp =
    mod && typeof mod === "object" && "default" in mod && mod.default !== undefined ? mod.default : moduleExport;
  if (typeof exp === "function") {
    const recorder: object = new Proxy(
      {},
      {
        get(_t, prop) {
          if (prop === "register")
            return (name: unknown, _handler: unknown, options: unknown) => {
              into.classes.add(String(name));
              for (const check of checks) check.onRegister?.(String(name), options, into);
              return recorder;
            };
          if (prop === "registerIterable")
            return (name: unknown) => {
              into.classes.add(String(name));
              (into.iterableClasses ??= new Set()).add(String(name));
              return recorder;
            };
          if (prop === "registerActiveJob")
            return (name: unknown) => (into.activeJobClasses.add(String(name)), recorder);
          if (prop === "use")
            return (mw: unknown) => {
              for (const check of checks) check.onUse?.(mw, into);
              return recorder;
            };
          if (prop === "then") return undefined; // not a thenable
          if (typeof prop === "symbol") return undefined;
          return () => recorder;
        },
      },
    );
    await (exp as (w: unknown) => unknown)(recorder);
  } else if (exp && typeof exp === "object") {
    for (const [name, fn] of Object.entries(exp))
      if (typeof fn === "function" && name !== "logger" && !addons.some((a) => a.name === name)) into.classes.add(name);
  } else {
    throw new Error("the handlers module exports neither a function nor an object of handlers");
  }
  return into;
}
