import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { serverUrl } from "./db.ts";
import { expectNoStackTrace, ROOT } from "./service.ts";
import { tempDir } from "./tempDirs.ts";

// `npm run schema:check` (scripts/schema-check.ts) on a scratch copy of
// migrations/, contract/, documents/ and data/released-schema.graphql.

/** A scratch copy of what the check reads, with `currentSql` in migrations/current.sql. */
export function scratchCopy(currentSql: string): string {
  const dir = tempDir("schema-check");
  for (const d of ["migrations", "contract", "documents"]) cpSync(path.join(ROOT, d), path.join(dir, d), { recursive: true });
  mkdirSync(path.join(dir, "data"));
  cpSync(path.join(ROOT, "data/released-schema.graphql"), path.join(dir, "data/released-schema.graphql"));
  writeFileSync(path.join(dir, "migrations/current.sql"), currentSql);
  return dir;
}

/** Runs the check on a scratch copy, on the test server. */
export function schemaCheck(dir: string, timeoutMs = 50_000): SpawnSyncReturns<string> {
  const r = spawnSync(process.execPath, [path.join(ROOT, "scripts/schema-check.ts"), "--dir", dir], {
    cwd: dir,
    encoding: "utf8",
    timeout: timeoutMs,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: "silent", SHADOW_DATABASE_URL: serverUrl() },
  });
  expectNoStackTrace(r);
  return r;
}
