// One sidekiq-cron job (Sidekiq::Cron::Job of sidekiq-cron 2.3): read from its
// Redis hash the way `Job.new(hash)` reads it, validated as `valid?`, and
// written back as `to_hash` writes it (the same sixteen fields, nil as "").
// Node never has the Ruby class loaded, so a job created here is what Ruby
// writes for a class it cannot constantize (its message holds `queue`,
// `class`, `args` and `retry` only when given).
import { parseJson, type JsonValue } from "../../core/wire/json-scan.js";
import { toRubyJson, type RubyJsonValue } from "../../core/wire/ruby-json.js";
import { DEFAULT_NAMESPACE } from "./keys.js";
import { parseCron, type CronSchedule } from "../fugit/cron.js";

/** The hash fields, in the order `to_hash` writes them. */
export const CRON_JOB_FIELDS = [
  "name",
  "namespace",
  "klass",
  "cron",
  "description",
  "source",
  "args",
  "date_as_argument",
  "message",
  "status",
  "active_job",
  "queue_name_prefix",
  "queue_name_delimiter",
  "retry",
  "last_enqueue_time",
  "symbolize_args",
] as const;

/** A cron job's hash in Redis, field by field, as the gem writes it. */
export type CronJobHash = Record<(typeof CRON_JOB_FIELDS)[number], string>;

/** What a cron job is made from (`Sidekiq::Cron::Job.new` / `.create` arguments). */
export interface CronJobInput {
  name: string;
  cron: string;
  /** The job class (Ruby's `class` / `klass`). */
  class?: string;
  klass?: string;
  namespace?: string;
  description?: string;
  /** An array, a hash (becomes the one argument) or a JSON string. */
  args?: JsonValue | string;
  queue?: string;
  retry?: boolean | number | string;
  /** "enabled" (default) or "disabled". */
  status?: "enabled" | "disabled";
  /** Append the enqueue time (float epoch seconds) to the arguments. */
  date_as_argument?: boolean;
  /** Enqueue through ActiveJob (the Sidekiq adapter's wrapper). */
  active_job?: boolean;
  queue_name_prefix?: string;
  queue_name_delimiter?: string;
  symbolize_args?: boolean;
  /** "schedule" (loaded from a schedule file) or "dynamic" (default). */
  source?: "schedule" | "dynamic";
  /** A whole Sidekiq message (JSON string or object); overrides class, queue and retry. */
  message?: string | { [k: string]: JsonValue };
}

/** A cron job that cannot be read or written (a missing field, an invalid schedule). */
export class CronJobError extends Error {
  override name = "CronJobError";
}

/** Ruby's `x == true || "#{x}" =~ /^(true|t|yes|y|1)$/i`. */
export function truthyFlag(v: unknown): boolean {
  return v === true || /^(true|t|yes|y|1)$/i.test(String(v ?? ""));
}

const LAST_ENQUEUE_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$/;
const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** `LAST_ENQUEUE_TIME_FORMAT` ('%Y-%m-%d %H:%M:%S %z') of a UTC time. */
export function formatLastEnqueueTime(d: Date): string {
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(
    d.getUTCMinutes(),
  )}:${pad(d.getUTCSeconds())} +0000`;
}

/** Ruby's `Time#to_s` of a UTC time, as `jid_history` entries carry it. */
export function formatHistoryTime(d: Date): string {
  return `${formatLastEnqueueTime(d).slice(0, 19)} UTC`;
}

/** `parse_enqueue_time`: the format above, else whatever Date reads (Ruby falls back to DateTime.parse). */
export function parseLastEnqueueTime(s: string): Date | undefined {
  const m = LAST_ENQUEUE_TIME.exec(s);
  if (m) {
    const off = (m[7] === "-" ? -1 : 1) * (Number(m[8]) * 60 + Number(m[9]));
    const t = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) - off * 60_000;
    return new Date(t);
  }
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : new Date(t);
}

/** ISO 8601 UTC without fractions, as Ruby's `Time#iso8601` writes a UTC time. */
export function iso8601(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** `parse_args`: JSON text is parsed (else it is the one argument), a hash is the one argument. */
function parseArgs(v: unknown): { args: JsonValue; raw?: string } {
  if (v === undefined || v === null) return { args: [] };
  if (typeof v === "string") {
    try {
      return { args: parseJson(v), raw: v };
    } catch {
      return { args: [v] };
    }
  }
  if (Array.isArray(v)) return { args: v as JsonValue[] };
  if (typeof v === "object") return { args: [v as JsonValue] };
  return { args: [v as JsonValue] };
}

function objectMessage(raw: string): { [k: string]: JsonValue } {
  let v: JsonValue;
  try {
    v = parseJson(raw);
  } catch (e) {
    throw new CronJobError(`its message is not JSON (${(e as Error).message}): ${raw.slice(0, 80)}`);
  }
  // Ruby's `Sidekiq.load_json(@message) || {}`: null reads as an empty message.
  if (v === null) return {};
  if (typeof v !== "object" || Array.isArray(v)) throw new CronJobError(`its message is not a JSON object: ${raw}`);
  return v;
}

/** One sidekiq-cron job: its hash fields as the gem stores them, its schedule and its message. */
export class CronJob {
  name: string;
  namespace: string;
  klass: string;
  cron: string;
  description: string | undefined;
  source: "schedule" | "dynamic";
  status: string;
  dateAsArgument: boolean;
  activeJob: boolean;
  symbolizeArgs: boolean;
  queueNamePrefix: string | undefined;
  queueNameDelimiter: string | undefined;
  lastEnqueueTime: Date | undefined;
  /** The arguments (parsed; big integers as bigint). */
  args: JsonValue;
  /** The stored `message` (JSON of the Sidekiq job the poller pushes). */
  message: string;
  /** From the message: the queue (default "default") and retry. */
  queue: string;
  retry: JsonValue | undefined;
  private argsRaw: string | undefined;
  private schedule?: CronSchedule;

  private constructor(h: Record<string, unknown>) {
    this.name = String(h.name ?? "");
    this.cron = String(h.cron ?? "");
    this.description = h.description === undefined || h.description === null ? undefined : String(h.description);
    this.source = h.source === "schedule" ? "schedule" : "dynamic";
    this.namespace = h.namespace === undefined || h.namespace === null ? DEFAULT_NAMESPACE : String(h.namespace);
    this.klass = String(h.klass ?? h.class ?? "");
    this.status = typeof h.status === "string" && h.status !== "" ? h.status : "enabled";
    const let_ = typeof h.last_enqueue_time === "string" ? h.last_enqueue_time : "";
    this.lastEnqueueTime = let_ !== "" ? parseLastEnqueueTime(let_) : undefined;
    this.symbolizeArgs = truthyFlag(h.symbolize_args);
    const { args, raw } = parseArgs(h.args);
    this.args = args;
    this.argsRaw = raw;
    this.dateAsArgument = truthyFlag(h.date_as_argument);
    this.activeJob = truthyFlag(h.active_job);
    this.queueNamePrefix = typeof h.queue_name_prefix === "string" ? h.queue_name_prefix : undefined;
    this.queueNameDelimiter = typeof h.queue_name_delimiter === "string" ? h.queue_name_delimiter : undefined;
    if (h.message !== undefined && h.message !== null && h.message !== "") {
      this.message = typeof h.message === "string" ? h.message : toRubyJson(h.message as RubyJsonValue);
      const data = objectMessage(this.message);
      this.queue = typeof data.queue === "string" ? data.queue : "default";
      this.retry = data.retry;
    } else {
      // A class Ruby cannot constantize gets {"queue"=>"default"}, then class and args,
      // then the queue and retry given.
      const data: { [k: string]: JsonValue } = { queue: "default", class: this.klass, args: this.args };
      if (h.queue !== undefined && h.queue !== null) data.queue = h.queue as JsonValue;
      if (h.retry !== undefined && h.retry !== null) data.retry = h.retry as JsonValue;
      this.queue = String(data.queue);
      this.retry = data.retry;
      this.message = toRubyJson(data as RubyJsonValue);
    }
  }

  /** As `Sidekiq::Cron::Job.new(hash)` reads the hash stored in Redis. Throws CronJobError on a non-JSON message. */
  static fromHash(h: Record<string, string>): CronJob {
    return new CronJob(h);
  }

  /** A new job, as `Sidekiq::Cron::Job.new(input)` makes it in a process without the class loaded. */
  static build(input: CronJobInput): CronJob {
    const h: Record<string, unknown> = { ...input };
    if (input.args !== undefined && typeof input.args !== "string") h.args = input.args;
    return new CronJob(h);
  }

  get enabled(): boolean {
    return this.status === "enabled";
  }

  /** `valid?`: the reasons this job cannot be saved or run (empty when valid). */
  errors(): string[] {
    const out: string[] = [];
    if (this.name === "") out.push("'name' must be set");
    if (this.namespace === "") out.push("'namespace' must be set");
    if (this.namespace === "*") out.push("'namespace' cannot be '*'");
    if (this.cron === "") out.push("'cron' must be set");
    else {
      try {
        this.parsedCron();
      } catch (e) {
        out.push(`'cron' -> ${JSON.stringify(this.cron)} -> ${(e as Error).message}`);
      }
    }
    if (this.klass === "") out.push("'klass' (or class) must be set");
    return out;
  }

  parsedCron(): CronSchedule {
    this.schedule ??= parseCron(this.cron);
    return this.schedule;
  }

  /** `last_time`: the fire time the poller would enqueue at `now`. */
  lastTime(now: Date): Date {
    const t = this.parsedCron().previousTime(now);
    if (!t) throw new CronJobError(`no previous fire time for ${JSON.stringify(this.cron)}`);
    return t;
  }

  /** `queue_name_with_prefix`, from the job's own prefix and delimiter ("_" by default). */
  queueNameWithPrefix(activeJob: boolean): string {
    if (!activeJob || !this.queueNamePrefix) return this.queue;
    const delimiter = this.queueNameDelimiter ? this.queueNameDelimiter : "_";
    return `${this.queueNamePrefix}${delimiter}${this.queue}`;
  }

  /** `to_hash` with nil as "" (what `save` HSETs). */
  toHash(): CronJobHash {
    const retry =
      this.retry === undefined || this.retry === null
        ? ""
        : typeof this.retry === "string"
          ? this.retry
          : toRubyJson(this.retry as RubyJsonValue);
    return {
      name: this.name,
      namespace: this.namespace,
      klass: this.klass,
      cron: this.cron,
      description: this.description ?? "",
      source: this.source,
      args: this.argsRaw ?? toRubyJson((this.args ?? []) as RubyJsonValue),
      date_as_argument: this.dateAsArgument ? "1" : "0",
      message: this.message,
      status: this.status,
      active_job: this.activeJob ? "1" : "0",
      queue_name_prefix: this.queueNamePrefix ?? "",
      queue_name_delimiter: this.queueNameDelimiter ?? "",
      retry,
      last_enqueue_time: this.lastEnqueueTime ? formatLastEnqueueTime(this.lastEnqueueTime) : "",
      symbolize_args: this.symbolizeArgs ? "1" : "0",
    };
  }
}
