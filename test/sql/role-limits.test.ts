import { inTransactionAsSystem } from "../../src/db/asSystem.ts";
import { expectRefused, gqlAs, ok } from "../support/client.ts";
import { removeStockedCoffee, stockedCoffee, type StockedCoffee } from "../support/fixtures.ts";
import { useTestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";

// Time limits in Postgres, owned by the DBA (app_private.role_limits): each
// request role's statement_timeout and lock_timeout reach its requests
// (SET LOCAL ROLE ignores ALTER ROLE ... SET), a change in SQL takes effect
// without a restart, and a statement that runs out answers QUERY_TIMEOUT.

let coffee: StockedCoffee;
const original = new Map<string, { statement_timeout: string; lock_timeout: string }>();
const t = useTestService({
  deleteNewOrders: true,
  async cleanup(t) {
    for (const [role, r] of original) await t.db.query("update app_private.role_limits set statement_timeout = $2, lock_timeout = $3 where role = $1", [role, r.statement_timeout, r.lock_timeout]);
    await removeStockedCoffee(t, coffee);
  },
});

beforeAll(async () => {
  coffee = await stockedCoffee(t, "role-limits", "3.00", 1);
  for (const r of (await t.db.query("select role, statement_timeout::text, lock_timeout::text from app_private.role_limits")).rows) original.set(r.role, r);
});

const limitsOf = (role: string) => t.service.api!.roleLimits.settingsFor(role);

test("every request role has limits, a few seconds for callers, more for staff and the system", async () => {
  const { rows } = await t.db.query("select role, extract(epoch from statement_timeout)::float8 as st, extract(epoch from lock_timeout)::float8 as lt from app_private.role_limits order by role");
  const byRole = Object.fromEntries(rows.map((r) => [r.role, { st: r.st, lt: r.lt }]));
  expect(Object.keys(byRole).sort()).toEqual(["cafe_admin", "cafe_anonymous", "cafe_barista", "cafe_customer", "cafe_system"]);
  for (const role of ["cafe_anonymous", "cafe_customer"]) expect(byRole[role].st).toBeLessThanOrEqual(5);
  for (const role of ["cafe_barista", "cafe_admin"]) expect(byRole[role].st).toBeGreaterThan(byRole.cafe_customer.st);
  for (const role of Object.keys(byRole)) expect(byRole[role].lt).toBeLessThan(byRole[role].st);
  expect(byRole.cafe_system.st).toBeGreaterThan(byRole.cafe_admin.st);
  expect(limitsOf("cafe_anonymous")).toEqual({ statement_timeout: String(byRole.cafe_anonymous.st * 1000), lock_timeout: String(byRole.cafe_anonymous.lt * 1000) });
});

test("the system's transactions (payment route, worker jobs) run with cafe_system's limits", async () => {
  const client = await t.db.connect();
  try {
    const seen = await inTransactionAsSystem(
      client,
      async (c) => (await c.query("select current_user as role, current_setting('statement_timeout') as st, current_setting('lock_timeout') as lt")).rows[0],
    );
    expect(seen).toEqual({ role: "cafe_system", st: "30s", lt: "10s" });
  } finally {
    client.release();
  }
});

test("the DBA's change in SQL takes effect at once; a statement over the timeout answers QUERY_TIMEOUT", async () => {
  expect(ok(await gqlAs(t, "anonymous", "{ menuItems { id } }")).menuItems.length).toBeGreaterThan(0);
  await t.db.query("update app_private.role_limits set statement_timeout = '300 ms', lock_timeout = '1 minute' where role = 'cafe_anonymous'");
  await waitUntil("the API to learn the new limit", () => limitsOf("cafe_anonymous").statement_timeout === "300");
  // The DBA holds the menu: the read waits, and the statement timeout (not
  // the minute of lock_timeout) ends it.
  const dba = await t.db.connect();
  try {
    await dba.query("begin; lock table app_public.coffees in access exclusive mode");
    const started = Date.now();
    const r = await gqlAs(t, "anonymous", "{ menuItems { id } }");
    const ms = Date.now() - started;
    expectRefused(r, "QUERY_TIMEOUT");
    expect(ms).toBeLessThan(3000);
    expect(JSON.stringify(r.body)).not.toMatch(/canceling statement|app_public/);
  } finally {
    await dba.query("rollback");
    dba.release();
  }
  await t.db.query("update app_private.role_limits set statement_timeout = $1, lock_timeout = $2 where role = 'cafe_anonymous'", [
    original.get("cafe_anonymous")!.statement_timeout,
    original.get("cafe_anonymous")!.lock_timeout,
  ]);
  await waitUntil("the API to learn the old limit again", () => limitsOf("cafe_anonymous").statement_timeout !== "300");
  expect(ok(await gqlAs(t, "anonymous", "{ menuItems { id } }")).menuItems.length).toBeGreaterThan(0);
});

test("an order that waits on stock another transaction holds gives up after the customer's lock_timeout (3 s): QUERY_TIMEOUT", async () => {
  const dba = await t.db.connect();
  try {
    await dba.query("begin");
    await dba.query("select 1 from app_public.stock_items where ingredient_id = $1 for update", [coffee.ingredientId]);
    const started = Date.now();
    const r = await gqlAs(t, "alice", "mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }", { input: { items: [{ coffeeId: coffee.id, quantity: 1 }] } });
    const ms = Date.now() - started;
    expectRefused(r, "QUERY_TIMEOUT");
    expect(ms).toBeGreaterThanOrEqual(Number(limitsOf("cafe_customer").lock_timeout) - 100);
    expect(ms).toBeLessThan(Number(limitsOf("cafe_customer").lock_timeout) + 3000);
  } finally {
    await dba.query("rollback");
    dba.release();
  }
});

test("limits are checked when written: a bad value or a deleted row is refused", async () => {
  await expect(t.db.query("update app_private.role_limits set statement_timeout = '0' where role = 'cafe_customer'")).rejects.toMatchObject({ code: "23514" });
  await expect(t.db.query("update app_private.role_limits set lock_timeout = null where role = 'cafe_customer'")).rejects.toMatchObject({ code: "23502" });
  await expect(t.db.query("insert into app_private.role_limits values ('postgres', '1s', '1s', 'x')")).rejects.toMatchObject({ code: "23514" });
  await expect(t.db.query("delete from app_private.role_limits where role = 'cafe_customer'")).rejects.toMatchObject({ code: "22023" });
});
