import { DEMO, expectRefused, gqlAs, ok, subscribe } from "../support/client.ts";
import { placeOrder, removeStockedCoffee, stockedCoffee, type StockedCoffee } from "../support/fixtures.ts";
import { sendCallback } from "../support/paymentProvider.ts";
import { listening, useTestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";
import { say } from "../support/figures.ts";

// Nobody holds stock without paying: an unpaid order expires at the deadline
// stored on it (from pending_order_expiry_seconds when it was made) and the
// real worker cancels it as the system, giving its stock back and telling
// its subscribers; a later payment is ORDER_NOT_PAYABLE with a refund owed.
// A customer holds at most max_open_orders_per_customer unpaid orders and
// max_open_cups_per_customer unpaid cups of their own (TOO_MANY_OPEN_ORDERS);
// orders made at the till do not count.

let tokens: Record<"alice" | "bob" | "barista", string>;
let c: StockedCoffee;
let settingsAtStart: Array<{ key: string; value: string }>;

const CAP_KEYS = ["pending_order_expiry_seconds", "max_open_orders_per_customer", "max_open_cups_per_customer"];

async function setSetting(key: string, value: number) {
  await t.db.query("update app_private.settings set value = $2 where key = $1", [key, value]);
}

/** Cancels (as the owner) every unpaid order alice and bob made themselves: each cap test starts from none. */
async function cancelOwnOpenOrders() {
  await t.db.query("update app_public.orders set status = 'CANCELLED' where status = 'PENDING' and created_by = customer_id and customer_id = any($1::uuid[])", [[DEMO.alice.id, DEMO.bob.id]]);
}

const PLACE = `mutation($coffeeId: ID!, $quantity: Int!, $customerId: ID) { createOrder(coffeeId: $coffeeId, quantity: $quantity, customerId: $customerId) { id status } }`;

async function orderOf(id: string) {
  const { rows } = await t.db.query(`select status::text, expires_at, time_ordered, extract(epoch from expires_at - time_ordered)::float8 as lifetime from app_public.orders where id = $1`, [id]);
  return rows[0] as { status: string; expires_at: Date; time_ordered: Date; lifetime: number };
}

async function reservedOf(ingredientId: string): Promise<number> {
  const { rows } = await t.db.query("select coalesce((select amount from app_private.stock_reserved where ingredient_id = $1 and store_id = app_hidden.default_store_id()), 0)::float8 as n", [
    ingredientId,
  ]);
  return rows[0].n;
}

const t = useTestService({
  worker: true,
  deleteNewOrders: true,
  async cleanup() {
    for (const s of settingsAtStart) await t.db.query("update app_private.settings set value = $2 where key = $1", [s.key, s.value]);
    await removeStockedCoffee(t, c);
  },
});

beforeAll(async () => {
  tokens = await t.tokens();
  settingsAtStart = (await t.db.query("select key, value::text from app_private.settings where key = any($1)", [CAP_KEYS])).rows;
  c = await stockedCoffee(t, "Expiry", "4.00", 10, 100_000);
  // The values this file tests (the other suites run with the caps raised).
  await setSetting("max_open_orders_per_customer", 5);
  await setSetting("max_open_cups_per_customer", 40);
  await setSetting("pending_order_expiry_seconds", 600);
});

describe("an unpaid order expires", () => {
  test("at its deadline the worker cancels it (as the system): stock back, the subscriber told, a later signed payment is 422 ORDER_NOT_PAYABLE with a refund owed", async () => {
    await cancelOwnOpenOrders();
    await setSetting("pending_order_expiry_seconds", 3);
    const reservedBefore = await reservedOf(c.ingredientId);
    const o = await placeOrder(t, tokens.alice, [{ coffeeId: c.id, quantity: 2 }]);
    await setSetting("pending_order_expiry_seconds", 600);
    const made = await orderOf(o.id);
    expect(made.status).toBe("PENDING");
    expect(made.lifetime).toBeCloseTo(3, 1);
    expect(await reservedOf(c.ingredientId)).toBe(reservedBefore + 20);

    // The expiry is visible to the customer, and alice follows her order.
    const seen = ok(await gqlAs(t, "alice", `query($id: ID!) { order(id: $id) { expiresAt } }`, { id: o.id }));
    expect(new Date(seen.order.expiresAt).getTime()).toBe(made.expires_at.getTime());
    const feed = subscribe(t.ws(tokens.alice), `subscription($o: ID!) { orderStatusChanged(orderId: $o) { status message } }`, { o: o.id });
    await listening(t, [`order_status:${o.id}`]);

    const cancelledAt = await waitUntil("the order to expire", async () => ((await orderOf(o.id)).status === "CANCELLED" ? Date.now() : 0), 15_000, 50);
    const late = cancelledAt - made.expires_at.getTime();
    say(`expired ${late} ms after its deadline`);
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThan(3_000);
    await feed.waitFor(1);
    expect(feed.results).toEqual([{ data: { orderStatusChanged: { status: "CANCELLED", message: expect.any(String) } } }]);
    feed.dispose();

    const { rows: events } = await t.db.query("select from_status::text, to_status::text, actor_role from app_public.order_events where order_id = $1 order by id", [o.id]);
    expect(events.at(-1)).toEqual({ from_status: "PENDING", to_status: "CANCELLED", actor_role: "system" });
    expect(await reservedOf(c.ingredientId)).toBe(reservedBefore);

    // The provider's payment arrives after all: refused, money owed back.
    const r = await sendCallback(t, { order_id: o.id, status: "paid", amount: "8.00", items: [{ product: c.id, quantity: 2 }], event_id: `late-${o.id}` });
    expect({ status: r.status, code: r.body?.error?.code }).toEqual({ status: 422, code: "ORDER_NOT_PAYABLE" });
    const { rows: refunds } = await t.db.query("select amount::text, paid_amount::text, order_total::text, above_order_total from app_public.refunds where order_id = $1", [o.id]);
    expect(refunds).toEqual([{ amount: "8.00", paid_amount: "8.00", order_total: "8.00", above_order_total: false }]);
  });

  test("a DBA's change of the setting changes the deadline of later orders only", async () => {
    await cancelOwnOpenOrders();
    const before = await placeOrder(t, tokens.alice, [{ coffeeId: c.id, quantity: 1 }]);
    await setSetting("pending_order_expiry_seconds", 2);
    const after = await placeOrder(t, tokens.alice, [{ coffeeId: c.id, quantity: 1 }]);
    await setSetting("pending_order_expiry_seconds", 600);
    expect((await orderOf(before.id)).lifetime).toBeCloseTo(600, 1);
    expect((await orderOf(after.id)).lifetime).toBeCloseTo(2, 1);
    await waitUntil("the later order to expire", async () => (await orderOf(after.id)).status === "CANCELLED", 10_000, 100);
    expect((await orderOf(before.id)).status).toBe("PENDING");
  });

  test("a payment after the deadline but before the sweep: the order expires then and there (ORDER_NOT_PAYABLE, refund), never paid", async () => {
    await cancelOwnOpenOrders();
    const o = await placeOrder(t, tokens.alice, [{ coffeeId: c.id, quantity: 1 }]);
    // In one transaction: the deadline moved into the past (the row stays locked, so the sweep skips it) and the payment.
    const client = await t.db.connect();
    try {
      await client.query("begin");
      await client.query("update app_public.orders set expires_at = now() - interval '1 second' where id = $1", [o.id]);
      await client.query("set local role cafe_system");
      const { rows } = await client.query(
        "select (r).* from (select app_private.process_payment_callback('192.0.2.9', $1, 'x', 'payment.completed', 'paid', $2, null, 4.00, $3::jsonb, null) as r) x",
        [`lazy-${o.id}`, o.id, JSON.stringify([{ product: c.id, quantity: 1 }])],
      );
      await client.query("commit");
      expect(rows[0]).toMatchObject({ http_status: 422, code: "ORDER_NOT_PAYABLE" });
    } finally {
      client.release();
    }
    expect((await orderOf(o.id)).status).toBe("CANCELLED");
    const { rows: events } = await t.db.query("select to_status::text, actor_role from app_public.order_events where order_id = $1 order by id desc limit 1", [o.id]);
    expect(events).toEqual([{ to_status: "CANCELLED", actor_role: "system" }]);
    const { rows: refunds } = await t.db.query("select amount::text from app_public.refunds where order_id = $1", [o.id]);
    expect(refunds).toEqual([{ amount: "4.00" }]);
  });
});

describe("a customer's unpaid orders are capped", () => {
  test("the 6th open order is TOO_MANY_OPEN_ORDERS and creates nothing; paying or cancelling one makes room", async () => {
    await cancelOwnOpenOrders();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await placeOrder(t, tokens.alice, [{ coffeeId: c.id, quantity: 1 }])).id);
    const count = async () => (await t.db.query("select count(*)::int as n from app_public.orders where customer_id = $1", [DEMO.alice.id])).rows[0].n;
    const before = await count();
    const refused = expectRefused(await gqlAs(t, "alice", PLACE, { coffeeId: c.id, quantity: 1 }), "TOO_MANY_OPEN_ORDERS");
    expect(refused.extensions).toMatchObject({ details: { open_orders: 5, max_open_orders: 5 } });
    expect(await count()).toBe(before);

    // Paid orders are not "open": the till takes one, and alice may order again.
    ok(await gqlAs(t, "barista", `mutation($id: ID!) { markOrderPaid(id: $id, method: CASH) { status } }`, { id: ids[0] }));
    ok(await gqlAs(t, "alice", PLACE, { coffeeId: c.id, quantity: 1 }));
    expectRefused(await gqlAs(t, "alice", PLACE, { coffeeId: c.id, quantity: 1 }), "TOO_MANY_OPEN_ORDERS");
    // So is one she cancels.
    ok(await gqlAs(t, "alice", `mutation($id: ID!) { cancelOrder(id: $id) }`, { id: ids[1] }));
    ok(await gqlAs(t, "alice", PLACE, { coffeeId: c.id, quantity: 1 }));
  });

  test("cups: more than max_open_cups_per_customer in unpaid orders (the new one included) is TOO_MANY_OPEN_ORDERS", async () => {
    await cancelOwnOpenOrders();
    await placeOrder(t, tokens.bob, [{ coffeeId: c.id, quantity: 20 }]);
    await placeOrder(t, tokens.bob, [{ coffeeId: c.id, quantity: 19 }]);
    const refused = expectRefused(await gqlAs(t, "bob", PLACE, { coffeeId: c.id, quantity: 2 }), "TOO_MANY_OPEN_ORDERS");
    expect(refused.extensions).toMatchObject({ details: { open_cups: 39, max_open_cups: 40 } });
    ok(await gqlAs(t, "bob", PLACE, { coffeeId: c.id, quantity: 1 })); // exactly 40
    expectRefused(await gqlAs(t, "bob", PLACE, { coffeeId: c.id, quantity: 1 }), "TOO_MANY_OPEN_ORDERS");
  });

  test("concurrent orders cannot slip past the cap: 12 at once from one customer -> exactly 5 placed", async () => {
    await cancelOwnOpenOrders();
    const answers = await Promise.all(Array.from({ length: 12 }, () => gqlAs(t, "alice", PLACE, { coffeeId: c.id, quantity: 1 })));
    const codes = answers.map((r) => r.body.errors?.[0]?.extensions?.code ?? "OK").sort();
    expect(codes).toEqual([...Array(5).fill("OK"), ...Array(7).fill("TOO_MANY_OPEN_ORDERS")]);
  });

  test("orders made at the till (walk-in or customerId) do not count, neither for the till nor for the customer's own later orders", async () => {
    await cancelOwnOpenOrders();
    for (let i = 0; i < 7; i++) {
      ok(await gqlAs(t, "barista", PLACE, { coffeeId: c.id, quantity: 1 }));
      ok(await gqlAs(t, "barista", PLACE, { coffeeId: c.id, quantity: 10, customerId: DEMO.alice.id }));
    }
    for (let i = 0; i < 5; i++) ok(await gqlAs(t, "alice", PLACE, { coffeeId: c.id, quantity: 1 }));
    expectRefused(await gqlAs(t, "alice", PLACE, { coffeeId: c.id, quantity: 1 }), "TOO_MANY_OPEN_ORDERS");
    // Her own cap reached, the till still serves her.
    ok(await gqlAs(t, "barista", PLACE, { coffeeId: c.id, quantity: 1, customerId: DEMO.alice.id }));
  });
});
