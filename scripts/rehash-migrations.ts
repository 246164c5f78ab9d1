// Rewrites the `--! Hash:` header of each committed migration after an edit
// (graphile-migrate refuses a migration whose body no longer matches its
// hash). Only for migrations no database outside this repository has applied:
// today the baseline (docs/schema-evolution.md). `npm run migrate:rehash`.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import path from "node:path";

const folder = path.join(import.meta.dirname, "..", "migrations", "committed");
let previous: string | null = null;
for (const file of readdirSync(folder)
  .filter((f) => /^\d+.*\.sql$/.test(f))
  .sort()) {
  const full = path.join(folder, file);
  const lines = readFileSync(full, "utf8").split("\n");
  const headerEnd = lines.findIndex((l) => !/^--! [A-Z]/.test(l));
  const body = lines.slice(headerEnd).join("\n").trim() + "\n";
  // graphile-migrate's calculateHash (dist/hash.js).
  const hash: string =
    "sha1:" +
    createHash("sha1")
      .update(((previous ?? "") + "\n" + body.trim()).trim() + "\n")
      .digest("hex");
  const headers = lines.slice(0, headerEnd).map((l) => (l.startsWith("--! Hash:") ? `--! Hash: ${hash}` : l.startsWith("--! Previous:") ? `--! Previous: ${previous ?? "-"}` : l));
  const text = [...headers, ...lines.slice(headerEnd)].join("\n");
  if (text !== lines.join("\n")) {
    writeFileSync(full, text);
    console.log(`${file}: ${hash}`);
  }
  previous = hash;
}
