// Sidekiq's JobUtil#validate and #normalize_item (6.4+): the same checks, the
// same messages, the same key order (defaults first, then the caller's keys,
// then jid and created_at).
import { newJid } from "../wire/jid.js";
import { toRubyJson, type RubyJsonValue } from "../wire/ruby-json.js";
import type { RecordKind, WireProfile } from "../wire/dialect.js";
import { releaseRules } from "../wire/release-rules.js";
import { encodePayloadTime } from "../wire/timestamps.js";
import { SidekiqArgumentError } from "./errors.js";

/** A payload on its way to Redis: keys in Sidekiq's order, values JSON-encodable. */
export type JobHash = { [key: string]: RubyJsonValue | undefined };

/** Options Sidekiq stores in the payload (any other key is kept too). */
export interface JobOptions {
  queue?: string;
  retry?: boolean | number;
  backtrace?: boolean | number;
  retry_queue?: string;
  /** Seconds (relative) during which failures are retried (7.1.3+). */
  retry_for?: number;
  dead?: boolean;
  tags?: string[];
  [option: string]: RubyJsonValue | undefined;
}

/** One job for `client.push` (`Sidekiq::Client.push`'s item hash). */
export interface PushItem extends JobOptions {
  /** The Ruby class name, e.g. "HardJob" or "Billing::InvoiceJob". */
  class: string;
  args: RubyJsonValue[];
  /** Run at this epoch time in seconds (Ruby's `at`). Not stored in the payload. */
  at?: number;
  jid?: string;
}

export const DEFAULT_JOB_OPTIONS: Readonly<JobOptions> = Object.freeze({ retry: true, queue: "default" });

function show(item: unknown): string {
  try {
    return JSON.stringify(item, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v));
  } catch {
    return String(item);
  }
}

export function validateItem(item: Partial<PushItem> | undefined): asserts item is PushItem {
  const it = item as Record<string, unknown> | undefined;
  if (!it || typeof it !== "object" || !("class" in it) || !("args" in it)) {
    throw new SidekiqArgumentError(`Job must be a Hash with 'class' and 'args' keys: \`${show(item)}\``);
  }
  if (!Array.isArray(it.args)) throw new SidekiqArgumentError(`Job args must be an Array: \`${show(item)}\``);
  if (typeof it.class !== "string" || it.class === "") {
    throw new SidekiqArgumentError(
      `Job class must be either a Class or String representation of the class name: \`${show(item)}\``,
    );
  }
  if ("at" in it && it.at !== undefined && (typeof it.at !== "number" || !Number.isFinite(it.at))) {
    throw new SidekiqArgumentError(`Job 'at' must be a Numeric timestamp: \`${show(item)}\``);
  }
  if (it.tags !== undefined && it.tags !== null && !Array.isArray(it.tags))
    throw new SidekiqArgumentError(`Job tags must be an Array: \`${show(item)}\``);
  if (typeof it.retry_for === "number" && it.retry_for > 1_000_000_000) {
    throw new SidekiqArgumentError(`retry_for must be a relative amount of time, e.g. 48.hours \`${show(item)}\``);
  }
}

/**
 * Validates and fills in a job the way the dialect's client does. `defaults`
 * are the class's sidekiq_options (Sidekiq.default_job_options when pushing by
 * class name).
 */
export function normalizeItem(
  item: PushItem,
  profile: WireProfile,
  defaults: Readonly<JobOptions> = DEFAULT_JOB_OPTIONS,
  now = Date.now(),
): JobHash {
  validateItem(item);
  const job: JobHash = { ...DEFAULT_JOB_OPTIONS, ...defaults };
  for (const k of Object.keys(item)) {
    const v = (item as JobOptions)[k];
    if (v !== undefined) job[k] = v;
  }
  if (job.queue === undefined || job.queue === null || job.queue === "")
    throw new SidekiqArgumentError("Job must include a valid queue name");
  job.jid ??= newJid();
  job.class = String(job.class);
  job.queue = String(job.queue);
  if (typeof job.retry_for === "number") job.retry_for = Math.trunc(job.retry_for);
  job.created_at ??= encodePayloadTime(now, profile);
  return job;
}

/**
 * A payload's JSON with holes: `texts[0] + v0 + texts[1] + v1 + … + texts[n]`,
 * where v<i> is the encoded value of `slots[i]`. The members of `base` other
 * than the slots are encoded once, so a bulk of jobs that differ only in a few
 * members (args, jid, enqueued_at) costs one encoding of those per job. The
 * result is toRubyJson of `base` with the slots' values put in at their keys'
 * places; every slot key must be an own key of `base` (any value).
 */
export interface PayloadTemplate {
  texts: string[];
  slots: string[];
}

function member(key: string, value: RubyJsonValue): string {
  // defineProperty, so that a "__proto__" key stays an own data property.
  const one = Object.defineProperty({}, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  }) as JobHash;
  return toRubyJson(one).slice(1, -1);
}

export function payloadTemplate(base: JobHash, slotKeys: readonly string[]): PayloadTemplate {
  const texts: string[] = [];
  const slots: string[] = [];
  let text = "{";
  let first = true;
  for (const k of Object.keys(base)) {
    const isSlot = slotKeys.includes(k);
    const v = base[k];
    if (!isSlot && v === undefined) continue;
    if (!first) text += ",";
    first = false;
    if (isSlot) {
      // `"key":` as toRubyJson writes it (the text of {key: null} without `null}`).
      text += member(k, null).slice(0, -4);
      texts.push(text);
      slots.push(k);
      text = "";
    } else {
      text += member(k, v!);
    }
  }
  texts.push(text + "}");
  return { texts, slots };
}

/** Fills a template's holes, in the order of its `slots`, with already encoded values. */
export function fillTemplate(t: PayloadTemplate, values: readonly string[]): string {
  const { texts } = t;
  let out = texts[0]!;
  for (let i = 0; i < values.length; i++) out += values[i]! + texts[i + 1]!;
  return out;
}

/** A bulk's jobs as one template (pushBulk without middleware); slots: args, jid, and enqueued_at unless scheduled. */
export interface BulkTemplate {
  tpl: PayloadTemplate;
  scheduled: boolean;
  queue: string;
  /** The schema to validate against (schemaKind). */
  kind: RecordKind;
}

/**
 * What rawPush encodes for each job `{ ...normed, args, jid }` of a bulk: on a
 * queue it sets enqueued_at (in its place if `normed` has the key, else last);
 * scheduled, it drops enqueued_at from 7.1.2 on and leaves it alone before.
 * Throws when a shared member cannot be encoded.
 */
export function bulkTemplate(normed: JobHash, scheduled: boolean, profile: WireProfile): BulkTemplate {
  const base: JobHash = { ...normed };
  if (!scheduled) base.enqueued_at = null;
  else if (releaseRules(profile).client.scheduledDropsEnqueuedAt) delete base.enqueued_at;
  return {
    tpl: payloadTemplate(base, scheduled ? ["args", "jid"] : ["args", "jid", "enqueued_at"]),
    scheduled,
    queue: String(normed.queue),
    kind: schemaKind(normed, scheduled ? "scheduled" : "job"),
  };
}

/** The schema a payload of `kind` is validated against: ActiveJob's wrapped jobs have their own. */
export function schemaKind(payload: JobHash, kind: RecordKind): RecordKind {
  return payload.wrapped !== undefined && /ActiveJob/.test(String(payload.class)) ? "activejob" : kind;
}
