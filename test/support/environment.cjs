// Jest's node environment, plus: once a test file has finished (its afterAll
// hooks included), the folders it made with test/support/tempDirs.ts's
// tempDir() are removed.
const { rmSync } = require("node:fs");
const { TestEnvironment } = require("jest-environment-node");

class CafeTestEnvironment extends TestEnvironment {
  async teardown() {
    for (const dir of this.global.__cafeTempDirs ?? []) {
      try {
        rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
      } catch {
        // a process still writing into it: globalTeardown.ts reports it
      }
    }
    await super.teardown();
  }
}

module.exports = CafeTestEnvironment;
