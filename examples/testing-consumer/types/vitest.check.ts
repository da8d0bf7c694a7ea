// Type-checked only: the matchers on vitest's expect.
/// <reference types="sidekiq-bridge/testing/vitest" />
import { expect } from "vitest";
import { jobs } from "sidekiq-bridge/testing";

expect(jobs()).toHaveEnqueued("WelcomeEmailJob", { args: [42], queue: "mailers", at: new Date() });
expect(jobs()).not.toHaveEnqueuedMail("UserMailer", "receipt", { params: { plan: "pro" } });
// @ts-expect-error: the class is a string
expect(jobs()).toHaveEnqueuedActiveJob(42);
