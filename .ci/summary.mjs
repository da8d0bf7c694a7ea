// Prints each pass of npm test with its backend, server and Node version, then,
// last, the plain total "N passed, N failed" from vitest's JSON reports (written
// beside each report by the interop global setup). A run that failed before
// vitest reported (npm ci, gen:check, typecheck) counts as one failure. Tests
// of a pass that could not run (no Docker engine) are counted as skipped, with
// the reason; any other skipped test counts as a failure.
import { existsSync, readFileSync } from "node:fs";

const PASSES = [
  [".vitest-results.json", "unit + interop"],
  [".vitest-results-valkey.json", "unit + interop"],
  [".vitest-results-docker.json", "interop"],
  [".vitest-results-bun.json", "unit + interop subset"],
  [".vitest-results-deno.json", "unit + interop subset"],
];
const status = Number(process.argv[2] ?? 1);
let passed = 0;
let failed = 0;
let skipped = 0;
const parts = [];
for (const [file, projects] of PASSES) {
  if (!existsSync(file)) continue;
  const r = JSON.parse(readFileSync(file, "utf8"));
  const info = existsSync(`${file}.pass.json`) ? JSON.parse(readFileSync(`${file}.pass.json`, "utf8")) : {};
  const p = r.numPassedTests ?? 0;
  let f = r.numFailedTests ?? 0;
  const pending = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  // A suite that failed to load has no failed tests but must still count.
  for (const t of r.testResults ?? []) if (t.status === "failed" && (t.assertionResults ?? []).length === 0) f++;
  let s = 0;
  if (info.unavailable) s = pending;
  else f += pending;
  passed += p;
  failed += f;
  skipped += s;
  // From the run's start to its last file's end (global setup and teardown not included).
  const end = Math.max(0, ...(r.testResults ?? []).map((t) => t.endTime ?? 0));
  const minutes = r.startTime && end ? ((end - r.startTime) / 60_000).toFixed(1) : "?";
  // On Bun and Deno, info.node is the Node release they emulate: the runtime is named instead.
  const runtime = info.runtime ?? (info.node ? `Node ${info.node.replace(/^v/, "")}` : undefined);
  const what = [info.backend ?? "?", info.server, runtime].filter(Boolean).join(", ");
  parts.push(
    `[${what}; ${projects}] ${p} passed, ${f} failed${s ? `, ${s} skipped (${info.unavailable})` : ""}, ${minutes} min`,
  );
}
if (status !== 0 && failed === 0) failed = 1;
// Each pass first; CI reads the last line, the plain total.
for (const p of parts) console.log(`  ${p}`);
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
