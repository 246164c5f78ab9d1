// Child processes under test: the service (node src/main.ts),
// the floors and the peer (bench/servers/*). Each logs to its own file; the
// bench talks to them over HTTP, IPC and (for SQL capture) SIGUSR2.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import path from "node:path";
import { sleep } from "./stats.ts";
import { freePort } from "../../test/support/ports.ts";

export { freePort };

export const ROOT = path.resolve(import.meta.dirname, "../..");
const CHILD_HOOK = path.join(ROOT, "bench/lib/childHook.ts");

export interface Child {
  name: string;
  proc: ChildProcess;
  port: number;
  logFile: string;
  /** Where the SQL capture hook writes (when started with capture). */
  captureFile?: string;
  /** Messages received over IPC. */
  onMessage(fn: (msg: any) => void): void;
  send(msg: unknown): void;
  logTail(lines?: number): string;
  stop(): Promise<void>;
}

export interface StartOptions {
  name: string;
  script: string;
  args?: string[];
  env: Record<string, string | undefined>;
  logDir: string;
  capture?: boolean;
  port?: number;
  /** Extra node options (e.g. --cpu-prof). */
  nodeArgs?: string[];
}

/** Starts `node <script>` with the project's node (the one running the bench). */
export async function startChild(o: StartOptions): Promise<Child> {
  const port = o.port ?? (await freePort());
  const logFile = path.join(o.logDir, `${o.name}.log`);
  const captureFile = o.capture ? path.join(o.logDir, `${o.name}.sql.jsonl`) : undefined;
  const fd = openSync(logFile, "a");
  // Node strips the types itself, as in production (no tsx at run time: its
  // helpers, e.g. esbuild's __name on every function made, cost CPU per request).
  const imports = ["--import", CHILD_HOOK];
  const proc = spawn(process.execPath, [...(o.nodeArgs ?? []), ...imports, o.script, ...(o.args ?? [])], {
    cwd: ROOT,
    env: { ...process.env, ...o.env, PORT: String(port), ...(captureFile ? { BENCH_SQL_CAPTURE: captureFile } : {}) },
    stdio: ["ignore", fd, fd, "ipc"],
  });
  closeSync(fd);
  const listeners: Array<(m: any) => void> = [];
  proc.on("message", (m) => listeners.forEach((l) => l(m)));
  let exited = false;
  proc.once("exit", () => (exited = true));
  const child: Child = {
    name: o.name,
    proc,
    port,
    logFile,
    captureFile,
    onMessage: (fn) => listeners.push(fn),
    send: (m) => {
      if (proc.connected) proc.send(m as never);
    },
    logTail(lines = 15) {
      try {
        return readFileSync(logFile, "utf8").trim().split("\n").slice(-lines).join("\n");
      } catch {
        return "";
      }
    },
    async stop() {
      if (exited || proc.exitCode !== null) return;
      const done = new Promise<void>((r) => proc.once("exit", () => r()));
      proc.kill("SIGTERM");
      const t = setTimeout(() => {
        if (!exited) proc.kill("SIGKILL");
      }, 10_000);
      await done;
      clearTimeout(t);
    },
  };
  return child;
}

/** Resolves when the child sends {ready:true} over IPC; rejects when it exits first. */
export function readyByIpc(child: Child, timeoutMs = 60_000): Promise<any> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${child.name} did not start in ${timeoutMs} ms\n${child.logTail()}`)), timeoutMs);
    child.onMessage((m) => {
      if (m && m.ready) {
        clearTimeout(t);
        resolve(m);
      }
    });
    child.proc.once("exit", (code) => {
      clearTimeout(t);
      reject(new Error(`${child.name} exited (${code}) before it was ready\n${child.logTail()}`));
    });
  });
}

/** Polls a URL until it answers 2xx. */
export async function readyByHttp(child: Child, urlPath: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null) throw new Error(`${child.name} exited (${child.proc.exitCode})\n${child.logTail()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${child.port}${urlPath}`);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${child.name} did not answer ${urlPath} in ${timeoutMs} ms\n${child.logTail()}`);
}

// --- SQL capture (bench/lib/childHook.ts) ------------------------------

export interface CapturedQuery {
  t: number;
  client: number;
  text: string;
  values: unknown[];
  /** Set when the client used a named (prepared) statement. */
  name?: string;
}

function captureLines(file: string): any[] {
  if (!existsSync(file)) return [];
  const text = readFileSync(file, "utf8");
  // The child may be writing its last line as we read: only whole lines count.
  const whole = text.endsWith("\n") ? text : text.slice(0, text.lastIndexOf("\n") + 1);
  return whole
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

async function toggleCapture(child: Child, on: boolean): Promise<number> {
  const file = child.captureFile!;
  const before = captureLines(file).filter((l) => l.marker).length;
  child.proc.kill("SIGUSR2");
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const markers = captureLines(file).filter((l) => l.marker);
    if (markers.length > before) {
      const last = markers[markers.length - 1];
      if (last.marker !== (on ? "on" : "off")) {
        // Out of step (an earlier toggle was lost): toggle again.
        return toggleCapture(child, on);
      }
      return captureLines(file).length;
    }
    await sleep(10);
  }
  throw new Error(`${child.name}: SQL capture did not toggle`);
}

/** Switches the child's SQL capture on; returns a cursor for readCapture(). */
export async function startCapture(child: Child): Promise<number> {
  if (!child.captureFile) throw new Error(`${child.name} was not started with SQL capture`);
  return toggleCapture(child, true);
}

export function readCapture(child: Child, cursor: number): CapturedQuery[] {
  return captureLines(child.captureFile!)
    .slice(cursor)
    .filter((l) => !l.marker);
}

export async function stopCapture(child: Child): Promise<void> {
  await toggleCapture(child, false);
}

/** Runs `fn` with the child's SQL capture on; returns what it sent to Postgres meanwhile. */
export async function captureSql<T>(child: Child, fn: () => Promise<T>): Promise<{ result: T; queries: CapturedQuery[] }> {
  if (!child.captureFile) throw new Error(`${child.name} was not started with SQL capture`);
  const start = await toggleCapture(child, true);
  let result: T;
  const t0 = Date.now();
  let t1 = t0;
  try {
    result = await fn();
    t1 = Date.now();
    await sleep(20);
  } finally {
    await toggleCapture(child, false);
  }
  // Only what was sent while `fn` ran, and not the service's periodic health query.
  const queries = captureLines(child.captureFile)
    .slice(start)
    .filter((l) => !l.marker && l.t >= t0 && l.t <= t1 && !/^\s*select 1\s*;?\s*$/i.test(l.text));
  return { result, queries };
}

/** Statements other than transaction control and settings; round trips = every query sent. */
export function countSql(queries: CapturedQuery[]) {
  const control = /^\s*(begin|commit|rollback|start transaction)\b|set_config\(|^\s*set\s+(local\s+)?role\b/i;
  const statements = queries.filter((q) => !control.test(q.text));
  const transactions = queries.filter((q) => /^\s*(begin|start transaction)\b/i.test(q.text)).length;
  return { roundTrips: queries.length, statements: statements.length, transactions };
}
