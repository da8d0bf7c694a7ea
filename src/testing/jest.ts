// "sidekiq-bridge/testing/jest", types only: jest's assertions get the
// matchers of sidekiq-bridge/testing/matchers (`expect.extend(sidekiqMatchers)`
// adds them at run time), both as `expect` from @jest/globals types them and
// as @types/jest's global `jest.Matchers`. A separate entry, so a vitest
// project never meets jest's types. Reference it once:
// /// <reference types="sidekiq-bridge/testing/jest" />.
import type {} from "expect";
import type { SidekiqMatchers } from "./matchers.js";

declare module "expect" {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unused-vars
  interface Matchers<R extends void | Promise<void>, T = unknown> extends SidekiqMatchers<R> {}
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace jest {
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unused-vars
    interface Matchers<R, T = {}> extends SidekiqMatchers<R> {}
  }
}

export {};
