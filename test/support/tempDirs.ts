import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

// Every folder the tests make in the temporary directory comes from here:
// named with one prefix per run (`cafe-test-<run>-`), remembered by the
// test file that made it and removed once that file has finished, after
// its own afterAll hooks (test/support/environment.cjs); globalTeardown.ts
// then fails the run if any folder of the run is still there.
// test/project/temp-dirs.test.ts keeps test/ from making one any other way.

/** The run's id: globalSetup.ts sets it for the whole run (test files run in its process). */
function runId(): string {
  return (process.env.CAFE_TEST_RUN ??= String(process.pid));
}

/** The prefix of every folder this run makes in the temporary directory. */
export function tempPrefix(): string {
  return `cafe-test-${runId()}-`;
}

/** The folders this test file made (read by environment.cjs when the file has finished). */
const made: string[] = ((globalThis as { __cafeTempDirs?: string[] }).__cafeTempDirs ??= []);

/** A new empty folder in the temporary directory, removed when the test file has finished. */
export function tempDir(label = "tmp"): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `${tempPrefix()}${label.replace(/[^\w.-]+/g, "-")}-`));
  made.push(dir);
  return dir;
}

/** This run's folders still in the temporary directory, removed; their names returned. */
export function removeLeftovers(): string[] {
  const left = readdirSync(os.tmpdir()).filter((name) => name.startsWith(tempPrefix()));
  for (const name of left) rmSync(path.join(os.tmpdir(), name), { recursive: true, force: true });
  return left;
}

/** Folders of earlier runs whose process is gone (killed before its teardown), removed; their names returned. */
export function removeOrphans(): string[] {
  const gone = readdirSync(os.tmpdir()).filter((name) => {
    const pid = /^cafe-test-(\d+)-/.exec(name)?.[1];
    if (!pid || pid === runId()) return false;
    try {
      process.kill(Number(pid), 0);
      return false;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === "ESRCH";
    }
  });
  for (const name of gone) rmSync(path.join(os.tmpdir(), name), { recursive: true, force: true });
  return gone;
}
