// A PgBouncer in transaction mode in front of the bench database (S9): the
// machine's Debian-packaged binary (`apt-get install pgbouncer`), its own
// configuration in a temporary folder, on a free port. PgBouncer refuses to
// run as root: started by root, it drops to `postgres` (`-u postgres`).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { freePort } from "./proc.ts";
import { sleep } from "./stats.ts";

const BINARIES = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer", "/usr/local/bin/pgbouncer"];

export interface Bouncer {
  port: number;
  /** `url` with its host and port replaced by PgBouncer's. */
  through(url: string): string;
  /** The last lines of PgBouncer's log. */
  logTail(): string;
  stop(): Promise<void>;
}

/** The pgbouncer binary, or null when none is installed. */
export function pgbouncerBinary(): string | null {
  const found = BINARIES.find((b) => existsSync(b));
  if (found) return found;
  const which = spawnSync("which", ["pgbouncer"], { encoding: "utf8" });
  return which.status === 0 && which.stdout.trim() ? which.stdout.trim() : null;
}

/** "1.18.0", or "" when none is installed. */
export function pgbouncerVersion(): string {
  const bin = pgbouncerBinary();
  return bin ? (/PgBouncer (\S+)/.exec(spawnSync(bin, ["--version"], { encoding: "utf8" }).stdout ?? "")?.[1] ?? "") : "";
}

const quote = (s: string) => `"${s.replaceAll('"', '""')}"`;

/**
 * Starts PgBouncer for the database `urls` name (their users, with their
 * passwords, in its auth file), `poolSize` server connections per user and
 * database; resolves once a query through it answers.
 */
export async function startPgBouncer(o: { urls: string[]; poolSize: number; logDir: string }): Promise<Bouncer> {
  const binary = pgbouncerBinary();
  if (!binary) throw new Error("pgbouncer is not installed (apt-get install -y pgbouncer)");
  const target = new URL(o.urls[0]!);
  const database = decodeURIComponent(target.pathname.slice(1));
  const dir = mkdtempSync(path.join(os.tmpdir(), "cafe-bench-pgbouncer-"));
  const port = await freePort();
  const users = new Map(o.urls.map((u) => new URL(u)).map((u) => [decodeURIComponent(u.username), decodeURIComponent(u.password)]));
  const logFile = path.join(dir, "pgbouncer.log");
  writeFileSync(path.join(dir, "users.txt"), [...users].map(([u, p]) => `${quote(u)} ${quote(p)}`).join("\n") + "\n");
  writeFileSync(
    path.join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `${database} = host=${target.hostname} port=${target.port || 5432} dbname=${database}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      // The bench's server trusts local connections; the users' passwords are in the auth file for one that does not.
      "auth_type = trust",
      `auth_file = ${path.join(dir, "users.txt")}`,
      "pool_mode = transaction",
      `default_pool_size = ${o.poolSize}`,
      "max_client_conn = 2000",
      "ignore_startup_parameters = extra_float_digits,options",
      `logfile = ${logFile}`,
      `pidfile = ${path.join(dir, "pgbouncer.pid")}`,
      "log_connections = 0",
      "log_disconnections = 0",
      "",
    ].join("\n"),
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const id = (flag: string) => Number(spawnSync("id", [flag, "postgres"], { encoding: "utf8" }).stdout.trim());
    const [uid, gid] = [id("-u"), id("-g")];
    for (const f of ["", "users.txt", "pgbouncer.ini"]) chownSync(path.join(dir, f), uid, gid);
  }
  const proc: ChildProcess = spawn(binary, [...(asRoot ? ["-u", "postgres"] : []), path.join(dir, "pgbouncer.ini")], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  proc.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  // An interrupted bench (process.exit) does not outlive its PgBouncer.
  const orphaned = () => proc.exitCode === null && proc.signalCode === null && proc.kill("SIGINT");
  process.once("exit", orphaned);
  const logTail = () => ((existsSync(logFile) ? readFileSync(logFile, "utf8") : "") + stderr).trim().split("\n").slice(-15).join("\n");
  const through = (url: string) => {
    const u = new URL(url);
    u.hostname = "127.0.0.1";
    u.port = String(port);
    return u.toString();
  };
  const stop = async () => {
    process.off("exit", orphaned);
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGINT");
      const t = setTimeout(() => proc.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(t);
    }
    // Kept with the processes' logs.
    if (existsSync(logFile)) writeFileSync(path.join(o.logDir, "pgbouncer.log"), readFileSync(logFile));
    rmSync(dir, { recursive: true, force: true });
  };
  for (const deadline = Date.now() + 15_000; ; await sleep(100)) {
    if (proc.exitCode !== null) {
      const tail = logTail();
      await stop();
      throw new Error(`pgbouncer exited (${proc.exitCode})\n${tail}`);
    }
    const client = new pg.Client({ connectionString: through(o.urls[0]!) });
    const ok = await client
      .connect()
      .then(() => client.query("select 1"))
      .then(
        () => true,
        () => false,
      );
    await client.end().catch(() => {});
    if (ok) break;
    if (Date.now() > deadline) {
      const tail = logTail();
      await stop();
      throw new Error(`pgbouncer did not answer in 15 s\n${tail}`);
    }
  }
  return { port, through, logTail, stop };
}
