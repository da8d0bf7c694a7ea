// Sidekiq's JobUtil#validate and #normalize_item (6.4+): the same checks, the
// same messages, the same key order (defaults first, then the caller's keys,
// then jid and created_at).
import { newJid } from "../wire/jid.js";
import type { RubyJsonValue } from "../wire/ruby-json.js";
import type { WireProfile } from "../wire/dialect.js";
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
    throw new SidekiqArgumentError(`Job class must be either a Class or String representation of the class name: \`${show(item)}\``);
  }
  if ("at" in it && it.at !== undefined && (typeof it.at !== "number" || !Number.isFinite(it.at))) {
    throw new SidekiqArgumentError(`Job 'at' must be a Numeric timestamp: \`${show(item)}\``);
  }
  if (it.tags !== undefined && it.tags !== null && !Array.isArray(it.tags)) throw new SidekiqArgumentError(`Job tags must be an Array: \`${show(item)}\``);
  if (typeof it.retry_for === "number" && it.retry_for > 1_000_000_000) {
    throw new SidekiqArgumentError(`retry_for must be a relative amount of time, e.g. 48.hours \`${show(item)}\``);
  }
}

/**
 * Validates and fills in a job the way the dialect's client does. `defaults`
 * are the class's sidekiq_options (Sidekiq.default_job_options when pushing by
 * class name).
 */
export function normalizeItem(item: PushItem, profile: WireProfile, defaults: Readonly<JobOptions> = DEFAULT_JOB_OPTIONS, now = Date.now()): JobHash {
  validateItem(item);
  const job: JobHash = { ...DEFAULT_JOB_OPTIONS, ...defaults };
  for (const [k, v] of Object.entries(item)) if (v !== undefined) job[k] = v as RubyJsonValue;
  if (job.queue === undefined || job.queue === null || job.queue === "") throw new SidekiqArgumentError("Job must include a valid queue name");
  job.jid ??= newJid();
  job.class = String(job.class);
  job.queue = String(job.queue);
  if (typeof job.retry_for === "number") job.retry_for = Math.trunc(job.retry_for);
  job.created_at ??= encodePayloadTime(now, profile);
  return job;
}
