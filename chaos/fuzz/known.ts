// Differences the fuzzer found that are not fixed yet, each with its cause.
// A mismatch listed here is printed and counted apart; remove the entry with
// the fix, and the fuzzer checks the cases again like any other.
import type { Mismatch } from "./report.js";

export interface KnownDifference {
  name: string;
  why: string;
  matches(m: Mismatch, version: string): boolean;
}

export const KNOWN_DIFFERENCES: readonly KnownDifference[] = [];

export function knownDifference(m: Mismatch, version: string): KnownDifference | undefined {
  return KNOWN_DIFFERENCES.find((k) => k.matches(m, version));
}
