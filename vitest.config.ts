import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Ruby processes and Redis share 2 cores: keep file parallelism modest.
    maxWorkers: 3,
    // The Valkey run (npm run test:valkey) reports to its own file; .ci/summary.mjs adds both.
    reporters: [
      "verbose",
      [
        "json",
        {
          outputFile:
            process.env.SIDEKIQ_BRIDGE_SERVER === "valkey" ? ".vitest-results-valkey.json" : ".vitest-results.json",
        },
      ],
    ],
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
