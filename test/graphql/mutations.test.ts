import { DEMO, expectRefused, ok } from "../support/client.ts";
import { operationsOf } from "../support/contract.ts";
import { tryInRollback } from "../support/db.ts";
import { makeCoffee, money, moveAsDba, orderCount, orderEvents, orderIn, orderItems, orderRow } from "../support/fixtures.ts";
import { useTestService } from "../support/service.ts";

// The contract's mutations against the real service: createOrder (both
// forms), cancelOrder, updateCustomerProfile, createCoffee and
// updateCoffeePrice. Every client document is sent as its client's role;
// every refusal is checked for its code and for leaving the rows alone.
// Status moves (updateOrderStatus) and the lifecycle: test/sql/order-status-transitions.test.ts.

const ADMIN = operationsOf("admin");
const BARISTA = operationsOf("barista");
const MOBILE = operationsOf("mobile");
const POS = operationsOf("pos");

const RANDOM_ID = "7d7a3c52-5d0e-4b43-9c1e-6b0f2f6a9e01";
const suffix = Date.now().toString(36);

const t = useTestService({ sandbox: true });
let alice: string, bob: string, barista: string, admin: string;
/** Coffees of this suite: no recipe, so stock never limits them. */
let plain: { id: string; price: number };
let offSale: { id: string; name: string };
let menu: Array<{ id: string; name: string; price: number; inventory: number | null; category: string }>;

beforeAll(async () => {
  ({ alice, bob, barista, admin } = await t.tokens());
  plain = { id: await makeCoffee(t, `Mut Plain ${suffix}`, "3.75"), price: 3.75 };
  offSale = { id: await makeCoffee(t, `Mut Off Sale ${suffix}`, "2.50", { available: false }), name: `Mut Off Sale ${suffix}` };
  menu = ok(await t.gql(`{ menuItems { id name price inventory category } }`)).menuItems;
});

const PLACE = (input: unknown, token: string | null = alice) => t.gql(MOBILE, { operationName: "PlaceOrder", variables: { input }, token });
const POS_ORDER = (variables: Record<string, unknown>, token: string | null = barista) => t.gql(POS, { operationName: "PosOrder", variables, token });
const CREATE_ORDER = `mutation($input: CreateOrderInput, $coffeeId: ID, $quantity: Int, $notes: String, $customerId: ID) {
  createOrder(input: $input, coffeeId: $coffeeId, quantity: $quantity, notes: $notes, customerId: $customerId) {
    id status total notes customer { id } items { quantity specialInstructions coffee { id } }
  }
}`;
const createOrder = (variables: Record<string, unknown>, token: string | null) => t.gql(CREATE_ORDER, { variables, token });
const cents = (n: number) => Math.round(n * 100);

/** Demo coffees on sale that stock can still make `n` of (or that have no recipe). */
function orderable(n: number) {
  const list = menu.filter((c) => c.id !== plain.id && (c.inventory === null || c.inventory >= n));
  if (list.length < 3) throw new Error(`the demo menu needs 3 coffees that can be made ${n} times: ${JSON.stringify(menu)}`);
  return list;
}

describe("createOrder with input (the mobile app's PlaceOrder)", () => {
  test("several items, special instructions and notes: prices from the database, total in SQL, PENDING, the customer's own", async () => {
    const [a, b, c] = orderable(3);
    const input = {
      items: [
        { coffeeId: a!.id, quantity: 2, specialInstructions: "oat milk, extra hot" },
        { coffeeId: b!.id, quantity: 1 },
        { coffeeId: c!.id, quantity: 3, specialInstructions: "no sugar" },
      ],
      notes: "At the window, please",
    };
    const before = Date.now();
    const order = ok(await PLACE(input)).createOrder;
    const expectedTotal = (2 * cents(a!.price) + cents(b!.price) + 3 * cents(c!.price)) / 100;
    expect(order.status).toBe("PENDING");
    expect(money(order.total)).toBe(money(expectedTotal));
    expect(order.items).toEqual([
      { coffee: { name: a!.name }, quantity: 2, specialInstructions: "oat milk, extra hot" },
      { coffee: { name: b!.name }, quantity: 1, specialInstructions: null },
      { coffee: { name: c!.name }, quantity: 3, specialInstructions: "no sugar" },
    ]);
    expect(Date.parse(order.estimatedReadyTime)).toBeGreaterThan(before);

    const row = await orderRow(t, order.id);
    expect(row.customer_id).toBe(DEMO.alice.id);
    expect(row.status).toBe("PENDING");
    expect(row.notes).toBe("At the window, please");
    expect(row.total).toBe(money(expectedTotal));
    expect(row.barista_id).toBeNull();
    const items = await orderItems(t, order.id);
    expect(items.map((i) => [i.position, i.coffee_id, i.quantity, i.unit_price])).toEqual([
      [1, a!.id, 2, money(a!.price)],
      [2, b!.id, 1, money(b!.price)],
      [3, c!.id, 3, money(c!.price)],
    ]);
    expect(await orderEvents(t, order.id)).toEqual([{ from_status: null, to_status: "PENDING", actor_role: "customer", actor_id: DEMO.alice.id }]);

    // The customer reads it back, notes and all; another customer cannot.
    const mine = ok(await t.gql(`query($id: ID!) { order(id: $id) { id notes status customer { id } } }`, { variables: { id: order.id }, token: alice }));
    expect(mine.order).toEqual({ id: order.id, notes: "At the window, please", status: "PENDING", customer: { id: DEMO.alice.id } });
    const theirs = await t.gql(`query($id: ID!) { order(id: $id) { id } }`, { variables: { id: order.id }, token: bob });
    expect(theirs.body.data?.order ?? null).toBeNull();
    // The point of sale's one-line view is the first line, with the order's notes.
    const line = ok(await t.gql(`query($id: ID!) { order(id: $id) { order { coffee quantity notes } } }`, { variables: { id: order.id }, token: barista }));
    expect(line.order.order).toEqual({ coffee: a!.name, quantity: 2, notes: "At the window, please" });
  });

  test("the unit price is captured: a later updateCoffeePrice leaves existing orders alone", async () => {
    const coffeeId = await makeCoffee(t, `Mut Reprice ${suffix}`, "4.10");
    const first = ok(await PLACE({ items: [{ coffeeId, quantity: 3 }] })).createOrder;
    expect(money(first.total)).toBe("12.30");

    const r = ok(await t.gql(ADMIN, { operationName: "Reprice", variables: { id: coffeeId, newPrice: 5.25 }, token: admin }));
    expect(r.updateCoffeePrice).toEqual({ id: coffeeId, price: 5.25 });

    const again = ok(await t.gql(`query($id: ID!) { order(id: $id) { total } }`, { variables: { id: first.id }, token: alice }));
    expect(money(again.order.total)).toBe("12.30");
    expect((await orderRow(t, first.id)).total).toBe("12.30");
    expect((await orderItems(t, first.id))[0]!.unit_price).toBe("4.10");

    const second = ok(await PLACE({ items: [{ coffeeId, quantity: 3 }] })).createOrder;
    expect(money(second.total)).toBe("15.75");
    expect((await orderItems(t, second.id))[0]!.unit_price).toBe("5.25");
  });

  test("the same coffee on several lines is kept as separate lines, in the order given", async () => {
    const order = ok(
      await PLACE({
        items: [
          { coffeeId: plain.id, quantity: 1, specialInstructions: "first" },
          { coffeeId: plain.id, quantity: 2, specialInstructions: "second" },
        ],
      }),
    ).createOrder;
    expect(order.items.map((i: any) => [i.quantity, i.specialInstructions])).toEqual([
      [1, "first"],
      [2, "second"],
    ]);
    expect(money(order.total)).toBe(money(3 * plain.price));
  });

  test("a customer may name themselves as customerId", async () => {
    const order = ok(await createOrder({ input: { items: [{ coffeeId: plain.id, quantity: 1 }] }, customerId: DEMO.alice.id }, alice)).createOrder;
    expect(order.customer).toEqual({ id: DEMO.alice.id });
    expect((await orderRow(t, order.id)).customer_id).toBe(DEMO.alice.id);
  });
});

describe("createOrder with coffeeId/quantity/notes (the point of sale's PosOrder)", () => {
  test("the barista's order without customerId belongs to the walk-in customer", async () => {
    const coffee = orderable(2)[0]!;
    const before = Date.now();
    const r = ok(await POS_ORDER({ coffeeId: coffee.id, quantity: 2, notes: "for table 4" })).createOrder;
    expect(money(r.total)).toBe(money((2 * cents(coffee.price)) / 100));
    expect(r.order).toEqual({ coffee: coffee.name, quantity: 2, notes: "for table 4" });
    expect(Date.parse(r.estimatedReadyTime)).toBeGreaterThan(before);

    const row = await orderRow(t, r.id);
    expect(row.customer_id).toBe(DEMO.walkInId);
    expect(row.status).toBe("PENDING");
    expect(row.notes).toBe("for table 4");
    expect((await orderItems(t, r.id)).map((i) => [i.coffee_id, i.quantity, i.unit_price])).toEqual([[coffee.id, 2, money(coffee.price)]]);
    expect(await orderEvents(t, r.id)).toEqual([{ from_status: null, to_status: "PENDING", actor_role: "barista", actor_id: DEMO.barista.id }]);
  });

  test("notes are optional", async () => {
    const r = ok(await POS_ORDER({ coffeeId: plain.id, quantity: 1 })).createOrder;
    expect(r.order).toEqual({ coffee: `Mut Plain ${suffix}`, quantity: 1, notes: null });
    expect(money(r.total)).toBe("3.75");
  });

  test("staff with customerId order for that customer (barista and admin, both forms)", async () => {
    const a = ok(await createOrder({ coffeeId: plain.id, quantity: 1, customerId: DEMO.alice.id }, barista)).createOrder;
    expect(a.customer).toEqual({ id: DEMO.alice.id });
    expect((await orderRow(t, a.id)).customer_id).toBe(DEMO.alice.id);

    const b = ok(await createOrder({ input: { items: [{ coffeeId: plain.id, quantity: 2 }], notes: "for Bob" }, customerId: DEMO.bob.id }, admin)).createOrder;
    expect(b.customer).toEqual({ id: DEMO.bob.id });
    expect(b.notes).toBe("for Bob");
    expect((await orderRow(t, b.id)).customer_id).toBe(DEMO.bob.id);
    // And the customer sees it as theirs.
    const seen = ok(await t.gql(`query($id: ID!) { order(id: $id) { id } }`, { variables: { id: b.id }, token: bob }));
    expect(seen.order).toEqual({ id: b.id });
  });

  test("admin without customerId: the walk-in customer too", async () => {
    const r = ok(await createOrder({ input: { items: [{ coffeeId: plain.id, quantity: 1 }] } }, admin)).createOrder;
    expect(r.customer).toEqual({ id: DEMO.walkInId });
  });

  test("staff naming an unknown customer: NOT_FOUND, nothing created", async () => {
    const n = await orderCount(t);
    expectRefused(await createOrder({ coffeeId: plain.id, quantity: 1, customerId: RANDOM_ID }, barista), "NOT_FOUND");
    // A staff member's id is not a customer's.
    expectRefused(await createOrder({ input: { items: [{ coffeeId: plain.id, quantity: 1 }] }, customerId: DEMO.barista.id }, admin), "NOT_FOUND");
    expect(await orderCount(t)).toBe(n);
  });
});

describe("createOrder refusals change nothing", () => {
  let before: number;
  beforeEach(async () => {
    before = await orderCount(t);
  });
  afterEach(async () => {
    expect(await orderCount(t)).toBe(before);
  });
  const line = (quantity = 1) => ({ coffeeId: plain.id, quantity });

  test("anonymous: UNAUTHENTICATED, in both forms", async () => {
    expectRefused(await PLACE({ items: [line()] }, null), "UNAUTHENTICATED");
    expectRefused(await POS_ORDER({ coffeeId: plain.id, quantity: 1 }, null), "UNAUTHENTICATED");
  });

  test("a customer ordering for someone else: FORBIDDEN", async () => {
    expectRefused(await createOrder({ input: { items: [line()] }, customerId: DEMO.bob.id }, alice), "FORBIDDEN");
    expectRefused(await createOrder({ coffeeId: plain.id, quantity: 1, customerId: DEMO.alice.id }, bob), "FORBIDDEN");
    expectRefused(await createOrder({ coffeeId: plain.id, quantity: 1, customerId: DEMO.walkInId }, bob), "FORBIDDEN");
  });

  test("both forms at once, or neither: BAD_USER_INPUT", async () => {
    const items = { items: [line()] };
    expectRefused(await createOrder({ input: items, coffeeId: plain.id, quantity: 1 }, alice), "BAD_USER_INPUT");
    expectRefused(await createOrder({ input: items, coffeeId: plain.id }, alice), "BAD_USER_INPUT");
    expectRefused(await createOrder({ input: items, quantity: 1 }, alice), "BAD_USER_INPUT");
    expectRefused(await createOrder({ input: items, notes: "two forms" }, barista), "BAD_USER_INPUT");
    expectRefused(await createOrder({}, alice), "BAD_USER_INPUT");
    expectRefused(await createOrder({ notes: "nothing else" }, barista), "BAD_USER_INPUT");
    expectRefused(await createOrder({ coffeeId: plain.id }, barista), "BAD_USER_INPUT");
    expectRefused(await createOrder({ quantity: 2 }, barista), "BAD_USER_INPUT");
    expectRefused(await createOrder({ customerId: DEMO.alice.id }, barista), "BAD_USER_INPUT");
  });

  test("no items: BAD_USER_INPUT", async () => {
    expectRefused(await PLACE({ items: [] }), "BAD_USER_INPUT");
    expectRefused(await PLACE({ items: [], notes: "just notes" }), "BAD_USER_INPUT");
  });

  test("quantity outside 1..20 on a line: BAD_USER_INPUT (input form)", async () => {
    for (const q of [0, -1, 21, 1000]) {
      expectRefused(await PLACE({ items: [line(q)] }), "BAD_USER_INPUT");
      // A bad line anywhere refuses the whole order.
      expectRefused(await PLACE({ items: [line(1), line(q)] }), "BAD_USER_INPUT");
    }
  });

  test("quantity outside 1..20: BAD_USER_INPUT (coffeeId form)", async () => {
    for (const q of [0, -3, 21]) expectRefused(await POS_ORDER({ coffeeId: plain.id, quantity: q }), "BAD_USER_INPUT");
  });

  test("more than 20 lines: BAD_USER_INPUT", async () => {
    expectRefused(await PLACE({ items: Array.from({ length: 21 }, () => line()) }), "BAD_USER_INPUT");
  });

  test("special instructions over 200 characters, notes over 500: BAD_USER_INPUT", async () => {
    expectRefused(await PLACE({ items: [{ ...line(), specialInstructions: "x".repeat(201) }] }), "BAD_USER_INPUT");
    expectRefused(await PLACE({ items: [line()], notes: "n".repeat(501) }), "BAD_USER_INPUT");
    expectRefused(await POS_ORDER({ coffeeId: plain.id, quantity: 1, notes: "n".repeat(501) }), "BAD_USER_INPUT");
  });

  test("an unknown coffee: NOT_FOUND; a malformed id: BAD_USER_INPUT", async () => {
    expectRefused(await PLACE({ items: [{ coffeeId: RANDOM_ID, quantity: 1 }] }), "NOT_FOUND");
    expectRefused(await PLACE({ items: [line(), { coffeeId: RANDOM_ID, quantity: 1 }] }), "NOT_FOUND");
    expectRefused(await POS_ORDER({ coffeeId: RANDOM_ID, quantity: 1 }), "NOT_FOUND");
    expectRefused(await POS_ORDER({ coffeeId: "not-a-uuid", quantity: 1 }), "BAD_USER_INPUT");
    expectRefused(await PLACE({ items: [line(), { coffeeId: "not-a-uuid", quantity: 1 }] }), "BAD_USER_INPUT");
  });

  test("a coffee not on sale: NOT_AVAILABLE", async () => {
    expectRefused(await PLACE({ items: [{ coffeeId: offSale.id, quantity: 1 }] }), "NOT_AVAILABLE");
    expectRefused(await PLACE({ items: [line(), { coffeeId: offSale.id, quantity: 1 }] }), "NOT_AVAILABLE");
    expectRefused(await POS_ORDER({ coffeeId: offSale.id, quantity: 1 }), "NOT_AVAILABLE");
  });
});

describe("createOrder bounds that are allowed", () => {
  test("quantity 1 and 20, and 20 lines, are accepted", async () => {
    const one = ok(await POS_ORDER({ coffeeId: plain.id, quantity: 1 })).createOrder;
    expect(one.order.quantity).toBe(1);
    const twenty = ok(await POS_ORDER({ coffeeId: plain.id, quantity: 20 })).createOrder;
    expect(twenty.order.quantity).toBe(20);
    expect(money(twenty.total)).toBe(money(20 * plain.price));
    const lines = ok(await PLACE({ items: Array.from({ length: 20 }, (_, i) => ({ coffeeId: plain.id, quantity: (i % 3) + 1 })) })).createOrder;
    expect(lines.items).toHaveLength(20);
    const cups = Array.from({ length: 20 }, (_, i) => (i % 3) + 1).reduce((a, b) => a + b, 0);
    expect(money(lines.total)).toBe(money(cups * plain.price));
  });

  test("special instructions of 200 characters and notes of 500 are accepted", async () => {
    const r = ok(await PLACE({ items: [{ coffeeId: plain.id, quantity: 1, specialInstructions: "s".repeat(200) }], notes: "n".repeat(500) })).createOrder;
    expect(r.items[0].specialInstructions).toHaveLength(200);
    expect((await orderRow(t, r.id)).notes).toHaveLength(500);
    const pos = ok(await POS_ORDER({ coffeeId: plain.id, quantity: 1, notes: "p".repeat(500) })).createOrder;
    expect(pos.order.notes).toHaveLength(500);
  });
});

describe("estimatedReadyTime", () => {
  test("is in the future, and later when more cups are queued ahead", async () => {
    const { rows } = await t.db.query("select key, value::float as value from app_private.settings where key in ('prep_seconds_per_item', 'prep_parallel_baristas')");
    const s = Object.fromEntries(rows.map((r) => [r.key, r.value]));
    const first = ok(await PLACE({ items: [{ coffeeId: plain.id, quantity: 1 }] })).createOrder;
    const firstEta = Date.parse(first.estimatedReadyTime);
    expect(firstEta).toBeGreaterThan(Date.now());

    // Ten cups paid for (so queued for the baristas) ahead of the next order.
    await orderIn(t, "PAID", plain.id, { quantity: 10 });
    const second = ok(await PLACE({ items: [{ coffeeId: plain.id, quantity: 1 }] })).createOrder;
    const secondEta = Date.parse(second.estimatedReadyTime);
    const queuedMs = ((10 * s.prep_seconds_per_item) / Math.max(s.prep_parallel_baristas, 1)) * 1000;
    expect(queuedMs).toBeGreaterThan(0);
    expect(secondEta - firstEta).toBeGreaterThanOrEqual(queuedMs - 1000);
    // Stored as served.
    expect(Math.abs((await orderRow(t, second.id)).estimated_ready_time!.getTime() - secondEta)).toBeLessThanOrEqual(1);
  });
});

describe("createOrder and stock", () => {
  /** A demo coffee on sale whose recipe has stocked ingredients, with those ingredients. */
  async function stockedCoffee() {
    const { rows } = await t.db.query(
      `select c.id, c.name, rl.ingredient_id, rl.quantity::float as per_cup
         from app_public.coffees c
         join app_public.recipe_lines rl on rl.coffee_id = c.id
         join app_public.stock_items s on s.ingredient_id = rl.ingredient_id and s.store_id = app_hidden.default_store_id()
        where c.available and c.id = (
          select c2.id from app_public.coffees c2 join app_public.recipe_lines r2 on r2.coffee_id = c2.id
            join app_public.stock_items s2 on s2.ingredient_id = r2.ingredient_id and s2.store_id = app_hidden.default_store_id()
           where c2.available order by c2.name limit 1)`,
    );
    if (!rows[0]) throw new Error("the demo data needs a coffee on sale with a stocked ingredient");
    return { id: rows[0].id as string, name: rows[0].name as string, lines: rows as Array<{ ingredient_id: string; per_cup: number }> };
  }
  const inventoryOf = async (id: string) => ok(await t.gql(`query($id: ID!) { coffee(id: $id) { inventory } }`, { variables: { id } })).coffee.inventory;
  /** Runs `fn` with exactly what `cups` cups of the coffee need beyond what open orders reserve, then puts the stock back. */
  async function withStockFor(c: Awaited<ReturnType<typeof stockedCoffee>>, cups: number, fn: () => Promise<void>) {
    const ids = c.lines.map((l) => l.ingredient_id);
    const { rows: saved } = await t.db.query("select ingredient_id, current_stock from app_public.stock_items where ingredient_id = any($1) and store_id = app_hidden.default_store_id()", [ids]);
    try {
      for (const l of c.lines) {
        await t.db.query("update app_public.stock_items set current_stock = app_private.reserved_stock($1) + $2::numeric * $3 where ingredient_id = $1 and store_id = app_hidden.default_store_id()", [
          l.ingredient_id,
          l.per_cup,
          cups,
        ]);
      }
      await fn();
    } finally {
      for (const s of saved)
        await t.db.query("update app_public.stock_items set current_stock = $2 where ingredient_id = $1 and store_id = app_hidden.default_store_id()", [s.ingredient_id, s.current_stock]);
    }
  }

  test("refuses a line the available stock cannot make (OUT_OF_STOCK), counts open orders, and cancelling gives it back", async () => {
    const c = await stockedCoffee();
    // Leave exactly what two cups need beyond what open orders reserve.
    await withStockFor(c, 2, async () => {
      expect(await inventoryOf(c.id)).toBe(2);

      let n = await orderCount(t);
      expectRefused(await PLACE({ items: [{ coffeeId: c.id, quantity: 3 }] }), "OUT_OF_STOCK");
      expectRefused(await POS_ORDER({ coffeeId: c.id, quantity: 3 }), "OUT_OF_STOCK");
      // Two lines of the same coffee need their sum.
      expectRefused(
        await PLACE({
          items: [
            { coffeeId: c.id, quantity: 2 },
            { coffeeId: c.id, quantity: 1 },
          ],
        }),
        "OUT_OF_STOCK",
      );
      expect(await orderCount(t)).toBe(n);

      const two = ok(await PLACE({ items: [{ coffeeId: c.id, quantity: 2 }] })).createOrder;
      expect(two.status).toBe("PENDING");
      expect(await inventoryOf(c.id)).toBe(0);
      // The PENDING order holds the stock: nothing is left for anyone.
      n = await orderCount(t);
      expectRefused(await POS_ORDER({ coffeeId: c.id, quantity: 1 }), "OUT_OF_STOCK");
      expect(await orderCount(t)).toBe(n);

      // Cancelling releases it.
      expect(ok(await t.gql(MOBILE, { operationName: "CancelMine", variables: { id: two.id }, token: alice })).cancelOrder).toBe(true);
      expect(await inventoryOf(c.id)).toBe(2);
      const again = ok(await POS_ORDER({ coffeeId: c.id, quantity: 2 })).createOrder;
      expect(again.order.quantity).toBe(2);
    });
  });

  test("orders racing for the last cups: exactly as many succeed as stock allows, the rest are OUT_OF_STOCK", async () => {
    const c = await stockedCoffee();
    await withStockFor(c, 3, async () => {
      expect(await inventoryOf(c.id)).toBe(3);
      const n = await orderCount(t);
      const answers = await Promise.all([
        PLACE({ items: [{ coffeeId: c.id, quantity: 1 }] }, alice),
        PLACE({ items: [{ coffeeId: c.id, quantity: 1 }] }, bob),
        POS_ORDER({ coffeeId: c.id, quantity: 1 }, barista),
        POS_ORDER({ coffeeId: c.id, quantity: 1 }, admin),
        PLACE({ items: [{ coffeeId: c.id, quantity: 1 }] }, alice),
        POS_ORDER({ coffeeId: c.id, quantity: 1 }, barista),
      ]);
      const codes = answers.map((r) => (r.body.errors ? r.body.errors[0]!.extensions?.code : "ok")).sort();
      expect(codes).toEqual(["OUT_OF_STOCK", "OUT_OF_STOCK", "OUT_OF_STOCK", "ok", "ok", "ok"]);
      expect(await orderCount(t)).toBe(n + 3);
      expect(await inventoryOf(c.id)).toBe(0);
    });
  });

  test("cancelling a paid order whose ingredients were taken from stock puts them back, once", async () => {
    const c = await stockedCoffee();
    const stockOf = async () =>
      Object.fromEntries(
        (
          await t.db.query("select ingredient_id, current_stock::float as s from app_public.stock_items where ingredient_id = any($1) and store_id = app_hidden.default_store_id()", [
            c.lines.map((l) => l.ingredient_id),
          ])
        ).rows.map((r) => [r.ingredient_id, r.s]),
      );
    const id = await orderIn(t, "PAID", c.id, { quantity: 2, customerId: DEMO.alice.id });
    const before = await stockOf();
    // What the worker's update_inventory does after a payment.
    await t.db.query("select app_private.take_inventory($1)", [id]);
    const taken = await stockOf();
    for (const l of c.lines) expect(taken[l.ingredient_id]).toBeCloseTo(before[l.ingredient_id] - 2 * l.per_cup, 3);

    expect(ok(await t.gql(MOBILE, { operationName: "CancelMine", variables: { id }, token: alice })).cancelOrder).toBe(true);
    expect(await stockOf()).toEqual(before);
    expect(ok(await t.gql(MOBILE, { operationName: "CancelMine", variables: { id }, token: alice })).cancelOrder).toBe(false);
    expect(await stockOf()).toEqual(before);
    const { rows } = await t.db.query("select count(*)::int as n from app_public.refunds where order_id = $1", [id]);
    expect(rows[0].n).toBe(1);
  });

  test("an order reduces the coffee's inventory by its cups", async () => {
    const c = (await stockedCoffee()).id;
    const before = await inventoryOf(c);
    if (before === null || before < 2) throw new Error(`the demo coffee ${c} should be makeable twice (inventory ${before})`);
    ok(await PLACE({ items: [{ coffeeId: c, quantity: 2 }] }));
    expect(await inventoryOf(c)).toBe(before - 2);
  });

  // What open orders hold is a running total (app_private.stock_reserved),
  // kept by triggers; it must always equal the sum over the open orders'
  // lines, whichever way an order stops being open.
  const totalsDrift = async () =>
    (
      await t.db.query(`
        with recount as (
          select rl.ingredient_id, sum(oi.quantity * rl.quantity) as amount
          from app_public.orders o
          join app_public.order_items oi on oi.order_id = o.id
          join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id
          where o.inventory_taken_at is null and o.status not in ('COMPLETED', 'CANCELLED')
          group by rl.ingredient_id)
        select i.id, coalesce(r.amount, 0)::float as kept, coalesce(c.amount, 0)::float as recounted
        from app_public.ingredients i
        left join app_private.stock_reserved r on r.ingredient_id = i.id and r.store_id = app_hidden.default_store_id()
        left join recount c on c.ingredient_id = i.id
        where coalesce(r.amount, 0) <> coalesce(c.amount, 0)`)
    ).rows;

  test("the reserved totals equal a recount of the open orders, through every way out of open", async () => {
    expect(await totalsDrift()).toEqual([]);
    const c = await stockedCoffee();
    const reservedOf = async () => Number((await t.db.query("select app_private.reserved_stock($1) as r", [c.lines[0]!.ingredient_id])).rows[0].r);
    const start = await reservedOf();
    const perCup = c.lines[0]!.per_cup;
    // Placed (customer and till), then: cancelled, paid and taken from
    // stock, completed by a DBA, deleted by a DBA, and a rolled-back order.
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(ok(await PLACE({ items: [{ coffeeId: c.id, quantity: 1 }] })).createOrder.id);
    ids.push(ok(await POS_ORDER({ coffeeId: c.id, quantity: 2 })).createOrder.id);
    expect(await reservedOf()).toBeCloseTo(start + 6 * perCup, 3);
    expect(await totalsDrift()).toEqual([]);

    expect(ok(await t.gql(MOBILE, { operationName: "CancelMine", variables: { id: ids[0] }, token: alice })).cancelOrder).toBe(true);
    await t.db.query("update app_public.orders set status = 'PAID' where id = $1", [ids[1]]);
    expect(await reservedOf()).toBeCloseTo(start + 5 * perCup, 3); // paid, not yet taken: still held
    await t.db.query("select app_private.take_inventory($1)", [ids[1]]);
    await moveAsDba(t, ids[2]!, "COMPLETED");
    await t.db.query("delete from app_public.orders where id = $1", [ids[3]]);
    expect(await reservedOf()).toBeCloseTo(start + 2 * perCup, 3);
    expect(await totalsDrift()).toEqual([]);

    // Placed in a transaction that is rolled back: nothing stays held.
    expect(await tryInRollback(t, (db) => db.query("select app_public.create_order(p_coffee_id := $1, p_quantity := 1, p_customer_id := $2)", [c.id, DEMO.alice.id]))).toBeNull();
    expect(await reservedOf()).toBeCloseTo(start + 2 * perCup, 3);

    // Cancelled by staff: the last one.
    await t.db.query("update app_public.orders set status = 'CANCELLED' where id = $1", [ids[4]]);
    expect(await reservedOf()).toBeCloseTo(start, 3);
    expect(await totalsDrift()).toEqual([]);
  });
});

describe("cancelOrder", () => {
  const CANCEL = (id: string, token: string | null) => t.gql(MOBILE, { operationName: "CancelMine", variables: { id }, token });
  const refunds = async (id: string) => (await t.db.query("select amount, settled_at from app_public.refunds where order_id = $1", [id])).rows as Array<{ amount: string; settled_at: Date | null }>;

  test("the customer cancels their own PENDING order: true, then false once it is cancelled; no refund", async () => {
    const id = ok(await PLACE({ items: [{ coffeeId: plain.id, quantity: 2 }] })).createOrder.id;
    expect(ok(await CANCEL(id, alice)).cancelOrder).toBe(true);
    expect((await orderRow(t, id)).status).toBe("CANCELLED");
    expect(ok(await CANCEL(id, alice)).cancelOrder).toBe(false);
    expect((await orderRow(t, id)).status).toBe("CANCELLED");
    expect(await refunds(id)).toEqual([]);
    expect((await orderEvents(t, id)).slice(1)).toEqual([{ from_status: "PENDING", to_status: "CANCELLED", actor_role: "customer", actor_id: DEMO.alice.id }]);
  });

  test("the customer cancels their own PAID order: a refund of the total is owed", async () => {
    const id = await orderIn(t, "PAID", plain.id, { quantity: 3, customerId: DEMO.alice.id });
    expect(ok(await CANCEL(id, alice)).cancelOrder).toBe(true);
    expect((await orderRow(t, id)).status).toBe("CANCELLED");
    expect(await refunds(id)).toEqual([{ amount: money(3 * plain.price), settled_at: null }]);
    // Cancelling again owes nothing more.
    expect(ok(await CANCEL(id, alice)).cancelOrder).toBe(false);
    expect(await refunds(id)).toHaveLength(1);
  });

  /** A cancellation `token` may not make from `status`: INVALID_TRANSITION, the order unchanged, no refund. */
  async function expectCancelRefused(id: string, status: string, token: string) {
    const before = await orderRow(t, id);
    const err = expectRefused(await CANCEL(id, token), "INVALID_TRANSITION");
    expect(err.extensions?.details).toMatchObject({ from: status, to: "CANCELLED" });
    expect(await orderRow(t, id)).toEqual(before);
    expect(await refunds(id)).toEqual([]);
  }

  test("the customer may not cancel once it is PREPARING (or later): INVALID_TRANSITION, unchanged", async () => {
    for (const status of ["PREPARING", "BREWING", "READY", "COMPLETED"] as const) {
      await expectCancelRefused(await orderIn(t, status, plain.id, { customerId: DEMO.alice.id }), status, alice);
    }
  });

  test("someone else's order is NOT_FOUND for a customer (whatever its status), and stays as it was", async () => {
    const bobs = ok(await PLACE({ items: [{ coffeeId: plain.id, quantity: 1 }] }, bob)).createOrder.id;
    const before = await orderRow(t, bobs);
    expectRefused(await CANCEL(bobs, alice), "NOT_FOUND");
    expect(await orderRow(t, bobs)).toEqual(before);
    // Walk-in orders are nobody's to cancel but staff.
    const walkIn = await orderIn(t, "PENDING", plain.id);
    expectRefused(await CANCEL(walkIn, alice), "NOT_FOUND");
    expect((await orderRow(t, walkIn)).status).toBe("PENDING");
    // An already-cancelled order of someone else is still not found (not `false`).
    expect(ok(await CANCEL(bobs, bob)).cancelOrder).toBe(true);
    expectRefused(await CANCEL(bobs, alice), "NOT_FOUND");
  });

  test("an unknown order: NOT_FOUND; a malformed id: BAD_USER_INPUT", async () => {
    expectRefused(await CANCEL(RANDOM_ID, alice), "NOT_FOUND");
    expectRefused(await CANCEL(RANDOM_ID, barista), "NOT_FOUND");
    expectRefused(await CANCEL("nope", alice), "BAD_USER_INPUT");
  });

  test("anonymous: UNAUTHENTICATED, unchanged", async () => {
    const id = ok(await PLACE({ items: [{ coffeeId: plain.id, quantity: 1 }] })).createOrder.id;
    expectRefused(await CANCEL(id, null), "UNAUTHENTICATED");
    expect((await orderRow(t, id)).status).toBe("PENDING");
  });

  test("staff may cancel PENDING, PAID and PREPARING orders of anyone; a PAID one owes a refund", async () => {
    const pending = ok(await PLACE({ items: [{ coffeeId: plain.id, quantity: 1 }] }, bob)).createOrder.id;
    expect(ok(await CANCEL(pending, barista)).cancelOrder).toBe(true);
    expect((await orderEvents(t, pending)).at(-1)).toEqual({ from_status: "PENDING", to_status: "CANCELLED", actor_role: "barista", actor_id: DEMO.barista.id });

    const paid = await orderIn(t, "PAID", plain.id, { customerId: DEMO.bob.id, quantity: 2 });
    expect(ok(await CANCEL(paid, admin)).cancelOrder).toBe(true);
    expect(await refunds(paid)).toEqual([{ amount: money(2 * plain.price), settled_at: null }]);

    const preparing = await orderIn(t, "PREPARING", plain.id, { customerId: DEMO.alice.id });
    expect(ok(await CANCEL(preparing, barista)).cancelOrder).toBe(true);
    expect((await orderRow(t, preparing)).status).toBe("CANCELLED");
    expect(await refunds(preparing)).toHaveLength(1); // it had been paid
    expect(ok(await CANCEL(preparing, admin)).cancelOrder).toBe(false);
  });

  test("staff may not cancel BREWING, READY or COMPLETED orders: INVALID_TRANSITION, unchanged", async () => {
    for (const status of ["BREWING", "READY", "COMPLETED"] as const) {
      for (const token of [barista, admin]) {
        await expectCancelRefused(await orderIn(t, status, plain.id), status, token);
      }
    }
  });

  test("two cancellations of one paid order at once: one true, one false, one refund", async () => {
    const id = await orderIn(t, "PAID", plain.id, { customerId: DEMO.alice.id });
    const answers = await Promise.all([CANCEL(id, alice), CANCEL(id, barista)]);
    expect(answers.map((r) => ok(r).cancelOrder).sort()).toEqual([false, true]);
    expect((await orderRow(t, id)).status).toBe("CANCELLED");
    expect(await refunds(id)).toHaveLength(1);
    expect((await orderEvents(t, id)).filter((e) => e.to_status === "CANCELLED")).toHaveLength(1);
  });
});

describe("updateCustomerProfile (the mobile app's UpdateProfile)", () => {
  const UPDATE = (input: Record<string, unknown>, token: string | null = alice) => t.gql(MOBILE, { operationName: "UpdateProfile", variables: { input }, token });
  const state = async (id: string = DEMO.alice.id) => {
    const { rows } = await t.db.query("select c.name, p.username::text as username, p.avatar from app_public.customers c left join app_public.profiles p on p.customer_id = c.id where c.id = $1", [
      id,
    ]);
    return rows[0] as { name: string; username: string | null; avatar: string | null };
  };
  const name = `Alice ${suffix}`;
  const username = `alice_${suffix}`;

  test("sets name, username and avatar", async () => {
    const r = ok(await UPDATE({ name, username, avatar: "https://example.com/alice.png" }));
    expect(r.updateCustomerProfile).toEqual({ name, profile: { username, avatar: "https://example.com/alice.png" } });
    expect(await state()).toEqual({ name, username, avatar: "https://example.com/alice.png" });
    const home = ok(await t.gql(MOBILE, { operationName: "MobileHome", token: alice }));
    expect(home.customer).toMatchObject({ name, profile: { username, avatar: "https://example.com/alice.png" } });
  });

  test("an absent field is left unchanged", async () => {
    await UPDATE({ name, username, avatar: "https://example.com/alice.png" });
    expect(ok(await UPDATE({ name: `${name} B` })).updateCustomerProfile).toEqual({
      name: `${name} B`,
      profile: { username, avatar: "https://example.com/alice.png" },
    });
    expect(ok(await UPDATE({ avatar: "http://example.com/a2.jpg" })).updateCustomerProfile).toEqual({
      name: `${name} B`,
      profile: { username, avatar: "http://example.com/a2.jpg" },
    });
    expect(ok(await UPDATE({})).updateCustomerProfile).toEqual({ name: `${name} B`, profile: { username, avatar: "http://example.com/a2.jpg" } });
    expect(await state()).toEqual({ name: `${name} B`, username, avatar: "http://example.com/a2.jpg" });
  });

  test("null clears username and avatar, one at a time", async () => {
    await UPDATE({ name, username, avatar: "https://example.com/alice.png" });
    expect(ok(await UPDATE({ username: null })).updateCustomerProfile).toEqual({ name, profile: { username: null, avatar: "https://example.com/alice.png" } });
    expect(ok(await UPDATE({ avatar: null })).updateCustomerProfile).toEqual({ name, profile: { username: null, avatar: null } });
    expect(await state()).toEqual({ name, username: null, avatar: null });
  });

  test("an empty (or blank, or null) name: BAD_USER_INPUT, nothing changed", async () => {
    await UPDATE({ name, username, avatar: null });
    for (const bad of ["", "   ", null]) {
      expectRefused(await UPDATE({ name: bad }), "BAD_USER_INPUT");
      // Nothing of a refused patch is applied, not even its valid parts.
      expectRefused(await UPDATE({ name: bad, username: `other_${suffix}`, avatar: "https://example.com/x.png" }), "BAD_USER_INPUT");
      expect(await state()).toEqual({ name, username, avatar: null });
    }
  });

  test("a bad username: BAD_USER_INPUT, nothing changed", async () => {
    await UPDATE({ name, username, avatar: null });
    for (const bad of ["ab", "has space", "x".repeat(31), "bad!", "émile", ""]) {
      expectRefused(await UPDATE({ username: bad }), "BAD_USER_INPUT");
      expectRefused(await UPDATE({ name: "Changed", username: bad }), "BAD_USER_INPUT");
      expect(await state()).toEqual({ name, username, avatar: null });
    }
  });

  test("a username someone else has (ignoring case): CONFLICT, nothing changed; keeping one's own is fine", async () => {
    let bobs = (await state(DEMO.bob.id)).username;
    if (!bobs) {
      bobs = `bob_${suffix}`;
      ok(await UPDATE({ username: bobs }, bob));
    }
    await UPDATE({ name, username, avatar: null });
    expectRefused(await UPDATE({ username: bobs }), "CONFLICT");
    expectRefused(await UPDATE({ username: bobs.toUpperCase() }), "CONFLICT");
    expectRefused(await UPDATE({ name: "Changed", username: bobs }), "CONFLICT");
    expect(await state()).toEqual({ name, username, avatar: null });
    expect((await state(DEMO.bob.id)).username).toBe(bobs);
    expect(ok(await UPDATE({ username })).updateCustomerProfile.profile.username).toBe(username);
  });

  test("an avatar that is not an http(s) URL: BAD_USER_INPUT, nothing changed", async () => {
    await UPDATE({ name, username, avatar: "https://example.com/ok.png" });
    for (const bad of ["ftp://example.com/a.png", "javascript:alert(1)", "example.com/a.png", "https://", "https://exa mple.com/a.png", "", `https://example.com/${"a".repeat(500)}`]) {
      expectRefused(await UPDATE({ avatar: bad }), "BAD_USER_INPUT");
      expect(await state()).toEqual({ name, username, avatar: "https://example.com/ok.png" });
    }
  });

  test("staff: FORBIDDEN; anonymous: UNAUTHENTICATED; nothing changed", async () => {
    await UPDATE({ name, username, avatar: null });
    expectRefused(await UPDATE({ name: "Staff" }, barista), "FORBIDDEN");
    expectRefused(await UPDATE({ name: "Staff" }, admin), "FORBIDDEN");
    expectRefused(await UPDATE({ name: "Nobody" }, null), "UNAUTHENTICATED");
    expect(await state()).toEqual({ name, username, avatar: null });
    const staffNames = await t.db.query("select name from app_public.baristas where id = any($1)", [[DEMO.barista.id, DEMO.admin.id]]);
    expect(staffNames.rows.map((r) => r.name)).not.toContain("Staff");
  });

  test("a customer without a profile row gets one; a refused patch leaves none behind", async () => {
    await t.db.query("delete from app_public.profiles where customer_id = $1", [DEMO.bob.id]);
    const profileRows = async () => (await t.db.query("select count(*)::int as n from app_public.profiles where customer_id = $1", [DEMO.bob.id])).rows[0].n;
    expectRefused(await UPDATE({ username: "no!" }, bob), "BAD_USER_INPUT");
    expectRefused(await UPDATE({ avatar: "ftp://x" }, bob), "BAD_USER_INPUT");
    expect(await profileRows()).toBe(0);
    const bobName = (await state(DEMO.bob.id)).name;
    expect(ok(await UPDATE({ name: bobName }, bob)).updateCustomerProfile).toEqual({ name: bobName, profile: null });
    expect(ok(await UPDATE({ avatar: "https://example.com/bob.png" }, bob)).updateCustomerProfile).toEqual({
      name: bobName,
      profile: { username: null, avatar: "https://example.com/bob.png" },
    });
    expect(await profileRows()).toBe(1);
  });

  test("bob's update touches only bob", async () => {
    await UPDATE({ name, username, avatar: null });
    const bobBefore = await state(DEMO.bob.id);
    ok(await UPDATE({ avatar: "https://example.com/bob.png" }, bob));
    expect(await state(DEMO.bob.id)).toEqual({ ...bobBefore, avatar: "https://example.com/bob.png" });
    expect(await state()).toEqual({ name, username, avatar: null });
  });
});

describe("createCoffee (the admin dashboard's AddCoffee)", () => {
  const ADD = (variables: Record<string, unknown>, token: string | null = admin) => t.gql(ADMIN, { operationName: "AddCoffee", variables, token });
  const byName = async (name: string) => (await t.db.query("select * from app_public.coffees where lower(name) = lower($1)", [name])).rows;

  test("an admin adds a coffee: the defaults, on sale at once", async () => {
    const name = `Mut Flat White ${suffix}`;
    const r = ok(await ADD({ name, price: 4.2 })).createCoffee;
    expect(r).toEqual({ id: expect.any(String), name, price: 4.2 });
    const read = ok(
      await t.gql(`query($id: ID!) { coffee(id: $id) { id name price roast category limitedTimeOffer description imageUrl roaster { name } } }`, {
        variables: { id: r.id },
      }),
    ).coffee;
    expect(read).toEqual({
      id: r.id,
      name,
      price: 4.2,
      roast: "MEDIUM",
      category: "ESPRESSO",
      limitedTimeOffer: false,
      description: null,
      imageUrl: null,
      roaster: { name: "House Roastery" },
    });
    const rows = await byName(name);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ available: true, price: "4.20" });
    // The kiosk (anonymous) sees it on the menu.
    const kiosk = ok(await t.gql(`{ menuItems { id name price } }`));
    expect(kiosk.menuItems).toContainEqual({ id: r.id, name, price: 4.2 });
    // And it can be ordered straight away.
    const order = ok(await POS_ORDER({ coffeeId: r.id, quantity: 2 })).createOrder;
    expect(money(order.total)).toBe("8.40");
  });

  test("the name is trimmed; a price with two decimals is kept exactly", async () => {
    const r = ok(await ADD({ name: `  Mut Cortado ${suffix}  `, price: 3.99 })).createCoffee;
    expect(r.name).toBe(`Mut Cortado ${suffix}`);
    expect(r.price).toBe(3.99);
    expect((await byName(`Mut Cortado ${suffix}`))[0].price).toBe("3.99");
  });

  test("the optional arguments the design adds (roast, category, roaster, description, image, on sale) are honoured and checked", async () => {
    const ADD_FULL = `mutation($name: String!, $price: Float!, $roast: RoastLevel, $category: CoffeeCategory, $roasterId: ID, $description: String, $imageUrl: String, $available: Boolean) {
      createCoffee(name: $name, price: $price, roast: $roast, category: $category, roasterId: $roasterId, description: $description, imageUrl: $imageUrl, available: $available) {
        id name roast category description imageUrl roaster { name }
      }
    }`;
    const { rows } = await t.db.query("select id, name from app_public.roasters where name <> 'House Roastery' order by name limit 1");
    const roaster = rows[0];
    const name = `Mut Seasonal Special ${suffix}`;
    const made = ok(
      await t.gql(ADD_FULL, {
        variables: { name, price: 5.5, roast: "DARK", category: "COLD", roasterId: roaster.id, description: "Iced", imageUrl: "https://example.com/c.jpg", available: false },
        token: admin,
      }),
    ).createCoffee;
    expect(made).toEqual({ id: expect.any(String), name, roast: "DARK", category: "COLD", description: "Iced", imageUrl: "https://example.com/c.jpg", roaster: { name: roaster.name } });
    // Not on sale: off the menu, and not orderable.
    expect(ok(await t.gql(`{ menuItems { id } }`)).menuItems).not.toContainEqual({ id: made.id });
    expectRefused(await POS_ORDER({ coffeeId: made.id, quantity: 1 }), "NOT_AVAILABLE");

    const n = (await t.db.query("select count(*)::int as n from app_public.coffees")).rows[0].n;
    expectRefused(await t.gql(ADD_FULL, { variables: { name: `Mut Roasterless ${suffix}`, price: 3, roasterId: RANDOM_ID }, token: admin }), "NOT_FOUND");
    expectRefused(await t.gql(ADD_FULL, { variables: { name: `Mut Bad Image ${suffix}`, price: 3, imageUrl: "ftp://example.com/c.jpg" }, token: admin }), "BAD_USER_INPUT");
    expect((await t.db.query("select count(*)::int as n from app_public.coffees")).rows[0].n).toBe(n);
  });

  test("barista and customer: FORBIDDEN; anonymous: UNAUTHENTICATED; nothing created", async () => {
    const name = `Mut Forbidden ${suffix}`;
    expectRefused(await ADD({ name, price: 3 }, barista), "FORBIDDEN");
    expectRefused(await ADD({ name, price: 3 }, alice), "FORBIDDEN");
    expectRefused(await ADD({ name, price: 3 }, null), "UNAUTHENTICATED");
    expect(await byName(name)).toEqual([]);
  });

  test("a price that is not > 0 with at most two decimals: BAD_USER_INPUT, nothing created", async () => {
    const name = `Mut Bad Price ${suffix}`;
    for (const price of [0, -1, -0.01, 1.234, 0.001, 2.999]) {
      expectRefused(await ADD({ name, price }), "BAD_USER_INPUT");
    }
    expect(await byName(name)).toEqual([]);
  });

  test("an empty name: BAD_USER_INPUT", async () => {
    expectRefused(await ADD({ name: "", price: 3 }), "BAD_USER_INPUT");
    expectRefused(await ADD({ name: "   ", price: 3 }), "BAD_USER_INPUT");
    expectRefused(await ADD({ name: `Mut ${"x".repeat(100)}`, price: 3 }), "BAD_USER_INPUT");
    expect((await t.db.query("select count(*)::int as n from app_public.coffees where btrim(name) = '' or length(name) > 100")).rows[0].n).toBe(0);
  });

  test("a name that exists, ignoring case and spaces around it: CONFLICT, nothing created", async () => {
    const existing = menu.find((c) => c.name.toUpperCase() !== c.name) ?? menu[0]!;
    const before = (await t.db.query("select count(*)::int as n from app_public.coffees")).rows[0].n;
    expectRefused(await ADD({ name: existing.name.toUpperCase(), price: 3 }), "CONFLICT");
    expectRefused(await ADD({ name: existing.name.toLowerCase(), price: 3 }), "CONFLICT");
    expectRefused(await ADD({ name: ` ${existing.name} `, price: 3 }), "CONFLICT");
    const mine = `Mut Twice ${suffix}`;
    ok(await ADD({ name: mine, price: 3 }));
    expectRefused(await ADD({ name: mine.toUpperCase(), price: 5 }), "CONFLICT");
    expect((await t.db.query("select count(*)::int as n from app_public.coffees")).rows[0].n).toBe(before + 1);
    expect((await byName(mine))[0].price).toBe("3.00");
  });
});

describe("updateCoffeePrice (the admin dashboard's Reprice)", () => {
  const REPRICE = (id: string, newPrice: number, token: string | null = admin) => t.gql(ADMIN, { operationName: "Reprice", variables: { id, newPrice }, token });
  const priceOf = async (id: string) => (await t.db.query("select price from app_public.coffees where id = $1", [id])).rows[0].price;
  const history = async (id: string) => (await t.db.query("select old_price, new_price, changed_by from app_public.coffee_price_changes where coffee_id = $1 order by id", [id])).rows;

  test("an admin changes a price: kept in the price history, which the admin reads through GraphQL", async () => {
    const id = await makeCoffee(t, `Mut Price History ${suffix}`, "3.00");
    expect(ok(await REPRICE(id, 3.5)).updateCoffeePrice).toEqual({ id, price: 3.5 });
    expect(ok(await REPRICE(id, 2.95)).updateCoffeePrice).toEqual({ id, price: 2.95 });
    expect(await priceOf(id)).toBe("2.95");
    expect(await history(id)).toEqual([
      { old_price: "3.00", new_price: "3.50", changed_by: DEMO.admin.id },
      { old_price: "3.50", new_price: "2.95", changed_by: DEMO.admin.id },
    ]);
    const read = ok(
      await t.gql(
        `query($id: ID!) { allCoffeePriceChanges(condition: { coffeeId: $id }, orderBy: [ID_ASC]) { totalCount nodes { coffeeId oldPrice newPrice changedBy changedAt coffee { name } } } }`,
        { variables: { id }, token: admin },
      ),
    ).allCoffeePriceChanges;
    expect(read.totalCount).toBe(2);
    expect(read.nodes).toEqual([
      { coffeeId: id, oldPrice: 3, newPrice: 3.5, changedBy: DEMO.admin.id, changedAt: expect.any(String), coffee: { name: `Mut Price History ${suffix}` } },
      { coffeeId: id, oldPrice: 3.5, newPrice: 2.95, changedBy: DEMO.admin.id, changedAt: expect.any(String), coffee: { name: `Mut Price History ${suffix}` } },
    ]);
    // The menu shows the new price.
    expect(ok(await t.gql(MOBILE, { operationName: "CoffeeDetail", variables: { id }, token: alice })).coffee.price).toBe(2.95);
  });

  test("nobody but an admin reads the price history", async () => {
    const id = await makeCoffee(t, `Mut Price Secret ${suffix}`, "3.00");
    ok(await REPRICE(id, 3.1));
    for (const token of [barista, alice, null]) {
      const r = await t.gql(`query($id: ID!) { allCoffeePriceChanges(condition: { coffeeId: $id }) { nodes { newPrice } } }`, { variables: { id }, token });
      expect(r.body.data?.allCoffeePriceChanges?.nodes ?? []).toEqual([]);
      for (const e of r.body.errors ?? []) expect(e.extensions?.code).not.toBe("INTERNAL_SERVER_ERROR");
    }
  });

  test("barista and customer: FORBIDDEN; anonymous: UNAUTHENTICATED; price and history unchanged", async () => {
    const id = await makeCoffee(t, `Mut Price Guard ${suffix}`, "3.00");
    expectRefused(await REPRICE(id, 1, barista), "FORBIDDEN");
    expectRefused(await REPRICE(id, 1, alice), "FORBIDDEN");
    expectRefused(await REPRICE(id, 1, null), "UNAUTHENTICATED");
    expect(await priceOf(id)).toBe("3.00");
    expect(await history(id)).toEqual([]);
  });

  test("a price that is not > 0 with at most two decimals: BAD_USER_INPUT, unchanged", async () => {
    const id = await makeCoffee(t, `Mut Price Bounds ${suffix}`, "3.00");
    for (const p of [0, -2, 2.345, 0.001]) expectRefused(await REPRICE(id, p), "BAD_USER_INPUT");
    expect(await priceOf(id)).toBe("3.00");
    expect(await history(id)).toEqual([]);
  });

  test("an unknown coffee: NOT_FOUND; a malformed id: BAD_USER_INPUT", async () => {
    expectRefused(await REPRICE(RANDOM_ID, 3), "NOT_FOUND");
    expectRefused(await REPRICE("abc", 3), "BAD_USER_INPUT");
  });
});

test("every mutation document of the contract was sent by its own client in this suite or test/sql/order-status-transitions.test.ts", () => {
  // The documents exist with the names used above (a renamed operation would fail here first).
  for (const [doc, names] of [
    [ADMIN, ["AddCoffee", "Reprice"]],
    [MOBILE, ["PlaceOrder", "CancelMine", "UpdateProfile"]],
    [POS, ["PosOrder"]],
    [BARISTA, ["Advance"]],
  ] as const) {
    for (const n of names) expect(doc).toMatch(new RegExp(`mutation ${n}\\b`));
  }
});
