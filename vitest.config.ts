import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "interop-tests/**/*.test.ts"],
    globalSetup: ["interop-tests/support/global-setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 600_000,
    // Ruby processes and Redis share 2 cores: keep file parallelism modest.
    maxWorkers: 3,
    reporters: ["verbose", ["json", { outputFile: ".vitest-results.json" }]],
  },
});
