// A time Ruby read or wrote, checked against the Node steps before and after
// it: ordered by events, so a loaded machine cannot fail it.
import { expect } from "vitest";

/** lo - eps <= x <= hi + eps: a value Ruby read or wrote between two Node steps. */
export function between(x: number, lo: number, hi: number, what: string, eps = 0.01): void {
  expect(x, `${what}: Ruby ${x} vs Node ${lo}..${hi}`).toBeGreaterThanOrEqual(lo - eps);
  expect(x, `${what}: Ruby ${x} vs Node ${lo}..${hi}`).toBeLessThanOrEqual(hi + eps);
}
