// sidekiq.yml as Sidekiq reads it, for its `:scheduler:` section: the file as
// is (YAML; keys with or without Ruby's leading colon, as Sidekiq symbolizes
// them), with the environment's section (`production:`) merged over the top
// level as Sidekiq's CLI does. ERB (`<%= %>`) is Ruby's: a file using it is
// refused with a clear error rather than read wrong.
import { readFile } from "node:fs/promises";
import type { ScheduleConfig } from "./schedule-entry.js";
import type { SidekiqSchedulerSettings } from "./poller.js";

/** A sidekiq.yml Node cannot read as Sidekiq would (ERB, not YAML, a section of the wrong shape). */
export class SidekiqYmlError extends Error {
  override name = "SidekiqYmlError";
}

type Plain = Record<string, unknown>;

/** Sidekiq's deep symbolize: `:scheduler` and `scheduler` are one key. */
function symbolized(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(symbolized);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.entries(v as Plain).map(([k, x]) => [k.startsWith(":") ? k.slice(1) : k, symbolized(x)]),
  );
}

function isPlain(v: unknown): v is Plain {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * The scheduler's settings from the text of a sidekiq.yml: its `scheduler`
 * section (`schedule`, `dynamic`, `dynamic_every`, `enabled`), after the
 * `environment` section (default: RAILS_ENV, then RACK_ENV, then
 * "development", as Sidekiq's CLI picks it) is merged over the top level.
 */
export async function schedulerSettingsFromSidekiqYml(
  text: string,
  environment = process.env.RAILS_ENV ?? process.env.RACK_ENV ?? "development",
): Promise<SidekiqSchedulerSettings> {
  if (/<%/.test(text))
    throw new SidekiqYmlError(
      "this sidekiq.yml uses ERB (<% %>), which only Ruby can evaluate: give Node the rendered file (e.g. `ruby -rerb -e 'puts ERB.new(File.read(\"config/sidekiq.yml\")).result'`)",
    );
  const { parse } = await import("yaml");
  let doc: unknown;
  try {
    doc = symbolized(parse(text));
  } catch (e) {
    throw new SidekiqYmlError(`sidekiq.yml is not YAML: ${(e as Error).message}`, { cause: e });
  }
  if (doc === null || doc === undefined) return {};
  if (!isPlain(doc)) throw new SidekiqYmlError("sidekiq.yml must hold a mapping of Sidekiq's options");
  const env = doc[environment];
  const opts: Plain = { ...doc, ...(isPlain(env) ? env : {}) };
  const section = opts.scheduler;
  if (section === undefined) return {};
  if (!isPlain(section)) throw new SidekiqYmlError("sidekiq.yml's :scheduler: must be a mapping");
  const settings: SidekiqSchedulerSettings = {};
  if (section.schedule !== undefined) {
    if (!isPlain(section.schedule)) throw new SidekiqYmlError("sidekiq.yml's :scheduler: :schedule: must be a mapping");
    settings.schedule = section.schedule as Record<string, ScheduleConfig>;
  }
  if (typeof section.dynamic === "boolean") settings.dynamic = section.dynamic;
  if (typeof section.dynamic_every === "string" || typeof section.dynamic_every === "number")
    settings.dynamicEvery = section.dynamic_every;
  if (typeof section.enabled === "boolean") settings.enabled = section.enabled;
  return settings;
}

/** The scheduler's settings from a sidekiq.yml file (see schedulerSettingsFromSidekiqYml). */
export async function schedulerSettingsFromFile(path: string, environment?: string): Promise<SidekiqSchedulerSettings> {
  return schedulerSettingsFromSidekiqYml(await readFile(path, "utf8"), environment);
}
