// Enqueue jobs that Rails' ActiveJob performs: the Sidekiq wrapper payload,
// with args[0] in ActiveJob's `serialize` shape and its argument markers.
import { randomUUID } from "node:crypto";
import { AjDuration, AjModule, AjRange, AjSerialized, GlobalIdRef } from "../wire/activejob-values.js";
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

/** Ruby's `Time#iso8601(9)` for a UTC time. */
export function iso8601Nanos(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, ".$1000000Z");
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
  // What a handler received from Rails goes back as Rails wrote it.
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

/** `time.in_time_zone(zone).iso8601(9)`: the wall time in the zone and its offset ("Z" for UTC itself). */
export function zonedIso8601Nanos(t: Date, zone: string): string {
  if (/^(Etc\/)?(UTC|UCT|Universal|Zulu)$/.test(zone)) return iso8601Nanos(t);
  const name = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" })
    .formatToParts(t)
    .find((p) => p.type === "timeZoneName")!.value; // "GMT+02:00", or "GMT" for +00:00
  const m = /GMT([+-])(\d\d):(\d\d)/.exec(name);
  const minutes = m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
  const wall = iso8601Nanos(new Date(t.getTime() + minutes * 60_000)).slice(0, -1);
  return `${wall}${m ? `${m[1]}${m[2]}:${m[3]}` : "+00:00"}`;
}

/** Helpers for ActiveJob's argument markers. */
export const aj = {
  /** A Ruby Symbol (`:name`). */
  symbol: (name: string) => serialized("SymbolSerializer", name),
  /** A Ruby Time (nanosecond ISO-8601, as Rails writes it). */
  time: (t: Date) => serialized("TimeSerializer", iso8601Nanos(t)),
  /** A Ruby Date (`YYYY-MM-DD`). */
  date: (d: Date | string) => serialized("DateSerializer", typeof d === "string" ? d : d.toISOString().slice(0, 10)),
  /** A DateTime (ActiveJob writes its offset; this writes UTC as "+00:00"). */
  dateTime: (t: Date) => serialized("DateTimeSerializer", iso8601Nanos(t).replace(/Z$/, "+00:00")),
  /** An ActiveSupport::TimeWithZone: the instant in an IANA zone (`Time.zone` name as tzinfo spells it). */
  timeWithZone: (t: Date, zone: string) =>
    serialized("TimeWithZoneSerializer", zonedIso8601Nanos(t, zone), { time_zone: zone }),
  /** An ActiveSupport::Duration of `seconds`, with its parts (`{ hours: 1, minutes: 30 }`, as 1.hour + 30.minutes). */
  duration: (seconds: number, parts: Readonly<Record<string, number>>) =>
    new AjValue({
      _aj_serialized: "ActiveJob::Serializers::DurationSerializer",
      value: seconds,
      parts: Object.entries(parts).map(([k, n]) => [aj.symbol(k).json, n]),
    }),
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
  /** A BigDecimal, from its decimal string. */
  bigDecimal: (s: string) => serialized("BigDecimalSerializer", s),
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
    readonly jobClass: string,
    private readonly options: ActiveJobOptions = {},
    private readonly at?: number,
  ) {}

  set(s: ActiveJobSet): ActiveJobDefinition<A> {
    const interval = s.waitUntil ?? s.wait;
    const at = interval === undefined ? this.at : (scheduleAt(interval) ?? undefined);
    return new ActiveJobDefinition<A>(
      this.client,
      this.jobClass,
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
      job_class: this.jobClass,
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
        ? { class: profile.activeJobWrapper, wrapped: this.jobClass, queue, args: [body] }
        : { wrapped: this.jobClass, queue, args: [body], class: profile.activeJobWrapper };
    if (this.at !== undefined) item.at = this.at;
    const jid = await this.client.push(item, { ...DEFAULT_JOB_OPTIONS, ...this.options.sidekiqOptions });
    return { jobId: body.job_id as string, jid };
  }
}
