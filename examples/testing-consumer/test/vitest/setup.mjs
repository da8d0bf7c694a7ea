import { expect } from "vitest";
import { sidekiqMatchers } from "sidekiq-bridge/testing/matchers";

expect.extend(sidekiqMatchers);
