// A Jest reporter that names every skipped test, and why.
//
// Jest's default reporter prints nothing of a file whose tests were all
// skipped, not even what it logged: a conditional skip's reason (by
// convention a console.warn("skipped: ...") when the file loads) vanished.
// This prints, for each file with skipped tests, their names and, where the
// whole file was skipped, its messages.
const path = require("node:path");

class SkipReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  onTestResult(_test, result) {
    const skipped = result.testResults.filter((r) => r.status === "pending" || r.status === "skipped" || r.status === "todo");
    if (!skipped.length) return;
    const file = path.relative(this.rootDir, result.testFilePath);
    const lines = skipped.map((r) => `  skipped: ${r.fullName}`);
    if (result.skipped) for (const entry of result.console ?? []) lines.push(`  ${entry.type}: ${entry.message}`);
    process.stderr.write(`${file}: ${skipped.length} test(s) skipped\n${lines.join("\n")}\n`);
  }
}

module.exports = SkipReporter;
