import { chmodSync } from "node:fs";
import path from "node:path";
import { serverUrl } from "../support/db.ts";
import { dropDatabase } from "../../src/db/database.ts";
import { freePort } from "../support/ports.ts";
import { alive, commandLine, descendants, gone, nodeVersionOn, pathWithNode, registryNode, startNpm, type Started } from "../support/processes.ts";
import { waitUntil } from "../support/wait.ts";
import { tempDir } from "../support/tempDirs.ts";

// A supervisor (systemd, a container runtime, a process manager) stops the
// service with SIGTERM to the process it started: here `npm start` (and
// start:api, start:worker, the cafe CLI). Everything that process started
// (npm's script, the launcher, Node 24 where the machine's Node is older,
// the service, the embedded PostgreSQL and its backends) is gone within
// 15 s, npm exits 0, and the log says "stopped" with no warning or error
// line. On the machine's own Node (Debian's 20 goes through the launcher,
// scripts/node.mjs) and on the oldest Node the project supports, 22.18.

const STOP_WITHIN_MS = 15_000;
const MINIMUM_NODE = "22.18";
const MACHINE_PATH = pathWithNode();
const MACHINE_NODE = nodeVersionOn(MACHINE_PATH);
// One embedded data folder for every case (initialised once: the first start is the slow one).
// Readable by others: as root, the server runs as the postgres OS user.
const PG_PARENT = tempDir("signals");
chmodSync(PG_PARENT, 0o755);
const PG_DIR = path.join(PG_PARENT, "pg");
const [machineMajor, machineMinor] = MACHINE_NODE.slice(1).split(".").map(Number);
const THROUGH_LAUNCHER = machineMajor! < 22 || (machineMajor === 22 && machineMinor! < 18);

interface Run {
  name: string;
  npm: Started;
  tree: number[];
}

/** Starts `npm <args>`, waits for `ready` in its log, notes its process tree. */
async function start(name: string, args: string[], env: Record<string, string>, ready: string, PATH: string, ownGroup = false): Promise<Run> {
  const npm = startNpm(args, { PATH, LOG_LEVEL: "info", NODE_ENV: "development", ...env }, { ownGroup });
  await waitUntil(`${name}: "${ready}" in its log`, () => npm.stdout().includes(ready) || npm.proc.exitCode !== null, 180_000, 200);
  if (npm.proc.exitCode !== null) throw new Error(`${name} exited early (${npm.proc.exitCode}):\n${npm.stdout()}\n${npm.stderr()}`);
  return { name, npm, tree: descendants(npm.proc.pid!) };
}

/** The JSON log lines of a run (the npm banner and the launcher's notice are not JSON). */
const logLines = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { level: number; msg: string });

/** SIGTERM to the npm process; then what a supervisor checks. */
async function stopAndCheck(run: Run, { embedded, ctrlC = false }: { embedded: boolean; ctrlC?: boolean }) {
  const { npm, tree } = run;
  const postgres = tree.filter((p) => /postgres/.test(commandLine(p)));
  // The tree is what it should be: a service, and the embedded server when there is one.
  expect(tree.some((p) => /src\/main\.ts/.test(commandLine(p)))).toBe(true);
  expect(postgres.length > 0).toBe(embedded);
  const sent = Date.now();
  if (ctrlC) process.kill(-npm.proc.pid!, "SIGINT");
  else npm.proc.kill("SIGTERM");
  const left = await gone([npm.proc.pid!, ...tree], STOP_WITHIN_MS);
  const exit = await npm.exited;
  const context = `${run.name}\nstdout:\n${npm.stdout()}\nstderr:\n${npm.stderr()}`;
  expect({ left: left.map((p) => `${p} ${commandLine(p)}`), context: left.length ? context : "" }).toEqual({ left: [], context: "" });
  expect({ exit, context: exit.code === 0 ? "" : context }).toEqual({ exit: { code: 0, signal: null }, context: "" });
  const lines = logLines(npm.stdout());
  expect(lines.filter((l) => l.level >= 40)).toEqual([]);
  expect(lines.at(-1)?.msg).toBe("stopped");
  expect(npm.stderr()).not.toMatch(/error|warn|^\s+at /im);
  return Date.now() - sent;
}

function cases(nodeLabel: string, getPath: () => string) {
  const timings: Record<string, number> = {};
  // One plain line (as test/support/figures.ts's report()).
  afterAll(() =>
    process.stderr.write(
      `[signals] ${nodeLabel}: signal -> all gone in ${Object.entries(timings)
        .map(([k, v]) => `${k} ${v} ms`)
        .join(", ")}\n`,
    ),
  );

  test(`npm start with the embedded PostgreSQL: SIGTERM to npm stops the service, then PostgreSQL; exit 0, "stopped", no warning`, async () => {
    const [port, pgPort] = [await freePort(), await freePort()];
    const run = await start(
      "npm start (embedded)",
      ["start"],
      { PORT: String(port), EMBEDDED_PG_DIR: PG_DIR, EMBEDDED_PG_PORT: String(pgPort), DATABASE_URL: "" },
      '"msg":"worker started"',
      getPath(),
    );
    timings["start (embedded)"] = await stopAndCheck(run, { embedded: true });
    expect(run.tree.filter(alive)).toEqual([]);
  }, 240_000);

  test(`npm start with the embedded PostgreSQL: Ctrl-C (SIGINT to the terminal's whole process group) stops the service first, then PostgreSQL, without a warning`, async () => {
    const [port, pgPort] = [await freePort(), await freePort()];
    const run = await start(
      "npm start (embedded, Ctrl-C)",
      ["start"],
      { PORT: String(port), EMBEDDED_PG_DIR: PG_DIR, EMBEDDED_PG_PORT: String(pgPort), DATABASE_URL: "" },
      '"msg":"worker started"',
      getPath(),
      true,
    );
    timings["Ctrl-C (embedded)"] = await stopAndCheck(run, { embedded: true, ctrlC: true });
  }, 240_000);

  // Its own database, made anew by the first start (a name of its own per
  // test database, so runs against different test databases never share it).
  const databaseName = `${new URL(process.env.CAFE_TEST_DATABASE_URL ?? "postgres://x/cafe_test").pathname.slice(1)}_signals`.slice(0, 60);
  const database = serverUrl(databaseName);
  beforeAll(() => dropDatabase(serverUrl("postgres"), databaseName));
  for (const [script, ready] of [
    ["start", '"msg":"worker started"'],
    ["start:api", '"msg":"API listening"'],
    ["start:worker", '"msg":"worker started"'],
  ] as const) {
    test(`npm run ${script} with DATABASE_URL: SIGTERM to npm leaves nothing running; exit 0, "stopped", no warning`, async () => {
      const run = await start(`npm run ${script}`, ["run", script], { PORT: String(await freePort()), DATABASE_URL: database }, ready, getPath());
      timings[script] = await stopAndCheck(run, { embedded: false });
    }, 120_000);
  }

  test("npm run cafe (the CLI, waiting for a password): SIGTERM to npm leaves nothing running", async () => {
    const npm = startNpm(["run", "cafe", "--", "add-staff", "--email", "x@example.com", "--name", "X", "--role", "barista"], { PATH: getPath(), DATABASE_URL: database });
    // Waiting on standard input, which stays open.
    await waitUntil("the CLI's own process", () => descendants(npm.proc.pid!).some((p) => /src\/cli\.ts/.test(commandLine(p))), 60_000, 100);
    const tree = descendants(npm.proc.pid!);
    npm.proc.kill("SIGTERM");
    expect((await gone([npm.proc.pid!, ...tree], STOP_WITHIN_MS)).map(commandLine)).toEqual([]);
    // Interrupted, not done: npm reports the signal (no account was added).
    expect(await npm.exited).toEqual({ code: null, signal: "SIGTERM" });
    expect(npm.stderr()).not.toMatch(/^\s+at /m);
  }, 90_000);
}

describe(`on the machine's Node (${MACHINE_NODE}${THROUGH_LAUNCHER ? ", through the launcher's Node 24" : ""})`, () => {
  cases(`machine Node ${MACHINE_NODE}`, () => MACHINE_PATH);
});

describe(`on Node ${MINIMUM_NODE}, the oldest the project supports (from the npm registry)`, () => {
  let PATH = "";
  let missing: string | null = null;
  beforeAll(() => {
    const found = registryNode(MINIMUM_NODE);
    if ("missing" in found) missing = found.missing;
    else PATH = pathWithNode(found.path);
    // Without the registry (which `npm ci` needs anyway) these tests fail, saying why.
    if (!missing) expect(nodeVersionOn(PATH)).toMatch(new RegExp(`^v${MINIMUM_NODE.replace(".", "\\.")}\\.`));
  }, 200_000);
  cases(`Node ${MINIMUM_NODE}`, () => {
    if (missing) throw new Error(`no Node ${MINIMUM_NODE}: ${missing}`);
    return PATH;
  });
});

// A stop at any moment of start-up (src/main.ts installs its handlers on its
// first line; src/shutdown.ts's Lifecycle stops what has started): the
// embedded PostgreSQL included, exit 0, "stopped". And an embedded server
// an earlier run left behind (its service killed) is adopted: the next
// service stops it when it stops.
describe("a stop during start-up, and a database left behind", () => {
  /** SIGTERM to npm as soon as `when` holds; then what a supervisor checks. */
  async function stopWhen(name: string, env: Record<string, string>, when: (npm: Started) => boolean | Promise<boolean>) {
    const npm = startNpm(["start"], { PATH: MACHINE_PATH, LOG_LEVEL: "info", NODE_ENV: "development", DATABASE_URL: "", ...env });
    await waitUntil(`${name}: the moment to stop`, async () => npm.proc.exitCode !== null || (await when(npm)), 180_000, 20);
    if (npm.proc.exitCode !== null) throw new Error(`${name} exited early (${npm.proc.exitCode}):\n${npm.stdout()}\n${npm.stderr()}`);
    const run = { name, npm, tree: descendants(npm.proc.pid!) };
    return { run, time: await stopAndCheck(run, { embedded: true }) };
  }

  test("SIGTERM while the first run applies the migrations: the embedded PostgreSQL stops too; exit 0, stopped", async () => {
    const dir = path.join(tempDir("signals-migrating"), "pg");
    chmodSync(path.dirname(dir), 0o755);
    const { run } = await stopWhen("npm start (migrating)", { PORT: String(await freePort()), EMBEDDED_PG_DIR: dir, EMBEDDED_PG_PORT: String(await freePort()) }, (npm) =>
      npm.stdout().includes("applying the migrations"),
    );
    // It stopped during start-up: the API never listened.
    expect(run.npm.stdout()).not.toContain('"msg":"API listening"');
  }, 240_000);

  test("SIGTERM right after /readyz first answers (the worker still starting): everything stops; exit 0, stopped", async () => {
    const port = await freePort();
    await stopWhen("npm start (just ready)", { PORT: String(port), EMBEDDED_PG_DIR: PG_DIR, EMBEDDED_PG_PORT: String(await freePort()) }, async () => {
      const r = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null);
      return r?.status === 200;
    });
  }, 240_000);

  test("an embedded PostgreSQL left running by a killed service is adopted by the next start and stopped with it", async () => {
    const pgPort = String(await freePort());
    const first = await start(
      "npm start (to be killed)",
      ["start"],
      { PORT: String(await freePort()), EMBEDDED_PG_DIR: PG_DIR, EMBEDDED_PG_PORT: pgPort, DATABASE_URL: "" },
      '"msg":"worker started"',
      MACHINE_PATH,
    );
    const postgres = first.tree.filter((p) => /postgres/.test(commandLine(p)));
    expect(postgres.length).toBeGreaterThan(0);
    // The service dies without a word (SIGKILL): its PostgreSQL, in a process group of its own, runs on.
    const killed = first.tree.filter((p) => !postgres.includes(p));
    for (const p of killed) process.kill(p, "SIGKILL");
    first.npm.proc.kill("SIGKILL");
    await first.npm.exited;
    // Dead, and reaped: until then the next start may rightly see the service as running.
    expect(await gone([first.npm.proc.pid!, ...killed], STOP_WITHIN_MS)).toEqual([]);
    expect(postgres.some(alive)).toBe(true);
    const second = await start(
      "npm start (reusing)",
      ["start"],
      { PORT: String(await freePort()), EMBEDDED_PG_DIR: PG_DIR, EMBEDDED_PG_PORT: pgPort, DATABASE_URL: "" },
      '"msg":"worker started"',
      MACHINE_PATH,
    );
    expect(second.npm.stdout()).toContain("reusing the embedded PostgreSQL an earlier run left running");
    second.npm.proc.kill("SIGTERM");
    expect((await gone([second.npm.proc.pid!, ...second.tree, ...postgres], STOP_WITHIN_MS)).map((p) => `${p} ${commandLine(p)}`)).toEqual([]);
    expect(await second.npm.exited).toEqual({ code: 0, signal: null });
  }, 300_000);
});
