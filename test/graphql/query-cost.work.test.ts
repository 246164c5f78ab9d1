import pg from "pg";
import { codes, errorsOf, settled, subscribe } from "../support/client.ts";
import { SqlRecorder, testDatabaseUrl } from "../support/db.ts";
import { useTestService } from "../support/service.ts";

// Cost equals work: what the server pays, not what it returns.
// - a totalCount is priced by the rows it scans (the table's size), so the
//   20-coffee count over every order line is refused once order_items is big;
// - a variable's value counts toward the depth, token and size limits, and
//   is refused before anything coerces it (no SQL either);
// - a subscription is priced for the re-reads it will cost.

let sql: SqlRecorder;
const bulkOrders: string[] = [];
const t = useTestService({
  sandbox: true,
  async cleanup(t) {
    sql?.uninstall();
    if (bulkOrders.length) await t.db.query("delete from app_public.orders where id = any($1::uuid[])", [bulkOrders]);
  },
});

beforeAll(() => {
  sql = new SqlRecorder(decodeURIComponent(new URL(t.urls.authenticator).username));
  sql.install();
});

const HEAVY = `{ allCoffees { nodes { orderItemList { totalCount } } } }`;

test("a totalCount over a large table is priced by what it scans: the 20-coffee count of order lines is refused for anonymous", async () => {
  const small = await t.gql(HEAVY);
  expect(small.body.errors).toBeUndefined();
  const before = small.body.extensions!.cost.requested;

  // 6,000 order lines (the finding: 200k orders made this query run 3.3 s at cost 441).
  const { rows: customers } = await t.db.query("select id from app_public.customers limit 1");
  const { rows: coffees } = await t.db.query("select id from app_public.coffees limit 1");
  const { rows } = await t.db.query(
    `with o as (
       insert into app_public.orders (customer_id, status, total, time_ordered, inventory_taken_at, paid_at)
       select $1, 'COMPLETED', 3, now() - interval '1 day', now(), now() from generate_series(1, 6000)
       returning id)
     insert into app_public.order_items (order_id, position, coffee_id, quantity, unit_price)
     select id, 1, $2, 1, 3 from o returning order_id`,
    [customers[0].id, coffees[0].id],
  );
  bulkOrders.push(...rows.map((r) => r.order_id));
  await t.db.query("analyze app_public.order_items");
  await t.service.api!.tableSizes.refresh();
  expect(t.service.api!.tableSizes.rows("app_public.order_items")).toBeGreaterThanOrEqual(6000);

  const { result: big, statements } = await sql.record(() => t.gql(HEAVY));
  expect(codes(big)).toEqual(["QUERY_TOO_COMPLEX"]);
  const cost = big.body.errors![0]!.extensions!.cost as number;
  expect(cost).toBeGreaterThan(5000);
  expect(cost).toBeGreaterThan(before);
  expect(statements).toEqual([]);
  // The count is paid once per connection, not once per row of its page.
  const once = await t.gql(`{ allCoffees(first: 5) { totalCount nodes { id } } }`);
  expect(once.body.errors).toBeUndefined();
  expect(once.body.extensions!.cost.requested).toBeLessThan(50);
});

test("counts over a table whose statistics were lost (never analyzed, a crash, a restored dump) are priced by its size on disk: 30 aliased filtered counts are refused, no SQL", async () => {
  // (After the test above: 6,000 more order lines.) What the planner knew is
  // wiped: reltuples -1 and relpages 0 (never analyzed), no live-row count.
  const su = new pg.Client({ connectionString: testDatabaseUrl() });
  await su.connect();
  try {
    await su.query("select pg_stat_reset_single_table_counters('app_public.order_items'::regclass)");
    await su.query("update pg_class set reltuples = -1, relpages = 0 where oid = 'app_public.order_items'::regclass");
    await t.service.api!.tableSizes.refresh();
    // Ours, the planner's own guess from the pages on disk (EXPLAIN) and the real count agree within a factor of two.
    const { rows: plan } = await su.query("explain (format json) select * from app_public.order_items");
    const planned = plan[0]["QUERY PLAN"][0].Plan["Plan Rows"] as number;
    const ours = t.service.api!.tableSizes.rows("app_public.order_items");
    const { rows: real } = await su.query("select count(*)::int as n from app_public.order_items");
    expect(ours).toBeGreaterThan(real[0].n / 2);
    expect(ours).toBeGreaterThan(planned / 2);
    expect(ours).toBeLessThan(planned * 2);
    const counts = Array.from({ length: 30 }, (_, i) => `c${i}: allOrderItems(filter: { position: { greaterThan: ${i} } }) { totalCount }`).join("\n");
    const token = await t.token("alice");
    const { result, statements } = await sql.record(() => t.gql(`{ ${counts} }`, { token }));
    expect(codes(result)).toEqual(["QUERY_TOO_COMPLEX"]);
    expect(result.body.errors![0]!.extensions!.cost as number).toBeGreaterThan(30 * 300);
    expect(statements).toEqual([]);
  } finally {
    await su.query("analyze app_public.order_items");
    await su.end();
    await t.service.api!.tableSizes.refresh();
  }
});

/** `{and: [{and: [ ... {name: {equalTo: "x"}} ]}]}`, `levels` and/list pairs deep. */
function nestedFilter(levels: number): Record<string, unknown> {
  let f: Record<string, unknown> = { name: { equalTo: "x" } };
  for (let i = 0; i < levels; i++) f = { and: [f] };
  return f;
}

const FILTERED = `query($f: CoffeeFilter) { allCoffees(filter: $f) { nodes { id } } }`;

test("a nested filter variable over the depth limit is refused before coercion: QUERY_TOO_DEEP, no SQL", async () => {
  const fine = await t.gql(FILTERED, { variables: { f: nestedFilter(2) } });
  expect(fine.body.errors).toBeUndefined();
  const { result, statements } = await sql.record(() => t.gql(FILTERED, { variables: { f: nestedFilter(40) } }));
  expect(codes(result)).toEqual(["QUERY_TOO_DEEP"]);
  expect(statements).toEqual([]);
});

test("a wide filter variable over the token limit (about 24 KB) is refused: TOO_MANY_TOKENS, no SQL, quickly", async () => {
  const f = { or: Array.from({ length: 900 }, (_, i) => ({ name: { equalTo: `coffee ${i}` } })) };
  expect(JSON.stringify(f).length).toBeGreaterThan(24_000);
  const started = performance.now();
  const { result, statements } = await sql.record(() => t.gql(FILTERED, { variables: { f } }), 0);
  const ms = performance.now() - started;
  expect(codes(result)).toEqual(["TOO_MANY_TOKENS"]);
  expect(statements).toEqual([]);
  expect(ms).toBeLessThan(1000);
});

test("a nested literal counts toward the depth limit too", async () => {
  const literal = JSON.stringify(nestedFilter(10)).replace(/"(\w+)":/g, "$1:");
  const r = await t.gql(`{ allCoffees(filter: ${literal}) { nodes { id } } }`);
  expect(codes(r)).toEqual(["QUERY_TOO_DEEP"]);
});

test("a subscription is priced for each re-read it will cost: a selection a query may run once is refused as a subscription", async () => {
  const selection = `reviews(limit: 600) { rating }`;
  const asQuery = await t.gql(`{ featuredCoffee { ${selection} } }`);
  expect(asQuery.body.errors).toBeUndefined();
  expect(asQuery.body.extensions!.cost.requested).toBeLessThan(5000);
  const ws = t.ws(null);
  const sub = subscribe(ws, `subscription { newCoffee { ${selection} } }`);
  await settled(sub, 1);
  const errors = errorsOf(sub);
  expect(errors.map((e) => e.extensions?.code)).toEqual(["QUERY_TOO_COMPLEX"]);
  expect(errors[0].extensions.cost).toBeGreaterThan(5000);
});
