import { type Caller, DEMO, expectRefused, gqlAs, ok } from "../support/client.ts";
import { documentsOf } from "../support/contract.ts";
import { stockedCoffee, type StockedCoffee } from "../support/fixtures.ts";
import { useTestService } from "../support/service.ts";

// salesReport: the owner's sales per hour, day or coffee, in the café's
// time zone, against the real service and database.

const ADMIN = documentsOf("admin");
const MARK_PAID = `mutation($id: ID!) { markOrderPaid(id: $id, method: CASH) { id status } }`;
const CANCEL = `mutation($id: ID!) { cancelOrder(id: $id) }`;

const t = useTestService({
  sandbox: true,
  async cleanup() {
    await setZone("UTC");
  },
});
let latte: StockedCoffee;
let mocha: StockedCoffee;

type Row = { bucket: string; orders: number; cups: number; revenue: number };
const report = async (from: string, to: string, groupBy: string, who: Caller = "admin"): Promise<Row[]> => ok(await gqlAs(t, who, ADMIN, { from, to, groupBy }, "SalesReport")).salesReport;

async function setZone(zone: string) {
  await t.db.query("update app_private.settings set text_value = $1 where key = 'cafe_time_zone'", [zone]);
}

/** An order of the given lines, PAID (as the owner) at `paidAt`; returns its id. */
async function paidAt(paidAtIso: string, lines: Array<[StockedCoffee, number]>, then?: "CANCELLED"): Promise<string> {
  const { rows } = await t.db.query("select (app_public.create_order(p_coffee_id := $1, p_quantity := $2, p_customer_id := $3)).id", [lines[0]![0].id, lines[0]![1], DEMO.bob.id]);
  const id: string = rows[0].id;
  for (const [coffee, quantity] of lines.slice(1)) {
    await t.db.query(
      `insert into app_public.order_items (order_id, position, coffee_id, quantity, unit_price)
       select $1, 1 + max(position), $2, $3, $4 from app_public.order_items where order_id = $1`,
      [id, coffee.id, quantity, coffee.price],
    );
  }
  await t.db.query("update app_public.orders set total = (select sum(quantity * unit_price) from app_public.order_items where order_id = $1) where id = $1", [id]);
  await t.db.query("update app_public.orders set status = 'PAID', paid_at = $2 where id = $1", [id, paidAtIso]);
  if (then) await t.db.query("update app_public.orders set status = $2 where id = $1", [id, then]);
  return id;
}

beforeAll(async () => {
  latte = await stockedCoffee(t, "Sales Latte", "4.00", 1);
  mocha = await stockedCoffee(t, "Sales Mocha", "5.50", 1);
});

test("admins only: baristas and customers FORBIDDEN, anonymous UNAUTHENTICATED", async () => {
  const variables = { from: "2026-01-01", to: "2026-01-02", groupBy: "DAY" };
  for (const [who, code] of [
    ["barista", "FORBIDDEN"],
    ["alice", "FORBIDDEN"],
    ["anonymous", "UNAUTHENTICATED"],
  ] as Array<[Caller, string]>) {
    expectRefused(await gqlAs(t, who, ADMIN, variables, "SalesReport"), code);
  }
});

test("a report has at most 744 rows, like any list: 31 days by the hour, or longer by the day; a longer HOUR range is BAD_USER_INPUT", async () => {
  const hourly = (from: string, to: string) => gqlAs(t, "admin", ADMIN, { from, to, groupBy: "HOUR" }, "SalesReport");
  expect(ok(await hourly("2026-01-01", "2026-01-31")).salesReport.length).toBeLessThanOrEqual(744);
  const e = expectRefused(await hourly("2026-01-01", "2026-03-01"), "BAD_USER_INPUT");
  expect(e.message).toMatch(/at most 744 rows/);
  expect(ok(await gqlAs(t, "admin", ADMIN, { from: "2026-01-01", to: "2027-01-01", groupBy: "DAY" }, "SalesReport")).salesReport.length).toBeLessThanOrEqual(744);
});

test("from and to are ISO 8601 dates or times; anything else is BAD_USER_INPUT", async () => {
  for (const [from, to] of [
    ["yesterday", "2026-01-02"],
    ["2026-13-01", "2026-12-31"],
    ["2026-02-30", "2026-03-01"],
    ["2026-01-01T25:00", "2026-01-02"],
    ["2026-01-01", "2026-01-02T00:00+25:00"],
    ["2026-01-02", "2026-01-01"], // from after to
    ["2026-01-01'; drop table app_public.orders; --", "2026-01-02"],
  ]) {
    const e = expectRefused(await gqlAs(t, "admin", ADMIN, { from, to, groupBy: "DAY" }, "SalesReport"), "BAD_USER_INPUT");
    expect(e.message).not.toMatch(/internal/i);
  }
  // Every accepted form.
  for (const [from, to] of [
    ["2026-01-01", "2026-01-02"],
    ["2026-01-01T08:00", "2026-01-01T09:30:15"],
    ["2026-01-01T08:00:00Z", "2026-01-01T09:00:00.5+01:00"],
    ["2026-01-01 08:00+0100", "2026-01-01 09:00-05"],
  ]) {
    expect(await report(from, to, "HOUR")).toEqual([]);
  }
});

test("a paid order adds exactly one order, its cups and its total to today's bucket; cancelled after payment (a refund) takes them back", async () => {
  const { rows } = await t.db.query(
    "select to_char(now() at time zone app_private.cafe_time_zone(), 'YYYY-MM-DD') as today, to_char((now() at time zone app_private.cafe_time_zone()) + interval '2 days', 'YYYY-MM-DD') as until",
  );
  const { today, until } = rows[0];
  // Today's bucket (and tomorrow's, should the test run across midnight).
  const todayRow = async (): Promise<Omit<Row, "bucket">> => {
    const rows = await report(today, until, "DAY");
    expect(rows.length).toBeLessThanOrEqual(2);
    if (rows.length) expect(rows[0]!.bucket).toBe(today);
    return rows.reduce((sum, r) => ({ orders: sum.orders + r.orders, cups: sum.cups + r.cups, revenue: sum.revenue + r.revenue }), { orders: 0, cups: 0, revenue: 0 });
  };
  const before = await todayRow();

  // Placed by alice (PENDING: not a sale yet), paid at the till.
  const placed = ok(await gqlAs(t, "alice", `mutation($c: ID!) { createOrder(coffeeId: $c, quantity: 3) { id total } }`, { c: latte.id })).createOrder;
  expect(await todayRow()).toEqual(before);
  ok(await gqlAs(t, "barista", MARK_PAID, { id: placed.id }));
  const after = await todayRow();
  expect(after.orders).toBe(before.orders + 1);
  expect(after.cups).toBe(before.cups + 3);
  expect(after.revenue).toBeCloseTo(before.revenue + 12, 2);
  expect(placed.total).toBe(12);

  ok(await gqlAs(t, "barista", CANCEL, { id: placed.id }));
  const { rows: refunds } = await t.db.query("select amount from app_public.refunds where order_id = $1", [placed.id]);
  expect(refunds).toHaveLength(1); // the payment is owed back
  expect(await todayRow()).toEqual(before);
});

test("HOUR, DAY and COFFEE: buckets, counts, cups and revenue; from included, to excluded", async () => {
  await setZone("UTC");
  await paidAt("2001-02-03T10:15:00Z", [[latte, 2]]); // 8.00
  await paidAt("2001-02-03T10:45:00Z", [
    [latte, 1],
    [mocha, 2],
  ]); // 4.00 + 11.00
  await paidAt("2001-02-03T11:00:00Z", [[mocha, 1]]); // 5.50: the first instant of 11:00
  await paidAt("2001-02-03T11:20:00Z", [[latte, 5]], "CANCELLED"); // refund owed: left out
  await paidAt("2001-02-04T00:00:00Z", [[mocha, 4]]); // the `to` instant: excluded
  await t.db.query("select (app_public.create_order(p_coffee_id := $1, p_quantity := 7, p_customer_id := $2)).id", [latte.id, DEMO.bob.id]); // never paid

  expect(await report("2001-02-03", "2001-02-04", "HOUR")).toEqual([
    { bucket: "2001-02-03T10:00+00:00", orders: 2, cups: 5, revenue: 23 },
    { bucket: "2001-02-03T11:00+00:00", orders: 1, cups: 1, revenue: 5.5 },
  ]);
  expect(await report("2001-02-03", "2001-02-05", "DAY")).toEqual([
    { bucket: "2001-02-03", orders: 3, cups: 6, revenue: 28.5 },
    { bucket: "2001-02-04", orders: 1, cups: 4, revenue: 22 },
  ]);
  expect(await report("2001-02-03T10:00:00Z", "2001-02-03T11:00:00Z", "DAY")).toEqual([{ bucket: "2001-02-03", orders: 2, cups: 5, revenue: 23 }]);
  expect(await report("2001-02-03", "2001-02-04", "COFFEE")).toEqual([
    { bucket: mocha.name, orders: 2, cups: 3, revenue: 16.5 },
    { bucket: latte.name, orders: 2, cups: 3, revenue: 12 },
  ]);
});

test("buckets follow the café's time zone (cafe_time_zone), across midnight and a DST change", async () => {
  await paidAt("2002-02-03T23:30:00Z", [[latte, 1]]); // Paris: 2002-02-04 00:30 (+01:00)
  await paidAt("2002-10-27T00:30:00Z", [[latte, 1]]); // Paris: 02:30+02:00 (summer time)
  await paidAt("2002-10-27T01:30:00Z", [[mocha, 1]]); // Paris: 02:30+01:00 (the same wall-clock hour, an hour later)
  try {
    await setZone("UTC");
    expect((await report("2002-02-03", "2002-02-05", "DAY")).map((r) => r.bucket)).toEqual(["2002-02-03"]);

    await setZone("Europe/Paris");
    // Dates without an offset are the café's midnights.
    expect(await report("2002-02-04", "2002-02-05", "DAY")).toEqual([{ bucket: "2002-02-04", orders: 1, cups: 1, revenue: 4 }]);
    expect(await report("2002-02-03", "2002-02-04", "DAY")).toEqual([]);
    expect((await report("2002-02-04", "2002-02-05", "HOUR")).map((r) => r.bucket)).toEqual(["2002-02-04T00:00+01:00"]);
    // An explicit offset is taken as given.
    expect(await report("2002-02-03T23:00:00Z", "2002-02-04T00:00:00Z", "HOUR")).toHaveLength(1);
    // The two 02:00 hours of 27 October 2002 stay apart.
    expect(await report("2002-10-27", "2002-10-28", "HOUR")).toEqual([
      { bucket: "2002-10-27T02:00+02:00", orders: 1, cups: 1, revenue: 4 },
      { bucket: "2002-10-27T02:00+01:00", orders: 1, cups: 1, revenue: 5.5 },
    ]);
    expect(await report("2002-10-27", "2002-10-28", "DAY")).toEqual([{ bucket: "2002-10-27", orders: 2, cups: 2, revenue: 9.5 }]);

    // A zone PostgreSQL does not know is refused, and changes nothing.
    await expect(t.db.query("update app_private.settings set text_value = 'Mars/Olympus' where key = 'cafe_time_zone'")).rejects.toMatchObject({ code: "22023" });
    const { rows } = await t.db.query("select text_value from app_private.settings where key = 'cafe_time_zone'");
    expect(rows[0].text_value).toBe("Europe/Paris");
  } finally {
    await setZone("UTC");
  }
});

test("priced like any list: the cost counts the most rows it can return", async () => {
  const r = await gqlAs(t, "admin", ADMIN, { from: "2026-01-01", to: "2026-01-02", groupBy: "COFFEE" }, "SalesReport");
  ok(r);
  // 1 for the field, plus 1 per row it may return (744 at most); a row's
  // columns come with it (plugins/QueryCostPlugin/: a query costs the rows read).
  expect(r.body.extensions?.cost?.requested).toBe(1 + 744);
});
