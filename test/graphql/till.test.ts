import { type Caller, DEMO, expectRefused, gqlAs, ok } from "../support/client.ts";
import { operationsOf } from "../support/contract.ts";
import { maxId, money, movementsOfOrder, orderCount, orderEvents, orderIn, orderRow, ownCoffee, type OwnCoffee, ownIngredient, removeIngredients, stockOf } from "../support/fixtures.ts";
import { sendCallback } from "../support/paymentProvider.ts";
import { useTestService } from "../support/service.ts";
import { sleep, waitUntil } from "../support/wait.ts";

// The till, refunds and upkeep against the real service, the real database
// and the real graphile-worker: markOrderPaid (and what the worker does
// after it), a provider's callback for an order paid at the till or
// cancelled, refunds owed and settled, finding customers at the point of
// sale, menu and stock upkeep, and paging orders. Orders are of a coffee of
// this file whose ingredients are its own, so stock arithmetic is exact.
// Everything changed is put back at the end (orders, coffees, stock,
// availability, alerts, movements).

const POS = operationsOf("pos");

const PLACE_ORDER = `mutation($coffeeId: ID!, $quantity: Int!) { createOrder(coffeeId: $coffeeId, quantity: $quantity) { id total status } }`;
const MARK_PAID = `mutation MarkPaid($id: ID!, $method: PaymentMethod!) {
  markOrderPaid(id: $id, method: $method) { id status paidAt paymentMethod total customer { id } }
}`;
const CANCEL = `mutation Cancel($id: ID!) { cancelOrder(id: $id) }`;
const CUSTOMER_BY_EMAIL = `query($email: String!) { customerByEmail(email: $email) { id name isWalkIn } }`;
const SEARCH_CUSTOMERS = `query($query: String!) { searchCustomers(query: $query) { id name isWalkIn } }`;
const OPEN_REFUNDS = `{ openRefunds { id orderId amount reason settledAt settledBy } }`;
const SETTLE_REFUND = `mutation($id: ID!) { settleRefund(id: $id) { id orderId amount settledAt settledBy } }`;
const PAYMENT_ALERTS = `{ paymentAlerts(limit: 100) { kind orderId message } }`;
const SET_AVAILABLE = `mutation($id: ID!, $available: Boolean!) { setCoffeeAvailable(id: $id, available: $available) { id available } }`;
const RESTOCK = `mutation($ingredientId: ID!, $amount: Float!, $reason: String) {
  restockIngredient(ingredientId: $ingredientId, amount: $amount, reason: $reason) { ingredientId currentStock alertLevel }
}`;
const SET_ALERT_LEVEL = `mutation($ingredientId: ID!, $alertLevel: Float!) {
  setStockAlertLevel(ingredientId: $ingredientId, alertLevel: $alertLevel) { ingredientId currentStock alertLevel }
}`;
const LOW_STOCK = `{ lowStockItems { ingredientId currentStock alertLevel } }`;
const MENU = `{ menuItems { id } }`;
const MOVEMENTS = `query($ingredientId: ID!) {
  allStockMovements(condition: { ingredientId: $ingredientId }, orderBy: ID_DESC, first: 1) { nodes { delta reason actorRole actorId orderId } }
}`;

/** Who is refused what: customers are FORBIDDEN, anonymous callers UNAUTHENTICATED, and (for admin-only fields) baristas FORBIDDEN. */
const NOT_STAFF: Array<[Caller, string]> = [
  ["alice", "FORBIDDEN"],
  ["bob", "FORBIDDEN"],
  ["anonymous", "UNAUTHENTICATED"],
];
const NOT_ADMIN: Array<[Caller, string]> = [["barista", "FORBIDDEN"], ...NOT_STAFF];

const AMERICANO = "40000000-0000-4000-8000-000000000017"; // demo coffee on sale, no recipe
const CINNAMON = "30000000-0000-4000-8000-000000000011"; // demo ingredient with a stock row
const ICE = "30000000-0000-4000-8000-000000000013"; // demo ingredient without a stock row
const UNKNOWN_ID = "7d7a3c52-5d0e-4b43-9c1e-6b0f2f6a9e01";

const t = useTestService({
  worker: true,
  sandbox: true,
  async cleanup() {
    // The sandbox took this file's orders (their refunds, notifications and
    // lines go with them) and coffees, demo customers and demo stock back.
    for (const c of availability) await t.db.query("update app_public.coffees set available = $2 where id = $1 and available <> $2", [c.id, c.available]);
    await t.db.query("delete from app_public.stock_movements where id > $1", [firstMovementId]);
    await t.db.query("delete from app_public.payment_alerts where created_at >= $1", [startedAt]);
    await t.db.query("delete from app_private.login_attempts where id > $1", [firstAttemptId]);
    await removeIngredients(t, ownIngredients);
  },
});
let coffee: OwnCoffee;
let startedAt: Date;
let firstMovementId = 0;
let firstAttemptId = 0;
let availability: Array<{ id: string; available: boolean }> = [];
const ownIngredients: string[] = [];

beforeAll(async () => {
  startedAt = (await t.db.query("select now() as now")).rows[0].now;
  firstMovementId = await maxId(t, "app_public.stock_movements");
  firstAttemptId = await maxId(t, "app_private.login_attempts");
  availability = (await t.db.query("select id, available from app_public.coffees")).rows;
  coffee = await ownCoffee(t, "Till", "3.40", [18, 150], 10_000);
  ownIngredients.push(...coffee.ingredients.map((i) => i.id));
  await Promise.all((["alice", "bob", "barista", "admin"] as const).map((u) => t.token(u)));
});

const ids = () => coffee.ingredients.map((i) => i.id);

/** A walk-in order taken at the point of sale (PosOrder) by the barista. */
async function posOrder(quantity: number, notes: string | null = null): Promise<{ id: string; total: number }> {
  const r = ok(await gqlAs(t, "barista", POS, { coffeeId: coffee.id, quantity, notes }, "PosOrder")).createOrder;
  return { id: r.id, total: r.total };
}

const markPaid = (who: Caller, id: string, method: "CASH" | "CARD_PRESENT" = "CASH") => gqlAs(t, who, MARK_PAID, { id, method });

async function refundsOf(orderId: string) {
  const { rows } = await t.db.query("select id, amount::text as amount, reason, source_key, settled_at, settled_by from app_public.refunds where order_id = $1 order by created_at, id", [orderId]);
  return rows as Array<{ id: string; amount: string; reason: string; source_key: string | null; settled_at: Date | null; settled_by: string | null }>;
}

async function alertKindsOf(orderId: string): Promise<string[]> {
  const { rows } = await t.db.query("select kind from app_public.payment_alerts where order_id = $1 order by created_at", [orderId]);
  return rows.map((r) => r.kind);
}

async function notificationsOf(orderId: string) {
  const { rows } = await t.db.query("select customer_id, kind from app_public.notifications where order_id = $1", [orderId]);
  return rows;
}

/** What the worker's update_inventory takes for `quantity` cups of the file's coffee. */
const taken = (quantity: number) => coffee.ingredients.map((i) => ({ ingredient_id: i.id, delta: -quantity * i.perCup }));
const sortById = <T extends { ingredient_id: string }>(rows: T[]) => [...rows].sort((a, b) => a.ingredient_id.localeCompare(b.ingredient_id));

describe("markOrderPaid at the till", () => {
  test("a walk-in order paid in cash: PAID, the worker moves it to PREPARING, takes the stock once and notifies; a second payment is INVALID_TRANSITION; a later provider callback is ORDER_NOT_PAYABLE with a multiple_payments alert", async () => {
    const before = await stockOf(t, ids());
    const order = await posOrder(2, "till, table 2");
    expect(money(order.total)).toBe(money(2 * Number(coffee.price)));
    const pending = await orderRow(t, order.id);
    expect({ customer: pending.customer_id, status: pending.status, paid: pending.paid_at }).toEqual({ customer: DEMO.walkInId, status: "PENDING", paid: null });

    const paid = ok(await markPaid("barista", order.id, "CASH")).markOrderPaid;
    expect(paid).toMatchObject({ id: order.id, status: "PAID", customer: { id: DEMO.walkInId } });
    expect(paid.paidAt).toEqual(expect.any(String));
    const row = await orderRow(t, order.id);
    expect(row.paid_at).not.toBeNull();
    expect((row as any).payment_method).toBe("cash");
    expect(paid.paymentMethod).toBe((row as any).payment_method);

    // The real worker: PREPARING within a few seconds, stock taken, a notification.
    await waitUntil("the worker to move the order to PREPARING", async () => (await orderRow(t, order.id)).status === "PREPARING", 10_000);
    await waitUntil("the worker to take the stock", async () => (await movementsOfOrder(t, order.id, "order paid")).length >= coffee.ingredients.length, 10_000);
    await waitUntil("the worker to record a notification", async () => (await notificationsOf(order.id)).length > 0, 10_000);

    // Exactly once, even a while later.
    await sleep(1500);
    const movements = await movementsOfOrder(t, order.id, "order paid");
    expect(sortById(movements.map((m) => ({ ingredient_id: m.ingredient_id, delta: m.delta })))).toEqual(sortById(taken(2)));
    expect(movements.every((m) => m.actor_role === "system")).toBe(true);
    const after = await stockOf(t, ids());
    for (const i of coffee.ingredients) expect(after[i.id]).toBe(before[i.id]! - 2 * i.perCup);
    expect(await notificationsOf(order.id)).toEqual([{ customer_id: DEMO.walkInId, kind: "payment_received" }]);
    expect((await orderEvents(t, order.id)).map((e) => [e.from_status, e.to_status, e.actor_role])).toEqual([
      [null, "PENDING", "barista"],
      ["PENDING", "PAID", "barista"],
      ["PAID", "PREPARING", "system"],
    ]);

    // A second payment at the till.
    const again = expectRefused(await markPaid("barista", order.id, "CARD_PRESENT"), "INVALID_TRANSITION");
    expect(again.extensions?.details).toMatchObject({ to: "PAID" });
    const unchanged = await orderRow(t, order.id);
    expect({ status: unchanged.status, paid_at: unchanged.paid_at, method: (unchanged as any).payment_method }).toEqual({
      status: "PREPARING",
      paid_at: row.paid_at,
      method: "cash",
    });

    // The provider then reports a payment for it too.
    const callback = await sendCallback(t, {
      order_id: order.id,
      status: "paid",
      amount: order.total,
      items: [{ product: coffee.id, quantity: 2 }],
      event_id: `evt_till_${order.id}`,
    });
    expect({ status: callback.status, code: callback.body?.error?.code }).toEqual({ status: 422, code: "ORDER_NOT_PAYABLE" });
    expect(await alertKindsOf(order.id)).toContain("multiple_payments");
    const alerts = ok(await gqlAs(t, "admin", PAYMENT_ALERTS)).paymentAlerts;
    expect(alerts).toContainEqual(expect.objectContaining({ kind: "multiple_payments", orderId: order.id }));

    // Nothing was paid, prepared or taken again.
    await sleep(1500);
    const final = await orderRow(t, order.id);
    expect({ status: final.status, paid_at: final.paid_at, method: (final as any).payment_method }).toEqual({ status: "PREPARING", paid_at: row.paid_at, method: "cash" });
    expect(await movementsOfOrder(t, order.id, "order paid")).toHaveLength(coffee.ingredients.length);
    expect(await stockOf(t, ids())).toEqual(after);
    expect(await notificationsOf(order.id)).toHaveLength(1);
  });

  test("customers are FORBIDDEN (even for their own order) and anonymous callers UNAUTHENTICATED; nothing changes; an admin may take a card payment", async () => {
    const mine = ok(await gqlAs(t, "alice", PLACE_ORDER, { coffeeId: coffee.id, quantity: 1 })).createOrder;
    expect(mine.status).toBe("PENDING");
    for (const [who, code] of NOT_STAFF) {
      for (const method of ["CASH", "CARD_PRESENT"] as const) {
        const r = await markPaid(who, mine.id, method);
        expect({ who, method, code: r.body.errors?.[0]?.extensions?.code }).toEqual({ who, method, code });
        expectRefused(r, code);
      }
    }
    const row = await orderRow(t, mine.id);
    expect({ status: row.status, paid_at: row.paid_at, method: (row as any).payment_method }).toEqual({ status: "PENDING", paid_at: null, method: null });
    expect((await orderEvents(t, mine.id)).map((e) => e.to_status)).toEqual(["PENDING"]);

    const paid = ok(await markPaid("admin", mine.id, "CARD_PRESENT")).markOrderPaid;
    expect(paid.status).toBe("PAID");
    expect(((await orderRow(t, mine.id)) as any).payment_method).toBe("card_present");
    await waitUntil("the worker to move the order to PREPARING", async () => (await orderRow(t, mine.id)).status === "PREPARING", 10_000);
  });

  test("an unknown order is NOT_FOUND; a CANCELLED order is INVALID_TRANSITION and stays unpaid", async () => {
    expectRefused(await markPaid("barista", UNKNOWN_ID), "NOT_FOUND");
    const order = await posOrder(1);
    ok(await gqlAs(t, "barista", CANCEL, { id: order.id }));
    const refused = expectRefused(await markPaid("barista", order.id), "INVALID_TRANSITION");
    expect(refused.extensions?.details).toMatchObject({ from: "CANCELLED", to: "PAID" });
    const row = await orderRow(t, order.id);
    expect({ status: row.status, paid_at: row.paid_at }).toEqual({ status: "CANCELLED", paid_at: null });
    expect(await refundsOf(order.id)).toEqual([]);
  });

  test("two tills paying one order at once: one PAID, the other INVALID_TRANSITION; the stock is taken once", async () => {
    const before = await stockOf(t, ids());
    const order = await posOrder(1);
    const answers = await Promise.all([markPaid("barista", order.id, "CASH"), markPaid("admin", order.id, "CARD_PRESENT")]);
    const codes = answers.map((r) => r.body.errors?.[0]?.extensions?.code ?? "OK").sort();
    expect(codes).toEqual(["INVALID_TRANSITION", "OK"]);
    await waitUntil("the worker to take the stock", async () => (await movementsOfOrder(t, order.id, "order paid")).length >= coffee.ingredients.length, 10_000);
    await sleep(1500);
    expect(await movementsOfOrder(t, order.id, "order paid")).toHaveLength(coffee.ingredients.length);
    const after = await stockOf(t, ids());
    for (const i of coffee.ingredients) expect(after[i.id]).toBe(before[i.id]! - i.perCup);
    expect((await orderEvents(t, order.id)).filter((e) => e.to_status === "PAID")).toHaveLength(1);
  });
});

describe("finding customers at the point of sale", () => {
  test("customerByEmail ignores case and finds Alice for staff; an unknown address is null", async () => {
    for (const who of ["barista", "admin"] as const) {
      const r = ok(await gqlAs(t, who, CUSTOMER_BY_EMAIL, { email: "ALICE@example.com" }));
      expect(r.customerByEmail).toEqual({ id: DEMO.alice.id, name: "Alice Martin", isWalkIn: false });
    }
    expect(ok(await gqlAs(t, "barista", CUSTOMER_BY_EMAIL, { email: "nobody@example.com" })).customerByEmail).toBeNull();
  });

  test("customerByEmail: customers FORBIDDEN (even for themselves), anonymous UNAUTHENTICATED", async () => {
    for (const [who, code] of NOT_STAFF) {
      const r = await gqlAs(t, who, CUSTOMER_BY_EMAIL, { email: DEMO.alice.email });
      expect({ who, code: r.body.errors?.[0]?.extensions?.code }).toEqual({ who, code });
      expectRefused(r, code);
    }
  });

  test("searchCustomers finds Alice by 'ali' (and by username, e-mail), never the walk-in customer", async () => {
    for (const who of ["barista", "admin"] as const) {
      const found = ok(await gqlAs(t, who, SEARCH_CUSTOMERS, { query: "ali" })).searchCustomers;
      expect(found).toContainEqual({ id: DEMO.alice.id, name: "Alice Martin", isWalkIn: false });
      expect(found.every((c: any) => !c.isWalkIn && c.id !== DEMO.walkInId)).toBe(true);
    }
    const byUsername = ok(await gqlAs(t, "barista", SEARCH_CUSTOMERS, { query: "bob" })).searchCustomers;
    expect(byUsername.map((c: any) => c.id)).toContain(DEMO.bob.id);
    const byEmail = ok(await gqlAs(t, "barista", SEARCH_CUSTOMERS, { query: "@example.com" })).searchCustomers;
    expect(byEmail.map((c: any) => c.id)).toEqual(expect.arrayContaining([DEMO.alice.id, DEMO.bob.id]));
    // Terms that the walk-in customer's name contains.
    for (const query of ["walk", "Walk-in customer", "customer", "in c"]) {
      const r = ok(await gqlAs(t, "barista", SEARCH_CUSTOMERS, { query })).searchCustomers;
      expect({ query, walkIn: r.filter((c: any) => c.isWalkIn || c.id === DEMO.walkInId) }).toEqual({ query, walkIn: [] });
    }
  });

  test("searchCustomers takes the text literally: % and _ are not wildcards", async () => {
    // "contains the text" (README); 000006 made search terms literal text.
    const found: Record<string, string[]> = {};
    for (const query of ["a_i", "%%", "b%b"]) {
      found[query] = ok(await gqlAs(t, "barista", SEARCH_CUSTOMERS, { query })).searchCustomers.map((c: any) => c.name);
    }
    expect(found).toEqual({ a_i: [], "%%": [], "b%b": [] });
    expectRefused(await gqlAs(t, "barista", SEARCH_CUSTOMERS, { query: " a " }), "BAD_USER_INPUT");
  });

  test("searchCustomers: customers FORBIDDEN, anonymous UNAUTHENTICATED", async () => {
    for (const [who, code] of NOT_STAFF) {
      const r = await gqlAs(t, who, SEARCH_CUSTOMERS, { query: "ali" });
      expect({ who, code: r.body.errors?.[0]?.extensions?.code }).toEqual({ who, code });
      expectRefused(r, code);
    }
  });
});

describe("refunds", () => {
  test("cancelling a paid order (as staff) owes a refund of its total, and gives the stock the worker took back exactly once", async () => {
    const before = await stockOf(t, ids());
    const order = await posOrder(3);
    ok(await markPaid("barista", order.id, "CASH"));
    await waitUntil("the worker to take the stock", async () => (await movementsOfOrder(t, order.id, "order paid")).length >= coffee.ingredients.length, 10_000);
    const whileTaken = await stockOf(t, ids());
    for (const i of coffee.ingredients) expect(whileTaken[i.id]).toBe(before[i.id]! - 3 * i.perCup);

    expect(ok(await gqlAs(t, "barista", CANCEL, { id: order.id }))).toEqual({ cancelOrder: true });
    expect((await orderRow(t, order.id)).status).toBe("CANCELLED");

    const refunds = await refundsOf(order.id);
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ amount: money(order.total), settled_at: null });
    const open = ok(await gqlAs(t, "admin", OPEN_REFUNDS)).openRefunds;
    expect(open).toContainEqual(expect.objectContaining({ id: refunds[0]!.id, orderId: order.id, amount: order.total, settledAt: null }));

    // The stock is back to what it was before update_inventory.
    expect(await stockOf(t, ids())).toEqual(before);
    const returned = await movementsOfOrder(t, order.id, "order cancelled");
    expect(sortById(returned.map((m) => ({ ingredient_id: m.ingredient_id, delta: m.delta })))).toEqual(sortById(taken(3).map((m) => ({ ...m, delta: -m.delta }))));

    // Cancelling again gives nothing back twice and owes nothing twice.
    expect(ok(await gqlAs(t, "barista", CANCEL, { id: order.id }))).toEqual({ cancelOrder: false });
    await sleep(1500); // and the worker's remaining jobs change nothing either
    expect(await stockOf(t, ids())).toEqual(before);
    expect(await movementsOfOrder(t, order.id, "order cancelled")).toHaveLength(coffee.ingredients.length);
    expect(await movementsOfOrder(t, order.id, "order paid")).toHaveLength(coffee.ingredients.length);
    expect(await refundsOf(order.id)).toHaveLength(1);
    expect((await orderRow(t, order.id)).status).toBe("CANCELLED");
  });

  test("an admin cancelling a PAID order whose stock was not yet taken: a refund of its total, no stock moves", async () => {
    const id = await orderIn(t, "PAID", coffee.id, { quantity: 2 });
    const before = await stockOf(t, ids());
    const total = (await orderRow(t, id)).total;
    expect(ok(await gqlAs(t, "admin", CANCEL, { id }))).toEqual({ cancelOrder: true });
    expect((await refundsOf(id)).map((r) => r.amount)).toEqual([money(total)]);
    expect(await stockOf(t, ids())).toEqual(before);
    expect(await movementsOfOrder(t, id)).toEqual([]);
  });

  test("a provider's payment for a CANCELLED order: 422 ORDER_NOT_PAYABLE, one refund (a retry adds none), a refund_needed alert", async () => {
    const order = await posOrder(1);
    expect(ok(await gqlAs(t, "barista", CANCEL, { id: order.id }))).toEqual({ cancelOrder: true });
    expect(await refundsOf(order.id)).toEqual([]); // never paid: nothing owed yet
    const before = await stockOf(t, ids());

    const eventId = `evt_cancelled_${order.id}`;
    const body = JSON.stringify({ order_id: order.id, status: "paid", amount: order.total, items: [{ product: coffee.name, quantity: 1 }], event_id: eventId });
    const first = await sendCallback(t, body);
    expect({ status: first.status, code: first.body?.error?.code }).toEqual({ status: 422, code: "ORDER_NOT_PAYABLE" });
    const refunds = await refundsOf(order.id);
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ amount: money(order.total), settled_at: null, source_key: `event:${eventId}` });

    // The provider retries the same delivery.
    const retry = await sendCallback(t, body);
    expect({ status: retry.status, code: retry.body?.error?.code }).toEqual({ status: 422, code: "ORDER_NOT_PAYABLE" });
    expect(await refundsOf(order.id)).toHaveLength(1);

    expect(await alertKindsOf(order.id)).toContain("refund_needed");
    const alerts = ok(await gqlAs(t, "admin", PAYMENT_ALERTS)).paymentAlerts;
    expect(alerts).toContainEqual(expect.objectContaining({ kind: "refund_needed", orderId: order.id }));
    const open = ok(await gqlAs(t, "admin", OPEN_REFUNDS)).openRefunds;
    expect(open.filter((r: any) => r.orderId === order.id)).toHaveLength(1);

    // The order stays cancelled and unpaid; no stock moved.
    const row = await orderRow(t, order.id);
    expect({ status: row.status, paid_at: row.paid_at }).toEqual({ status: "CANCELLED", paid_at: null });
    await sleep(1200);
    expect(await stockOf(t, ids())).toEqual(before);
    expect(await movementsOfOrder(t, order.id)).toEqual([]);
  });

  test("openRefunds, paymentAlerts and settleRefund: barista and customers FORBIDDEN, anonymous UNAUTHENTICATED, nothing settled", async () => {
    const id = await orderIn(t, "PAID", coffee.id, { quantity: 1 });
    ok(await gqlAs(t, "admin", CANCEL, { id }));
    const [refund] = await refundsOf(id);
    for (const [who, code] of NOT_ADMIN) {
      const list = await gqlAs(t, who, OPEN_REFUNDS);
      expect({ who, field: "openRefunds", code: list.body.errors?.[0]?.extensions?.code }).toEqual({ who, field: "openRefunds", code });
      expectRefused(list, code);
      const alerts = await gqlAs(t, who, PAYMENT_ALERTS);
      expect({ who, field: "paymentAlerts", code: alerts.body.errors?.[0]?.extensions?.code }).toEqual({ who, field: "paymentAlerts", code });
      expectRefused(alerts, code);
      const settle = await gqlAs(t, who, SETTLE_REFUND, { id: refund!.id });
      expect({ who, field: "settleRefund", code: settle.body.errors?.[0]?.extensions?.code }).toEqual({ who, field: "settleRefund", code });
      expectRefused(settle, code);
    }
    expect(await refundsOf(id)).toEqual([expect.objectContaining({ id: refund!.id, settled_at: null, settled_by: null })]);
  });

  test("settleRefund by an admin sets settledAt (and settledBy) and takes it off openRefunds", async () => {
    const id = await orderIn(t, "PAID", coffee.id, { quantity: 1 });
    ok(await gqlAs(t, "admin", CANCEL, { id }));
    const [refund] = await refundsOf(id);
    expect(ok(await gqlAs(t, "admin", OPEN_REFUNDS)).openRefunds.map((r: any) => r.id)).toContain(refund!.id);

    const before = Date.now();
    const settled = ok(await gqlAs(t, "admin", SETTLE_REFUND, { id: refund!.id })).settleRefund;
    expect(settled).toMatchObject({ id: refund!.id, orderId: id, settledBy: DEMO.admin.id });
    expect(Date.parse(settled.settledAt)).toBeGreaterThan(before - 60_000);
    const [row] = await refundsOf(id);
    expect(row!.settled_at).not.toBeNull();
    expect(row!.settled_by).toBe(DEMO.admin.id);
    expect(ok(await gqlAs(t, "admin", OPEN_REFUNDS)).openRefunds.map((r: any) => r.id)).not.toContain(refund!.id);

    // Settling again changes nothing; an unknown refund is NOT_FOUND.
    const again = ok(await gqlAs(t, "admin", SETTLE_REFUND, { id: refund!.id })).settleRefund;
    expect(again.settledAt).toBe(settled.settledAt);
    expectRefused(await gqlAs(t, "admin", SETTLE_REFUND, { id: UNKNOWN_ID }), "NOT_FOUND");
  });
});

describe("menu and stock upkeep", () => {
  const available = async (id: string) => (await t.db.query("select available from app_public.coffees where id = $1", [id])).rows[0].available as boolean;
  const menuIds = async () => ok(await gqlAs(t, "anonymous", MENU)).menuItems.map((c: any) => c.id) as string[];
  const stockRow = async (id: string) =>
    (await t.db.query("select current_stock::float8 as stock, alert_level::float8 as alert from app_public.stock_items where ingredient_id = $1 and store_id = app_hidden.default_store_id()", [id]))
      .rows[0] as {
      stock: number;
      alert: number;
    };
  const movementCount = async (id: string) => (await t.db.query("select count(*)::int as n from app_public.stock_movements where ingredient_id = $1", [id])).rows[0].n as number;

  test("setCoffeeAvailable(false) takes a coffee off menuItems and createOrder for it is NOT_AVAILABLE; true puts it back", async () => {
    expect(await available(AMERICANO)).toBe(true);
    expect(ok(await gqlAs(t, "admin", SET_AVAILABLE, { id: AMERICANO, available: false })).setCoffeeAvailable).toEqual({ id: AMERICANO, available: false });
    expect(await available(AMERICANO)).toBe(false);
    expect(await menuIds()).not.toContain(AMERICANO);

    const n = await orderCount(t);
    expectRefused(await gqlAs(t, "alice", PLACE_ORDER, { coffeeId: AMERICANO, quantity: 1 }), "NOT_AVAILABLE");
    expectRefused(await gqlAs(t, "barista", POS, { coffeeId: AMERICANO, quantity: 1 }, "PosOrder"), "NOT_AVAILABLE");
    expect(await orderCount(t)).toBe(n);

    expect(ok(await gqlAs(t, "admin", SET_AVAILABLE, { id: AMERICANO, available: true })).setCoffeeAvailable).toEqual({ id: AMERICANO, available: true });
    expect(await menuIds()).toContain(AMERICANO);
    const order = ok(await gqlAs(t, "alice", PLACE_ORDER, { coffeeId: AMERICANO, quantity: 1 })).createOrder;
    expect(order.status).toBe("PENDING");

    expectRefused(await gqlAs(t, "admin", SET_AVAILABLE, { id: UNKNOWN_ID, available: true }), "NOT_FOUND");
  });

  test("restockIngredient adds stock and a movement with actor and reason (kept in allStockMovements); a write-off needs the stock; nonsense is BAD_USER_INPUT", async () => {
    const start = (await stockRow(CINNAMON)).stock;
    const added = ok(await gqlAs(t, "admin", RESTOCK, { ingredientId: CINNAMON, amount: 25.5, reason: "delivery #42" })).restockIngredient;
    expect(added).toMatchObject({ ingredientId: CINNAMON, currentStock: start + 25.5 });
    expect((await stockRow(CINNAMON)).stock).toBe(start + 25.5);
    const { rows } = await t.db.query("select delta::float8 as delta, reason, order_id, actor_role, actor_id from app_public.stock_movements where ingredient_id = $1 order by id desc limit 1", [
      CINNAMON,
    ]);
    expect(rows).toEqual([{ delta: 25.5, reason: "delivery #42", order_id: null, actor_role: "admin", actor_id: DEMO.admin.id }]);
    const seen = ok(await gqlAs(t, "admin", MOVEMENTS, { ingredientId: CINNAMON })).allStockMovements.nodes;
    expect(seen).toEqual([{ delta: 25.5, reason: "delivery #42", actorRole: "admin", actorId: DEMO.admin.id, orderId: null }]);

    // Without a reason: 'restock' for stock in, 'write-off' for stock out.
    ok(await gqlAs(t, "admin", RESTOCK, { ingredientId: CINNAMON, amount: 10 }));
    ok(await gqlAs(t, "admin", RESTOCK, { ingredientId: CINNAMON, amount: -5.5 }));
    const { rows: latest } = await t.db.query("select delta::float8 as delta, reason from app_public.stock_movements where ingredient_id = $1 order by id desc limit 2", [CINNAMON]);
    expect(latest).toEqual([
      { delta: -5.5, reason: "write-off" },
      { delta: 10, reason: "restock" },
    ]);
    const now = start + 30;
    expect((await stockRow(CINNAMON)).stock).toBe(now);

    // Writing off more than the shelf holds, zero, or an unknown ingredient: refused, nothing changes.
    const count = await movementCount(CINNAMON);
    expectRefused(await gqlAs(t, "admin", RESTOCK, { ingredientId: CINNAMON, amount: -(now + 1), reason: "too much" }), "BAD_USER_INPUT");
    expectRefused(await gqlAs(t, "admin", RESTOCK, { ingredientId: CINNAMON, amount: 0 }), "BAD_USER_INPUT");
    expect((await stockRow(CINNAMON)).stock).toBe(now);
    expect(await movementCount(CINNAMON)).toBe(count);
    expectRefused(await gqlAs(t, "admin", RESTOCK, { ingredientId: UNKNOWN_ID, amount: 5 }), "NOT_FOUND");
  });

  test("setStockAlertLevel decides what lowStockItems lists (at or below the level)", async () => {
    const item = await ownIngredient(t, "Alert", 100, 0);
    ownIngredients.push(item.id);
    const low = async () => ok(await gqlAs(t, "barista", LOW_STOCK)).lowStockItems.filter((s: any) => s.ingredientId === item.id);
    expect(await low()).toEqual([]);

    expect(ok(await gqlAs(t, "admin", SET_ALERT_LEVEL, { ingredientId: item.id, alertLevel: 150 })).setStockAlertLevel).toEqual({
      ingredientId: item.id,
      currentStock: 100,
      alertLevel: 150,
    });
    expect(await low()).toEqual([{ ingredientId: item.id, currentStock: 100, alertLevel: 150 }]);
    const asAdmin = ok(await gqlAs(t, "admin", LOW_STOCK)).lowStockItems.filter((s: any) => s.ingredientId === item.id);
    expect(asAdmin).toEqual([{ ingredientId: item.id, currentStock: 100, alertLevel: 150 }]);

    ok(await gqlAs(t, "admin", SET_ALERT_LEVEL, { ingredientId: item.id, alertLevel: 100 }));
    expect(await low()).toEqual([{ ingredientId: item.id, currentStock: 100, alertLevel: 100 }]);
    ok(await gqlAs(t, "admin", SET_ALERT_LEVEL, { ingredientId: item.id, alertLevel: 40 }));
    expect(await low()).toEqual([]);
    expect((await stockRow(item.id)).alert).toBe(40);

    expectRefused(await gqlAs(t, "admin", SET_ALERT_LEVEL, { ingredientId: item.id, alertLevel: -1 }), "BAD_USER_INPUT");
    expect((await stockRow(item.id)).alert).toBe(40);
    // An ingredient of which no stock is kept (the demo's ice) has no level to set.
    expectRefused(await gqlAs(t, "admin", SET_ALERT_LEVEL, { ingredientId: ICE, alertLevel: 5 }), "NOT_FOUND");
  });

  test("setCoffeeAvailable, restockIngredient, setStockAlertLevel: barista and customers FORBIDDEN, anonymous UNAUTHENTICATED; nothing changes", async () => {
    const stock = await stockRow(CINNAMON);
    const movements = await movementCount(CINNAMON);
    for (const [who, code] of NOT_ADMIN) {
      const attempts = {
        setCoffeeAvailable: await gqlAs(t, who, SET_AVAILABLE, { id: AMERICANO, available: false }),
        restockIngredient: await gqlAs(t, who, RESTOCK, { ingredientId: CINNAMON, amount: 100, reason: "sneaky" }),
        writeOff: await gqlAs(t, who, RESTOCK, { ingredientId: CINNAMON, amount: -1 }),
        setStockAlertLevel: await gqlAs(t, who, SET_ALERT_LEVEL, { ingredientId: CINNAMON, alertLevel: 999 }),
      };
      for (const [field, r] of Object.entries(attempts)) {
        expect({ who, field, code: r.body.errors?.[0]?.extensions?.code }).toEqual({ who, field, code });
        expectRefused(r, code);
      }
    }
    expect(await available(AMERICANO)).toBe(true);
    expect(await menuIds()).toContain(AMERICANO);
    expect(await stockRow(CINNAMON)).toEqual(stock);
    expect(await movementCount(CINNAMON)).toBe(movements);
  });
});

describe("orders paging", () => {
  test("orders(first: 2, offset: 1) as staff is the 2nd and 3rd of the oldest-first list", async () => {
    for (const who of ["barista", "admin"] as const) {
      const all = ok(await gqlAs(t, who, `{ orders { id } }`)).orders.map((o: any) => o.id);
      expect(all.length).toBeGreaterThanOrEqual(4);
      const page = ok(await gqlAs(t, who, `{ orders(first: 2, offset: 1) { id } }`)).orders.map((o: any) => o.id);
      expect({ who, page }).toEqual({ who, page: all.slice(1, 3) });

      const completed = ok(await gqlAs(t, who, `{ orders(status: [COMPLETED]) { id status } }`)).orders;
      expect(completed.length).toBeGreaterThanOrEqual(3);
      const completedPage = ok(await gqlAs(t, who, `{ orders(status: [COMPLETED], first: 2, offset: 1) { id status } }`)).orders;
      expect(completedPage).toEqual(completed.slice(1, 3));
    }
  });
});
