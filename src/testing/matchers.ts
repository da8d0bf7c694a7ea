// "sidekiq-bridge/testing/matchers": the testing entry's assertions as
// matchers, one object for `expect.extend` in vitest and in jest alike
// (both call a matcher with `this.isNot` and `this.equals`, which also
// understands their asymmetric matchers, `expect.any(Number)`). It names no
// test runner's type: the runners' interfaces are augmented by the type-only
// entries sidekiq-bridge/testing/vitest and sidekiq-bridge/testing/jest.
import { mailQuery, type EnqueuedEmailQuery } from "./assertions.js";
import { describeJob, enqueuedInstead, matching, show, type Equals, type EnqueuedQuery } from "./enqueued.js";
import type { TestJob } from "./queues.js";
import "./index.js";

/** What `toHaveEnqueued` and `toHaveEnqueuedActiveJob` match beside the class; absent fields match anything. */
export type EnqueuedOptions = Omit<EnqueuedQuery, "job">;

/** The matchers, typed for a runner's assertion object (`R`: what a matcher returns there). */
export interface SidekiqMatchers<R = unknown> {
  /** `expect(jobs()).toHaveEnqueued("HardJob", { args, queue, at, app })`: a job of that class (an ActiveJob's own class too). */
  toHaveEnqueued(className: string, options?: EnqueuedOptions): R;
  /** The same, of an ActiveJob (enqueued through the Sidekiq adapter's wrapper), its arguments decoded. */
  toHaveEnqueuedActiveJob(className: string, options?: EnqueuedOptions): R;
  /** `deliverLater` of a mailer's action with these args (none when absent) and params (none when absent). */
  toHaveEnqueuedMail(mailer: string, action: string, options?: EnqueuedEmailQuery): R;
}

/** What vitest and jest give a matcher as `this`: the part these use. */
interface MatcherContext {
  isNot: boolean;
  equals: Equals;
}

interface MatcherResult {
  pass: boolean;
  message: () => string;
}

function jobsGiven(received: unknown, matcher: string): readonly TestJob[] {
  if (Array.isArray(received)) return received as TestJob[];
  throw new TypeError(
    `expect(...).${matcher}: expect the fake's jobs, e.g. expect(jobs()).${matcher}(...) or expect(jobs({ queue: "mailers" })), not ${show(received)}`,
  );
}

function result(
  ctx: MatcherContext,
  received: unknown,
  matcher: string,
  query: EnqueuedQuery,
  only: (j: TestJob) => boolean = () => true,
): MatcherResult {
  const from = jobsGiven(received, matcher);
  const found = matching(from.filter(only), query, (a, b) => ctx.equals(a, b))[0];
  const wanted = describeJob(query);
  return {
    pass: found !== undefined,
    message: () =>
      found === undefined
        ? `expected an enqueued job with ${wanted}\n${enqueuedInstead(from)}`
        : `expected no enqueued job with ${wanted}, but found ${describeJob(found)}`,
  };
}

/** For `expect.extend(sidekiqMatchers)`, in vitest or jest: `toHaveEnqueued`, `toHaveEnqueuedActiveJob`, `toHaveEnqueuedMail`. */
export const sidekiqMatchers = {
  toHaveEnqueued(this: MatcherContext, received: unknown, className: string, options: EnqueuedOptions = {}) {
    return result(this, received, "toHaveEnqueued", { ...options, job: className });
  },
  toHaveEnqueuedActiveJob(this: MatcherContext, received: unknown, className: string, options: EnqueuedOptions = {}) {
    return result(this, received, "toHaveEnqueuedActiveJob", { ...options, job: className }, (j) => "wrapped" in j);
  },
  toHaveEnqueuedMail(
    this: MatcherContext,
    received: unknown,
    mailer: string,
    action: string,
    options: EnqueuedEmailQuery = {},
  ) {
    return result(this, received, "toHaveEnqueuedMail", mailQuery(mailer, action, options));
  },
};
