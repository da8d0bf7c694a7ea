// Rails' ActiveJob::TestHelper and ActionMailer::TestHelper assertions over
// the fake's jobs: `assert_enqueued_with`, `assert_enqueued_jobs`,
// `assert_enqueued_email_with`. They compare decoded values (enqueued.ts), and
// a failure says what was enqueued instead. They throw node's AssertionError,
// which vitest, jest and node:test all report as a failed assertion.
import { AssertionError } from "node:assert";
import {
  describeJob,
  enqueuedInstead,
  enqueuedJobs,
  MAIL_DELIVERY_JOB,
  type EnqueuedJob,
  type EnqueuedQuery,
} from "./enqueued.js";

/** What `assertEnqueuedEmailWith` matches, beside the mailer and action. */
export interface EnqueuedEmailQuery {
  /** The action's arguments (default none, as Rails). */
  args?: readonly unknown[];
  /** A parameterized mailer's `with(params)`; absent: a mail without params, as Rails. */
  params?: Record<string, unknown>;
  queue?: string;
  at?: Date | number;
  app?: string;
}

/** The query a mail matches: its delivery job with [mailer, action, "deliver_now", {params:, args:}]. */
export function mailQuery(mailer: string, action: string, q: EnqueuedEmailQuery = {}): EnqueuedQuery {
  const { args = [], params, ...rest } = q;
  const kw = params === undefined ? { args } : { params, args };
  return { ...rest, job: MAIL_DELIVERY_JOB, args: [mailer, action, "deliver_now", kw] };
}

/** The first job matching, or undefined. */
function findEnqueued(query: EnqueuedQuery): EnqueuedJob | undefined {
  return enqueuedJobs(query)[0];
}

function fail(message: string): never {
  throw new AssertionError({ message });
}

/**
 * Rails' `assert_enqueued_with(job:, args:, queue:, at:)`: a recorded job
 * matches every field given (an ActiveJob's arguments decoded, so
 * `client.record("User", 1)` or its GlobalIdRef, `aj.bigDecimal("9.99")` or
 * "9.99" compare equal); returns it. Fails showing what was enqueued.
 */
export function assertEnqueuedWith(query: EnqueuedQuery): EnqueuedJob {
  const found = findEnqueued(query);
  if (found === undefined) fail(`No enqueued job found with ${describeJob(query)}\n${enqueuedInstead()}`);
  return found;
}

/** Rails' `assert_enqueued_jobs(n, only:, queue:)`: exactly `n` recorded jobs match the query. */
export function assertEnqueuedJobs(n: number, query: Omit<EnqueuedQuery, "args" | "at"> = {}): void {
  const count = enqueuedJobs(query).length;
  if (count !== n)
    fail(
      `Expected ${n} enqueued job${n === 1 ? "" : "s"}${query.job || query.queue || query.app ? ` (${describeJob(query)})` : ""}, found ${count}\n${enqueuedInstead()}`,
    );
}

/**
 * ActionMailer's `assert_enqueued_email_with(Mailer, :action, args:, params:)`:
 * `deliverLater` of that action with these arguments (none when absent) and
 * params (none when absent), as Rails matches them; returns the job.
 */
export function assertEnqueuedEmailWith(mailer: string, action: string, query: EnqueuedEmailQuery = {}): EnqueuedJob {
  const wanted = mailQuery(mailer, action, query);
  const found = findEnqueued(wanted);
  if (found === undefined) fail(`No enqueued email found: ${describeJob(wanted)}\n${enqueuedInstead()}`);
  return found;
}
