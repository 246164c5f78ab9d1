import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";

// Runs the real entry point (`node src/main.ts ...`, as `npm start` does) to
// completion, in an empty working directory unless told (so a developer's
// own .env in the project root never leaks in) and with only the variables
// given (plus PATH and HOME).

export const ROOT = path.resolve(__dirname, "../..");
export const MAIN = path.join(ROOT, "src", "main.ts");

export function emptyDir(prefix = "cafe-cfg-"): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function runMain(args: string[], env: Record<string, string | undefined>, options: { cwd?: string; timeoutMs?: number } = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [MAIN, ...args], {
    cwd: options.cwd ?? emptyDir(),
    encoding: "utf8",
    timeout: options.timeoutMs ?? 60_000,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: "silent", ...env },
  });
}

/** Fails the test when the output carries a stack trace (a JS frame line or a logged `stack`). */
export function expectNoStackTrace(r: SpawnSyncReturns<string>): void {
  expect(`${r.stdout}\n${r.stderr}`).not.toMatch(/^\s+at .+\(?.*:\d+:\d+\)?$|"stack"/m);
}
