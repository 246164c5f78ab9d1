// Child processes under test: the service (src/main.ts), the floors and the
// peer (bench/servers/*). Each logs to its own file; the bench talks to them
// over HTTP, IPC and (for SQL capture, bench/lib/childHook.ts) SIGUSR2.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import path from "node:path";
import { sleep } from "./stats.ts";
import { freePort } from "../../test/support/ports.ts";

export { freePort };

export const ROOT = path.resolve(import.meta.dirname, "../..");

export interface Child {
  name: string;
  proc: ChildProcess;
  port: number;
  /** Where the SQL capture hook writes (when started with capture). */
  captureFile?: string;
  onMessage(fn: (msg: any) => void): void;
  send(msg: unknown): void;
  logTail(): string;
  stop(): Promise<void>;
}

export interface StartOptions {
  name: string;
  script: string;
  args?: string[];
  env: Record<string, string | undefined>;
  logDir: string;
  capture?: boolean;
  /** Extra node options (e.g. --cpu-prof). */
  nodeArgs?: string[];
}

/**
 * Starts `node <script>` with the node running the bench, which strips the
 * types itself as in production (no tsx at run time: its helpers cost CPU
 * per request), with bench/lib/childHook.ts preloaded.
 */
export async function startChild(o: StartOptions): Promise<Child> {
  const port = await freePort();
  const logFile = path.join(o.logDir, `${o.name}.log`);
  const captureFile = o.capture ? path.join(o.logDir, `${o.name}.sql.jsonl`) : undefined;
  const fd = openSync(logFile, "a");
  const proc = spawn(process.execPath, [...(o.nodeArgs ?? []), "--import", path.join(ROOT, "bench/lib/childHook.ts"), o.script, ...(o.args ?? [])], {
    cwd: ROOT,
    env: { ...process.env, ...o.env, PORT: String(port), ...(captureFile ? { BENCH_SQL_CAPTURE: captureFile } : {}) },
    stdio: ["ignore", fd, fd, "ipc"],
  });
  closeSync(fd);
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  return {
    name: o.name,
    proc,
    port,
    captureFile,
    onMessage: (fn) => proc.on("message", fn),
    send: (m) => proc.connected && proc.send(m as never),
    logTail: () => (existsSync(logFile) ? readFileSync(logFile, "utf8").trim().split("\n").slice(-15).join("\n") : ""),
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** Resolves with the first IPC message `accept` takes; rejects when the child exits first or after `timeoutMs`. */
export function waitForMessage<T = any>(child: Child, accept: (m: any) => boolean, timeoutMs = 60_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${child.name}: no answer in ${timeoutMs} ms\n${child.logTail()}`)), timeoutMs);
    child.onMessage((m) => accept(m) && (clearTimeout(t), resolve(m)));
    child.proc.once("exit", (code) => (clearTimeout(t), reject(new Error(`${child.name} exited (${code})\n${child.logTail()}`))));
  });
}

/** Resolves when the child sends {ready: true} over IPC. */
export const readyByIpc = (child: Child) => waitForMessage(child, (m) => m?.ready);

/** Sends `msg` and waits for the child's {type: okType}. */
export function ask(child: Child, msg: unknown, okType: string): Promise<void> {
  const answered = waitForMessage(child, (m) => m?.type === okType, 5000);
  child.send(msg);
  return answered;
}

/** Polls a URL until it answers 2xx. */
export async function readyByHttp(child: Child, urlPath: string, timeoutMs = 90_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(100)) {
    if (child.proc.exitCode !== null) throw new Error(`${child.name} exited (${child.proc.exitCode})\n${child.logTail()}`);
    if (
      await fetch(`http://127.0.0.1:${child.port}${urlPath}`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
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
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  // The child may be writing its last line as we read: only whole lines count.
  return text
    .slice(0, text.lastIndexOf("\n") + 1)
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** Toggles the child's capture until it is `on`; returns the line count then (a cursor for readCapture). */
async function toggleCapture(child: Child, on: boolean): Promise<number> {
  if (!child.captureFile) throw new Error(`${child.name} was not started with SQL capture`);
  const markers = () => captureLines(child.captureFile!).filter((l) => l.marker);
  const before = markers().length;
  child.proc.kill("SIGUSR2");
  for (const deadline = Date.now() + 5000; Date.now() < deadline; await sleep(10)) {
    const m = markers();
    // Out of step (an earlier toggle was lost): toggle again.
    if (m.length > before) return m.at(-1).marker === (on ? "on" : "off") ? captureLines(child.captureFile).length : toggleCapture(child, on);
  }
  throw new Error(`${child.name}: SQL capture did not toggle`);
}

export const startCapture = (child: Child) => toggleCapture(child, true);
export const stopCapture = async (child: Child) => void (await toggleCapture(child, false));
export const readCapture = (child: Child, cursor: number): CapturedQuery[] =>
  captureLines(child.captureFile!)
    .slice(cursor)
    .filter((l) => !l.marker);

/** Runs `fn` with the child's SQL capture on; returns what it sent to Postgres meanwhile (not the health check's `select 1`). */
export async function captureSql<T>(child: Child, fn: () => Promise<T>): Promise<{ result: T; queries: CapturedQuery[] }> {
  const cursor = await startCapture(child);
  const t0 = Date.now();
  let t1 = t0;
  let result: T;
  try {
    result = await fn();
    t1 = Date.now();
    await sleep(20);
  } finally {
    await stopCapture(child);
  }
  const queries = readCapture(child, cursor).filter((l) => l.t >= t0 && l.t <= t1 && !/^\s*select 1\s*;?\s*$/i.test(l.text) && !BACKGROUND.test(l.text));
  return { result, queries };
}

/** What a process sends on its own, whatever the requests: the shared rate-limit sync, the LISTEN probe, the operations gauges. */
export const BACKGROUND = /share_rate_usage|ops_counts\(|listen probe/i;

/** Transaction control and settings (set_config, and SET, e.g. on a new connection). */
// Also the health probe's `select 1` (its own connection), when it falls in the capture.
export const isControl = (q: CapturedQuery) => /^\s*(begin|commit|rollback|start transaction)\b|set_config\(|^\s*set\s|^\s*select 1\s*$/i.test(q.text);

/** Statements other than transaction control and settings; round trips = every query sent. */
export function countSql(queries: CapturedQuery[]) {
  const transactions = queries.filter((q) => /^\s*(begin|start transaction)\b/i.test(q.text)).length;
  return { roundTrips: queries.length, statements: queries.filter((q) => !isControl(q)).length, transactions };
}
