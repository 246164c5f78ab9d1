import pg from "pg";
import { DEMO } from "../support/client.ts";
import { requestRolePool, sqlAs } from "../support/db.ts";
import { insertOrders, stockedCoffee, type StockedCoffee } from "../support/fixtures.ts";
import { useTestService } from "../support/service.ts";

// Staff per store, decided by RLS (migrations/committed/000002-stores.sql,
// sections 020 to 200): the policies ask app_public.staff_store_ids(), which
// reads app_public.store_staff; one insert there assigns a member of staff
// to a store. Checked in SQL, as the request roles, the way the API runs.

const t = useTestService({ sandbox: true });
const { baixa, ribeira } = DEMO.stores;
let pool: pg.Pool;
let coffee: StockedCoffee;
let orders: { baixa: string; ribeira: string };

beforeAll(async () => {
  pool = requestRolePool(t);
  coffee = await stockedCoffee(t, "Store RLS", "2.00", 1);
  const [a] = await insertOrders(t, [{ customerId: DEMO.alice.id, status: "PAID", lines: [{ coffeeId: coffee.id, quantity: 1 }] }]);
  // A DBA's insert names the store; the lines, events and notification follow the order.
  const { rows } = await t.db.query("insert into app_public.orders (customer_id, status, total, store_id) values ($1, 'PENDING', 2, $2) returning id", [DEMO.bob.id, ribeira]);
  await t.db.query("insert into app_public.order_items (order_id, position, coffee_id, quantity, unit_price) values ($1, 1, $2, 1, 2)", [rows[0].id, coffee.id]);
  await t.db.query("update app_public.orders set status = 'PAID' where id = $1", [rows[0].id]);
  orders = { baixa: a!, ribeira: rows[0].id };
});

afterAll(async () => {
  await pool?.end();
});

const ids = (rows: any[] | undefined) => (rows ?? []).map((r) => r.id);

test("an order stays in its store: moving it to another is refused, even for a DBA", async () => {
  await expect(t.db.query("update app_public.orders set store_id = $2 where id = $1", [orders.baixa, ribeira])).rejects.toMatchObject({ code: "22023" });
  const { rows } = await t.db.query("select store_id from app_public.orders where id = $1", [orders.baixa]);
  expect(rows[0].store_id).toBe(baixa);
});

test("RLS: each store's barista reads their store's orders, lines, events, notifications and stock; the chain's admin reads all; customers their own", async () => {
  const as = (role: "cafe_barista" | "cafe_admin" | "cafe_customer", user: string, sql: string) => sqlAs(pool, role, user, sql);
  const two = [orders.baixa, orders.ribeira];
  const q = `select id from app_public.orders where id = any('{${two.join(",")}}'::uuid[])`;
  expect(ids((await as("cafe_barista", DEMO.barista.id, q)).rows)).toEqual([orders.baixa]);
  expect(ids((await as("cafe_barista", DEMO.ribeiraBarista.id, q)).rows)).toEqual([orders.ribeira]);
  expect(ids((await as("cafe_admin", DEMO.ribeiraManager.id, q)).rows)).toEqual([orders.ribeira]);
  expect(ids((await as("cafe_admin", DEMO.admin.id, q)).rows).sort()).toEqual([...two].sort());
  expect(ids((await as("cafe_customer", DEMO.bob.id, q)).rows)).toEqual([orders.ribeira]);
  for (const [table, column] of [
    ["order_items", "order_id"],
    ["order_events", "order_id"],
    ["notifications", "order_id"],
  ] as const) {
    const r = await as("cafe_barista", DEMO.ribeiraBarista.id, `select distinct ${column} as id from app_public.${table} where ${column} = any('{${two.join(",")}}'::uuid[])`);
    expect({ table, ids: ids(r.rows) }).toEqual({ table, ids: [orders.ribeira] });
  }
  const events = await t.db.query("select distinct store_id from app_public.order_events where order_id = $1", [orders.ribeira]);
  expect(events.rows).toEqual([{ store_id: ribeira }]);
  const stock = await as("cafe_barista", DEMO.ribeiraBarista.id, "select distinct store_id as id from app_public.stock_items");
  expect(ids(stock.rows)).toEqual([ribeira]);
  const stockAll = await as("cafe_admin", DEMO.admin.id, "select distinct store_id as id from app_public.stock_items");
  // Other suites on this database may have added stores; the admin reads both of the demo's.
  expect(ids(stockAll.rows)).toEqual(expect.arrayContaining([baixa, ribeira]));
});

test("one insert into store_staff assigns a barista to a store; deleting it takes the store away again", async () => {
  const q = `select id from app_public.orders where id = '${orders.ribeira}'`;
  expect(ids((await sqlAs(pool, "cafe_barista", DEMO.barista.id, q)).rows)).toEqual([]);
  await t.db.query("insert into app_public.store_staff (store_id, staff_id) values ($1, $2)", [ribeira, DEMO.barista.id]);
  try {
    expect(ids((await sqlAs(pool, "cafe_barista", DEMO.barista.id, q)).rows)).toEqual([orders.ribeira]);
    const stores = await sqlAs(pool, "cafe_barista", DEMO.barista.id, "select unnest(app_public.staff_store_ids()) as id");
    expect(ids(stores.rows).sort()).toEqual([baixa, ribeira].sort());
  } finally {
    await t.db.query("delete from app_public.store_staff where store_id = $1 and staff_id = $2", [ribeira, DEMO.barista.id]);
  }
  expect(ids((await sqlAs(pool, "cafe_barista", DEMO.barista.id, q)).rows)).toEqual([]);
  // The assignment is audited, with its store.
  const { rows } = await t.db.query("select action, store_id from app_private.audit_log where entity = $1 order by id", [`app_public.store_staff ${ribeira} ${DEMO.barista.id}`]);
  expect(rows.map((r) => [r.action, r.store_id])).toEqual([
    ["INSERT", ribeira],
    ["DELETE", ribeira],
  ]);
});

test("a store manager is an admin of their stores only: is_admin() (the chain's) is false for them, is_store_admin() true at Ribeira only", async () => {
  const r = await sqlAs(
    pool,
    "cafe_admin",
    DEMO.ribeiraManager.id,
    `select app_public.is_admin() as chain, app_public.is_store_admin('${ribeira}') as ribeira, app_public.is_store_admin('${baixa}') as baixa`,
  );
  expect(r.rows).toEqual([{ chain: false, ribeira: true, baixa: false }]);
  const chain = await sqlAs(pool, "cafe_admin", DEMO.admin.id, `select app_public.is_admin() as chain, app_public.is_store_admin('${ribeira}') as ribeira`);
  expect(chain.rows).toEqual([{ chain: true, ribeira: true }]);
  // The chain's rules stay the chain admin's: the manager is refused, nothing changes.
  const price = await sqlAs(pool, "cafe_admin", DEMO.ribeiraManager.id, `select app_public.update_coffee_price('${coffee.id}', 9)`);
  expect(price.error?.code).toBe("42501");
  const refunds = await sqlAs(pool, "cafe_admin", DEMO.ribeiraManager.id, "select distinct store_id as id from app_public.refunds");
  expect(ids(refunds.rows).every((id) => id === ribeira)).toBe(true);
});

test("a store's settings are checked against the chain's definitions; null follows the chain's setting", async () => {
  await expect(t.db.query("update app_public.stores set max_stock_share_percent = 150 where id = $1", [ribeira])).rejects.toMatchObject({ code: "22023" });
  await expect(t.db.query("update app_public.stores set time_zone = 'Mars/Olympus' where id = $1", [ribeira])).rejects.toMatchObject({ code: "22023" });
  const { rows } = await t.db.query(
    `select app_private.store_setting($1, 'pending_order_expiry_seconds') as own, (select value from app_private.settings where key = 'pending_order_expiry_seconds') as chain`,
    [ribeira],
  );
  expect(rows[0].own).toBe(rows[0].chain);
  await t.db.query("update app_public.stores set pending_order_expiry_seconds = 77 where id = $1", [ribeira]);
  try {
    const { rows: own } = await t.db.query("select app_private.store_setting($1, 'pending_order_expiry_seconds')::int as s", [ribeira]);
    expect(own[0].s).toBe(77);
  } finally {
    await t.db.query("update app_public.stores set pending_order_expiry_seconds = null where id = $1", [ribeira]);
  }
  // Exactly one default store.
  await expect(t.db.query("update app_public.stores set is_default = true where id = $1", [ribeira])).rejects.toMatchObject({ code: "23505" });
});
