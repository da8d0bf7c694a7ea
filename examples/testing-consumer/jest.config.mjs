// Plain ES modules, no transform: jest runs them with node --experimental-vm-modules.
export default {
  testMatch: ["<rootDir>/test/jest/**/*.test.mjs"],
  transform: {},
  setupFiles: ["sidekiq-bridge/testing"],
  setupFilesAfterEnv: ["<rootDir>/test/jest/setup.mjs"],
};
