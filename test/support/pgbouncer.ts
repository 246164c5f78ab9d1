import { spawn, type ChildProcess } from "node:child_process";
import { chownSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { freePort } from "./ports.ts";
import { requireProgram } from "./programs.ts";
import { sleep, within } from "./wait.ts";
import { tempDir } from "./tempDirs.ts";

// A real PgBouncer (Debian's `pgbouncer` package) in transaction mode in
// front of the tests' PostgreSQL, as production may run one in front of the
// API's pool (docs/operations.md, Behind PgBouncer): its own folder and a
// free port, started and stopped by the tests like their PostgreSQL.
// `TEST_PGBOUNCER=1 npm test -- …` sends every test service's pool through
// one (globalSetup.ts starts it; service.ts gives the services its URL);
// test/graphql/pgbouncer.test.ts starts its own.

export interface PgBouncer {
  port: number;
  /** `url` (a role's URL on the tests' server) through PgBouncer. */
  through(url: string): string;
  /** What PgBouncer has carried to `database` so far (its SHOW STATS). */
  stats(database: string): Promise<{ transactions: number; queries: number }>;
  /** The PostgreSQL backends of its server connections (SHOW SERVERS). */
  serverPids(): Promise<number[]>;
  /** The last lines of its log. */
  tail(lines?: number): string;
  stop(): Promise<void>;
}

/** The login roles it lets through (their passwords also log it in to PostgreSQL). */
export interface BouncerUser {
  user: string;
  password: string;
}

const STATS_USER = "cafe_test_stats";

/** The roles of these URLs, with their passwords. */
export function usersOf(...urls: string[]): BouncerUser[] {
  return urls.map((u) => {
    const url = new URL(u);
    return { user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
  });
}

/**
 * Starts PgBouncer in transaction mode in front of the server of `serverUrl`
 * for `users` (trusted: clients give no password; PgBouncer logs in to
 * PostgreSQL with the one listed). As root it runs as the `postgres` OS
 * user (it refuses root).
 */
export async function startPgBouncer(serverUrl: string, users: BouncerUser[], options: { poolSize?: number } = {}): Promise<PgBouncer> {
  const bin = requireProgram("pgbouncer", "a PgBouncer in front of the tests' PostgreSQL");
  const server = new URL(serverUrl);
  const port = await freePort();
  const dir = tempDir("pgbouncer");
  const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;
  writeFileSync(path.join(dir, "userlist.txt"), [...users, { user: STATS_USER, password: "" }].map((u) => `${quote(u.user)} ${quote(u.password)}`).join("\n") + "\n");
  writeFileSync(
    path.join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `* = host=${server.hostname} port=${server.port || 5432}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${path.join(dir, "userlist.txt")}`,
      `stats_users = ${STATS_USER}`,
      "pool_mode = transaction",
      "max_client_conn = 1000",
      `default_pool_size = ${options.poolSize ?? 20}`,
      // Sent by some clients at start-up; PgBouncer refuses unknown ones.
      "ignore_startup_parameters = extra_float_digits,options",
      `logfile = ${path.join(dir, "pgbouncer.log")}`,
      "",
    ].join("\n"),
  );
  const root = process.getuid?.() === 0;
  if (root) {
    const { uid, gid } = osUser("postgres");
    chownSync(dir, uid, gid);
    for (const f of ["userlist.txt", "pgbouncer.ini"]) chownSync(path.join(dir, f), uid, gid);
  }
  const proc: ChildProcess = spawn(bin, [...(root ? ["-u", "postgres"] : []), path.join(dir, "pgbouncer.ini")], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  proc.stdout!.on("data", (c: Buffer) => (output += c.toString("utf8")));
  proc.stderr!.on("data", (c: Buffer) => (output += c.toString("utf8")));
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));

  const tail = (n = 30) => {
    let log = "";
    try {
      log = readFileSync(path.join(dir, "pgbouncer.log"), "utf8");
    } catch {
      // not written yet
    }
    return `${log}${output}`.trim().split("\n").slice(-n).join("\n");
  };
  const admin = () => new pg.Client({ host: "127.0.0.1", port, user: STATS_USER, database: "pgbouncer" });

  // Ready when its console answers.
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (gone) throw new Error(`pgbouncer exited at start:\n${tail()}`);
    const c = admin();
    c.on("error", () => {});
    const up = await c.connect().then(
      () => true,
      () => false,
    );
    await c.end().catch(() => {});
    if (up) break;
    if (Date.now() > deadline) throw new Error(`pgbouncer not ready within 15 s:\n${tail()}`);
    await sleep(100);
  }

  return {
    port,
    through(url) {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    async stats(database) {
      const c = admin();
      await c.connect();
      try {
        const { rows } = await c.query("SHOW STATS");
        const row = rows.find((r) => r.database === database);
        return { transactions: Number(row?.total_xact_count ?? 0), queries: Number(row?.total_query_count ?? 0) };
      } finally {
        await c.end();
      }
    },
    async serverPids() {
      const c = admin();
      await c.connect();
      try {
        const { rows } = await c.query("SHOW SERVERS");
        return rows.map((r) => Number(r.remote_pid));
      } finally {
        await c.end();
      }
    },
    tail,
    async stop() {
      if (!gone) {
        proc.kill("SIGTERM");
        await within(exited, 10_000, "pgbouncer did not stop within 10 s").catch(async () => {
          proc.kill("SIGKILL");
          await exited;
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function osUser(name: string): { uid: number; gid: number } {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${name}:`));
  if (!line) throw new Error(`no OS user ${name} to run pgbouncer as (it refuses root)`);
  const [, , uid, gid] = line.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}
