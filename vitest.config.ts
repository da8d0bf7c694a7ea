import { defineConfig } from "vitest/config";
import { resultsFile } from "./harness/results.js";

export default defineConfig({
  test: {
    // Ruby processes and Redis share 2 cores: keep file parallelism modest.
    maxWorkers: 3,
    // Each pass of npm test reports to its own file; .ci/summary.mjs adds them up.
    reporters: ["verbose", ["json", { outputFile: resultsFile() }]],
    projects: [
      { test: { name: "unit", include: ["test/**/*.test.ts"] } },
      {
        test: {
          name: "interop",
          include: ["interop-tests/**/*.test.ts"],
          // Builds the real-Sidekiq matrix and a Redis once per run.
          globalSetup: ["interop-tests/support/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 600_000,
        },
      },
    ],
  },
});
