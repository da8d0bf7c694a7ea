// Prints "N passed, N failed" from vitest's JSON reports (the Redis run and
// the Valkey run). A run that failed before vitest reported (npm ci, gen:check,
// typecheck) counts as one failure.
import { existsSync, readFileSync } from "node:fs";

const status = Number(process.argv[2] ?? 1);
let passed = 0;
let failed = 0;
for (const file of [".vitest-results.json", ".vitest-results-valkey.json"]) {
  if (!existsSync(file)) continue;
  const r = JSON.parse(readFileSync(file, "utf8"));
  passed += r.numPassedTests ?? 0;
  failed += (r.numFailedTests ?? 0) + (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  // A suite that failed to load has no failed tests but must still count.
  for (const f of r.testResults ?? []) if (f.status === "failed" && (f.assertionResults ?? []).length === 0) failed++;
}
if (status !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed`);
