import { expect } from "@jest/globals";
import { sidekiqMatchers } from "sidekiq-bridge/testing/matchers";

expect.extend(sidekiqMatchers);
