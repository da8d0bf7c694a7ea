// Enqueue jobs that Rails' ActiveJob performs: the Sidekiq wrapper payload,
// with args[0] in ActiveJob's `serialize` shape and its argument markers.
import { randomUUID } from "node:crypto";
import { AjDuration, AjModule, AjRange, AjSerialized, GlobalIdRef, railsWrote } from "../wire/activejob-values.js";
import { BIG_DECIMAL_MAX_EXPONENT, bigDecimalString } from "../wire/big-decimal.js";
import { tzinfoName, zoneOffsetSeconds, zoneSpelledLike } from "../wire/rails-time-zones.js";
import { rubyIso8601, splitInstant, type AjInstant } from "../wire/ruby-time.js";
import { releaseRules } from "../wire/release-rules.js";
import { RubyFloat, type RubyJsonValue } from "../wire/ruby-json.js";
import type { Client } from "./client-types.js";
import { scheduleAt } from "./job.js";
import { DEFAULT_JOB_OPTIONS, type JobOptions, type PushItem } from "./normalize.js";

/** An argument already in ActiveJob's serialized form (made by the `aj` helpers). */
export class AjValue {
  constructor(readonly json: RubyJsonValue) {}
}

declare const kwargsOf: unique symbol;
/** What `aj.kwargs(h)` makes: keyword arguments, typed by what they hold (so generated contract types can check them). */
export type AjKwargs<T> = AjValue & { readonly [kwargsOf]?: T };

/** An argument ActiveJob cannot serialize (ActiveJob::SerializationError in Ruby). */
export class ActiveJobSerializationError extends Error {
  override name = "ActiveJobSerializationError";
}

const RESERVED = new Set([
  "_aj_globalid",
  "_aj_symbol_keys",
  "_aj_ruby2_keywords",
  "_aj_hash_with_indifferent_access",
  "_aj_serialized",
]);

export type { AjInstant };

/** Ruby's `Time#iso8601(9)` for a UTC time. */
export function iso8601Nanos(d: AjInstant): string {
  return rubyIso8601(d, "Z");
}

function serializeHash(obj: Record<string, unknown>): { [k: string]: RubyJsonValue } {
  const out: { [k: string]: RubyJsonValue } = {};
  for (const [k, v] of Object.entries(obj)) {
    if (RESERVED.has(k))
      throw new ActiveJobSerializationError(`Can't serialize a Hash with reserved key ${JSON.stringify(k)}`);
    out[k] = serializeArgument(v);
  }
  return out;
}

/** ActiveJob::Arguments.serialize for one JavaScript value. */
export function serializeArgument(v: unknown): RubyJsonValue {
  if (v instanceof AjValue) return v.json;
  if (v === null || typeof v === "string" || typeof v === "boolean" || typeof v === "bigint" || v instanceof RubyFloat)
    return v;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new ActiveJobSerializationError(`${v} cannot be serialized for ActiveJob`);
    return v;
  }
  if (v instanceof Date) return aj.time(v).json;
  // What a handler received from Rails goes back as Rails wrote it: a Range
  // or Duration decoded from Rails keeps its bytes (Dates, zones, floats).
  if (v instanceof AjRange || v instanceof AjDuration) {
    const wrote = railsWrote(v);
    if (wrote !== undefined) return wrote;
  }
  if (v instanceof GlobalIdRef) return aj.globalId(v.gid).json;
  if (v instanceof AjSerialized) return v.raw;
  if (v instanceof AjDuration) return aj.duration(v.seconds, v.parts).json;
  if (v instanceof AjRange) return aj.range(v.begin, v.end, v.excludeEnd).json;
  if (v instanceof AjModule) return aj.module(v.name).json;
  if (Array.isArray(v)) return v.map(serializeArgument);
  if (typeof v === "object" && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)) {
    // A Ruby Hash with String keys: ActiveJob marks it with an empty symbol-key list.
    return { ...serializeHash(v as Record<string, unknown>), _aj_symbol_keys: [] };
  }
  throw new ActiveJobSerializationError(
    `Unsupported argument type: ${v === undefined ? "undefined" : (Object.getPrototypeOf(v)?.constructor?.name ?? typeof v)}`,
  );
}

export function serializeArguments(args: readonly unknown[]): RubyJsonValue[] {
  return args.map(serializeArgument);
}

/** Ruby's CGI.escape, as GlobalID escapes ids: all but [A-Za-z0-9_.~-] as %XX, a space as "+". */
function cgiEscape(v: string | number): string {
  return encodeURIComponent(String(v))
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, "+");
}

const serialized = (serializer: string, value: RubyJsonValue, more: { [k: string]: RubyJsonValue } = {}) =>
  new AjValue({ _aj_serialized: `ActiveJob::Serializers::${serializer}`, value, ...more });

/** Zones whose abbreviation is UTC: TimeWithZone#utc? holds, and iso8601 writes "Z" (Etc/GMT and London write "+00:00"). */
const UTC_ZONES = /^(Etc\/)?(UTC|UCT|Universal|Zulu)$/;

/** The tzinfo name Rails writes for `zone`, an ActiveSupport::TimeZone name or an IANA one; throws for an unknown one. */
function railsZone(zone: string): string {
  const name = tzinfoName(zone);
  if (name !== undefined) return name;
  const like = zoneSpelledLike(zone);
  throw new ActiveJobSerializationError(
    `Unknown time zone ${JSON.stringify(zone)}: neither an ActiveSupport::TimeZone name ("Tokyo") nor an IANA one ("Asia/Tokyo")` +
      (like !== undefined && like !== zone
        ? `; Rails names are case-sensitive: did you mean ${JSON.stringify(like)}?`
        : ""),
  );
}

/** `time.in_time_zone(zone).iso8601(9)`: the wall time in the zone and its offset ("Z" for UTC itself). */
export function zonedIso8601Nanos(t: AjInstant, zone: string): string {
  const name = railsZone(zone);
  if (UTC_ZONES.test(name)) return iso8601Nanos(t);
  return rubyIso8601(t, zoneOffsetSeconds(name, splitInstant(t)[0] * 1000));
}

/** Ruby's ActiveSupport::Duration::PARTS_IN_SECONDS. */
const PART_SECONDS: Readonly<Record<string, number>> = {
  years: 31556952,
  months: 2629746,
  weeks: 604800,
  days: 86400,
  hours: 3600,
  minutes: 60,
  seconds: 1,
};

/**
 * `1.hour + 30.minutes` as Rails builds it from its parts: the value is their
 * sum in seconds, a Float when a part is; parts that are zero are dropped
 * unless the whole is zero.
 */
function durationOf(parts: Readonly<Record<string, number>>): AjValue {
  let value = 0;
  for (const [k, n] of Object.entries(parts)) {
    const unit = PART_SECONDS[k];
    if (unit === undefined || !Number.isFinite(n))
      throw new ActiveJobSerializationError(`Not an ActiveSupport::Duration part: ${k}: ${n}`);
    value += n * unit;
  }
  const kept = value === 0 ? parts : Object.fromEntries(Object.entries(parts).filter(([, n]) => n !== 0));
  const float = Object.values(parts).some((n) => !Number.isInteger(n));
  return durationValue(float ? new RubyFloat(value) : value, kept);
}

const durationValue = (value: number | RubyFloat, parts: Readonly<Record<string, number>>) =>
  new AjValue({
    _aj_serialized: "ActiveJob::Serializers::DurationSerializer",
    value,
    parts: Object.entries(parts).map(([k, n]) => [aj.symbol(k).json, n]),
  });

/** An ActiveSupport::Duration: from its parts, as Rails sums them, or (`seconds`, `parts`) written as given. */
function duration(parts: Readonly<Record<string, number>>): AjValue;
function duration(seconds: number, parts: Readonly<Record<string, number>>): AjValue;
function duration(a: number | Readonly<Record<string, number>>, parts?: Readonly<Record<string, number>>): AjValue {
  return typeof a === "number" ? durationValue(a, parts ?? {}) : durationOf(a);
}

/** `BigDecimal(s).to_s`, as Rails writes a BigDecimal; refuses what `BigDecimal()` refuses. */
function bigDecimal(s: string): AjValue {
  const out = bigDecimalString(s);
  if (out === "invalid")
    throw new ActiveJobSerializationError(`invalid value for BigDecimal(): ${JSON.stringify(s)} (as Ruby says)`);
  if (out === "too large")
    throw new ActiveJobSerializationError(
      `BigDecimal ${JSON.stringify(s)} has an exponent beyond ${BIG_DECIMAL_MAX_EXPONENT}: Ruby would write it in that many digits`,
    );
  return serialized("BigDecimalSerializer", out);
}

/** Helpers for ActiveJob's argument markers. */
export const aj = {
  /** A Ruby Symbol (`:name`). */
  symbol: (name: string) => serialized("SymbolSerializer", name),
  /** A Ruby Time (nanosecond ISO-8601, as Rails writes it); a bigint is nanoseconds since the epoch. */
  time: (t: AjInstant) => serialized("TimeSerializer", iso8601Nanos(t)),
  /** A Ruby Date (`YYYY-MM-DD`). */
  date: (d: Date | string) => serialized("DateSerializer", typeof d === "string" ? d : d.toISOString().slice(0, 10)),
  /** A DateTime (ActiveJob writes its offset; this writes UTC as "+00:00"; before 1582-10-15 in the Julian calendar, as Ruby's DateTime). */
  dateTime: (t: AjInstant) => serialized("DateTimeSerializer", rubyIso8601(t, 0, "date")),
  /**
   * An ActiveSupport::TimeWithZone: the instant in a zone named as Rails names
   * it ("Tokyo", "Eastern Time (US & Canada)") or by IANA ("Asia/Tokyo"),
   * written with its tzinfo name, as Rails writes it.
   */
  timeWithZone: (t: AjInstant, zone: string) =>
    serialized("TimeWithZoneSerializer", zonedIso8601Nanos(t, zone), { time_zone: railsZone(zone) }),
  /**
   * An ActiveSupport::Duration: `aj.duration({ hours: 1, minutes: 30 })` as
   * `1.hour + 30.minutes`, its value summed as Rails sums it; or
   * `aj.duration(seconds, parts)`, written as given.
   */
  duration,
  /** A Range `begin..end` (`begin...end` with excludeEnd); null for an endless or beginless side. */
  range: (begin: unknown, end: unknown, excludeEnd = false) =>
    new AjValue({
      _aj_serialized: "ActiveJob::Serializers::RangeSerializer",
      begin: serializeArgument(begin),
      end: serializeArgument(end),
      exclude_end: excludeEnd,
    }),
  /** A class or module, by its name ("Account"). */
  module: (name: string) => serialized("ModuleSerializer", name),
  /** A BigDecimal, from any string `BigDecimal()` accepts, written as Rails writes it ("12.50" as "12.5"). */
  bigDecimal,
  /** Any other serializer by name, e.g. ("ModuleSerializer", "Foo"). */
  serialized,
  /** A record through GlobalID, e.g. "gid://app/User/1". */
  globalId: (gid: string) => new AjValue({ _aj_globalid: gid }),
  /**
   * A record as `record.to_global_id` names it: gid://APP/MODEL/ID, where APP is
   * the Rails app's `GlobalID.app` (its module's name, dasherized: Shop -> "shop",
   * unless `config.global_id.app` says otherwise); composite ids are joined by "/".
   */
  record: (app: string, model: string, id: string | number | ReadonlyArray<string | number>) =>
    new AjValue({ _aj_globalid: `gid://${app}/${model}/${[id].flat().map(cgiEscape).join("/")}` }),
  /** A Hash whose keys are Symbols in Ruby. */
  symbolKeys: (h: Record<string, unknown>) => new AjValue({ ...serializeHash(h), _aj_symbol_keys: Object.keys(h) }),
  /** Keyword arguments (the last argument of `perform(*args, **kw)`). */
  kwargs: <T extends Record<string, unknown>>(h: T): AjKwargs<T> =>
    new AjValue({ ...serializeHash(h), _aj_ruby2_keywords: Object.keys(h) }),
  /** An ActiveSupport::HashWithIndifferentAccess. */
  indifferent: (h: Record<string, unknown>) =>
    new AjValue({ ...serializeHash(h), _aj_hash_with_indifferent_access: true }),
};

/** Options of an ActiveJob class: queue, priority, locale, timezone, its `sidekiq_options`, and the Rails payload format. */
export interface ActiveJobOptions {
  queue?: string;
  priority?: number | null;
  locale?: string;
  timezone?: string | null;
  /** The ActiveJob class's sidekiq_options (retry, backtrace, ...), merged into the payload. */
  sidekiqOptions?: JobOptions;
  /**
   * Which Rails writes the fleet's ActiveJob payloads: "6.1" (no scheduled_at,
   * second-precision enqueued_at, Client.push key order) or "7.1" (7.1 and later).
   * Default: the release rules' `activeJob.defaultRails` ("6.1" for 6.x, Debian
   * bookworm's pairing; "7.1" from 7.0).
   */
  rails?: "6.1" | "7.1";
}

/** Options of `ActiveJobDefinition.set`, as ActiveJob's `set`: wait, waitUntil, queue, priority. */
export interface ActiveJobSet {
  wait?: number;
  waitUntil?: Date | number;
  queue?: string;
  priority?: number;
}

/** What `performLater` enqueued: the ActiveJob job id and the Sidekiq jid. */
export interface Enqueued {
  /** ActiveJob's job_id (a UUID). */
  jobId: string;
  /** Sidekiq's jid (ActiveJob's provider_job_id), null when a middleware stopped the push. */
  jid: string | null;
}

/** An ActiveJob class to enqueue through Sidekiq's ActiveJob adapter (`perform_later`); from `client.activeJob(name)`. */
export class ActiveJobDefinition<A extends unknown[] = unknown[]> {
  constructor(
    private readonly client: Client,
    readonly className: string,
    private readonly options: ActiveJobOptions = {},
    private readonly at?: number,
  ) {}

  set(s: ActiveJobSet): ActiveJobDefinition<A> {
    const interval = s.waitUntil ?? s.wait;
    const at = interval === undefined ? this.at : (scheduleAt(interval) ?? undefined);
    return new ActiveJobDefinition<A>(
      this.client,
      this.className,
      {
        ...this.options,
        ...(s.queue !== undefined ? { queue: s.queue } : {}),
        ...(s.priority !== undefined ? { priority: s.priority } : {}),
      },
      at,
    );
  }

  /** `job.serialize` for these arguments, as the given Rails writes it. */
  serialize(
    args: A,
    rails: "6.1" | "7.1" = this.options.rails ?? "7.1",
    jobId = randomUUID(),
  ): { [k: string]: RubyJsonValue } {
    const body: { [k: string]: RubyJsonValue } = {
      job_class: this.className,
      job_id: jobId,
      provider_job_id: null,
      queue_name: this.options.queue ?? "default",
      priority: this.options.priority ?? null,
      arguments: serializeArguments(args),
      executions: 0,
      exception_executions: {},
      locale: this.options.locale ?? "en",
      timezone: this.options.timezone ?? null,
      // Rails 6.1: Time.now.utc.iso8601; 7.1+: nanoseconds, plus scheduled_at.
      enqueued_at: rails === "6.1" ? new Date().toISOString().replace(/\.\d{3}Z$/, "Z") : iso8601Nanos(new Date()),
    };
    if (rails !== "6.1") body.scheduled_at = this.at !== undefined ? iso8601Nanos(new Date(this.at * 1000)) : null;
    return body;
  }

  async performLater(...args: A): Promise<Enqueued> {
    const profile = await this.client.profile(this.options.queue ?? "default");
    const rails = this.options.rails ?? releaseRules(profile).activeJob.defaultRails;
    const body = this.serialize(args, rails);
    const queue = this.options.queue ?? "default";
    // Rails 6.1's adapter calls Client.push(class, wrapped, queue, args); 7.1+ uses
    // Wrapper.set(wrapped:, queue:).perform_async(args), which puts class last.
    const item: PushItem =
      rails === "6.1"
        ? { class: profile.activeJobWrapper, wrapped: this.className, queue, args: [body] }
        : { wrapped: this.className, queue, args: [body], class: profile.activeJobWrapper };
    if (this.at !== undefined) item.at = this.at;
    const jid = await this.client.push(item, { ...DEFAULT_JOB_OPTIONS, ...this.options.sidekiqOptions });
    return { jobId: body.job_id as string, jid };
  }

  /**
   * `ActiveJob.perform_all_later` of one job per argument list (Rails 7.1+):
   * as the Sidekiq adapter's `enqueue_all`, one `push_bulk` of this class and
   * queue, each job scheduled with `at` when `set` gave a wait. Returns one
   * Enqueued per job, in order.
   */
  async performAllLater(argsList: readonly A[]): Promise<Enqueued[]> {
    if (argsList.length === 0) return [];
    const queue = this.options.queue ?? "default";
    const profile = await this.client.profile(queue);
    const rails = this.options.rails ?? releaseRules(profile).activeJob.defaultRails;
    if (rails === "6.1")
      throw new ActiveJobSerializationError('perform_all_later needs Rails 7.1 or later: pass rails: "7.1"');
    const bodies = argsList.map((args) => this.serialize(args, rails));
    const jids = await this.client.pushBulk(
      {
        class: profile.activeJobWrapper,
        wrapped: this.className,
        queue,
        args: bodies.map((b) => [b]),
        // `job.scheduled_at&.to_f`, one per job.
        ...(this.at !== undefined ? { at: bodies.map(() => this.at!) } : {}),
      },
      { ...DEFAULT_JOB_OPTIONS, ...this.options.sidekiqOptions },
    );
    return bodies.map((b, i) => ({ jobId: b.job_id as string, jid: jids[i] ?? null }));
  }
}
