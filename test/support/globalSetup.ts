import { logger } from "../../src/logger.ts";
import { serverMajor } from "../../scripts/dump-schema.ts";
import { createTestDatabase } from "./db.ts";
import { startPgBouncer, usersOf } from "./pgbouncer.ts";
import { requireProgram } from "./programs.ts";
import { removeOrphans } from "./tempDirs.ts";

// Jest's globalSetup: the shared test database, made once for every file;
// with TEST_PGBOUNCER=1, a PgBouncer in transaction mode in front of it that
// every test service's pool goes through (service.ts).

export default async function globalSetup(): Promise<void> {
  logger.level = process.env.TEST_LOG_LEVEL ?? "warn";
  // Before anything is started: a missing pgbouncer ends the run at once, saying how to install it.
  if (process.env.TEST_PGBOUNCER === "1") requireProgram("pgbouncer", "TEST_PGBOUNCER=1");
  // The prefix of the run's temporary folders (tempDirs.ts), for the test files.
  process.env.CAFE_TEST_RUN = String(process.pid);
  // And those of a run killed before its teardown.
  removeOrphans();
  const started = Date.now();
  const db = await createTestDatabase();
  // Test files (same process: maxWorkers 1) read the database from here.
  process.env.CAFE_TEST_DATABASE_URL = db.url;
  process.env.CAFE_TEST_SERVER_MAJOR = String(await serverMajor(db.url));
  (globalThis as any).__cafeTestDatabase = db;
  console.log(`\ntest database ready (${db.url.replace(/:[^:@/]*@/, ":***@")}) in ${Date.now() - started} ms`);
  if (process.env.TEST_PGBOUNCER === "1") {
    const bouncer = await startPgBouncer(db.url, usersOf(db.urls.authenticator));
    (globalThis as any).__cafeTestPgBouncer = bouncer;
    process.env.CAFE_TEST_PGBOUNCER_URL = bouncer.through(db.urls.authenticator);
    process.env.CAFE_TEST_LISTEN_URL = db.urls.authenticator;
    console.log(`the test services' pools go through PgBouncer (transaction mode) on port ${bouncer.port}; LISTEN straight to PostgreSQL`);
  }
}
