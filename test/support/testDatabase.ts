import path from "node:path";
import { loadConfig } from "../../src/config.ts";
import { databaseName, dropDatabase, prepareDatabase, resolveDatabaseUrls, startEmbeddedPostgres, type DatabaseUrls } from "../../src/database.ts";

// The test database: on TEST_DATABASE_URL (a superuser URL; its database is
// dropped and created anew) where set, else on an embedded PostgreSQL kept
// in .data/test-pg.

export const TEST_EMBEDDED_PORT = Number(process.env.TEST_EMBEDDED_PG_PORT ?? 54339);

export async function createTestDatabase(): Promise<{ url: string; urls: DatabaseUrls; stop(): Promise<void> }> {
  const config = loadConfig({ ...process.env, DATABASE_URL: undefined, NODE_ENV: "test" });
  let url = process.env.TEST_DATABASE_URL;
  let stop = async () => {};
  if (!url) {
    const embedded = await startEmbeddedPostgres({ EMBEDDED_PG_DIR: path.join(".data", "test-pg"), EMBEDDED_PG_PORT: TEST_EMBEDDED_PORT });
    url = embedded.url.replace(/\/postgres$/, "/cafe_test");
    stop = embedded.stop;
  }
  const urls = await resolveDatabaseUrls(config, url);
  if (!urls.root) throw new Error("TEST_DATABASE_URL must name a superuser (the tests create roles and drop the test database)");
  await dropDatabase(urls.root, databaseName(url));
  await prepareDatabase(urls, config, { demoData: true });
  return { url, urls, stop };
}
