import type pg from "pg";
import { type Caller, CALLERS, codes, DEMO, errorSummary, gqlAs, type GraphQLResponse, ok } from "../support/client.ts";
import { runOperation } from "../support/contract.ts";
import { type RequestRole, requestRolePool, sqlAs } from "../support/db.ts";
import { deleteOrders, insertOrders } from "../support/fixtures.ts";
import { useTestService } from "../support/service.ts";

// Who may see what: a matrix of the five callers (anonymous, the customers
// Alice and Bob, a barista, an admin) through GraphQL, then the same rules
// checked in SQL as the request roles themselves, the way the API runs
// requests (SET LOCAL ROLE + jwt.claims.user_id, through the API's own
// login role). The rules live in Postgres (RLS, grants, SECURITY DEFINER
// functions that return NULL), so both views must agree.

const CUSTOMERS = { alice: DEMO.alice.id, bob: DEMO.bob.id } as const;
const STAFF: Caller[] = ["barista", "admin"];
const NON_ADMIN: Caller[] = ["anonymous", "alice", "bob", "barista"];
const ROLE_OF: Record<Caller, RequestRole> = {
  anonymous: "cafe_anonymous",
  alice: "cafe_customer",
  bob: "cafe_customer",
  barista: "cafe_barista",
  admin: "cafe_admin",
};
const ID_OF: Record<Caller, string | null> = {
  anonymous: null,
  alice: DEMO.alice.id,
  bob: DEMO.bob.id,
  barista: DEMO.barista.id,
  admin: DEMO.admin.id,
};

const t = useTestService({
  async cleanup() {
    await deleteOrders(t, [aliceBrewing]);
    await rolePool.end();
  },
});
let rolePool: pg.Pool;
/** Alice's BREWING order made by the demo barista (so she may read that barista's name). */
let aliceBrewing: string;
let anyCoffee: string;

beforeAll(async () => {
  rolePool = requestRolePool(t);
  const { rows } = await t.db.query("select id from app_public.coffees where available order by name limit 1");
  anyCoffee = rows[0].id;
  [aliceBrewing] = await insertOrders(t, [{ customerId: DEMO.alice.id, status: "BREWING", baristaId: DEMO.barista.id, lines: [{ coffeeId: anyCoffee, quantity: 1 }] }]);
});

/** A generated connection's query (`{ <field> { nodes { <column> } } }`) and where its rows are in the data. */
function connection(field: string, column: string): [string, (d: any) => unknown[] | undefined] {
  return [`{ ${field} { nodes { ${column} } } }`, (d) => d[field]?.nodes];
}

/** An answer that may refuse with a listed code, but must not leak rows or fail internally. */
function expectRefusedOrEmpty(r: GraphQLResponse, rowsOf: (data: any) => unknown[] | null | undefined, allowed: string[]) {
  const rows = r.body.data ? (rowsOf(r.body.data) ?? []) : [];
  expect(rows).toEqual([]);
  for (const code of codes(r)) expect(allowed).toContain(code);
}

async function ownerOrders(customerId?: string): Promise<string[]> {
  const { rows } = customerId ? await t.db.query("select id from app_public.orders where customer_id = $1", [customerId]) : await t.db.query("select id from app_public.orders");
  return rows.map((r) => r.id);
}

describe("GraphQL: every caller", () => {
  test.each(CALLERS)("%s reads the menu (menuItems, coffees, coffee, search, reviews, roasters, ingredients)", async (who) => {
    const data = ok(
      await gqlAs(
        t,
        who,
        `query($id: ID!) {
          menuItems { id name }
          coffees { id }
          seasonalDrinks { id }
          featuredCoffee { id }
          searchCoffees(query: "a") { id }
          coffee(id: $id) { id name roaster { name } ingredients { name } reviews { rating } }
        }`,
        { id: anyCoffee },
      ),
    );
    expect(data.menuItems.length).toBeGreaterThan(0);
    expect(data.coffees.length).toBeGreaterThanOrEqual(data.menuItems.length);
    expect(data.coffee).toMatchObject({ id: anyCoffee, roaster: { name: expect.any(String) } });
  });

  test("KioskMenu works for every caller", async () => {
    for (const who of CALLERS) ok(await runOperation(t, "kiosk", "KioskMenu", undefined, who));
  });
});

describe("GraphQL: anonymous", () => {
  test("orders is an empty list, without errors", async () => {
    const r = await gqlAs(t, "anonymous", `{ orders { id } }`);
    expect(errorSummary(r)).toEqual([]);
    expect(r.body.data).toEqual({ orders: [] });
  });

  test("customer is null, without errors", async () => {
    const r = await gqlAs(t, "anonymous", `{ customer { id name } }`);
    expect(errorSummary(r)).toEqual([]);
    expect(r.body.data).toEqual({ customer: null });
  });

  test("MobileHome sent without a token: no customer, the FEATURED coffees still listed", async () => {
    const r = await runOperation(t, "mobile", "MobileHome", undefined, "anonymous");
    expect(errorSummary(r)).toEqual([]);
    expect(r.body.data?.customer).toBeNull();
    expect(r.body.data?.featured.length).toBeGreaterThan(0);
  });

  test("orders(status:) is an empty list too", async () => {
    const r = await gqlAs(t, "anonymous", `{ orders(status: [PENDING, PREPARING]) { id } }`);
    expect(errorSummary(r)).toEqual([]);
    expect(r.body.data).toEqual({ orders: [] });
  });

  test("lowStockItems and user(id:) are UNAUTHENTICATED", async () => {
    const low = await gqlAs(t, "anonymous", `{ lowStockItems { currentStock } }`);
    expect(codes(low)).toEqual(["UNAUTHENTICATED"]);
    expect(low.body.data ?? null).toBeNull();
    const user = await gqlAs(t, "anonymous", `query($id: ID!) { user(id: $id) { id name } }`, { id: DEMO.alice.id });
    expect(codes(user)).toEqual(["UNAUTHENTICATED"]);
    expect(user.body.data?.user ?? null).toBeNull();
  });

  test("order(id:) of a customer's order gives no order", async () => {
    for (const id of [DEMO.alicePendingOrder, DEMO.bobPendingOrder]) {
      const r = await gqlAs(t, "anonymous", `query($id: ID!) { order(id: $id) { id total } }`, { id });
      expect(r.body.data?.order ?? null).toBeNull();
      for (const code of codes(r)) expect(code).toBe("UNAUTHENTICATED");
    }
  });

  test("the generated connections leak no orders, customers, profiles, stock or suppliers", async () => {
    const cases = [
      connection("allOrders", "id"),
      connection("allOrderItems", "id"),
      connection("allCustomers", "id"),
      connection("allProfiles", "customerId"),
      connection("allStockItems", "currentStock"),
      connection("allSuppliers", "name"),
      connection("allBaristas", "name"),
    ];
    for (const [query, rowsOf] of cases) {
      expectRefusedOrEmpty(await gqlAs(t, "anonymous", query), rowsOf, ["UNAUTHENTICATED", "FORBIDDEN"]);
    }
  });
});

describe("GraphQL: customers see their own orders, customer row and profile only", () => {
  test.each(Object.entries(CUSTOMERS))("%s: orders are exactly their own", async (who, id) => {
    const { orders } = ok(await gqlAs(t, who as Caller, `{ orders { id customer { id } } }`));
    expect(orders.map((o: any) => o.id).sort()).toEqual((await ownerOrders(id)).sort());
    for (const o of orders) expect(o.customer.id).toBe(id);
    expect(orders.map((o: any) => o.id)).toContain(who === "alice" ? DEMO.alicePendingOrder : DEMO.bobPendingOrder);
  });

  test("Alice cannot read Bob's order by id, nor Bob Alice's (null, no error)", async () => {
    const q = `query($id: ID!) { order(id: $id) { id total items { quantity } } }`;
    expect(ok(await gqlAs(t, "alice", q, { id: DEMO.bobPendingOrder }))).toEqual({ order: null });
    expect(ok(await gqlAs(t, "bob", q, { id: DEMO.alicePendingOrder }))).toEqual({ order: null });
    expect(ok(await gqlAs(t, "alice", q, { id: DEMO.alicePendingOrder })).order.id).toBe(DEMO.alicePendingOrder);
  });

  test("Alice's orders(status:) never include Bob's PENDING order", async () => {
    const { orders } = ok(await gqlAs(t, "alice", `{ orders(status: PENDING) { id customer { id } } }`));
    expect(orders.map((o: any) => o.id)).toContain(DEMO.alicePendingOrder);
    expect(orders.map((o: any) => o.id)).not.toContain(DEMO.bobPendingOrder);
    for (const o of orders) expect(o.customer.id).toBe(DEMO.alice.id);
  });

  test.each(Object.entries(CUSTOMERS))("%s: the allOrders connection holds only their orders", async (who, id) => {
    const { allOrders } = ok(await gqlAs(t, who as Caller, `{ allOrders { totalCount nodes { id customerId } } }`));
    const mine = await ownerOrders(id);
    expect(allOrders.totalCount).toBe(mine.length);
    expect(allOrders.nodes.map((o: any) => o.id).sort()).toEqual(mine.sort());
    for (const o of allOrders.nodes) expect(o.customerId).toBe(id);
    // Filtering for someone else's orders finds nothing.
    const other = id === DEMO.alice.id ? DEMO.bob.id : DEMO.alice.id;
    const filtered = ok(await gqlAs(t, who as Caller, `query($c: ID!) { allOrders(condition: { customerId: $c }) { totalCount } }`, { c: other }));
    expect(filtered.allOrders.totalCount).toBe(0);
  });

  test.each(Object.entries(CUSTOMERS))("%s: customer, allCustomers and allProfiles are only their own", async (who, id) => {
    const d = ok(
      await gqlAs(
        t,
        who as Caller,
        `{ customer { id profile { username } } allCustomers { nodes { id } } allProfiles { nodes { customerId } } allOrderItems { nodes { parentOrder { customerId } } } }`,
      ),
    );
    expect(d.customer.id).toBe(id);
    expect(d.allCustomers.nodes).toEqual([{ id }]);
    for (const p of d.allProfiles.nodes) expect(p.customerId).toBe(id);
    for (const i of d.allOrderItems.nodes) expect(i.parentOrder.customerId).toBe(id);
    const { rows } = await t.db.query("select username::text from app_public.profiles where customer_id = $1", [id]);
    expect(d.customer.profile).toEqual(rows[0] ? { username: rows[0].username } : null);
  });

  test("another customer's row and profile are out of reach by key", async () => {
    const d = ok(
      await gqlAs(t, "alice", `query($id: ID!) { customerById(id: $id) { id name } profileByCustomerId(customerId: $id) { username } }`, {
        id: DEMO.bob.id,
      }),
    );
    expect(d).toEqual({ customerById: null, profileByCustomerId: null });
  });

  test("through the menu, a customer reaches only their own order lines", async () => {
    const { coffees } = ok(await gqlAs(t, "bob", `{ coffees(first: 20) { orderItemList { nodes { parentOrder { id customerId } } } } }`));
    const seen = coffees.flatMap((c: any) => c.orderItemList.nodes.map((n: any) => n.parentOrder));
    for (const o of seen) expect(o.customerId).toBe(DEMO.bob.id);
    expect(seen.map((o: any) => o.id)).not.toContain(aliceBrewing);
  });

  test("a customer reads the name of the barista on their own order; staff lists stay closed", async () => {
    const { order } = ok(await gqlAs(t, "alice", `query($id: ID!) { order(id: $id) { barista { id name } } }`, { id: aliceBrewing }));
    expect(order.barista).toEqual({ id: DEMO.barista.id, name: expect.any(String) });
    const { allBaristas } = ok(await gqlAs(t, "bob", `{ allBaristas { nodes { id } } }`));
    const { rows } = await t.db.query("select distinct barista_id from app_public.orders where customer_id = $1 and barista_id is not null", [DEMO.bob.id]);
    expect(allBaristas.nodes.map((b: any) => b.id).sort()).toEqual(rows.map((r) => r.barista_id).sort());
  });

  test.each(["alice", "bob"] as const)("%s: lowStockItems and user(id:) are FORBIDDEN (even for their own id)", async (who) => {
    const low = await gqlAs(t, who, `{ lowStockItems { currentStock } }`);
    expect(codes(low)).toEqual(["FORBIDDEN"]);
    for (const id of [DEMO.alice.id, DEMO.bob.id]) {
      const r = await gqlAs(t, who, `query($id: ID!) { user(id: $id) { id name points } }`, { id });
      expect(codes(r)).toEqual(["FORBIDDEN"]);
      expect(r.body.data?.user ?? null).toBeNull();
    }
  });

  test.each(["alice", "bob"] as const)("%s: stock, suppliers, price history, refunds and alerts leak nothing", async (who) => {
    const cases: Array<[string, (d: any) => unknown[] | undefined]> = [
      connection("allStockItems", "currentStock"),
      connection("allSuppliers", "name"),
      connection("allCoffeePriceChanges", "oldPrice"),
      connection("allRefunds", "amount"),
      connection("allPaymentAlerts", "message"),
      ["{ paymentAlerts { message } }", (d) => d.paymentAlerts],
    ];
    for (const [query, rowsOf] of cases) expectRefusedOrEmpty(await gqlAs(t, who, query), rowsOf, ["FORBIDDEN"]);
  });
});

describe("GraphQL: staff see every order and customer", () => {
  test.each(STAFF)("%s: orders, allOrders, order(id:) and user(id:) cover every customer", async (who) => {
    const all = await ownerOrders();
    const { orders } = ok(await gqlAs(t, who, `{ orders { id } }`));
    // `orders` is capped at 500 rows (oldest first); other suites may have added many.
    if (all.length <= 500) expect(orders.map((o: any) => o.id).sort()).toEqual(all.sort());
    else expect(orders).toHaveLength(500);
    expect(orders.map((o: any) => o.id)).toEqual(expect.arrayContaining([DEMO.alicePendingOrder, DEMO.bobPendingOrder]));
    const { allOrders } = ok(await gqlAs(t, who, `{ allOrders { totalCount } }`));
    expect(allOrders.totalCount).toBe(all.length);
    for (const id of [DEMO.alicePendingOrder, DEMO.bobPendingOrder]) {
      expect(ok(await gqlAs(t, who, `query($id: ID!) { order(id: $id) { id customer { id } } }`, { id })).order.id).toBe(id);
    }
    for (const id of [DEMO.alice.id, DEMO.bob.id]) {
      expect(ok(await gqlAs(t, who, `query($id: ID!) { user(id: $id) { id } }`, { id })).user).toEqual({ id });
    }
    const { allCustomers } = ok(await gqlAs(t, who, `{ allCustomers { nodes { id } } }`));
    expect(allCustomers.nodes.map((c: any) => c.id)).toEqual(expect.arrayContaining([DEMO.alice.id, DEMO.bob.id]));
  });

  test.each(STAFF)("%s: customer is null (staff are not customers); lowStockItems answers", async (who) => {
    const d = ok(await gqlAs(t, who, `{ customer { id } lowStockItems { currentStock alertLevel } }`));
    expect(d.customer).toBeNull();
    for (const s of d.lowStockItems) expect(s.currentStock).toBeLessThanOrEqual(s.alertLevel);
  });

  test("suppliers, price history and payment alerts are the admin's, not the barista's", async () => {
    const { allSuppliers } = ok(await gqlAs(t, "admin", `{ allSuppliers { nodes { name } } }`));
    expect(allSuppliers.nodes.length).toBeGreaterThan(0);
    ok(await gqlAs(t, "admin", `{ paymentAlerts { message } allCoffeePriceChanges { totalCount } }`));
    expectRefusedOrEmpty(await gqlAs(t, "barista", `{ allSuppliers { nodes { name } } }`), (d) => d.allSuppliers?.nodes, ["FORBIDDEN"]);
    expectRefusedOrEmpty(await gqlAs(t, "barista", `{ paymentAlerts { message } }`), (d) => d.paymentAlerts, ["FORBIDDEN"]);
  });
});

describe("GraphQL: admin-only coffee fields", () => {
  const ADMIN_FIELDS = `fragment AdminOnly on Coffee { cost margin salesData { lastWeek trend } supplier { name contact } }`;
  const QUERY = `query($id: ID!) {
    coffees { id ...AdminOnly }
    coffee(id: $id) { id ...AdminOnly }
    menuItems { id ...AdminOnly }
    seasonalDrinks { id ...AdminOnly }
    featuredCoffee { id ...AdminOnly }
    searchCoffees(query: "a") { id ...AdminOnly }
  }
  ${ADMIN_FIELDS}`;
  const everyCoffee = (d: any) => [...d.coffees, d.coffee, ...d.menuItems, ...d.seasonalDrinks, d.featuredCoffee, ...d.searchCoffees].filter(Boolean);

  test.each(NON_ADMIN)("%s: cost, margin, salesData and supplier are null, without errors, even in a shared fragment", async (who) => {
    const d = ok(await gqlAs(t, who, QUERY, { id: anyCoffee }));
    const coffees = everyCoffee(d);
    expect(coffees.length).toBeGreaterThan(0);
    for (const c of coffees) expect(c).toEqual({ id: c.id, cost: null, margin: null, salesData: null, supplier: null });
  });

  test("the barista's AdminDashboard runs, with the admin fields null", async () => {
    const { coffees } = ok(await runOperation(t, "admin", "AdminDashboard", undefined, "barista"));
    for (const c of coffees) expect(c).toMatchObject({ cost: null, margin: null, salesData: null, supplier: null });
  });

  test("admin: the same query fills them in", async () => {
    const d = ok(await gqlAs(t, "admin", QUERY, { id: anyCoffee }));
    const coffees = everyCoffee(d);
    for (const c of coffees) expect(c.salesData).toEqual({ lastWeek: expect.any(Number), trend: expect.any(Number) });
    expect(coffees.some((c: any) => c.cost !== null && c.margin !== null)).toBe(true);
    expect(coffees.some((c: any) => c.supplier !== null)).toBe(true);
  });
});

describe("SQL: the request roles themselves (RLS and grants)", () => {
  test("row level security is enabled on every table of app_public", async () => {
    const { rows } = await t.db.query<{ relname: string }>(
      `select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'app_public' and c.relkind in ('r', 'p') and not c.relrowsecurity`,
    );
    expect(rows.map((r) => r.relname)).toEqual([]);
  });

  test.each(Object.entries(CUSTOMERS))("as cafe_customer %s: orders, order_items, customers and profiles hold only their own rows", async (who, id) => {
    const other = id === DEMO.alice.id ? DEMO.bob.id : DEMO.alice.id;
    const orders = await sqlAs(rolePool, "cafe_customer", id, "select id, customer_id from app_public.orders");
    expect(orders.error).toBeUndefined();
    expect(orders.rows!.map((r) => r.id).sort()).toEqual((await ownerOrders(id)).sort());
    expect(orders.rows!.map((r) => r.id)).not.toContain(who === "alice" ? DEMO.bobPendingOrder : DEMO.alicePendingOrder);

    const items = await sqlAs(rolePool, "cafe_customer", id, "select distinct o.customer_id from app_public.order_items oi join app_public.orders o on o.id = oi.order_id");
    expect(items.rows).toEqual([{ customer_id: id }]);
    const rawItems = await sqlAs(rolePool, "cafe_customer", id, "select order_id from app_public.order_items");
    const mine = new Set(await ownerOrders(id));
    for (const r of rawItems.rows!) expect(mine.has(r.order_id)).toBe(true);

    const customers = await sqlAs(rolePool, "cafe_customer", id, "select id from app_public.customers");
    expect(customers.rows).toEqual([{ id }]);
    const profiles = await sqlAs(rolePool, "cafe_customer", id, "select customer_id from app_public.profiles");
    for (const p of profiles.rows!) expect(p.customer_id).toBe(id);
    const direct = await sqlAs(rolePool, "cafe_customer", id, "select id from app_public.orders where customer_id = $1", [other]);
    expect(direct.rows).toEqual([]);
  });

  test("as cafe_customer without a user id claim: no orders, no customer rows", async () => {
    expect((await sqlAs(rolePool, "cafe_customer", null, "select id from app_public.orders")).rows).toEqual([]);
    expect((await sqlAs(rolePool, "cafe_customer", null, "select id from app_public.customers")).rows).toEqual([]);
  });

  test("as cafe_anonymous: no orders, lines, customers, profiles, baristas, stock or suppliers (no rows, or permission denied)", async () => {
    const tables = ["orders", "order_items", "order_events", "customers", "profiles", "baristas", "notifications", "suppliers", "stock_items", "refunds", "payment_alerts"];
    for (const table of tables) {
      const r = await sqlAs(rolePool, "cafe_anonymous", null, `select * from app_public.${table} limit 1`);
      expect({ table, rows: r.rows ?? [], error: r.error && r.error.code !== "42501" ? r.error : undefined }).toEqual({ table, rows: [], error: undefined });
    }
    // Even with a user id claim it has no business setting.
    const claimed = await sqlAs(rolePool, "cafe_anonymous", DEMO.alice.id, "select id from app_public.orders");
    expect(claimed.rows ?? []).toEqual([]);
  });

  test.each([
    ["cafe_customer", DEMO.alice.id, ["suppliers", "stock_items", "stock_movements", "coffee_price_changes", "refunds", "payment_alerts", "order_status_transitions"]],
    ["cafe_barista", DEMO.barista.id, ["suppliers", "coffee_price_changes", "refunds", "payment_alerts"]],
  ] as const)("as %s: tables that are not its business show it no rows (RLS has no policy for it)", async (role, userId, tables) => {
    for (const table of tables) {
      const r = await sqlAs(rolePool, role, userId, `select * from app_public.${table} limit 5`);
      expect({ table, error: r.error?.code, rows: r.rows ?? [] }).toEqual({ table, error: undefined, rows: [] });
    }
  });

  test("staff read every order and customer; stock is staff's, suppliers are the admin's", async () => {
    const all = (await ownerOrders()).sort();
    for (const role of ["cafe_barista", "cafe_admin"] as const) {
      const userId = role === "cafe_barista" ? DEMO.barista.id : DEMO.admin.id;
      const orders = await sqlAs(rolePool, role, userId, "select id from app_public.orders");
      expect(orders.rows!.map((r) => r.id).sort()).toEqual(all);
      const customers = await sqlAs(rolePool, role, userId, "select id from app_public.customers");
      expect(customers.rows!.map((r) => r.id)).toEqual(expect.arrayContaining([DEMO.alice.id, DEMO.bob.id]));
      const stock = await sqlAs(rolePool, role, userId, "select ingredient_id from app_public.stock_items");
      expect(stock.rows!.length).toBeGreaterThan(0);
    }
    const suppliers = await sqlAs(rolePool, "cafe_admin", DEMO.admin.id, "select name from app_public.suppliers");
    expect(suppliers.rows!.length).toBeGreaterThan(0);
  });

  test("the menu is readable by every request role", async () => {
    for (const caller of CALLERS) {
      const r = await sqlAs(rolePool, ROLE_OF[caller], ID_OF[caller], "select count(*)::int as n from app_public.coffees");
      expect(r.rows?.[0].n).toBeGreaterThan(0);
    }
  });

  test("app_private is closed to every request role (permission denied)", async () => {
    const tables = ["accounts", "coffee_costs", "settings", "payment_deliveries", "processed_payment_keys", "alert_rules", "blocked_sources"];
    const roles: Array<[RequestRole, string | null]> = [
      ["cafe_anonymous", null],
      ["cafe_customer", DEMO.alice.id],
      ["cafe_barista", DEMO.barista.id],
      ["cafe_admin", DEMO.admin.id],
      ["cafe_system", null],
    ];
    for (const [role, userId] of roles) {
      for (const table of tables) {
        const r = await sqlAs(rolePool, role, userId, `select * from app_private.${table} limit 1`);
        expect({ role, table, error: r.error?.code }).toEqual({ role, table, error: "42501" });
      }
    }
    // Nor may they call its functions: a customer cannot mark an order paid.
    const paid = await sqlAs(rolePool, "cafe_customer", DEMO.alice.id, "select app_private.mark_paid($1, 'cash')", [DEMO.alicePendingOrder]);
    expect(paid.error?.code).toBe("42501");
    // The admin-only facts are reachable only through the computed fields.
    const cost = await sqlAs(rolePool, "cafe_barista", DEMO.barista.id, "select app_public.coffees_cost(c) as cost from app_public.coffees c limit 1");
    expect(cost.rows).toEqual([{ cost: null }]);
  });

  test("request roles cannot write tables directly; every write goes through the rule functions", async () => {
    const writes: Array<[RequestRole, string | null, string, unknown[]]> = [
      ["cafe_customer", DEMO.alice.id, "update app_public.orders set status = 'CANCELLED' where id = $1", [DEMO.alicePendingOrder]],
      ["cafe_customer", DEMO.alice.id, "update app_public.orders set total = 0.01 where id = $1", [DEMO.alicePendingOrder]],
      ["cafe_customer", DEMO.alice.id, "update app_public.customers set points = 100000 where id = $1", [DEMO.alice.id]],
      ["cafe_customer", DEMO.alice.id, "insert into app_public.reviews (coffee_id, rating) values ($1, 5)", [anyCoffee]],
      ["cafe_anonymous", null, "insert into app_public.orders (customer_id) values ($1)", [DEMO.alice.id]],
      ["cafe_barista", DEMO.barista.id, "update app_public.coffees set price = 0.5 where id = $1", [anyCoffee]],
      ["cafe_barista", DEMO.barista.id, "delete from app_public.orders where id = $1", [DEMO.bobPendingOrder]],
      ["cafe_admin", DEMO.admin.id, "update app_public.stock_items set current_stock = 0", []],
    ];
    for (const [role, userId, text, values] of writes) {
      const r = await sqlAs(rolePool, role, userId, text, values);
      expect({ role, text, error: r.error?.code }).toEqual({ role, text, error: "42501" });
    }
  });
});
