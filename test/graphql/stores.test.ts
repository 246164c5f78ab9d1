import { codes, DEMO, errorsOf, expectRefused, ok, subscribe } from "../support/client.ts";
import { orderQueueTopic, orderStatusTopic } from "../../common/topics.ts";
import { stockedCoffee, type StockedCoffee } from "../support/fixtures.ts";
import { sendCallback } from "../support/paymentProvider.ts";
import { listening, useTestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";

// A chain of two stores (data/demo.sql): Baixa, the default store, where
// barista@example.com works and which admin@example.com (the chain's admin)
// sees with every other; Ribeira, with its own barista and its manager (an
// admin of Ribeira only). Real server, real graphql-ws sockets, the rules in
// SQL (migrations/committed/000002-stores.sql).

const t = useTestService({
  sandbox: true,
  worker: true,
  async cleanup(s) {
    await s.db.query("delete from app_public.stores where name like 'Test store %'");
    await s.db.query("update app_public.stores set is_open = true, max_open_orders_per_customer = null, pending_order_expiry_seconds = null where id = $1", [DEMO.stores.ribeira]);
  },
});
const { baixa, ribeira } = DEMO.stores;
let coffee: StockedCoffee;
let tok: Record<"alice" | "bob" | "barista" | "admin" | "ribeiraBarista" | "ribeiraManager", string>;

const ORDER = `mutation($coffeeId: ID!, $quantity: Int!, $storeId: ID) { createOrder(coffeeId: $coffeeId, quantity: $quantity, storeId: $storeId) { id total status storeId store { name } } }`;
const MOVE = `mutation($id: ID!, $status: OrderStatus!) { updateOrderStatus(id: $id, status: $status) { id status } }`;
const PAY = `mutation($id: ID!) { markOrderPaid(id: $id, method: CASH) { id status } }`;
const QUEUE = `subscription($storeId: ID) { orderQueueChanged(storeId: $storeId) { id status storeId } }`;

async function order(token: string, storeId: string | null, quantity = 1) {
  const r = await t.gql(ORDER, { variables: { coffeeId: coffee.id, quantity, storeId }, token });
  return ok(r).createOrder as { id: string; total: number; status: string; storeId: string; store: { name: string } };
}

beforeAll(async () => {
  coffee = await stockedCoffee(t, "Stores", "3.00", 10, 1000);
  // Ribeira keeps its own, smaller stock of the coffee's ingredient.
  await t.db.query("insert into app_public.stock_items (store_id, ingredient_id, current_stock, alert_level, unit) values ($1, $2, 100, 50, 'g')", [ribeira, coffee.ingredientId]);
  tok = {
    alice: await t.token("alice"),
    bob: await t.token("bob"),
    barista: await t.token("barista"),
    admin: await t.token("admin"),
    ribeiraBarista: await t.token("ribeiraBarista"),
    ribeiraManager: await t.token("ribeiraManager"),
  };
});

describe("the stores", () => {
  test("anyone reads the open stores, the default one first; a closed store is hidden from customers, not from staff", async () => {
    const list = `{ stores { id name timeZone isOpen isDefault } }`;
    // Other suites on this database may add stores of their own: only the demo's two are asserted on.
    const demo = async (token?: string) => {
      const all = ok(await t.gql(list, token ? { token } : {})).stores.map((s: any) => s.id) as string[];
      expect(all[0]).toBe(baixa);
      return all.filter((id) => id === baixa || id === ribeira);
    };
    expect(await demo()).toEqual([baixa, ribeira]);
    await t.db.query("update app_public.stores set is_open = false where id = $1", [ribeira]);
    try {
      expect(await demo()).toEqual([baixa]);
      expect(await demo(tok.alice)).toEqual([baixa]);
      expect(await demo(tok.barista)).toEqual([baixa, ribeira]);
      // Nobody orders at a closed store.
      expectRefused(await t.gql(ORDER, { variables: { coffeeId: coffee.id, quantity: 1, storeId: ribeira }, token: tok.alice }), "NOT_AVAILABLE");
    } finally {
      await t.db.query("update app_public.stores set is_open = true where id = $1", [ribeira]);
    }
  });

  test("an order says which store it is for; without storeId it is the default store's", async () => {
    const a = await order(tok.alice, null);
    const b = await order(tok.alice, ribeira);
    expect([a.storeId, a.store.name]).toEqual([baixa, "Baixa"]);
    expect([b.storeId, b.store.name]).toEqual([ribeira, "Ribeira"]);
    // A customer's orders are chain-wide: they see both.
    const mine = ok(await t.gql(`{ orders(status: PENDING) { id } }`, { token: tok.alice })).orders.map((o: any) => o.id);
    expect(mine).toEqual(expect.arrayContaining([a.id, b.id]));
    expectRefused(await t.gql(ORDER, { variables: { coffeeId: coffee.id, quantity: 1, storeId: "5707e000-0000-4000-8000-0000000000ff" }, token: tok.alice }), "NOT_FOUND");
  });

  test("a store's menu: Ribeira took the Pumpkin Spice Latte off its menu; it is on Baixa's and cannot be ordered at Ribeira", async () => {
    const psl = "40000000-0000-4000-8000-000000000011";
    const menu = `query($s: ID) { menuItems(storeId: $s) { id availableAt(storeId: $s) } seasonalDrinks(storeId: $s) { id } }`;
    const atBaixa = ok(await t.gql(menu));
    const atRibeira = ok(await t.gql(menu, { variables: { s: ribeira } }));
    expect(atBaixa.menuItems.map((c: any) => c.id)).toContain(psl);
    expect(atRibeira.menuItems.map((c: any) => c.id)).not.toContain(psl);
    expect(atBaixa.seasonalDrinks.map((c: any) => c.id)).toContain(psl);
    expect(atRibeira.seasonalDrinks.map((c: any) => c.id)).not.toContain(psl);
    expect(atRibeira.menuItems.every((c: any) => c.availableAt)).toBe(true);
    expect(atRibeira.menuItems.length).toBe(atBaixa.menuItems.length - 1);
    const r = await t.gql(`mutation($s: ID) { createOrder(coffeeId: "${psl}", quantity: 1, storeId: $s) { id } }`, { variables: { s: ribeira }, token: tok.alice });
    expectRefused(r, "NOT_AVAILABLE");
  });
});

describe("two stores' baristas", () => {
  test("over HTTP: each sees, moves and sells at their own store only; the other store's orders do not exist for them", async () => {
    const atBaixa = await order(tok.alice, null);
    const atRibeira = await order(tok.bob, ribeira);
    const seen = async (token: string) => ok(await t.gql(`{ orders(status: PENDING) { id storeId } }`, { token })).orders as Array<{ id: string; storeId: string }>;
    const baristaSees = await seen(tok.barista);
    const ribeiraSees = await seen(tok.ribeiraBarista);
    expect(baristaSees.map((o) => o.id)).toContain(atBaixa.id);
    expect(baristaSees.map((o) => o.id)).not.toContain(atRibeira.id);
    expect(new Set(baristaSees.map((o) => o.storeId))).toEqual(new Set([baixa]));
    expect(ribeiraSees.map((o) => o.id)).toEqual(expect.arrayContaining([atRibeira.id]));
    expect(new Set(ribeiraSees.map((o) => o.storeId))).toEqual(new Set([ribeira]));
    // The chain's admin sees both.
    expect((await seen(tok.admin)).map((o) => o.id)).toEqual(expect.arrayContaining([atBaixa.id, atRibeira.id]));
    // One order by id: null for the other store's barista.
    const one = `query($id: ID!) { order(id: $id) { id } }`;
    expect(ok(await t.gql(one, { variables: { id: atRibeira.id }, token: tok.barista })).order).toBeNull();
    expect(ok(await t.gql(one, { variables: { id: atRibeira.id }, token: tok.ribeiraBarista })).order).toEqual({ id: atRibeira.id });
    // Moving or selling the other store's order: NOT_FOUND, and nothing changes.
    expectRefused(await t.gql(PAY, { variables: { id: atRibeira.id }, token: tok.barista }), "NOT_FOUND");
    expectRefused(await t.gql(MOVE, { variables: { id: atRibeira.id, status: "CANCELLED" }, token: tok.barista }), "NOT_FOUND");
    expectRefused(await t.gql(`mutation($id: ID!) { cancelOrder(id: $id) }`, { variables: { id: atBaixa.id }, token: tok.ribeiraBarista }), "NOT_FOUND");
    const { rows } = await t.db.query("select id, status from app_public.orders where id = any($1) order by id", [[atBaixa.id, atRibeira.id]]);
    expect(rows.map((r) => r.status)).toEqual(["PENDING", "PENDING"]);
    // Their own: yes.
    expect(ok(await t.gql(PAY, { variables: { id: atRibeira.id }, token: tok.ribeiraBarista })).markOrderPaid.status).toBe("PAID");
    // The till: a barista sells at their own store's till only.
    expectRefused(await t.gql(ORDER, { variables: { coffeeId: coffee.id, quantity: 1, storeId: ribeira }, token: tok.barista }), "FORBIDDEN");
    const till = ok(await t.gql(ORDER, { variables: { coffeeId: coffee.id, quantity: 1, storeId: ribeira }, token: tok.ribeiraBarista })).createOrder;
    expect(till.storeId).toBe(ribeira);
    // Each barista's stock list is their store's.
    expectRefused(await t.gql(`query($s: ID) { lowStockItems(storeId: $s) { currentStock } }`, { variables: { s: ribeira }, token: tok.barista }), "FORBIDDEN");
    expectRefused(await t.gql(`{ lowStockItems { currentStock } }`, { token: tok.ribeiraBarista }), "FORBIDDEN");
  });

  test("over subscriptions: each follows their own store's queue (order_queue:<store>), never the other's", async () => {
    const baixaQueue = subscribe<{ orderQueueChanged: { id: string; status: string; storeId: string } }>(t.ws(tok.barista), QUEUE, {});
    const ribeiraQueue = subscribe<{ orderQueueChanged: { id: string; status: string; storeId: string } }>(t.ws(tok.ribeiraBarista), QUEUE, { storeId: ribeira });
    const trespass = subscribe(t.ws(tok.barista), QUEUE, { storeId: ribeira });
    const ribeiraDefault = subscribe(t.ws(tok.ribeiraBarista), QUEUE, {});
    await listening(t, [orderQueueTopic(baixa), orderQueueTopic(ribeira)]);
    await Promise.all([trespass.waitFor(1), ribeiraDefault.waitFor(1)]);
    expect(errorsOf(trespass).map((e) => e.extensions?.code)).toEqual(["FORBIDDEN"]);
    expect(errorsOf(ribeiraDefault).map((e) => e.extensions?.code)).toEqual(["FORBIDDEN"]);

    const a = await order(tok.alice, null);
    const b = await order(tok.bob, ribeira);
    for (const o of [a, b]) {
      const paid = await sendCallback(t, { order_id: o.id, status: "paid", amount: Number(o.total), items: [{ product: coffee.id, quantity: 1 }], event_id: `evt_stores_${o.id}` });
      expect(paid).toMatchObject({ status: 200, body: { status: "processed" } });
    }
    const idsOf = (sub: typeof baixaQueue) => sub.results.map((r) => r.data?.orderQueueChanged?.id).filter(Boolean);
    await waitUntil("both queues' PAID and PREPARING", () => idsOf(baixaQueue).filter((id) => id === a.id).length >= 2 && idsOf(ribeiraQueue).filter((id) => id === b.id).length >= 2, 10_000, 20);
    await new Promise((r) => setTimeout(r, 300));
    expect(idsOf(baixaQueue)).not.toContain(b.id);
    expect(idsOf(ribeiraQueue)).not.toContain(a.id);
    expect(new Set(ribeiraQueue.results.map((r) => r.data?.orderQueueChanged?.storeId))).toEqual(new Set([ribeira]));
    expect(errorsOf(baixaQueue)).toEqual([]);
    expect(errorsOf(ribeiraQueue)).toEqual([]);

    // Following one order of the other store: NOT_FOUND, as over HTTP.
    const status = subscribe(t.ws(tok.barista), `subscription($id: ID!) { orderStatusChanged(orderId: $id) { status } }`, { id: b.id });
    await status.waitFor(1);
    expect(errorsOf(status).map((e) => e.extensions?.code)).toEqual(["NOT_FOUND"]);
    const own = subscribe(t.ws(tok.ribeiraBarista), `subscription($id: ID!) { orderStatusChanged(orderId: $id) { status } }`, { id: b.id });
    await listening(t, [orderStatusTopic(b.id)]);
    expect(ok(await t.gql(MOVE, { variables: { id: b.id, status: "BREWING" }, token: tok.ribeiraBarista })).updateOrderStatus.status).toBe("BREWING");
    await own.waitFor(1);
    expect(own.results[0]!.data).toEqual({ orderStatusChanged: { status: "BREWING" } });
  }, 60_000);
});

describe("stock and inventory per store", () => {
  const inventory = `query($id: ID!, $s: ID) { coffee(id: $id) { inventory(storeId: $s) } }`;
  const inventoryAt = async (storeId: string | null) => ok(await t.gql(inventory, { variables: { id: coffee.id, s: storeId } })).coffee.inventory as number;
  const shelf = async (storeId: string) =>
    Number((await t.db.query("select current_stock from app_public.stock_items where store_id = $1 and ingredient_id = $2", [storeId, coffee.ingredientId])).rows[0].current_stock);

  test("an order holds and takes its own store's stock only", async () => {
    const [baixaBefore, ribeiraBefore] = [await inventoryAt(null), await inventoryAt(ribeira)];
    const [shelfBaixa, shelfRibeira] = [await shelf(baixa), await shelf(ribeira)];
    const o = await order(tok.alice, ribeira, 2);
    expect(await inventoryAt(ribeira)).toBe(ribeiraBefore - 2);
    expect(await inventoryAt(null)).toBe(baixaBefore);
    expect(await inventoryAt(baixa)).toBe(baixaBefore);
    ok(await t.gql(PAY, { variables: { id: o.id }, token: tok.ribeiraBarista }));
    await waitUntil("Ribeira's stock taken", async () => (await shelf(ribeira)) === shelfRibeira - 20, 10_000, 50);
    expect(await shelf(baixa)).toBe(shelfBaixa);
    const { rows } = await t.db.query("select store_id, delta::float8 as delta from app_public.stock_movements where order_id = $1", [o.id]);
    expect(rows).toEqual([{ store_id: ribeira, delta: -20 }]);
  });

  test("more than Ribeira's shelf is OUT_OF_STOCK there, while Baixa still sells it", async () => {
    const left = await inventoryAt(ribeira);
    expectRefused(await t.gql(ORDER, { variables: { coffeeId: coffee.id, quantity: Math.min(left + 1, 20), storeId: ribeira }, token: tok.admin }), left + 1 <= 20 ? "OUT_OF_STOCK" : "BAD_USER_INPUT");
    expect((await order(tok.admin, null, Math.min(left + 1, 20))).storeId).toBe(baixa);
  });

  test("restocking and alert levels: a store manager at their store only; low stock lists are per store", async () => {
    const restock = `mutation($i: ID!, $s: ID) { restockIngredient(ingredientId: $i, amount: 5, storeId: $s) { storeId currentStock } }`;
    const before = await shelf(ribeira);
    expect(ok(await t.gql(restock, { variables: { i: coffee.ingredientId, s: ribeira }, token: tok.ribeiraManager })).restockIngredient).toEqual({ storeId: ribeira, currentStock: before + 5 });
    expectRefused(await t.gql(restock, { variables: { i: coffee.ingredientId, s: baixa }, token: tok.ribeiraManager }), "FORBIDDEN");
    expectRefused(await t.gql(restock, { variables: { i: coffee.ingredientId }, token: tok.ribeiraManager }), "FORBIDDEN");
    const level = `mutation($i: ID!, $s: ID) { setStockAlertLevel(ingredientId: $i, alertLevel: 100000, storeId: $s) { storeId alertLevel } }`;
    ok(await t.gql(level, { variables: { i: coffee.ingredientId, s: ribeira }, token: tok.ribeiraManager }));
    const low = `query($s: ID) { lowStockItems(storeId: $s) { storeId ingredient { id } } }`;
    const ribeiraLow = ok(await t.gql(low, { variables: { s: ribeira }, token: tok.ribeiraBarista })).lowStockItems;
    const baixaLow = ok(await t.gql(low, { token: tok.barista })).lowStockItems;
    expect(ribeiraLow.map((s: any) => s.ingredient.id)).toContain(coffee.ingredientId);
    expect(baixaLow.map((s: any) => s.ingredient.id)).not.toContain(coffee.ingredientId);
    expect(new Set(ribeiraLow.map((s: any) => s.storeId))).toEqual(new Set([ribeira]));
    // Staff read their stores' stock rows only.
    const rows = ok(await t.gql(`{ allStockItems(first: 500) { nodes { storeId } } }`, { token: tok.ribeiraBarista })).allStockItems.nodes;
    expect(new Set(rows.map((s: any) => s.storeId))).toEqual(new Set([ribeira]));
  });

  test("an ingredient's filter by its stock item (as before the chain) reads the default store's row", async () => {
    // The coffee's ingredient is on Baixa's (the default store's) shelves and on Ribeira's.
    const byStock = `query($i: ID!, $f: IngredientFilter!) { allIngredients(filter: { and: [{ id: { equalTo: $i } }, $f] }) { nodes { id } } }`;
    const found = async (f: object) => ok(await t.gql(byStock, { variables: { i: coffee.ingredientId, f }, token: tok.admin })).allIngredients.nodes.length;
    expect(await found({ stockItem: { storeId: { equalTo: baixa } } })).toBe(1);
    expect(await found({ stockItem: { storeId: { equalTo: ribeira } } })).toBe(0); // Ribeira's row is not the one read
    expect(await found({ stockItemExists: true })).toBe(1);
    expect(await found({ stockItemExists: false })).toBe(0);
    // As every other filter field here (stockItems is the plugin's own): null and {} are refused BAD_USER_INPUT, not read as "no filter".
    for (const f of [{ stockItems: {} }, { stockItem: {} }, { stockItem: null }, { stockItemExists: null }]) {
      const r = await t.gql(byStock, { variables: { i: coffee.ingredientId, f }, token: tok.admin });
      expect(r.body.errors?.[0]).toMatchObject({ message: expect.stringMatching(/forbidden in filter argument input/), extensions: { code: "BAD_USER_INPUT" } });
    }
    // An ingredient with a shelf at Ribeira only has none at the default store.
    const { rows } = await t.db.query("insert into app_public.ingredients (name) values ('Stores filter test') returning id");
    const only = rows[0].id as string;
    try {
      await t.db.query("insert into app_public.stock_items (store_id, ingredient_id, current_stock, alert_level, unit) values ($1, $2, 5, 1, 'g')", [ribeira, only]);
      const at = async (f: object) => ok(await t.gql(byStock, { variables: { i: only, f }, token: tok.admin })).allIngredients.nodes.length;
      expect([await at({ stockItemExists: false }), await at({ stockItemExists: true }), await at({ stockItem: { storeId: { equalTo: ribeira } } })]).toEqual([1, 0, 0]);
    } finally {
      await t.db.query("delete from app_public.ingredients where id = $1", [only]);
    }
  });
});

describe("sales, per store and chain-wide", () => {
  test("each store's report counts its own paid orders; without storeId the chain's admin gets the chain, a manager their stores", async () => {
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 2 * 86400_000).toISOString().slice(0, 10);
    const report = `query($s: ID) { salesReport(from: "${today}", to: "${tomorrow}", groupBy: COFFEE, storeId: $s) { bucket orders cups revenue } }`;
    const ours = async (token: string, storeId?: string) =>
      ok(await t.gql(report, { variables: { s: storeId ?? null }, token })).salesReport.find((r: any) => r.bucket === coffee.name) ?? { orders: 0, cups: 0 };
    const before = { baixa: await ours(tok.admin, baixa), ribeira: await ours(tok.admin, ribeira), chain: await ours(tok.admin) };
    const a = await order(tok.alice, null, 3);
    const b = await order(tok.bob, ribeira, 1);
    ok(await t.gql(PAY, { variables: { id: a.id }, token: tok.barista }));
    ok(await t.gql(PAY, { variables: { id: b.id }, token: tok.ribeiraBarista }));
    const after = { baixa: await ours(tok.admin, baixa), ribeira: await ours(tok.admin, ribeira), chain: await ours(tok.admin) };
    expect(after.baixa.cups - before.baixa.cups).toBe(3);
    expect(after.ribeira.cups - before.ribeira.cups).toBe(1);
    expect(after.chain.cups - before.chain.cups).toBe(4);
    expect(after.chain.cups).toBe(after.baixa.cups + after.ribeira.cups);
    // The manager: Ribeira's, with or without storeId; Baixa's is refused.
    expect((await ours(tok.ribeiraManager)).cups).toBe(after.ribeira.cups);
    expect((await ours(tok.ribeiraManager, ribeira)).cups).toBe(after.ribeira.cups);
    expectRefused(await t.gql(report, { variables: { s: baixa }, token: tok.ribeiraManager }), "FORBIDDEN");
    expectRefused(await t.gql(report, { variables: { s: ribeira }, token: tok.ribeiraBarista }), "FORBIDDEN");
  });
});

describe("a store manager", () => {
  test("is refused outside their store: the chain's menu, prices, staff, stores, other stores' availability, refunds and audit log", async () => {
    const m = tok.ribeiraManager;
    const psl = "40000000-0000-4000-8000-000000000011";
    expect(codes(await t.gql(`mutation { createCoffee(name: "Manager's own", price: 3) { id } }`, { token: m }))).toEqual(["FORBIDDEN"]);
    expect(codes(await t.gql(`mutation { updateCoffeePrice(id: "${psl}", newPrice: 9) { id } }`, { token: m }))).toEqual(["FORBIDDEN"]);
    expect(codes(await t.gql(`mutation { setCoffeeAvailable(id: "${psl}", available: false) { id } }`, { token: m }))).toEqual(["FORBIDDEN"]);
    expect(codes(await t.gql(`mutation { setCoffeeAvailable(id: "${psl}", available: false, storeId: "${baixa}") { id } }`, { token: m }))).toEqual(["FORBIDDEN"]);
    expect(codes(await t.gql(`mutation { addStore(name: "Manager's store", timeZone: "UTC") { id } }`, { token: m }))).toEqual(["FORBIDDEN"]);
    expect(codes(await t.gql(`mutation { assignStaff(accountId: "${DEMO.barista.id}", storeId: "${ribeira}") }`, { token: m }))).toEqual(["FORBIDDEN"]);
    expect(codes(await t.gql(`mutation { updateStore(id: "${baixa}", patch: { isOpen: false }) { id } }`, { token: m }))).toEqual(["FORBIDDEN"]);
    expect(codes(await t.gql(`mutation { disableAccount(email: "${DEMO.barista.email}") }`, { token: m }))).toEqual(["FORBIDDEN"]);
    const { rows } = await t.db.query("select is_open, (select available from app_public.coffees where id = $2) as psl from app_public.stores where id = $1", [baixa, psl]);
    expect(rows).toEqual([{ is_open: true, psl: true }]);
    // Within Ribeira: its menu availability, with an audit row it then reads.
    const hazelnut = "40000000-0000-4000-8000-000000000015";
    const set = (available: boolean) =>
      t.gql(`mutation { setCoffeeAvailable(id: "${hazelnut}", available: ${available}, storeId: "${ribeira}") { id availableAt(storeId: "${ribeira}") } }`, { token: m });
    expect(ok(await set(false)).setCoffeeAvailable.availableAt).toBe(false);
    expect(ok(await set(true)).setCoffeeAvailable.availableAt).toBe(true);
    const log = ok(await t.gql(`{ auditLog(first: 500) { entity } }`, { token: m })).auditLog.map((e: any) => e.entity);
    expect(log).toContain(`app_public.store_coffees ${ribeira} ${hazelnut}`);
    expect(log.every((e: string) => e.includes(ribeira))).toBe(true);
    const chainLog = ok(await t.gql(`{ auditLog(first: 500) { entity } }`, { token: tok.admin })).auditLog.map((e: any) => e.entity);
    expect(chainLog.some((e: string) => !e.includes(ribeira))).toBe(true);
  });

  test("reads and settles the refunds of their store only", async () => {
    const a = await order(tok.alice, null);
    const b = await order(tok.bob, ribeira);
    ok(await t.gql(PAY, { variables: { id: a.id }, token: tok.barista }));
    ok(await t.gql(PAY, { variables: { id: b.id }, token: tok.ribeiraBarista }));
    ok(await t.gql(MOVE, { variables: { id: a.id, status: "CANCELLED" }, token: tok.barista }));
    ok(await t.gql(MOVE, { variables: { id: b.id, status: "CANCELLED" }, token: tok.ribeiraBarista }));
    const refunds = `{ openRefunds { id orderId storeId } }`;
    const managerSees = ok(await t.gql(refunds, { token: tok.ribeiraManager })).openRefunds;
    expect(managerSees.map((r: any) => r.orderId)).toContain(b.id);
    expect(managerSees.map((r: any) => r.orderId)).not.toContain(a.id);
    expect(ok(await t.gql(refunds, { token: tok.admin })).openRefunds.map((r: any) => r.orderId)).toEqual(expect.arrayContaining([a.id, b.id]));
    const baixaRefund = (await t.db.query("select id from app_public.refunds where order_id = $1", [a.id])).rows[0].id;
    expectRefused(await t.gql(`mutation { settleRefund(id: "${baixaRefund}") { id } }`, { token: tok.ribeiraManager }), "NOT_FOUND");
    expect(codes(await t.gql(refunds, { token: tok.ribeiraBarista }))).toEqual(["FORBIDDEN"]);
  });
});

describe("settings per store", () => {
  test("a store's own caps and expiry apply there; null puts the chain's setting back", async () => {
    const update = `mutation($p: StoreSettingsPatch!) { updateStore(id: "${ribeira}", patch: $p) { maxOpenOrdersPerCustomer pendingOrderExpirySeconds } }`;
    expect(ok(await t.gql(update, { variables: { p: { maxOpenOrdersPerCustomer: 1, pendingOrderExpirySeconds: 60 } }, token: tok.ribeiraManager })).updateStore).toEqual({
      maxOpenOrdersPerCustomer: 1,
      pendingOrderExpirySeconds: 60,
    });
    expectRefused(await t.gql(update, { variables: { p: { maxOpenOrdersPerCustomer: 0 } }, token: tok.ribeiraManager }), "BAD_USER_INPUT");
    expectRefused(await t.gql(update, { variables: { p: { timeZone: "Mars/Olympus" } }, token: tok.ribeiraManager }), "BAD_USER_INPUT");
    await t.db.query("update app_public.orders set status = 'CANCELLED' where customer_id = $1 and status = 'PENDING'", [DEMO.bob.id]);
    const first = await order(tok.bob, ribeira);
    const { rows } = await t.db.query("select extract(epoch from expires_at - time_ordered)::int as s from app_public.orders where id = $1", [first.id]);
    expect(rows[0].s).toBe(60);
    expectRefused(await t.gql(ORDER, { variables: { coffeeId: coffee.id, quantity: 1, storeId: ribeira }, token: tok.bob }), "TOO_MANY_OPEN_ORDERS");
    // Baixa follows the chain's settings.
    const elsewhere = await order(tok.bob, null);
    const { rows: chain } = await t.db.query(
      "select extract(epoch from o.expires_at - o.time_ordered)::int as s, (select value::int from app_private.settings where key = 'pending_order_expiry_seconds') as chain from app_public.orders o where o.id = $1",
      [elsewhere.id],
    );
    expect(chain[0].s).toBe(chain[0].chain);
    ok(await t.gql(update, { variables: { p: { maxOpenOrdersPerCustomer: null, pendingOrderExpirySeconds: null } }, token: tok.ribeiraManager }));
    expect((await order(tok.bob, ribeira)).storeId).toBe(ribeira);
  });
});

describe("the chain's admin", () => {
  test("adds a store (empty shelves: nothing counted is sold there until restocked) and assigns a barista to it", async () => {
    const name = `Test store ${Date.now()}`;
    const store = ok(
      await t.gql(`mutation($n: String!) { addStore(name: $n, timeZone: "Europe/Paris") { id name timeZone isOpen isDefault } }`, { variables: { n: name }, token: tok.admin }),
    ).addStore;
    expect(store).toMatchObject({ name, timeZone: "Europe/Paris", isOpen: true, isDefault: false });
    expectRefused(await t.gql(`mutation { addStore(name: "${name}", timeZone: "UTC") { id } }`, { token: tok.admin }), "CONFLICT");
    expectRefused(await t.gql(`mutation { addStore(name: "x${name}", timeZone: "Mars/Olympus") { id } }`, { token: tok.admin }), "BAD_USER_INPUT");
    const latte = "40000000-0000-4000-8000-000000000003";
    expectRefused(await t.gql(`mutation { createOrder(coffeeId: "${latte}", quantity: 1, storeId: "${store.id}") { id } }`, { token: tok.alice }), "OUT_OF_STOCK");
    // The demo barista does not work there, until assigned.
    expectRefused(await t.gql(`query { lowStockItems(storeId: "${store.id}") { currentStock } }`, { token: tok.barista }), "FORBIDDEN");
    const assign = `mutation { assignStaff(accountId: "${DEMO.barista.id}", storeId: "${store.id}") }`;
    expect(ok(await t.gql(assign, { token: tok.admin })).assignStaff).toBe(true);
    expect(ok(await t.gql(assign, { token: tok.admin })).assignStaff).toBe(false);
    expect(ok(await t.gql(`query { lowStockItems(storeId: "${store.id}") { currentStock } }`, { token: tok.barista })).lowStockItems.length).toBeGreaterThan(0);
    const stores = ok(await t.gql(`{ allBaristas(condition: { id: "${DEMO.barista.id}" }) { nodes { stores { name } } } }`, { token: tok.admin })).allBaristas.nodes[0].stores;
    expect(stores.map((s: any) => s.name)).toEqual(["Baixa", name]);
    await t.db.query("delete from app_public.stores where id = $1", [store.id]);
  });
});
