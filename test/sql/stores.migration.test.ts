import pg from "pg";
import { baselineDatabase, migrateToCurrent } from "../support/baseline.ts";
import { serverUrl } from "../support/db.ts";
import { schemaCheck, scratchCopy } from "../support/schemaCheck.ts";

// The chain shipped as a migration on top of the baseline
// (migrations/committed/000002-stores.sql): a database that ran the
// baseline release, holding orders in every status with their lines,
// events, reservations, movements, refunds, notifications and deliveries,
// is migrated; everything it held becomes the default store's, the rules
// hold, and `npm run schema:check` passes (no trusted document breaks).

jest.setTimeout(180_000);

const NAME = "cafe_stores_migration";
const ORDERS = 2000;
let db: pg.Client;

beforeAll(async () => {
  const urls = await baselineDatabase(serverUrl(NAME), ORDERS);
  await migrateToCurrent(urls);
  db = new pg.Client({ connectionString: serverUrl(NAME) });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
});

test("every row that happened in the café belongs to the default store, and the foreign keys are validated", async () => {
  const { rows: stores } = await db.query("select id, name, is_default, time_zone from app_public.stores");
  expect(stores).toEqual([{ id: "5707e000-0000-4000-8000-000000000001", name: "Main store", is_default: true, time_zone: "UTC" }]);
  for (const table of [
    "app_public.orders",
    "app_public.order_events",
    "app_public.notifications",
    "app_public.refunds",
    "app_public.stock_movements",
    "app_public.stock_items",
    "app_private.stock_reserved",
  ]) {
    const { rows } = await db.query(`select store_id, count(*)::int as n from ${table} group by store_id`);
    expect({ table, rows }).toEqual({ table, rows: [{ store_id: stores[0].id, n: expect.any(Number) }] });
  }
  const { rows: orders } = await db.query("select count(*)::int as n from app_public.orders");
  expect(orders[0].n).toBe(ORDERS);
  const { rows: deliveries } = await db.query("select count(*)::int as n from app_private.payment_deliveries where store_id is null");
  expect(deliveries[0].n).toBe(0);
  const { rows: fks } = await db.query("select conname from pg_constraint where conname like '%store_id_fkey' and not convalidated");
  expect(fks).toEqual([]);
});

test("what open orders hold is the same per store as a recount from their lines", async () => {
  const { rows } = await db.query(`
    with recount as (
      select o.store_id, rl.ingredient_id, sum(oi.quantity * rl.quantity) as amount
        from app_public.orders o join app_public.order_items oi on oi.order_id = o.id join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id
       where o.inventory_taken_at is null and o.status not in ('COMPLETED', 'CANCELLED')
       group by 1, 2)
    select r.store_id, r.ingredient_id, r.amount::float8 as kept, c.amount::float8 as recounted
      from app_private.stock_reserved r full join recount c using (store_id, ingredient_id)
     where r.amount is distinct from c.amount and coalesce(r.amount, 0) + coalesce(c.amount, 0) <> 0`);
  expect(rows).toEqual([]);
});

test("the staff of the single café work at the default store; its admin is the chain's", async () => {
  const { rows } = await db.query(
    "select b.name, b.chain_wide, array(select ss.store_id::text from app_public.store_staff ss where ss.staff_id = b.id) as stores from app_public.baristas b order by b.name",
  );
  expect(rows).toEqual([
    { name: "Baseline Admin", chain_wide: true, stores: [] },
    { name: "Baseline Barista", chain_wide: false, stores: ["5707e000-0000-4000-8000-000000000001"] },
  ]);
  const client = await db.query("begin; set local role cafe_barista; select set_config('jwt.claims.user_id', '00000000-0000-4000-8000-0000000000c2', true)").then(() => db);
  try {
    const { rows: seen } = await client.query("select count(*)::int as n from app_public.orders");
    expect(seen[0].n).toBe(ORDERS);
  } finally {
    await db.query("rollback");
  }
});

test("an order placed the way the baseline placed it (no store named) goes to the default store and reserves its stock", async () => {
  const { rows } = await db.query(
    "select o.store_id, o.status from app_public.create_order(p_coffee_id => '40000000-0000-4000-8000-0000000000b2', p_quantity => 2, p_customer_id => '00000000-0000-4000-8000-0000000000c1') o",
  );
  expect(rows).toEqual([{ store_id: "5707e000-0000-4000-8000-000000000001", status: "PENDING" }]);
});

test("npm run schema:check passes on the migrations: no trusted document breaks", () => {
  const r = schemaCheck(scratchCopy("-- Enter migration here\n"), 120_000);
  expect(r.stdout).toMatch(/Argument 'storeId: ID' added to field 'Mutation.createOrder'/);
  expect(r.stdout).not.toMatch(/BROKEN:/);
  expect(r.stdout).toMatch(/schema:check passed/);
  expect(r.status).toBe(0);
});
