// Sidekiq::Testing's modes: one for the process (`testing("fake")`) and one
// for a block (`testing("inline", worker, async () => ...)`), which Ruby
// keeps per thread and Node per async context, so concurrent tests' blocks
// do not see each other's. A block inside a block is refused, as Ruby does:
// reentrant modes are hard to reason about.
import { AsyncLocalStorage } from "node:async_hooks";
import type { Worker } from "../assembly/worker.js";

/** Sidekiq's testing modes: `fake` records pushes, `inline` runs each at once. */
export type TestMode = "fake" | "inline";

/** A mode, and for inline the worker whose handlers run the jobs. */
export interface ModeSetting {
  mode: TestMode;
  worker?: Worker;
}

/** Sidekiq::Testing::TestModeAlreadySetError: a block mode inside another. */
export class TestModeAlreadySetError extends Error {
  override name = "Sidekiq::Testing::TestModeAlreadySetError";
}

let globalSetting: ModeSetting = { mode: "fake" };
const local = new AsyncLocalStorage<ModeSetting>();

/** The mode a push made now meets: the block's, else the process's. */
export function currentSetting(): ModeSetting {
  return local.getStore() ?? globalSetting;
}

function settingOf(mode: TestMode, worker: Worker | undefined): ModeSetting {
  if (mode === "fake") return { mode };
  if (mode !== "inline") throw new TypeError(`unknown test mode ${JSON.stringify(mode)}: use "fake" or "inline"`);
  if (worker === undefined) throw new TypeError('testing("inline") needs the Worker whose handlers run the jobs');
  return { mode, worker };
}

/**
 * Sets the testing mode (Sidekiq's `Sidekiq.testing!(:fake)`, `fake!`,
 * `inline!`): for the process, or, given a function, for that block only.
 */
export function testing(mode: "fake"): void;
export function testing<T>(mode: "fake", block: () => T | Promise<T>): Promise<T>;
export function testing(mode: "inline", worker: Worker): void;
export function testing<T>(mode: "inline", worker: Worker, block: () => T | Promise<T>): Promise<T>;
export function testing<T>(
  mode: TestMode,
  a?: Worker | (() => T | Promise<T>),
  b?: () => T | Promise<T>,
): void | Promise<T> {
  const block = typeof a === "function" ? a : b;
  const setting = settingOf(mode, typeof a === "function" ? undefined : a);
  if (block === undefined) {
    globalSetting = setting;
    return;
  }
  if (local.getStore() !== undefined)
    return Promise.reject(new TestModeAlreadySetError("Nesting test modes is not supported"));
  return local.run(setting, async () => block());
}
