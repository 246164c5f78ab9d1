import pg from "pg";
import { codes } from "../support/client.ts";
import { SqlRecorder, testDatabaseUrl } from "../support/db.ts";
import { useTestService } from "../support/service.ts";

// A filter's price is the work it asks for (plugins/QueryCostPlugin/pricing.ts,
// filterWork): a relation it walks reads the related rows of every row it is
// evaluated on, a computed column calls its function on each, and nested
// filters compound. The finding: over 200,000 orders, a barista's
// `every`-over-lines filter on each line's coffee's margin (a STABLE SQL
// function, called per line) was priced 20,006 of 50,000 (the count's scan
// only) and ran to its 10 s timeout, holding a pool connection.

const ORDERS = 200_000;
const ATTACK = `{ allOrders(filter: { orderItemsByOrderId: { every: { coffee: { margin: { lessThan: -1 } } } } }) { totalCount } }`;
const BY_VARIABLE = `query($f: OrderFilter) { allOrders(filter: $f) { totalCount } }`;

let sql: SqlRecorder;
// (No sandbox: its restore would delete the 200,000 orders with their triggers on.)
const t = useTestService({
  async cleanup() {
    sql?.uninstall();
    await asBulkLoad(async (c) => {
      await c.query("delete from app_public.order_items where order_id in (select id from app_public.orders where total = 3.21)");
      await c.query("delete from app_public.orders where total = 3.21");
    });
    // The files after this one find the tables' sizes (on disk and in the statistics) as they were.
    const su = new pg.Client({ connectionString: testDatabaseUrl() });
    await su.connect();
    try {
      await su.query("vacuum analyze app_public.orders, app_public.order_items");
    } finally {
      await su.end();
    }
    await t.service.api!.tableSizes.refresh();
    expect(t.service.api!.tableSizes.rows("app_public.order_items")).toBeLessThan(ORDERS / 10);
  },
});

/** As a DBA's bulk load: the superuser, triggers off (no stock taken, no notifications), one transaction. */
async function asBulkLoad(run: (c: pg.Client) => Promise<unknown>): Promise<void> {
  const c = new pg.Client({ connectionString: testDatabaseUrl() });
  await c.connect();
  try {
    await c.query("begin");
    await c.query("set local session_replication_role = replica");
    await run(c);
    await c.query("commit");
  } catch (e) {
    await c.query("rollback");
    throw e;
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  sql = new SqlRecorder(decodeURIComponent(new URL(t.urls.authenticator).username));
  sql.install();
  // 200,000 orders of one line each, as the attack found them (marked by their total, for the clean-up).
  const { rows: customers } = await t.db.query("select id from app_public.customers limit 1");
  const { rows: coffees } = await t.db.query("select id from app_public.coffees limit 1");
  await asBulkLoad((c) =>
    c.query(
      `with o as (
       insert into app_public.orders (customer_id, status, total, time_ordered, inventory_taken_at, paid_at)
       select $1, 'COMPLETED', 3.21, now() - interval '1 day', now(), now() from generate_series(1, ${ORDERS})
       returning id)
     insert into app_public.order_items (order_id, position, coffee_id, quantity, unit_price)
     select id, 1, $2, 1, 3.21 from o`,
      [customers[0].id, coffees[0].id],
    ),
  );
  await t.db.query("analyze app_public.orders");
  await t.db.query("analyze app_public.order_items");
  await t.service.api!.tableSizes.refresh();
}, 180_000);

/** The price filterWork gives the attack: per order, its lines (at least 1 per order) times (the line 1 + its coffee 1 + margin's call 1); plus the root field 1 and the count's scan. */
function attackPrice(): number {
  const rows = t.service.api!.tableSizes.rows;
  const orders = rows("app_public.orders");
  const perOrder = Math.max(1, rows("app_public.order_items") / Math.max(1, orders));
  return 1 + Math.ceil(Math.max(1, orders) * (perOrder * 3)) + Math.max(1, Math.ceil(orders / 10));
}

test("the attack is priced by the relations it walks and the function it calls: refused for a barista (QUERY_TOO_COMPLEX), no SQL", async () => {
  expect(t.service.api!.tableSizes.rows("app_public.orders")).toBeGreaterThanOrEqual(ORDERS);
  const token = await t.token("barista");
  const { result, statements } = await sql.record(() => t.gql(ATTACK, { token }));
  expect(codes(result)).toEqual(["QUERY_TOO_COMPLEX"]);
  const cost = result.body.errors![0]!.extensions!.cost as number;
  // (On d7bd1c7: 20,006, accepted, and it ran to the statement timeout.)
  expect(cost).toBe(attackPrice());
  expect(cost).toBeGreaterThan(10 * 50_000);
  expect(statements).toEqual([]);
}, 60_000);

test("the same filter in a variable is priced the same, whatever cheaper filter the document was priced with before", async () => {
  const token = await t.token("admin");
  // A column's condition is part of reading the row: the filtered count costs what the plain count does.
  const plain = await t.gql(`{ allOrders { totalCount } }`, { token });
  expect(plain.body.errors).toBeUndefined();
  const cheap = await t.gql(BY_VARIABLE, { token, variables: { f: { status: { equalTo: "COMPLETED" } } } });
  expect(cheap.body.errors).toBeUndefined();
  expect(cheap.body.extensions!.cost.requested).toBe(plain.body.extensions!.cost.requested);
  const { result, statements } = await sql.record(() => t.gql(BY_VARIABLE, { token, variables: { f: { orderItemsByOrderId: { every: { coffee: { margin: { lessThan: -1 } } } } } } }));
  expect(codes(result)).toEqual(["QUERY_TOO_COMPLEX"]);
  expect(result.body.errors![0]!.extensions!.cost).toBe(attackPrice());
  expect(statements).toEqual([]);
}, 60_000);

test("nested filters compound: `some` over lines costs less than `every` over lines and their coffee's margin, more than a column", async () => {
  const token = await t.token("admin");
  const price = async (f: unknown) => {
    const r = await sql.record(() => t.gql(BY_VARIABLE, { token, variables: { f } }));
    expect(codes(r.result)).toEqual(["QUERY_TOO_COMPLEX"]);
    expect(r.statements).toEqual([]);
    return r.result.body.errors![0]!.extensions!.cost as number;
  };
  const lines = await price({ orderItemsByOrderId: { some: { position: { greaterThan: 5 } } } });
  const coffee = await price({ orderItemsByOrderId: { some: { coffee: { name: { equalTo: "x" } } } } });
  const margin = await price({ orderItemsByOrderId: { some: { coffee: { margin: { lessThan: -1 } } } } });
  const twice = await price({ or: [{ orderItemsByOrderId: { some: { coffee: { margin: { lessThan: -1 } } } } }, { orderItemsByOrderId: { none: { position: { equalTo: 1 } } } }] });
  expect(lines).toBeLessThan(coffee);
  expect(coffee).toBeLessThan(margin);
  expect(margin).toBe(attackPrice());
  expect(twice).toBeGreaterThan(margin);
}, 60_000);
