// The matchers through vitest's own expect.extend (the consumer project runs
// them under jest too): decoded arguments, the runner's asymmetric matchers,
// `.not`, and each failure message listing what was enqueued instead.
import { beforeEach, describe, expect, it } from "vitest";
import { clearAll, jobs } from "../../src/testing/index.js";
import { sidekiqMatchers } from "../../src/testing/matchers.js";
import type {} from "../../src/testing/vitest.js";
import { Client } from "../../src/core/client/client.js";
import { aj } from "../../src/core/client/activejob.js";
import { GlobalIdRef } from "../../src/core/wire/activejob-values.js";

expect.extend(sidekiqMatchers);

const client = new Client({ redis: "redis://127.0.0.1:1", dialect: 8 });

/** The message an expectation fails with. */
function failure(fn: () => void): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("the expectation passed");
}

beforeEach(() => clearAll());

describe("toHaveEnqueued", () => {
  it("matches class, args, queue and at, with the runner's asymmetric matchers", async () => {
    await client.job("WelcomeEmailJob", { queue: "mailers" }).performAsync(42, "ada@example.com");
    await client.job("NudgeJob").performAt(1_900_000_000, 42);
    expect(jobs()).toHaveEnqueued("WelcomeEmailJob", { args: [42, "ada@example.com"], queue: "mailers" });
    expect(jobs()).toHaveEnqueued("WelcomeEmailJob", { args: [expect.any(Number), expect.stringContaining("@")] });
    expect(jobs()).toHaveEnqueued("NudgeJob", { at: new Date(1_900_000_000_000) });
    expect(jobs({ queue: "default" })).not.toHaveEnqueued("WelcomeEmailJob");
    expect(jobs()).not.toHaveEnqueued("WelcomeEmailJob", { queue: "default" });
  });

  it("fails listing what was enqueued instead, in the jobs it was given", async () => {
    await client.job("WelcomeEmailJob", { queue: "mailers" }).performAsync(42, "ada@example.com");
    expect(failure(() => expect(jobs()).toHaveEnqueued("WelcomeEmailJob", { args: [43, "ada@example.com"] }))).toBe(
      "expected an enqueued job with WelcomeEmailJob, args: [ 43, 'ada@example.com' ]\n" +
        "Enqueued (1):\n  WelcomeEmailJob, queue: 'mailers', args: [ 42, 'ada@example.com' ]",
    );
    expect(failure(() => expect(jobs({ queue: "default" })).toHaveEnqueued("WelcomeEmailJob"))).toBe(
      "expected an enqueued job with WelcomeEmailJob\nNothing was enqueued.",
    );
  });

  it("under .not, fails naming the job it found", async () => {
    await client.job("WelcomeEmailJob", { queue: "mailers" }).performAsync(42, "ada@example.com");
    expect(failure(() => expect(jobs()).not.toHaveEnqueued("WelcomeEmailJob", { queue: "mailers" }))).toBe(
      "expected no enqueued job with WelcomeEmailJob, queue: 'mailers', but found WelcomeEmailJob, queue: 'mailers', args: [ 42, 'ada@example.com' ]",
    );
  });

  it("refuses what is not a list of the fake's jobs, saying what to pass", () => {
    expect(() => expect(client).toHaveEnqueued("WelcomeEmailJob")).toThrow(
      /^expect\(\.\.\.\)\.toHaveEnqueued: expect the fake's jobs, e\.g\. expect\(jobs\(\)\)\.toHaveEnqueued\(\.\.\.\)/,
    );
  });
});

describe("toHaveEnqueuedActiveJob", () => {
  it("matches an ActiveJob's decoded arguments, and not a plain job of that name", async () => {
    await client.activeJob("ChargeJob").performLater(aj.record("shop", "User", 7), aj.bigDecimal("9.90"));
    await client.job("PlainJob").performAsync(1);
    expect(jobs()).toHaveEnqueuedActiveJob("ChargeJob", { args: [new GlobalIdRef("gid://shop/User/7"), "9.9"] });
    expect(jobs()).toHaveEnqueuedActiveJob("ChargeJob", { args: [aj.record("shop", "User", 7), expect.any(String)] });
    expect(jobs()).toHaveEnqueued("ChargeJob");
    expect(jobs()).not.toHaveEnqueuedActiveJob("PlainJob");
  });

  it("fails showing the decoded arguments enqueued", async () => {
    await client.activeJob("ChargeJob").performLater(aj.record("shop", "User", 7));
    expect(
      failure(() => expect(jobs()).toHaveEnqueuedActiveJob("ChargeJob", { args: [aj.record("shop", "User", 8)] })),
    ).toBe(
      "expected an enqueued job with ChargeJob, args: [ GlobalIdRef { gid: 'gid://shop/User/8' } ]\n" +
        "Enqueued (1):\n  ChargeJob, queue: 'default', args: [ GlobalIdRef { gid: 'gid://shop/User/7' } ]",
    );
  });
});

describe("toHaveEnqueuedMail", () => {
  it("matches the mailer, action, args and params", async () => {
    await client.mailer("UserMailer").deliverLater("welcome", [7], { params: { locale: "fr" } });
    expect(jobs()).toHaveEnqueuedMail("UserMailer", "welcome", { args: [7], params: { locale: "fr" } });
    expect(jobs()).not.toHaveEnqueuedMail("UserMailer", "welcome", { args: [7] });
  });

  it("fails showing the mails enqueued as mailer#action", async () => {
    await client.mailer("UserMailer").deliverLater("welcome", [7]);
    expect(failure(() => expect(jobs()).toHaveEnqueuedMail("UserMailer", "goodbye", { args: [7] }))).toBe(
      "expected an enqueued job with UserMailer#goodbye (mail), args: [ 7 ]\n" +
        "Enqueued (1):\n  UserMailer#welcome (mail), args: [ 7 ], queue: 'default'",
    );
  });
});
