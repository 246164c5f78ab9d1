import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { dropDatabase } from "../../src/db/database.ts";
import { type Api, gql, login } from "../support/client.ts";
import { freshDatabase, serverUrl } from "../support/db.ts";
import { PLENTIFUL_COFFEES, placeOrder } from "../support/fixtures.ts";
import { requireProgram, testIfInstalled } from "../support/programs.ts";
import { ChildService, killAllChildren } from "../support/service.ts";
import { tempDir } from "../support/tempDirs.ts";

// docs/operations.md "Restoring a dump", done: a database with orders (the
// demo café's and one placed through the API) is dumped with `pg_dump -Fc`,
// restored with `pg_restore` into a new database, and the service started on
// that one serves the same orders and takes a new one.
//
// pg_dump must be at least as new as the server; the embedded PostgreSQL
// ships none. Without a fitting one the test is skipped, saying why, unless
// REQUIRE_PG_DUMP=1 (.ci/run's pass on the machine's PostgreSQL sets it):
// test/support/programs.ts.

const testIfPgDump = testIfInstalled("pg_dump");
const pgDump = () => requireProgram("pg_dump", "the backup test");
/** pg_restore from the same installation as pg_dump. */
const pgRestore = () => (pgDump() === "pg_dump" ? "pg_restore" : path.join(path.dirname(pgDump()), "pg_restore"));

const SOURCE = "cafe_backup_source";
const TARGET = "cafe_backup_restored";
const dir = tempDir("backup");

const apiAt = (url: string): Api => ({ gql: (q, o) => gql(url, q, o), token: (who) => login(url, who) });
const orderIds = async (db: { query(q: string): Promise<{ rows: Array<{ id: string }> }> }) => (await db.query("select id from app_public.orders order by id")).rows.map((r) => r.id);

afterAll(async () => {
  await killAllChildren();
  await dropDatabase(serverUrl(), TARGET).catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

testIfPgDump(
  "pg_dump -Fc, pg_restore into a new database, start the service there: the orders are there and a new one is taken",
  async () => {
    const source = await freshDatabase(SOURCE);
    const target = { url: serverUrl(TARGET) };
    try {
      // The demo café's orders and one placed through the API.
      const before = await ChildService.start({ name: "before", mode: "api", databaseUrl: source.url, env: { DEMO_DATA: "true" } });
      const placed = await placeOrder(apiAt(before.url), await login(before.url, "alice"), [{ coffeeId: PLENTIFUL_COFFEES[0]!, quantity: 2 }]);
      await before.stop();
      const orders = await orderIds(source.db);
      expect(orders.length).toBeGreaterThan(1);
      expect(orders).toContain(placed.id);

      const file = path.join(dir, "cafe.dump");
      execFileSync(pgDump(), ["-Fc", "-f", file, source.url], { stdio: "pipe" });
      await dropDatabase(serverUrl(), TARGET);
      const admin = new pg.Client({ connectionString: serverUrl("postgres") });
      await admin.connect();
      await admin.query(`create database ${TARGET}`).finally(() => admin.end());
      execFileSync(pgRestore(), ["--exit-on-error", "-d", target.url, file], { stdio: "pipe" });

      // The service on the restored database: the same orders, and it takes a new one.
      const after = await ChildService.start({ name: "after", mode: "api", databaseUrl: target.url, env: { DEMO_DATA: "false" } });
      const restored = new pg.Pool({ connectionString: target.url, max: 2 });
      try {
        expect(await orderIds(restored)).toEqual(orders);
        const api = apiAt(after.url);
        const aliceToken = await login(after.url, "alice");
        const mine = await api.gql("query($id: ID!) { order(id: $id) { id status } }", { variables: { id: placed.id }, token: aliceToken });
        expect({ data: mine.body.data, errors: mine.body.errors }).toEqual({ errors: undefined, data: { order: { id: placed.id, status: "PENDING" } } });
        const next = await placeOrder(api, aliceToken, [{ coffeeId: PLENTIFUL_COFFEES[0]!, quantity: 1 }]);
        expect(await orderIds(restored)).toEqual([...orders, next.id].sort());
      } finally {
        await restored.end();
        await after.stop();
      }
    } finally {
      await source.close();
      await dropDatabase(serverUrl(), SOURCE).catch(() => {});
    }
  },
  180_000,
);
