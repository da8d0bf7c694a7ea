// A job as the API shows it: Ruby's `Sidekiq::JobRecord` over the exact string
// stored in Redis. The raw string is kept, because deleting a queue entry
// (LREM) or a sorted-set member (ZREM) needs its bytes, and pushing it again
// must not change what nobody asked to change.
import { JobRecord } from "../wire/job-record.js";
import { decodePayloadTime } from "../wire/timestamps.js";
import type { JsonValue } from "../wire/json-scan.js";
import { ACTIVEJOB_WRAPPER_CLASSES, truthy } from "../wire/sidekiq-constants.js";

const MAILER_JOBS: readonly string[] = ["ActionMailer::DeliveryJob", "ActionMailer::MailDeliveryJob"];

/** A job as Sidekiq's API shows it (`Sidekiq::JobRecord`): class, args, queue, jid and times, decoded for the fleet's release. */
export interface JobView {
  /** The string stored in Redis, byte for byte. */
  raw: string;
  /** The parsed payload; null when the string is not a JSON object (Ruby then shows `{}`). */
  record: JobRecord | null;
  jid: string | undefined;
  /** `class` as stored (the wrapper for ActiveJob). */
  klass: string | undefined;
  /** Ruby's `JobRecord#display_class`: `display_class`, else the ActiveJob class, else `class`. */
  displayClass: string | undefined;
  /** The payload's `queue`. */
  queue: string | undefined;
}

/** Parses a stored job string without throwing (malformed text gives `record: null`). */
export function parseStored(raw: string): JobRecord | null {
  try {
    return JobRecord.parse(raw);
  } catch {
    return null;
  }
}

function str(v: JsonValue | undefined): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/**
 * Ruby's `JobRecord#display_class` (api.rb, 8.1.7; 6.x and 7.x check only the
 * older wrapper name): `display_class` when set; for ActiveJob's wrapper the
 * `wrapped` class (or `args[0]`), and `Mailer#method` for ActionMailer jobs;
 * else `class`.
 */
export function displayClassOf(rec: JobRecord | null): string | undefined {
  if (!rec) return undefined;
  const dc = rec.get("display_class");
  if (truthy(dc)) return typeof dc === "string" ? dc : JSON.stringify(dc);
  const klass = str(rec.get("class"));
  if (klass === undefined || !ACTIVEJOB_WRAPPER_CLASSES.has(klass)) return klass;
  const args = rec.get("args");
  const first = Array.isArray(args) ? args[0] : undefined;
  const wrapped = rec.get("wrapped");
  const className = truthy(wrapped) ? wrapped : first;
  if (typeof className === "string" && MAILER_JOBS.includes(className)) {
    // args[0]["arguments"][0..1].join("#")
    if (first && typeof first === "object" && !Array.isArray(first) && typeof first !== "bigint") {
      const a = (first as { [k: string]: JsonValue }).arguments;
      if (Array.isArray(a))
        return a
          .slice(0, 2)
          .map((x) => (typeof x === "string" ? x : JSON.stringify(x)))
          .join("#");
    }
  }
  return typeof className === "string" ? className : klass;
}

export function viewOf(raw: string): JobView {
  const record = parseStored(raw);
  return {
    raw,
    record,
    jid: str(record?.get("jid")),
    klass: str(record?.get("class")),
    displayClass: displayClassOf(record),
    queue: str(record?.get("queue")),
  };
}

/** Which jobs a listing or bulk action applies to: by class and by queue. */
export interface JobFilter {
  /** Matches the display class (the ActiveJob class for wrapped jobs) or the stored `class`. */
  className?: string;
  /** Matches the payload's `queue`. */
  queue?: string;
}

export function hasFilter(f: JobFilter | undefined): boolean {
  return f !== undefined && (f.className !== undefined || f.queue !== undefined);
}

export function matchesFilter(v: JobView, f: JobFilter | undefined): boolean {
  if (!f) return true;
  if (f.className !== undefined && v.displayClass !== f.className && v.klass !== f.className) return false;
  if (f.queue !== undefined && v.queue !== f.queue) return false;
  return true;
}

/** Escapes Redis glob characters, for a `MATCH *<jid>*` built from user input. */
export function globEscape(s: string): string {
  return s.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/** A payload time member (float seconds or integer ms, by lexeme) as epoch seconds. */
export function payloadSeconds(rec: JobRecord | null, key: string): number | undefined {
  const raw = rec?.raw(key);
  if (raw === undefined || !/^-?\d/.test(raw)) return undefined;
  return decodePayloadTime(raw) / 1000;
}
