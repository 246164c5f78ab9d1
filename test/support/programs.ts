import { spawnSync } from "node:child_process";
import path from "node:path";
import { findPgDump } from "../../scripts/dump-schema.ts";

// Programs outside Node and npm that some tests need, in one place: where
// each is looked for, the command that installs it, and the variable that
// makes its tests mandatory. `npm test` on a machine with only Node and npm
// skips those tests, with one line each (test/support/skipReporter.cjs sums
// them up at the end); with the variable set (.ci/run sets them all) a
// missing program fails the file, saying what to install.

export interface Program {
  /** What the tests run (the summary's name). */
  name: string;
  /** The command that installs it on Debian or Ubuntu. */
  install: string;
  /** `1`: its tests fail, rather than skip, where it is missing. */
  requireVariable: string;
  /** Where it is (a path, or a name on PATH), or why not. */
  find(env: NodeJS.ProcessEnv): { found: string } | { missing: string };
}

/** The first of `names` that runs with `--version`, on `env.PATH` and then in the sbin folders (Debian puts daemons there, outside a user's PATH). */
function onPath(env: NodeJS.ProcessEnv, ...names: string[]): { found: string } | { missing: string } {
  const dirs = [...(env.PATH ?? "").split(path.delimiter).filter(Boolean), "/usr/sbin", "/usr/local/sbin"];
  const absent: string[] = [];
  for (const name of names) {
    const found = dirs.map((d) => path.join(d, name)).find((bin) => !spawnSync(bin, ["--version"], { stdio: "ignore", timeout: 10_000 }).error);
    if (!found) absent.push(name);
    else if (names.length === 1) return { found };
  }
  return absent.length ? { missing: `${absent.join(" and ")} not found on PATH or in /usr/sbin` } : { found: names.join(", ") };
}

export const PROGRAMS = {
  pgbouncer: {
    name: "pgbouncer",
    install: "apt-get install pgbouncer",
    requireVariable: "REQUIRE_PGBOUNCER",
    find: (env) => onPath(env, "pgbouncer"),
  },
  prometheus: {
    name: "prometheus",
    install: "apt-get install prometheus",
    requireVariable: "REQUIRE_PROMETHEUS",
    find: (env) => onPath(env, "prometheus", "promtool"),
  },
  pg_dump: {
    name: "pg_dump",
    install: `apt-get install postgresql-client-${Number(process.env.CAFE_TEST_SERVER_MAJOR) || 17} (PostgreSQL's apt repository), or set PG_DUMP`,
    requireVariable: "REQUIRE_PG_DUMP",
    find: () => {
      try {
        return { found: findPgDump(Number(process.env.CAFE_TEST_SERVER_MAJOR)) };
      } catch (e) {
        return { missing: (e as Error).message.replace(/\. Install .*/, "") };
      }
    },
  },
  // Reserved for a test of a streaming replica (Debian's PostgreSQL server binaries).
  replica: {
    name: "postgresql (Debian's server binaries, for a replica)",
    install: "apt-get install postgresql",
    requireVariable: "REQUIRE_REPLICA",
    find: (env) => onPath(env, "pg_ctlcluster"),
  },
} satisfies Record<string, Program>;

export type ProgramName = keyof typeof PROGRAMS;

/** The one line a skipped file prints; skipReporter.cjs reads the program and the command back from it (keep the two in step). */
export function skipLine(program: Program, reason: string): string {
  return `skipped for a missing program: ${program.name} (${reason}); install with: ${program.install}; ${program.requireVariable}=1 fails instead of skipping`;
}

/**
 * Whether the tests that need `name` run here: "run" where it is found;
 * "skip" (with the line to print) where it is missing; and where it is
 * missing but its REQUIRE_* variable is set, an Error saying what to install.
 */
export function programGate(name: ProgramName, env: NodeJS.ProcessEnv = process.env): { run: true; path: string } | { run: false; line: string } {
  const program: Program = PROGRAMS[name];
  const where = program.find(env);
  if ("found" in where) return { run: true, path: where.found };
  if (env[program.requireVariable])
    throw new Error(`${program.name} is missing (${where.missing}) and ${program.requireVariable}=${env[program.requireVariable]} makes its tests mandatory: install it with \`${program.install}\``);
  return { run: false, line: skipLine(program, where.missing) };
}

/**
 * `test`, or `test.skip` where `name` is missing (printing the one line
 * once); throws (failing the file, readably) where it is missing and required.
 */
export function testIfInstalled(name: ProgramName): jest.It {
  const gate = programGate(name);
  if (gate.run) return test;
  console.warn(gate.line);
  return test.skip;
}

/** The program's path; throws saying how to install it where it is missing (for callers that cannot skip: `TEST_PGBOUNCER=1`'s globalSetup). */
export function requireProgram(name: ProgramName, why: string): string {
  const program: Program = PROGRAMS[name];
  const where = program.find(process.env);
  if ("found" in where) return where.found;
  throw new Error(`${program.name} is missing (${where.missing}) and ${why} needs it: install it with \`${program.install}\``);
}
