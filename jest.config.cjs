/** @type {import('jest').Config} */
module.exports = {
  // Node's, removing the temporary folders a file made once it has finished (test/support/tempDirs.ts).
  testEnvironment: "<rootDir>/test/support/environment.cjs",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: {
    "^.+\\.ts$": ["@swc/jest", { jsc: { target: "es2022", parser: { syntax: "typescript" } }, module: { type: "commonjs" } }],
  },
  setupFiles: ["<rootDir>/test/support/env.ts"],
  globalSetup: "<rootDir>/test/support/globalSetup.ts",
  globalTeardown: "<rootDir>/test/support/globalTeardown.ts",
  testTimeout: 60_000,
  // The default output, plus each skipped test and its reason.
  reporters: ["default", "<rootDir>/test/support/skipReporter.cjs"],
  // Each test file starts its own API (and worker) in-process against the
  // shared test database; files run one after another.
  maxWorkers: 1,
};
