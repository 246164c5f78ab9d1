import path from "node:path";
import pg from "pg";
import { loadConfig } from "../../src/config.ts";
import { databaseName, dropDatabase, prepareDatabase, resolveDatabaseUrls, startEmbeddedPostgres, type DatabaseUrls } from "../../src/db/database.ts";

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
  await liftOpenOrderCaps(url);
  return { url, urls, stop };
}

/**
 * The suites place many unpaid orders as alice and bob; the caps on a
 * customer's unpaid orders and cups are raised for them, and
 * test/order-expiry-and-caps.test.ts sets the values it tests.
 */
export async function liftOpenOrderCaps(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("update app_private.settings set value = 1000000 where key in ('max_open_orders_per_customer', 'max_open_cups_per_customer')");
  } finally {
    await client.end();
  }
}
