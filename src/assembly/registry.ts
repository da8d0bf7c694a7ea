// The add-ons a worker, the CLI, the dashboard and `migrate audit` know: one
// entry each, all data (src/addons/addon.ts). Adding an add-on means its folder
// (with an addon.ts, see docs/ADDONS.md), its line here, and where it runs or audits,
// its line in installers.ts and audits.ts; its WorkerOptions entry, its flag,
// its payload markers, its tab and its commands follow from the entry.
import { cronAddon } from "../addons/sidekiq-cron/addon.js";
import { proBatchesAddon } from "../addons/sidekiq-pro-batches/addon.js";
import { tracingAddon } from "./tracing-addon.js";
import { uniqueJobsAddon } from "../addons/sidekiq-unique-jobs/addon.js";
import { throttledAddon } from "../addons/sidekiq-throttled/addon.js";
import { sidekiqSchedulerAddon } from "../addons/sidekiq-scheduler/addon.js";
import type { Addon } from "../addons/addon.js";
import type { CommandModule } from "../tools/cli/extension.js";
import type { WebTab } from "../tools/web/extension.js";

export const ADDONS = [
  cronAddon,
  uniqueJobsAddon,
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

/** The commands add-ons contribute to `sidekiq-bridge`, by name. */
export function addonCommands(): Record<string, () => Promise<CommandModule>> {
  return Object.assign({}, ...addons().map((a) => a.commands ?? {})) as Record<string, () => Promise<CommandModule>>;
}

/** The dashboard tabs add-ons contribute, each named by its add-on (its `WebOptions.extensions` key). */
export function webTabs(): WebTab[] {
  return addons().flatMap((a) => (a.web ? [{ name: a.name, ...a.web }] : []));
}
