import { defineConfig } from "vitest/config";
import { resultsFile } from "./harness/results.js";
import { excludedFrom, interopIncluded } from "./interop-tests/passes.js";
import { LongFilesFirst } from "./interop-tests/support/sequencer.js";

// Every push in this project's tests is validated against schema/ (the
// client's default is off; the forked test workers inherit this).
process.env.SIDEKIQ_BRIDGE_VALIDATE ??= "1";

const pass = process.env.SIDEKIQ_BRIDGE_PASS;
// Which passes leave out which files, each with its reason: interop-tests/passes.ts.
const exclude = excludedFrom(pass);

export default defineConfig({
  test: {
    // Ruby processes and Redis share 2 cores. The first pass runs alone and
    // leaves a third of them idle with 3 files at once (most tests wait on
    // pollers and heartbeats), so it runs 4; the two repeat passes run side
    // by side, 3 each.
    maxWorkers: pass ? 3 : 4,
    // Known long files start first, also in a fresh clone with no timings.
    sequence: { sequencer: LongFilesFirst },
    // Each pass of npm test reports to its own file; .ci/summary.mjs adds them up.
    reporters: ["verbose", ["json", { outputFile: resultsFile() }]],
    projects: [
      { test: { name: "unit", include: ["test/**/*.test.ts"] } },
      {
        test: {
          name: "interop",
          include: interopIncluded(pass),
          exclude,
          // Builds the real-Sidekiq matrix and a Redis once per run.
          globalSetup: ["interop-tests/support/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 600_000,
        },
      },
    ],
  },
});
