// sidekiq-scheduler's Redis side (RedisManager, Schedule and the toggles of
// Scheduler), for the Node scheduler, the `schedule` command and the
// dashboard tab: read every schedule (one unreadable entry does not hide the
// others), set or remove one as `Sidekiq.set_schedule` does, toggle it as the
// Web UI does, and enqueue it now.
import type { Redis } from "ioredis";
import type { Client } from "../../core/client/client.js";
import { toRubyJson, type RubyJsonValue } from "../../core/wire/ruby-json.js";
import { enqueueSchedule, type EnqueueOptions } from "./enqueue.js";
import { schedulerKeys, type SchedulerKeys } from "./keys.js";
import { parseEntry, type ScheduleConfig, type ScheduleEntry } from "./schedule-entry.js";

export interface Unreadable {
  name: string;
  error: string;
}

export interface ScheduleListing {
  entries: ScheduleEntry[];
  unreadable: Unreadable[];
}

function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => sameJson(x, b[i]));
  }
  if (a && b && typeof a === "object" && typeof b === "object") {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => k in b && sameJson((a as ScheduleConfig)[k], (b as ScheduleConfig)[k]));
  }
  return a === b;
}

export interface SchedulerApiOptions extends EnqueueOptions {
  redis: Redis;
  /** Needed only to enqueue. */
  client?: Client;
  keyPrefix?: string;
  now?: () => number;
}

export class SchedulerApi {
  readonly keys: SchedulerKeys;
  private readonly redis: Redis;

  constructor(private readonly options: SchedulerApiOptions) {
    this.redis = options.redis;
    this.keys = schedulerKeys(options.keyPrefix);
  }

  private now(): number {
    return this.options.now ? this.options.now() : Date.now();
  }

  /** `Sidekiq.schedule!` (get_all_schedules), by name; entries that are not JSON objects are listed apart. */
  async list(): Promise<ScheduleListing> {
    const all = await this.redis.hgetall(this.keys.schedules);
    const out: ScheduleListing = { entries: [], unreadable: [] };
    for (const name of Object.keys(all).sort()) {
      try {
        out.entries.push(parseEntry(name, all[name]!));
      } catch (e) {
        out.unreadable.push({ name, error: (e as Error).message });
      }
    }
    return out;
  }

  /** `Sidekiq.get_schedule(name)`; undefined when absent. Throws when its value cannot be read. */
  async find(name: string): Promise<ScheduleEntry | undefined> {
    const raw = await this.redis.hget(this.keys.schedules, name);
    return raw === null ? undefined : parseEntry(name, raw);
  }

  /** `Sidekiq.set_schedule`: writes the config and records the change, unless Redis holds an equal one. */
  async set(name: string, config: ScheduleConfig): Promise<boolean> {
    const raw = await this.redis.hget(this.keys.schedules, name);
    if (raw !== null) {
      try {
        if (sameJson(JSON.parse(raw), config)) return false;
      } catch {
        // An unreadable value is replaced.
      }
    }
    await this.redis
      .multi()
      .hset(this.keys.schedules, name, toRubyJson(config as RubyJsonValue))
      .zadd(this.keys.schedulesChanged, String(this.now() / 1000), name)
      .exec();
    return true;
  }

  /** `Sidekiq.remove_schedule`: deletes it and records the change. */
  async remove(name: string): Promise<void> {
    await this.redis
      .multi()
      .hdel(this.keys.schedules, name)
      .zadd(this.keys.schedulesChanged, String(this.now() / 1000), name)
      .exec();
  }

  /** `Sidekiq.schedule = hash`: sets each, then removes the names Redis held beyond them. */
  async replaceAll(schedule: Record<string, ScheduleConfig>): Promise<void> {
    const before = await this.redis.hkeys(this.keys.schedules);
    for (const [name, config] of Object.entries(schedule)) await this.set(name, config);
    for (const name of before) if (!(name in schedule)) await this.remove(name);
  }

  /** The toggled state (`sidekiq-scheduler:states`), `{}` when never toggled. Throws when it is not JSON. */
  async state(name: string): Promise<{ enabled?: unknown }> {
    const raw = await this.redis.hget(this.keys.states, name);
    return raw === null ? {} : (JSON.parse(raw) as { enabled?: unknown });
  }

  /** `job_enabled?`: the toggled state, else the config's `enabled`, else true. */
  async isEnabled(entry: ScheduleEntry): Promise<boolean> {
    const s = await this.state(entry.name);
    return "enabled" in s ? s.enabled !== false && s.enabled !== null : entry.enabledInConfig;
  }

  private async setState(name: string, enabled: boolean): Promise<void> {
    const s = await this.state(name).catch(() => ({}));
    await this.redis.hset(this.keys.states, name, toRubyJson({ ...s, enabled } as RubyJsonValue));
  }

  /** `toggle_job_enabled`: flips it; returns the new state, or undefined when there is no such schedule. */
  async toggle(name: string): Promise<boolean | undefined> {
    const entry = await this.find(name);
    if (!entry) return undefined;
    const enabled = !(await this.isEnabled(entry));
    await this.setState(name, enabled);
    return enabled;
  }

  /** Enables or disables one schedule (toggling only when it differs, as the Web UI's button does). */
  async setEnabled(name: string, enabled: boolean): Promise<boolean> {
    const entry = await this.find(name);
    if (!entry) return false;
    if ((await this.isEnabled(entry)) !== enabled) await this.setState(name, enabled);
    return true;
  }

  /** `toggle_all_jobs`: every schedule of the `schedules` hash. */
  async setAllEnabled(enabled: boolean): Promise<void> {
    for (const name of await this.redis.hkeys(this.keys.schedules)) await this.setState(name, enabled);
  }

  /** The last and next trigger times (the gem's strings), by name. */
  async times(): Promise<{ last: Record<string, string>; next: Record<string, string> }> {
    const [last, next] = await Promise.all([
      this.redis.hgetall(this.keys.lastTimes),
      this.redis.hgetall(this.keys.nextTimes),
    ]);
    return { last, next };
  }

  /** The Web UI's "Enqueue now" (`enqueue_job(schedule)`): pushes it without a claim; returns the jid. */
  async enqueue(name: string): Promise<string | null> {
    if (!this.options.client) throw new Error("SchedulerApi needs a client to enqueue");
    const entry = await this.find(name);
    if (!entry) throw new Error(`no schedule named ${JSON.stringify(name)}`);
    return enqueueSchedule(this.options.client, entry, this.now(), this.options);
  }
}
