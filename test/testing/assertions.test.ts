// Rails' ActiveJob and ActionMailer test assertions over the fake's jobs:
// arguments compared as decoded values (a record as its GlobalID, a
// BigDecimal as its text, a Duration, a Symbol, a Time), by class, queue,
// `at` and contract app; each failure names what was wanted and lists what
// was enqueued instead.
import { AssertionError } from "node:assert";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  assertEnqueuedEmailWith,
  assertEnqueuedJobs,
  assertEnqueuedWith,
  clearAll,
  enqueuedJobs,
  jobs,
} from "../../src/testing/index.js";
import { Client } from "../../src/core/client/client.js";
import { aj } from "../../src/core/client/activejob.js";
import { AjDuration, GlobalIdRef } from "../../src/core/wire/activejob-values.js";
import { readContractFile, type JobContract } from "../../src/tools/contract/document.js";

const NOWHERE = "redis://127.0.0.1:1";
const client = new Client({ redis: NOWHERE, dialect: 7 });

/** The message an assertion fails with (and that it fails as an AssertionError). */
function failure(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(AssertionError);
    return (e as Error).message;
  }
  throw new Error("the assertion passed");
}

beforeEach(() => clearAll());

describe("assertEnqueuedWith", () => {
  it("finds a plain job by class, arguments and queue, and returns it decoded", async () => {
    await client.job("WelcomeEmailJob", { queue: "mailers" }).performAsync(42, "ada@example.com");
    const found = assertEnqueuedWith({ job: "WelcomeEmailJob", args: [42, "ada@example.com"], queue: "mailers" });
    expect(found).toMatchObject({ job: "WelcomeEmailJob", args: [42, "ada@example.com"], queue: "mailers" });
    expect(found.payload).toBe(jobs("WelcomeEmailJob")[0]);
    assertEnqueuedWith({ job: "WelcomeEmailJob" });
  });

  it("compares an ActiveJob's decoded arguments: a record, BigDecimal, Duration, Symbol, Time, keywords", async () => {
    const at = new Date("2030-01-02T03:04:05.678Z");
    await client
      .activeJob("ChargeJob", { queue: "billing" })
      .performLater(
        aj.record("shop", "User", 7),
        aj.bigDecimal("12.50"),
        aj.duration({ hours: 1 }),
        aj.symbol("card"),
        at,
        aj.kwargs({ retry: true }),
      );
    const found = assertEnqueuedWith({
      job: "ChargeJob",
      queue: "billing",
      // The values as a handler gets them...
      args: [
        new GlobalIdRef("gid://shop/User/7"),
        "12.5",
        new AjDuration(3600, { hours: 1 }),
        "card",
        at,
        { retry: true },
      ],
    });
    expect(found.args[0]).toBeInstanceOf(GlobalIdRef);
    // ... or as the test enqueued them: the same values.
    assertEnqueuedWith({
      job: "ChargeJob",
      args: [
        aj.record("shop", "User", 7),
        aj.bigDecimal("12.5"),
        aj.duration({ hours: 1 }),
        aj.symbol("card"),
        at,
        aj.kwargs({ retry: true }),
      ],
    });
    expect(() => assertEnqueuedWith({ job: "ChargeJob", args: [aj.record("shop", "User", 8)] })).toThrow(
      AssertionError,
    );
  });

  it("matches `at` to the millisecond, as a Date or epoch seconds", async () => {
    await client.job("NudgeJob").performAt(1_900_000_000.25, 1);
    assertEnqueuedWith({ job: "NudgeJob", at: 1_900_000_000.25 });
    assertEnqueuedWith({ job: "NudgeJob", at: new Date(1_900_000_000_250) });
    expect(() => assertEnqueuedWith({ job: "NudgeJob", at: 1_900_000_001 })).toThrow(AssertionError);
    await client.activeJob("LaterJob").set({ waitUntil: 1_900_000_000 }).performLater();
    assertEnqueuedWith({ job: "LaterJob", args: [], at: 1_900_000_000 });
  });

  it("fails naming what it wanted and listing what was enqueued instead (class, queue, decoded args, at)", async () => {
    await client.job("WelcomeEmailJob", { queue: "mailers" }).performAsync(42, "ada@example.com");
    await client
      .activeJob("ChargeJob")
      .set({ waitUntil: 1_900_000_000 })
      .performLater(aj.record("shop", "User", 7));
    expect(failure(() => assertEnqueuedWith({ job: "WelcomeEmailJob", args: [43, "ada@example.com"] }))).toBe(
      [
        "No enqueued job found with WelcomeEmailJob, args: [ 43, 'ada@example.com' ]",
        "Enqueued (2):",
        "  WelcomeEmailJob, queue: 'mailers', args: [ 42, 'ada@example.com' ]",
        "  ChargeJob, queue: 'default', args: [ GlobalIdRef { gid: 'gid://shop/User/7' } ], at: 2030-03-17T17:46:40.000Z",
      ].join("\n"),
    );
  });

  it("fails saying nothing was enqueued when nothing was", () => {
    expect(failure(() => assertEnqueuedWith({ job: "WelcomeEmailJob", queue: "mailers" }))).toBe(
      "No enqueued job found with WelcomeEmailJob, queue: 'mailers'\nNothing was enqueued.",
    );
  });
});

describe("assertEnqueuedJobs", () => {
  it("counts the jobs matching a class, a queue, or all of them", async () => {
    await client.job("A").performAsync(1);
    await client.job("A", { queue: "low" }).performAsync(2);
    await client.activeJob("B").performLater();
    assertEnqueuedJobs(3);
    assertEnqueuedJobs(2, { job: "A" });
    assertEnqueuedJobs(1, { queue: "low" });
    assertEnqueuedJobs(1, { job: "B" });
    assertEnqueuedJobs(0, { job: "C" });
  });

  it("fails with the count it found and what was enqueued", async () => {
    await client.job("A").performAsync(1);
    expect(failure(() => assertEnqueuedJobs(2, { job: "A" }))).toBe(
      "Expected 2 enqueued jobs (A), found 1\nEnqueued (1):\n  A, queue: 'default', args: [ 1 ]",
    );
    expect(failure(() => assertEnqueuedJobs(0))).toBe(
      "Expected 0 enqueued jobs, found 1\nEnqueued (1):\n  A, queue: 'default', args: [ 1 ]",
    );
  });
});

describe("assertEnqueuedEmailWith", () => {
  it("matches the mailer, action, args and params as Rails does (absent args: none; absent params: none)", async () => {
    const mailer = client.mailer("UserMailer");
    await mailer.deliverLater("welcome", [aj.record("shop", "User", 7)], { params: { locale: "fr" } });
    await mailer.deliverLater("goodbye", []);
    assertEnqueuedEmailWith("UserMailer", "welcome", {
      args: [new GlobalIdRef("gid://shop/User/7")],
      params: { locale: "fr" },
    });
    assertEnqueuedEmailWith("UserMailer", "goodbye");
    expect(() => assertEnqueuedEmailWith("UserMailer", "welcome", { args: [aj.record("shop", "User", 7)] })).toThrow(
      AssertionError,
    );
    expect(() => assertEnqueuedEmailWith("UserMailer", "goodbye", { params: {} })).toThrow(AssertionError);
  });

  it("fails showing the mail it wanted and the mails enqueued as mailer#action, args and params", async () => {
    await client.mailer("UserMailer").deliverLater("welcome", [7], { params: { locale: "fr" } });
    expect(
      failure(() => assertEnqueuedEmailWith("UserMailer", "welcome", { args: [8], params: { locale: "fr" } })),
    ).toBe(
      [
        "No enqueued email found: UserMailer#welcome (mail), args: [ 8 ], params: { locale: 'fr' }",
        "Enqueued (1):",
        "  UserMailer#welcome (mail), args: [ 7 ], params: { locale: 'fr' }, queue: 'default'",
      ].join("\n"),
    );
  });
});

describe("the contract app", () => {
  const shop = readContractFile(join(import.meta.dirname, "../contract/fixtures/shop.contract.json"));
  const billing: JobContract = {
    contract: 1,
    app: "billing",
    classes: { WelcomeEmailJob: { kind: "sidekiq", params: [], options: { queue: "billing" } } },
  };

  it("is recorded beside each job its client's contract lists, and queried by jobs, enqueuedJobs and the assertions", async () => {
    const checked = new Client({ redis: NOWHERE, dialect: 7, contract: { contracts: [shop, billing] } });
    await checked.job("WelcomeEmailJob").performAsync(1, "t"); // shop's class options: queue "mailers"
    await checked.job("WelcomeEmailJob", { queue: "billing" }).performAsync();
    await checked.unchecked.job("OtherJob").performAsync();
    expect(jobs({ app: "shop" }).map((j) => j.queue)).toEqual(["mailers"]);
    expect(jobs({ className: "WelcomeEmailJob", app: "billing" }).map((j) => j.queue)).toEqual(["billing"]);
    expect(enqueuedJobs({ job: "OtherJob" })[0]!.app).toBeUndefined();
    assertEnqueuedWith({ job: "WelcomeEmailJob", app: "billing", args: [] });
    assertEnqueuedJobs(1, { app: "shop" });
    expect(failure(() => assertEnqueuedJobs(2, { app: "billing" }))).toMatch(
      /^Expected 2 enqueued jobs \(any job, app: 'billing'\), found 1\nEnqueued \(3\):\n {2}WelcomeEmailJob, queue: 'mailers', args: \[ 1, 't' \], app: 'shop'\n/,
    );
  });
});
