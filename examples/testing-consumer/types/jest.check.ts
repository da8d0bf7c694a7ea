// Type-checked only: the matchers on jest's expect (@jest/globals).
/// <reference types="sidekiq-bridge/testing/jest" />
import { expect } from "@jest/globals";
import { jobs } from "sidekiq-bridge/testing";

expect(jobs()).toHaveEnqueued("WelcomeEmailJob", { args: [42], queue: "mailers", at: new Date() });
expect(jobs()).not.toHaveEnqueuedMail("UserMailer", "receipt", { params: { plan: "pro" } });
// @ts-expect-error: the class is a string
expect(jobs()).toHaveEnqueuedActiveJob(42);
