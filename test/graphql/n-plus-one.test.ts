import pg from "pg";
import { DEMO, ok } from "../support/client.ts";
import { type ClientName, queryOperationsOf, runOperation } from "../support/contract.ts";
import { isBackgroundStatement } from "../support/db.ts";
import { deleteOrders, insertOrders } from "../support/fixtures.ts";
import { useTestService } from "../support/service.ts";
import { say } from "../support/figures.ts";

// How many SQL statements the service sends for one contract query, and
// that the number does not grow with the rows returned (no N+1): nested
// selections (an order's lines, their coffees, its customer and barista; a
// coffee's computed admin fields) must be fetched in the same statements,
// not one statement per row. The server runs in this process, so the pg
// client's query() is wrapped here and sees every statement the API's
// login role (cafe_authenticator) sends.

interface Counted {
  /** select/with statements: the work. */
  statements: string[];
  /** begin, commit, set_config, savepoints...: the transaction around it. */
  overhead: string[];
}

const t = useTestService({
  async cleanup() {
    pg.Client.prototype.query = originalQuery;
    say(
      `SQL statements (select/with) per contract query:\n${Object.entries(report)
        .map(([k, v]) => `  ${k}: ${v}`)
        .join("\n")}`,
    );
  },
});
let authenticatorUser: string;
let recording: Counted | null = null;
const originalQuery = pg.Client.prototype.query;
const report: Record<string, number | string> = {};

function textOf(arg: unknown): string | undefined {
  if (typeof arg === "string") return arg;
  if (arg && typeof arg === "object" && typeof (arg as { text?: unknown }).text === "string") return (arg as { text: string }).text;
  return undefined;
}

/** The statement's first words, without leading comments and blanks, lower-cased. */
function head(text: string): string {
  return text
    .replace(/^(\s|--[^\n]*\n|\/\*[\s\S]*?\*\/)+/, "")
    .slice(0, 60)
    .toLowerCase();
}

beforeAll(async () => {
  authenticatorUser = decodeURIComponent(new URL(t.urls.authenticator).username);
  pg.Client.prototype.query = function (this: pg.Client & { user?: string }, ...args: unknown[]) {
    const text = textOf(args[0]);
    if (recording && text !== undefined && this.user === authenticatorUser) {
      const h = head(text);
      // The API's periodic statements (health ping, table sizes, LISTEN probe,
      // shared rate limits: test/support/db.ts) and LISTEN bookkeeping are not the request's work.
      const background = isBackgroundStatement(text) || /^(listen|unlisten|set role)\b/.test(h);
      if (background) recording.overhead.push(h);
      else if (/^(select|with)\b/.test(h) && !/^select\s+set_config\(/.test(h)) recording.statements.push(text);
      else recording.overhead.push(h);
    }
    return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof pg.Client.prototype.query;
});

/** Runs a contract operation once to warm caches, then once more while counting; returns the data and the statements. */
async function measure(client: ClientName, operationName: string, variables?: Record<string, unknown>) {
  ok(await runOperation(t, client, operationName, variables));
  recording = { statements: [], overhead: [] };
  try {
    const data = ok(await runOperation(t, client, operationName, variables));
    return { data, ...recording };
  } finally {
    recording = null;
  }
}

const VARIABLES: Record<string, Record<string, unknown>> = {
  CoffeeDetail: { id: "40000000-0000-4000-8000-000000000003" },
  Search: { q: "latte" },
  OneOrder: { id: DEMO.alicePreparingOrder },
  PosCustomer: { id: DEMO.alice.id },
};
const CLIENTS: ClientName[] = ["kiosk", "mobile", "barista", "admin", "pos"];
const OPERATIONS = CLIENTS.flatMap((client) => queryOperationsOf(client).map((op) => [client, op.name] as const));

test("the counter sees the API's statements (and only while recording)", async () => {
  const { statements, overhead } = await measure("kiosk", "FeaturedList");
  expect(statements.length).toBeGreaterThan(0);
  expect(overhead.some((h) => h.startsWith("begin") || h.startsWith("savepoint") || h.startsWith("select set_config"))).toBe(true);
  // The owner's pool is not counted.
  recording = { statements: [], overhead: [] };
  await t.db.query("select 1");
  expect(recording.statements).toEqual([]);
  recording = null;
});

test.each(OPERATIONS)("%s %s: a fixed handful of statements, none repeated (no per-row statements)", async (client, name) => {
  const first = await measure(client, name, VARIABLES[name]);
  const second = await measure(client, name, VARIABLES[name]);
  report[name] = first.statements.length;
  expect(first.statements.length).toBeGreaterThan(0);
  expect(second.statements.length).toBe(first.statements.length);
  // An N+1 shows as the same statement sent once per parent row; PostGraphile
  // batches nested lookups into one statement per step instead.
  const repeated = first.statements.filter((s, i) => first.statements.indexOf(s) !== i);
  expect(repeated).toEqual([]);
  // A bound that leaves room for Grafast's batched side lookups, far below one per row.
  const rootFields = Object.keys(first.data as object).length;
  expect(first.statements.length).toBeLessThanOrEqual(3 * rootFields);
});

test("BaristaQueue: 20 more orders with lines, customers and baristas cost no more statements", async () => {
  const before = await measure("barista", "BaristaQueue");
  const { rows: coffees } = await t.db.query<{ id: string }>("select id from app_public.coffees where available order by name limit 6");
  const ids = await insertOrders(
    t,
    Array.from({ length: 20 }, (_, i) => ({
      customerId: i % 2 ? DEMO.alice.id : DEMO.bob.id,
      status: (i % 4 === 0 ? "BREWING" : "PREPARING") as "BREWING" | "PREPARING",
      baristaId: i % 4 === 0 ? DEMO.barista.id : null,
      notes: `n+1 ${i}`,
      timeOffset: `-${30 + i} seconds`,
      lines: [
        { coffeeId: coffees[i % coffees.length]!.id, quantity: 1 + (i % 3), specialInstructions: i % 2 ? "oat milk" : null },
        { coffeeId: coffees[(i + 1) % coffees.length]!.id, quantity: 1 },
      ],
    })),
  );
  try {
    const after = await measure("barista", "BaristaQueue");
    expect(after.data.orders.length).toBe(before.data.orders.length + 20);
    const mine = after.data.orders.filter((o: any) => ids.includes(o.id));
    expect(mine).toHaveLength(20);
    for (const o of mine) {
      expect(o.items).toHaveLength(2);
      expect(o.customer.name).toEqual(expect.any(String));
    }
    expect(mine.filter((o: any) => o.barista !== null)).toHaveLength(5);
    report["BaristaQueue (+20 orders)"] = after.statements.length;
    say(`BaristaQueue: ${before.data.orders.length} orders -> ${before.statements.length} statements; ${after.data.orders.length} orders -> ${after.statements.length} statements`);
    expect(after.statements.length).toBe(before.statements.length);
  } finally {
    await deleteOrders(t, ids);
  }
});

test("KioskMenu and AdminDashboard: 10 more coffees with recipes cost no more statements", async () => {
  const kioskBefore = await measure("kiosk", "KioskMenu");
  const adminBefore = await measure("admin", "AdminDashboard");
  const { rows: ingredients } = await t.db.query<{ id: string }>(
    "select ingredient_id as id from app_public.stock_items where store_id = app_hidden.default_store_id() order by ingredient_id limit 3",
  );
  const { rows } = await t.db.query<{ id: string }>(
    `insert into app_public.coffees (name, price, category, limited_time_offer, roaster_id)
     select 'N+1 Brew ' || n || ' ${process.pid}', 3 + n / 10.0, 'SEASONAL', true, (select id from app_public.roasters order by name limit 1)
     from generate_series(1, 10) n returning id`,
  );
  const coffeeIds = rows.map((r) => r.id);
  try {
    await t.db.query(
      `insert into app_public.recipe_lines (coffee_id, ingredient_id, quantity, seasonal)
       select c, i, 1, i = $3 from unnest($1::uuid[]) c, unnest($2::uuid[]) i`,
      [coffeeIds, ingredients.map((i) => i.id), ingredients[0]!.id],
    );
    await t.db.query("insert into app_private.coffee_costs (coffee_id, cost) select c, 1 from unnest($1::uuid[]) c", [coffeeIds]);
    const kioskAfter = await measure("kiosk", "KioskMenu");
    const adminAfter = await measure("admin", "AdminDashboard");
    expect(kioskAfter.data.menuItems.length).toBe(kioskBefore.data.menuItems.length + 10);
    expect(kioskAfter.data.seasonalDrinks.length).toBe(kioskBefore.data.seasonalDrinks.length + 10);
    expect(adminAfter.data.coffees.length).toBe(adminBefore.data.coffees.length + 10);
    report["KioskMenu (+10 coffees)"] = kioskAfter.statements.length;
    report["AdminDashboard (+10 coffees)"] = adminAfter.statements.length;
    expect(kioskAfter.statements.length).toBe(kioskBefore.statements.length);
    expect(adminAfter.statements.length).toBe(adminBefore.statements.length);
  } finally {
    await t.db.query("delete from app_public.coffees where id = any($1::uuid[])", [coffeeIds]);
  }
});

test("CoffeeDetail and MobileHome: more reviews and orders cost no more statements", async () => {
  const coffee = VARIABLES.CoffeeDetail!;
  const detailBefore = await measure("mobile", "CoffeeDetail", coffee);
  const homeBefore = await measure("mobile", "MobileHome");
  const { rows } = await t.db.query<{ id: string }>(`insert into app_public.reviews (coffee_id, rating, comment) select $1, 1 + n % 5, 'n+1 ' || n from generate_series(1, 10) n returning id`, [
    coffee.id,
  ]);
  const orders = await insertOrders(
    t,
    Array.from({ length: 5 }, () => ({ customerId: DEMO.alice.id, status: "COMPLETED" as const, lines: [{ coffeeId: coffee.id as string, quantity: 1 }] })),
  );
  try {
    const detailAfter = await measure("mobile", "CoffeeDetail", coffee);
    const homeAfter = await measure("mobile", "MobileHome");
    report["CoffeeDetail (+10 reviews)"] = detailAfter.statements.length;
    report["MobileHome (+5 orders)"] = homeAfter.statements.length;
    expect(detailAfter.statements.length).toBe(detailBefore.statements.length);
    expect(homeAfter.statements.length).toBe(homeBefore.statements.length);
  } finally {
    await t.db.query("delete from app_public.reviews where id = any($1::uuid[])", [rows.map((r) => r.id)]);
    await deleteOrders(t, orders);
  }
});
