// What a sweep file passed, on which release, for docs/SUPPORT.md: each file
// writes .vitest-results-support-<name>.json (ignored by git) after its
// tests; `npm run support:table -- --verify` checks every cell the table
// says is run against it.
import { writeFileSync } from "node:fs";
import { afterAll } from "vitest";

/** The report a sweep file writes. */
export interface SupportResults {
  /** The releases the file ran on. */
  releases: string[];
  /** Check keys (a sweep check's id, an add-on's folder) that passed, by release. */
  passed: Record<string, string[]>;
}

export const supportResultsFile = (name: string): string => `.vitest-results-support-${name}.json`;

/** Starts a file's report (written after its last test); returns `record(release, key)`. */
export function supportResults(name: string, releases: readonly string[]): (release: string, key: string) => void {
  const results: SupportResults = { releases: [...releases], passed: {} };
  afterAll(() => writeFileSync(supportResultsFile(name), `${JSON.stringify(results, null, 2)}\n`));
  return (release, key) => (results.passed[release] ??= []).push(key);
}
