import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import net from "node:net";
import path from "node:path";
import pg from "pg";
import { startEmbeddedPostgres } from "../../src/db/database.ts";
import { embeddedTestPort } from "../support/db.ts";
import { freePort } from "../support/ports.ts";
import { programGate, PROGRAMS, skipLine, type Program } from "../support/programs.ts";
import { ROOT } from "../support/service.ts";
import { removeOrphans, tempDir, tempPrefix } from "../support/tempDirs.ts";

// The test suite on a stock machine (Node and npm only) and beside another
// checkout: a test that needs an outside program skips, saying how to install
// it, unless its REQUIRE_* variable makes it fail; the run names those skips
// in one line; the embedded test server takes a free port; every folder the
// tests make in the temporary directory comes from one helper that removes it.

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the reporter is the CommonJS file Jest loads
const SkipReporter = require("../support/skipReporter.cjs");

/** A folder holding executables that answer `--version`, for a PATH. */
function fakePrograms(...names: string[]): string {
  const dir = tempDir("fake-bin");
  for (const name of names) {
    writeFileSync(path.join(dir, name), "#!/bin/sh\necho fake\n");
    chmodSync(path.join(dir, name), 0o755);
  }
  return dir;
}

describe("an outside program", () => {
  test("missing from PATH: the tests skip, with one line naming the program and the command that installs it", () => {
    const gate = programGate("prometheus", { PATH: tempDir("empty-path") });
    expect(gate).toEqual({ run: false, line: expect.stringContaining("prometheus") });
    expect(!gate.run && gate.line).toMatch(/install with: apt-get install prometheus; REQUIRE_PROMETHEUS=1 fails instead of skipping$/);
    expect(!gate.run && gate.line.split("\n")).toHaveLength(1);
  });

  test("missing, with its REQUIRE_* variable set: the file fails, saying what to install (not `NaN`)", () => {
    expect(() => programGate("prometheus", { PATH: tempDir("empty-path"), REQUIRE_PROMETHEUS: "1" })).toThrow(
      /^prometheus is missing \(prometheus and promtool not found on PATH or in \/usr\/sbin\) and REQUIRE_PROMETHEUS=1 makes its tests mandatory: install it with `apt-get install prometheus`$/,
    );
  });

  test("on PATH: the tests run (whatever REQUIRE_* says)", () => {
    expect(programGate("prometheus", { PATH: fakePrograms("prometheus", "promtool") }).run).toBe(true);
    expect(programGate("prometheus", { PATH: fakePrograms("prometheus", "promtool"), REQUIRE_PROMETHEUS: "1" }).run).toBe(true);
    // promtool alone is not enough: the dashboard test runs prometheus itself.
    expect(programGate("prometheus", { PATH: fakePrograms("promtool") }).run).toBe(false);
  });

  test("each one names its install command and its REQUIRE_* variable, which .ci/run sets and docs/development.md lists", () => {
    const ci = readFileSync(path.join(ROOT, ".ci", "run"), "utf8");
    const docs = readFileSync(path.join(ROOT, "docs", "development.md"), "utf8");
    for (const [key, program] of Object.entries(PROGRAMS) as Array<[string, Program]>) {
      expect(skipLine(program, "not found")).toContain(`install with: ${program.install}; ${program.requireVariable}=1`);
      expect(docs).toContain(program.requireVariable);
      // The replica test is yet to come; every other program's tests are mandatory in CI.
      if (key !== "replica") expect(ci).toMatch(new RegExp(`\\b${program.requireVariable}=1\\b`));
    }
  });

  test("every test file that runs pgbouncer, prometheus, promtool or pg_dump goes through test/support/programs.ts", () => {
    const files = listFiles(path.join(ROOT, "test")).filter((f) => f.endsWith(".test.ts") && f !== __filename);
    const users = files.filter((f) => /startPgBouncer\(|["'`](promtool|prometheus)["'`],|findPgDump\(|dumpSchema\(|requireProgram\("pg_dump"/.test(readFileSync(f, "utf8")));
    expect(users.map((f) => path.relative(ROOT, f)).sort()).toEqual(
      ["test/graphql/pgbouncer.test.ts", "test/project/backup-restore.test.ts", "test/project/monitoring.test.ts", "test/project/schema-dump.test.ts"].sort(),
    );
    for (const f of users) expect(readFileSync(f, "utf8")).toMatch(/testIfInstalled\("(pgbouncer|prometheus|pg_dump)"\)/);
  });

  test("the run's last lines name the skips for missing programs in one line: each program, its tests, the commands", () => {
    const reporter = new SkipReporter({ rootDir: ROOT });
    const fileOf = (name: ProgramKey, tests: number) => {
      const gate = programGate(name, { PATH: tempDir("empty-path") });
      return {
        testFilePath: path.join(ROOT, "test", `${name}.test.ts`),
        skipped: true,
        testResults: Array.from({ length: tests }, (_, i) => ({ status: "pending", fullName: `${name} ${i}` })),
        console: [{ type: "warn", message: gate.run ? "" : gate.line }],
      };
    };
    const written: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) => written.push(String(chunk)) > 0) as typeof process.stderr.write;
    try {
      reporter.onTestResult(null, fileOf("prometheus", 2));
      reporter.onTestResult(null, fileOf("prometheus", 1));
      reporter.onRunComplete();
    } finally {
      process.stderr.write = write;
    }
    const last = written.join("").trim().split("\n").pop();
    expect(last).toBe("skipped for missing programs: prometheus (3 tests): install with apt-get install prometheus (docs/development.md, Optional programs)");
    expect(SkipReporter.summary(new Map())).toBeNull();
  });
});
type ProgramKey = keyof typeof PROGRAMS;

describe("the embedded test server's port", () => {
  test("TEST_EMBEDDED_PG_PORT where set; else a port free right now, not a fixed one", async () => {
    expect(await embeddedTestPort({ TEST_EMBEDDED_PG_PORT: "54999" }, tempDir("pg-none"))).toBe(54999);
    const port = await embeddedTestPort({}, tempDir("pg-none"));
    expect(port).not.toBe(54339);
    // Free: something can listen on it.
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", resolve));
    await new Promise((resolve) => server.close(resolve));
  });

  test("a server still running on the folder (an earlier run killed before it stopped it) keeps its port: the folder is locked to it", async () => {
    const dir = tempDir("pg-running");
    writeFileSync(path.join(dir, "postmaster.pid"), `${process.pid}\n${dir}\n1700000000\n54777\n`);
    expect(await embeddedTestPort({}, dir)).toBe(54777);
    writeFileSync(path.join(dir, "postmaster.pid"), `999999999\n${dir}\n1700000000\n54777\n`); // not running: a stale file
    expect(await embeddedTestPort({}, dir)).not.toBe(54777);
  });

  test("a data folder started on one port starts again on another", async () => {
    const parent = tempDir("pg-ports");
    chmodSync(parent, 0o755); // root runs the server as the postgres user, which must reach the folder
    const config = (port: number) => ({ EMBEDDED_PG_DIR: path.join(parent, "pg"), EMBEDDED_PG_PORT: port });
    const portOf = async (url: string) => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        return Number((await c.query("show port")).rows[0].port);
      } finally {
        await c.end();
      }
    };
    const first = await freePort();
    const a = await startEmbeddedPostgres(config(first));
    try {
      expect(await portOf(a.url)).toBe(first);
    } finally {
      await a.stop();
    }
    let second = await freePort();
    while (second === first) second = await freePort();
    const b = await startEmbeddedPostgres(config(second));
    try {
      expect(await portOf(b.url)).toBe(second);
    } finally {
      await b.stop();
    }
  }, 120_000);
});

/** Every file under `dir`, node_modules left out. */
function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (name === "node_modules") return [];
    return statSync(full).isDirectory() ? listFiles(full) : [full];
  });
}

describe("folders in the temporary directory", () => {
  test("test/ makes them only through test/support/tempDirs.ts (named with the run's prefix, removed when the file finishes)", () => {
    const others = listFiles(path.join(ROOT, "test"))
      .filter((f) => /\.(ts|cjs|mjs|js)$/.test(f) && !f.endsWith(path.join("support", "tempDirs.ts")) && f !== __filename)
      .flatMap((f) =>
        readFileSync(f, "utf8")
          .split("\n")
          .map((line, i) => ({ where: `${path.relative(ROOT, f)}:${i + 1}`, line }))
          // Drill 2 only looks for the folder src/db/database.ts falls back to.
          .filter(({ line }) => /mkdtemp|tmpdir\(\)/.test(line) && !line.includes("cafe-api-pg-")),
      );
    expect(others).toEqual([]);
  });

  test("a folder left by a run whose process is gone is removed; one of a live run (another checkout's) is kept", () => {
    const dead = path.join(os.tmpdir(), "cafe-test-999999999-left-x");
    const live = path.join(os.tmpdir(), `cafe-test-${process.ppid}-live-x`);
    mkdirSync(dead);
    mkdirSync(live);
    try {
      expect(removeOrphans()).toContain(path.basename(dead));
      expect(existsSync(dead)).toBe(false);
      expect(existsSync(live)).toBe(true);
    } finally {
      rmSync(dead, { recursive: true, force: true });
      rmSync(live, { recursive: true, force: true });
    }
  });

  test("tempDir() makes an empty folder named with the run's prefix", () => {
    const dir = tempDir("probe");
    expect(path.basename(dir).startsWith(`${tempPrefix()}probe-`)).toBe(true);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("the output of passing tests", () => {
  test("figures go through test/support/figures.ts's say() (plain lines): no console.log or console.error in test/, which Jest prints with a header and the file and line it came from", () => {
    // globalSetup.ts runs outside Jest's console; attacker.ts is a child process whose stdout is its answer; install.test.ts writes a script.
    const allowed = ["test/support/globalSetup.ts", "test/drills/attacker.ts", "test/project/install.test.ts"].map((f) => path.join(ROOT, f));
    const noisy = listFiles(path.join(ROOT, "test"))
      .filter((f) => /\.(ts|cjs)$/.test(f) && !allowed.includes(f) && f !== __filename)
      .flatMap((f) =>
        readFileSync(f, "utf8")
          .split("\n")
          .flatMap((line, i) => (/console\.(log|error|info|debug|trace)\(/.test(line) ? [`${path.relative(ROOT, f)}:${i + 1}`] : [])),
      );
    expect(noisy).toEqual([]);
  });
});
