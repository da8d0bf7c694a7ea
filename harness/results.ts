// Where a vitest run writes its JSON report (.ci/summary.mjs adds them up), and
// what the run was: backend, server and Node version, beside the report.
import { writeFileSync } from "node:fs";

/** SIDEKIQ_BRIDGE_RESULTS names the report; each repeat pass has its own by default. */
export function resultsFile(): string {
  const pass = process.env.SIDEKIQ_BRIDGE_PASS;
  return (
    process.env.SIDEKIQ_BRIDGE_RESULTS ??
    (pass === "repeat" ? ".vitest-results-valkey.json" : pass ? `.vitest-results-${pass}.json` : ".vitest-results.json")
  );
}

export interface PassInfo {
  backend: "local" | "docker";
  /** "Redis 7.0.15", "Valkey 8.1.1"; absent when no server was started. */
  server?: string;
  node: string;
  /** "Bun 1.4.5", "Deno 2.9.6": the JavaScript runtime when it is not Node (process.version is then an emulated Node's). */
  runtime?: string;
  /** Why the pass could not run its tests (they are reported as skipped). */
  unavailable?: string;
}

export function writePassInfo(info: PassInfo): void {
  writeFileSync(`${resultsFile()}.pass.json`, `${JSON.stringify(info)}\n`);
}
