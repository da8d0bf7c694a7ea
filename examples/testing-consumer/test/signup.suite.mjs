// The example suite, written once and run by vitest and by jest: each
// runner's test file hands in its own describe/it/expect/beforeEach.
import { assertEnqueuedEmailWith, assertEnqueuedWith, clearAll, drain, jobs } from "sidekiq-bridge/testing";
import { aj } from "sidekiq-bridge";
import { signUp } from "../src/signup.mjs";
import { sent, worker } from "../src/handlers.mjs";

const ada = { id: 42, email: "ada@example.com", plan: "pro" };

export function signupSuite({ describe, it, expect, beforeEach }) {
  beforeEach(() => clearAll());

  describe("signUp", () => {
    it("enqueues WelcomeEmailJob on mailers with the user's id and email", async () => {
      await signUp(ada);
      expect(jobs()).toHaveEnqueued("WelcomeEmailJob", { args: [42, "ada@example.com"], queue: "mailers" });
      assertEnqueuedWith({ job: "WelcomeEmailJob", args: [42, "ada@example.com"], queue: "mailers" });
    });

    it("schedules the reminder for tomorrow, with the user as a record", async () => {
      await signUp(ada);
      expect(jobs()).toHaveEnqueuedActiveJob("ReminderJob", { args: [aj.record("shop", "User", 42)] });
      expect(jobs("ReminderJob")[0].at).toBeGreaterThan(Date.now() / 1000);
    });

    it("delivers the receipt later, with the plan as params", async () => {
      await signUp(ada);
      expect(jobs()).toHaveEnqueuedMail("UserMailer", "receipt", {
        args: [aj.record("shop", "User", 42)],
        params: { plan: "pro" },
      });
      assertEnqueuedEmailWith("UserMailer", "receipt", {
        args: [aj.record("shop", "User", 42)],
        params: { plan: "pro" },
      });
    });
  });

  describe("the WelcomeEmailJob handler", () => {
    it("sends the mail and audits it", async () => {
      await signUp(ada);
      await drain(worker, "WelcomeEmailJob");
      expect(sent).toContain("ada@example.com");
      expect(jobs()).toHaveEnqueued("AuditJob", { args: ["welcome", 42] });
    });
  });
}
