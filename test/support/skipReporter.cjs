// A Jest reporter that names every skipped test, and why; and at the end of
// the run, in one line, the programs whose absence skipped tests.
//
// Jest's default reporter prints nothing of a file whose tests were all
// skipped, not even what it logged: a conditional skip's reason (by
// convention a console.warn("skipped…") when the file loads) vanished.
// This prints, for each file with skipped tests, their names and, where the
// whole file was skipped, its messages. A file skipped for a missing
// program prints test/support/programs.ts's skipLine(), read back here.
const path = require("node:path");

/** skipLine() of test/support/programs.ts: the program, and the command that installs it. */
const MISSING_PROGRAM = /^skipped for a missing program: (.+?) \(.*\); install with: (.+?); \w+=1 fails instead of skipping$/;

class SkipReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    /** program -> { tests, install } */
    this.missing = new Map();
  }

  onTestResult(_test, result) {
    const skipped = result.testResults.filter((r) => r.status === "pending" || r.status === "skipped" || r.status === "todo");
    if (!skipped.length) return;
    const file = path.relative(this.rootDir, result.testFilePath);
    const lines = skipped.map((r) => `  skipped: ${r.fullName}`);
    if (result.skipped) {
      for (const entry of result.console ?? []) {
        lines.push(`  ${entry.type}: ${entry.message}`);
        const m = MISSING_PROGRAM.exec(entry.message);
        if (m) {
          const seen = this.missing.get(m[1]) ?? { tests: 0, install: m[2] };
          seen.tests += skipped.length;
          this.missing.set(m[1], seen);
        }
      }
    }
    process.stderr.write(`${file}: ${skipped.length} test(s) skipped\n${lines.join("\n")}\n`);
  }

  onRunComplete() {
    const line = SkipReporter.summary(this.missing);
    if (line) process.stderr.write(`\n${line}\n`);
  }

  /** The run's one line naming the programs whose absence skipped tests (null: none). */
  static summary(missing) {
    if (!missing.size) return null;
    const programs = [...missing].map(([name, { tests }]) => `${name} (${tests} test${tests === 1 ? "" : "s"})`);
    const installs = [...new Set([...missing.values()].map((m) => m.install))];
    return `skipped for missing programs: ${programs.join(", ")}: install with ${installs.join("; ")} (docs/development.md, Optional programs)`;
  }
}

module.exports = SkipReporter;
