// The add-ons a worker, the CLI and `migrate audit` know: one line each.
// Adding an add-on means its folder (with an addon.ts, see addon.ts and
// docs/ADDONS.md) and its line here; its WorkerOptions entry, its flag, its
// payload markers, its audit check and its commands follow from the entry.
import { cronAddon } from "../cron/addon.js";
import { iterableAddon } from "../iterable/addon.js";
import { proBatchesAddon } from "../pro-batches/addon.js";
import type { AuditCheck } from "../migration/audit-check.js";
import { contractAuditCheck } from "../contract/audit-check.js";
import { tracingAddon } from "../tracing/addon.js";
import { uniqueJobsAddon } from "../unique-jobs/addon.js";
import { throttledAddon } from "../throttled/addon.js";
import { sidekiqSchedulerAddon } from "../scheduler/addon.js";
import type { Addon, CommandModule } from "./addon.js";

export const ADDONS = [
  cronAddon,
  uniqueJobsAddon,
  iterableAddon,
  proBatchesAddon,
  tracingAddon,
  sidekiqSchedulerAddon,
  throttledAddon,
] as const;

type OptionOf<A> = A extends Addon<infer O, string> ? O : never;

/** Each add-on's WorkerOptions entry, by its name (`cron`, `uniqueJobs`); add-ons without an option have none. */
export type AddonOptions = {
  [A in (typeof ADDONS)[number] as [OptionOf<A>] extends [never] ? never : A["name"]]?: OptionOf<A>;
};

/** Every add-on as the plain interface, for code that treats them alike. */
export function addons(): ReadonlyArray<Addon<unknown>> {
  return ADDONS as ReadonlyArray<Addon<never>> as ReadonlyArray<Addon<unknown>>;
}

/** The add-ons' `migrate audit` checks, in registry order, then the job contract's. */
export function auditChecks(): AuditCheck[] {
  return [...addons().flatMap((a) => (a.audit ? [a.audit] : [])), contractAuditCheck];
}

/** The commands add-ons contribute to `sidekiq-bridge`, by name. */
export function addonCommands(): Record<string, () => Promise<CommandModule>> {
  return Object.assign({}, ...addons().map((a) => a.commands ?? {})) as Record<string, () => Promise<CommandModule>>;
}
