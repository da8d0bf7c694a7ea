// One sidekiq-scheduler schedule as the gem reads it from the `schedules`
// hash (or from sidekiq.yml's `:scheduler: :schedule:` map): its kind
// (`Scheduler#load_schedule_job`: the first of cron, every, at, in, interval
// that is present and not empty), the class it enqueues, its queue, whether
// its config enables it and whether it is meant for this RAILS_ENV.
import { SCHEDULE_TYPES, ScheduleSyntaxError, timingFor, type ScheduleType, type Timing } from "./timing.js";

/** A schedule's config: the gem's keys (`class`, `args`, `queue`, a kind...) and any Sidekiq job option. */
export type ScheduleConfig = { [key: string]: unknown };

/** The keys the gem strips before pushing (Utils::RUFUS_METADATA_KEYS). */
export const RUFUS_METADATA_KEYS = ["description", "at", "cron", "every", "in", "interval", "enabled"] as const;

export interface ScheduleEntry {
  name: string;
  config: ScheduleConfig;
  /** Its kind, or undefined when none is given (the gem skips it: "no cron / every / ... found"). */
  type?: ScheduleType;
  /** The kind's value as written ("0 5 * * *", "1m", ["1m", {first_in: "5s"}]). */
  value?: unknown;
  /** The class it enqueues, or undefined when missing (Sidekiq::Client.push refuses it on every fire). */
  className?: string;
  /** `queue`, or "default" as the Web UI shows it. */
  queue: string;
  description?: string;
  /** `enabled` in its config (a toggle in `sidekiq-scheduler:states` overrides it). */
  enabledInConfig: boolean;
}

function isLength(v: unknown): boolean {
  // Ruby's `!v.nil? && v.length > 0`: strings and arrays (a Hash too).
  if (typeof v === "string" || Array.isArray(v)) return v.length > 0;
  if (v && typeof v === "object") return Object.keys(v).length > 0;
  return false;
}

/** Reads a config; throws ScheduleSyntaxError when it is not a JSON object. */
export function readEntry(name: string, config: unknown): ScheduleEntry {
  if (!config || typeof config !== "object" || Array.isArray(config))
    throw new ScheduleSyntaxError(`its config is not a JSON object: ${JSON.stringify(config)}`);
  const c = config as ScheduleConfig;
  const type = SCHEDULE_TYPES.find((t) => c[t] !== undefined && c[t] !== null && isLength(c[t]));
  return {
    name,
    config: c,
    ...(type ? { type, value: c[type] } : {}),
    ...(typeof c.class === "string" && c.class !== "" ? { className: c.class } : {}),
    queue: c.queue === undefined || c.queue === null ? "default" : String(c.queue),
    ...(typeof c.description === "string" ? { description: c.description } : {}),
    enabledInConfig: c.enabled === undefined || c.enabled === null ? true : c.enabled !== false,
  };
}

/** Parses a `schedules` hash value (JSON text) into an entry; throws on non-JSON or a non-object. */
export function parseEntry(name: string, json: string): ScheduleEntry {
  let config: unknown;
  try {
    config = JSON.parse(json);
  } catch (e) {
    throw new ScheduleSyntaxError(`its value is not JSON (${(e as Error).message}): ${json.slice(0, 200)}`);
  }
  return readEntry(name, config);
}

/** `rails_env_matches?`: an entry with `rails_env` runs only where RAILS_ENV is one of its comma-separated names. */
export function railsEnvMatches(entry: ScheduleEntry, railsEnv = process.env.RAILS_ENV): boolean {
  const want = entry.config.rails_env;
  if (want === undefined || want === null) return true;
  if (!railsEnv || typeof want !== "string") return false;
  return want.replace(/\s/g, "").split(",").includes(railsEnv);
}

/** The interval the Web UI shows (JobPresenter#interval): cron, interval, every, at, then in. */
export function intervalOf(entry: ScheduleEntry): string {
  for (const k of ["cron", "interval", "every", "at", "in"]) {
    const v = entry.config[k];
    if (v !== undefined && v !== null && v !== false) return typeof v === "string" ? v : JSON.stringify(v);
  }
  return "";
}

/** What stops an entry from firing on a Node scheduler, or [] when it can be loaded at `now`. */
export function entryProblems(entry: ScheduleEntry, now: number): string[] {
  const out: string[] = [];
  if (!entry.type) out.push(`no ${SCHEDULE_TYPES.join(" / ")} found`);
  else
    try {
      timingFor(entry.type, entry.value, now);
    } catch (e) {
      out.push((e as Error).message);
    }
  if (!entry.className) out.push("no class (Sidekiq::Client.push refuses a job without one)");
  return out;
}

/** Its clock at `now` (null: an `at` already past). Throws ScheduleSyntaxError for a bad expression. */
export function entryTiming(entry: ScheduleEntry, now: number): Timing | null {
  if (!entry.type) throw new ScheduleSyntaxError(`no ${SCHEDULE_TYPES.join(" / ")} found`);
  return timingFor(entry.type, entry.value, now);
}

/**
 * `Schedule#prepare_schedule`, for a static schedule: string keys, and the
 * schedule's name as its class when it has none. (Ruby also infers `queue`
 * from the class's sidekiq_options, which Node cannot read.)
 */
export function prepareStatic(schedule: Record<string, ScheduleConfig>): Record<string, ScheduleConfig> {
  const out: Record<string, ScheduleConfig> = {};
  for (const [name, spec] of Object.entries(schedule)) out[name] = { ...spec, class: spec.class ?? name };
  return out;
}
