import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./service.ts";
import { sleep } from "./wait.ts";
import { tempDir } from "./tempDirs.ts";

// Processes as a supervisor sees them: a command started through npm, its
// whole tree of descendants (read from /proc, Linux), the signal sent to the
// process that was started, and what is left afterwards.

/** Every descendant of `pid` (children, their children...), from /proc. */
export function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parentOf.set(Number(entry), ppid);
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of parentOf) {
      if (parent === p) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}

/** A process that exists and is not a zombie waiting to be reaped. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** The command line of a process ("" once it is gone). */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}

/**
 * PATH with `node` (and npm's shebang) resolving to the given Node binary's
 * folder, or, without one, the machine's own Node: the folders npm exec or
 * Jest's launcher put first (npm's cache, node_modules/.bin) left out.
 */
export function pathWithNode(nodeBinary?: string): string {
  const rest = (process.env.PATH ?? "").split(path.delimiter).filter((d) => d && !d.includes(`${path.sep}_npx${path.sep}`) && !d.includes(`node_modules${path.sep}.bin`));
  if (!nodeBinary) return rest.join(path.delimiter);
  const dir = tempDir("node");
  symlinkSync(nodeBinary, path.join(dir, "node"));
  return [dir, ...rest].join(path.delimiter);
}

/** The version of the `node` that PATH finds. */
export function nodeVersionOn(PATH: string): string {
  return spawnSync("node", ["--version"], { env: { ...process.env, PATH }, encoding: "utf8" }).stdout.trim();
}

/**
 * A Node from the npm registry's `node` package (`npm exec`, cached by npm),
 * or null with the reason when the registry cannot be reached.
 */
export function registryNode(version: string): { path: string } | { missing: string } {
  const r = spawnSync("npm", ["exec", "--yes", `--package=node@${version}`, "--", "node", "-p", "process.execPath"], {
    encoding: "utf8",
    timeout: 180_000,
    env: { ...process.env, PATH: pathWithNode() },
  });
  const out = r.stdout?.trim().split("\n").pop() ?? "";
  if (r.status === 0 && existsSync(out)) return { path: out };
  return { missing: `npm exec --package=node@${version} failed (${r.error?.message ?? `exit ${r.status}`}): ${r.stderr?.trim().split("\n").slice(-2).join(" ")}` };
}

export interface Started {
  proc: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * `npm <args>` in the project's folder, as a supervisor would start it;
 * `ownGroup`: in a process group of its own, as a terminal's foreground job
 * (a Ctrl-C is SIGINT to the whole group: `process.kill(-pid, "SIGINT")`).
 */
export function startNpm(args: string[], env: Record<string, string | undefined>, { ownGroup = false } = {}): Started {
  const proc = spawn("npm", args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"], detached: ownGroup });
  let out = "";
  let err = "";
  proc.stdout!.on("data", (c: Buffer) => (out += c.toString("utf8")));
  proc.stderr!.on("data", (c: Buffer) => (err += c.toString("utf8")));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.once("exit", (code, signal) => resolve({ code, signal })));
  return { proc, stdout: () => out, stderr: () => err, exited };
}

/** Waits until every pid is gone; resolves with those still alive at the deadline. */
export async function gone(pids: number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = pids.filter(alive);
    if (!left.length || Date.now() >= deadline) return left;
    await sleep(100);
  }
}
