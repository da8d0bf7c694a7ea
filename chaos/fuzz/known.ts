// Differences the fuzzer found that are not fixed yet, each with its cause.
// A mismatch listed here is printed and counted apart; remove the entry with
// the fix, and the fuzzer checks the cases again like any other.
import { field } from "./generator.js";
import type { Mismatch } from "./report.js";

export interface KnownDifference {
  name: string;
  why: string;
  matches(m: Mismatch, version: string): boolean;
}

export const KNOWN_DIFFERENCES: readonly KnownDifference[] = [
  {
    name: "retry_for 0 on 7.x",
    why:
      "Sidekiq 7.1.3-7.x JobRetry writes failed_at = Time.now.to_f, then tests failed_at + retry_for < Time.now.to_f " +
      "with a second clock read, so retry_for 0 always exhausts the job (dead, or dropped with dead: false). Node's retryForExpired " +
      "(src/server/job-retry.ts) compares with the same `now` it wrote, so it retries instead: its `<` should be `<=`.",
    matches: (m, version) =>
      version.startsWith("7.") &&
      field(m.case, "retry_for") === 0 &&
      // dead (or, with dead: false, nowhere) in Ruby; retried in Node.
      m.problems.every((p) => /^failure: ruby put the job in (dead|nowhere), node in retry$/.test(p)),
  },
];

export function knownDifference(m: Mismatch, version: string): KnownDifference | undefined {
  return KNOWN_DIFFERENCES.find((k) => k.matches(m, version));
}
