// "sidekiq-bridge/testing/vitest", types only: vitest's assertions (its Matchers, which Assertion extends) get the
// matchers of sidekiq-bridge/testing/matchers (`expect.extend(sidekiqMatchers)`
// adds them at run time). A separate entry, so a jest project never meets
// vitest's types. Reference it once: /// <reference types="sidekiq-bridge/testing/vitest" />.
import type {} from "vitest";
import type { SidekiqMatchers } from "./matchers.js";

declare module "vitest" {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unused-vars, @typescript-eslint/no-explicit-any
  interface Matchers<T = any> extends SidekiqMatchers<void> {}
}

export {};
