import { readFileSync } from "node:fs";
import { loadConfig } from "../../src/config.ts";
import { databaseName, dropDatabase, prepareDatabase, resolveDatabaseUrls } from "../../src/db/database.ts";
import { dumpSchema, REGENERATE, SCHEMA_FILE } from "../../scripts/dump-schema.ts";
import { testIfInstalled } from "../support/programs.ts";

// data/schema.sql is the committed pg_dump of the migrated schema (README
// "Evolving the schema"). A fresh database, migrated the way the service
// does at start-up (its own name on the tests' server, dropped at the end),
// must dump to exactly that file.

function schemaDumpDatabaseUrl(): string {
  const shared = process.env.CAFE_TEST_DATABASE_URL;
  if (!shared) throw new Error("CAFE_TEST_DATABASE_URL is not set (test/support/globalSetup.ts sets it)");
  const url = new URL(shared);
  url.pathname = `/${(decodeURIComponent(url.pathname.slice(1)) || "cafe_test").slice(0, 50)}_schema_dump`;
  return url.toString();
}

// pg_dump must be at least as new as the server. The embedded PostgreSQL
// (the default test server) ships no pg_dump: without a fitting one the test
// is skipped, saying why, unless REQUIRE_PG_DUMP=1 (.ci/run's pass on the
// machine's PostgreSQL sets it, so CI always runs it): test/support/programs.ts.
const testIfPgDump = testIfInstalled("pg_dump");

testIfPgDump(
  "data/schema.sql is the pg_dump of the migrated schema",
  async () => {
    const config = loadConfig({ ...process.env, DATABASE_URL: undefined, NODE_ENV: "test" });
    const url = schemaDumpDatabaseUrl();
    const urls = await resolveDatabaseUrls(config, url);
    if (!urls.root) throw new Error("the test database URL must name a superuser");
    await dropDatabase(urls.root, databaseName(url));
    try {
      await prepareDatabase(urls, config, { demoData: false });
      const dumped = await dumpSchema(url);
      const committed = readFileSync(SCHEMA_FILE, "utf8");
      if (dumped !== committed) {
        const a = committed.split("\n");
        const b = dumped.split("\n");
        let i = 0;
        while (i < a.length && a[i] === b[i]) i++;
        throw new Error(
          `data/schema.sql is not the dump of the migrations: regenerate it with \`${REGENERATE}\` and review the diff.\n` +
            `First difference at line ${i + 1}:\n  committed: ${a[i] ?? "(end of file)"}\n  dumped:    ${b[i] ?? "(end of file)"}`,
        );
      }
    } finally {
      await dropDatabase(urls.root, databaseName(url));
    }
  },
  120_000,
);
