// The fake's jobs as a test compares them, Rails' `enqueued_jobs` hashes: the
// class a test knows (an ActiveJob's own, not the wrapper), the arguments
// DECODED as a handler gets them (GlobalID, BigDecimal, Duration, Symbol,
// Time: server/activejob-args.ts), the queue, `at` and the contract app. The
// assertions and the matchers share what matches and what a failure shows.
import { inspect } from "node:util";
import { AjValue } from "../core/client/activejob.js";
import { activeJobArguments, deserializeArgument } from "../core/server/activejob-args.js";
import type { JsonValue } from "../core/wire/json-scan.js";
import { appOf, Queues, type TestJob } from "./queues.js";

/** A recorded job as a test reads it (Rails' `enqueued_jobs` entries). */
export interface EnqueuedJob {
  /** The class a test knows: an ActiveJob's own class (`wrapped`), else `class`. */
  job: string;
  /** The arguments: an ActiveJob's decoded as its handler gets them, a plain job's as JSON gives them. */
  args: unknown[];
  queue: string;
  /** When a scheduled job runs. */
  at?: Date;
  /** The app whose contract the pushing client gave the job to. */
  app?: string;
  /** The recorded hash itself (`jobs()`'s entry). */
  payload: TestJob;
}

/** What a job must match; absent fields match anything. */
export interface EnqueuedQuery {
  /** The class: an ActiveJob's own or a Sidekiq job's. */
  job?: string;
  /** All the arguments, compared as values: `client.record(...)`, `aj.bigDecimal(...)`, a Date, a plain value. */
  args?: readonly unknown[];
  queue?: string;
  /** When it is scheduled to run: a Date or epoch seconds (to the millisecond). */
  at?: Date | number;
  /** The contract app. */
  app?: string;
}

/** Compares two values: the assertions' own, a matcher's `this.equals` (asymmetric matchers included). */
export type Equals = (actual: unknown, expected: unknown) => boolean;

const isActiveJob = (j: TestJob) => typeof j.wrapped === "string" && Array.isArray(j.args);

/** The decoded view of a recorded job. */
export function enqueued(payload: TestJob): EnqueuedJob {
  const aj = isActiveJob(payload);
  const args = aj ? activeJobArguments(payload.args as JsonValue) : ((payload.args as unknown[]) ?? []);
  const app = appOf(payload);
  return {
    job: String(aj ? payload.wrapped : payload.class),
    args,
    queue: String(payload.queue),
    ...(typeof payload.at === "number" ? { at: new Date(payload.at * 1000) } : {}),
    ...(app !== undefined ? { app } : {}),
    payload,
  };
}

/** Every recorded job matching the query, decoded, queue by queue (Rails' `enqueued_jobs`). */
export function enqueuedJobs(query: EnqueuedQuery = {}): EnqueuedJob[] {
  return matching(Queues.all(), query);
}

/** The jobs of `from` (the fake's, or a list a matcher was given) that match, decoded. */
export function matching(from: readonly TestJob[], query: EnqueuedQuery, equals: Equals = sameValue): EnqueuedJob[] {
  return from.map(enqueued).filter((j) => matches(j, query, equals));
}

/**
 * An expected argument as the decoder would give it back: what the `aj`
 * helpers and `client.record` make is decoded (a record becomes its
 * GlobalIdRef, a Symbol its name, a BigDecimal its text), hashes and arrays
 * through; anything else (a Date, a test runner's asymmetric matcher) as is.
 */
export function expectedArgument(v: unknown): unknown {
  if (v instanceof AjValue) return deserializeArgument(v.json);
  if (Array.isArray(v)) return v.map(expectedArgument);
  if (v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype)
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, expectedArgument(x)]));
  return v;
}

/** Whether a job matches every field the query gives. */
export function matches(j: EnqueuedJob, q: EnqueuedQuery, equals: Equals = sameValue): boolean {
  if (q.job !== undefined && j.job !== q.job) return false;
  if (q.queue !== undefined && j.queue !== q.queue) return false;
  if (q.app !== undefined && j.app !== q.app) return false;
  if (q.at !== undefined) {
    const want = q.at instanceof Date ? q.at.getTime() : q.at * 1000;
    if (j.at === undefined || Math.abs(j.at.getTime() - want) >= 1) return false;
  }
  return q.args === undefined || equals(j.args, expectedArgument(q.args));
}

/**
 * Deep equality of decoded values: arrays and plain hashes by member, class
 * instances (GlobalIdRef, AjDuration...) of one class by field, Dates by
 * time, an integer read back as a bigint equal to the same number.
 */
export function sameValue(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a === "bigint" || typeof b === "bigint")
    return (typeof a === "number" || typeof a === "bigint") && (typeof b === "number" || typeof b === "bigint")
      ? BigInt(a) === BigInt(b)
      : false;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (a instanceof Date || b instanceof Date)
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  if (Array.isArray(a) !== Array.isArray(b) || Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const ob = b as Record<string, unknown>;
  return ka.every((k) => Object.hasOwn(ob, k) && sameValue((a as Record<string, unknown>)[k], ob[k]));
}

/** The class Rails' `deliver_later` enqueues (ActionMailer's `delivery_job`). */
export const MAIL_DELIVERY_JOB = "ActionMailer::MailDeliveryJob";

/** A value in a failure message, on one line. */
export const show = (v: unknown) => inspect(v, { depth: 8, breakLength: Infinity, compact: true });

/** A mail's delivery job as `UserMailer#welcome`, its action's args and params; undefined for any other job. */
function asMail(j: EnqueuedJob | EnqueuedQuery): string | undefined {
  const [mailer, action, how, kw] = (expectedArgument(j.args) as unknown[] | undefined) ?? [];
  if (j.job !== MAIL_DELIVERY_JOB || how !== "deliver_now" || kw === null || typeof kw !== "object") return undefined;
  const { args, params } = kw as { args?: unknown; params?: unknown };
  return `${String(mailer)}#${String(action)} (mail), args: ${show(args ?? [])}${params === undefined ? "" : `, params: ${show(params)}`}`;
}

/** One job as a failure shows it: class, queue, decoded arguments, `at`, app (a mail as its mailer and action). */
export function describeJob(j: EnqueuedJob | EnqueuedQuery): string {
  const mail = asMail(j);
  const parts = [mail ?? j.job ?? "any job"];
  if (j.queue !== undefined) parts.push(`queue: ${show(j.queue)}`);
  if (j.args !== undefined && mail === undefined) parts.push(`args: ${show(expectedArgument(j.args))}`);
  if (j.at !== undefined) parts.push(`at: ${(j.at instanceof Date ? j.at : new Date(j.at * 1000)).toISOString()}`);
  if (j.app !== undefined) parts.push(`app: ${show(j.app)}`);
  return parts.join(", ");
}

/** What was enqueued, for a failure message: every job (of `from`), one a line, or that there is none. */
export function enqueuedInstead(from: readonly TestJob[] = Queues.all()): string {
  const all = from.map(enqueued);
  if (all.length === 0) return "Nothing was enqueued.";
  const shown = all.slice(0, 20).map((j) => `  ${describeJob(j)}`);
  if (all.length > 20) shown.push(`  ... and ${all.length - 20} more`);
  return `Enqueued (${all.length}):\n${shown.join("\n")}`;
}
