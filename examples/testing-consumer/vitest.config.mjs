import { defineConfig } from "vitest/config";

// The fake first, before any module of the app makes its Client.
export default defineConfig({
  test: { include: ["test/vitest/**/*.test.mjs"], setupFiles: ["sidekiq-bridge/testing", "./test/vitest/setup.mjs"] },
});
