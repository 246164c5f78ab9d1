import { logger } from "../../src/logger.ts";
import { serverMajor } from "../../scripts/dump-schema.ts";
import { createTestDatabase } from "./db.ts";

// Jest's globalSetup: the shared test database, made once for every file.

export default async function globalSetup(): Promise<void> {
  logger.level = process.env.TEST_LOG_LEVEL ?? "warn";
  const started = Date.now();
  const db = await createTestDatabase();
  // Test files (same process: maxWorkers 1) read the database from here.
  process.env.CAFE_TEST_DATABASE_URL = db.url;
  process.env.CAFE_TEST_SERVER_MAJOR = String(await serverMajor(db.url));
  (globalThis as any).__cafeTestDatabase = db;
  console.log(`\ntest database ready (${db.url.replace(/:[^:@/]*@/, ":***@")}) in ${Date.now() - started} ms`);
}
