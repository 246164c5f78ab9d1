import { DEMO, expectRefused, gqlAs, ok, type GraphQLResponse } from "../support/client.ts";
import { removeStockedCoffee, stockedCoffee, type StockedCoffee } from "../support/fixtures.ts";
import { useTestService } from "../support/service.ts";
import { sleep } from "../support/wait.ts";

// Fair stock: a customer's own orders hold at most
// max_stock_share_percent of an ingredient's stock on the shelf (at least
// one cup's worth), counting their open orders and the unpaid ones they
// cancelled within stock_share_cooldown_seconds; refused
// TOO_MANY_OPEN_ORDERS with details. Till orders are exempt. The other
// suites run with the share at 100% and no cool-down (test/support/db.ts).

const PLACE = `mutation($coffeeId: ID!, $quantity: Int!, $customerId: ID) { createOrder(coffeeId: $coffeeId, quantity: $quantity, customerId: $customerId) { id status } }`;
const CANCEL = `mutation($id: ID!) { cancelOrder(id: $id) }`;
const KEYS = ["max_stock_share_percent", "stock_share_cooldown_seconds"];

const coffees: StockedCoffee[] = [];
let settingsAtStart: Array<{ key: string; value: string }> = [];

const t = useTestService({
  deleteNewOrders: true,
  async cleanup() {
    for (const s of settingsAtStart) await t.db.query("update app_private.settings set value = $2 where key = $1", [s.key, s.value]);
    for (const c of coffees) await removeStockedCoffee(t, c);
  },
});

const setSetting = (key: string, value: number) => t.db.query("update app_private.settings set value = $2 where key = $1", [key, value]);

beforeAll(async () => {
  settingsAtStart = (await t.db.query("select key, value::text from app_private.settings where key = any($1)", [KEYS])).rows;
  await setSetting("max_stock_share_percent", 25);
  await setSetting("stock_share_cooldown_seconds", 600);
});

/** A coffee of its own: one ingredient, one unit a cup, `cups` on the shelf. */
async function scarceCoffee(label: string, cups: number): Promise<StockedCoffee> {
  const c = await stockedCoffee(t, label, "5.00", 1, cups);
  coffees.push(c);
  return c;
}

const place = (who: "alice" | "bob" | "barista", c: StockedCoffee, quantity: number, customerId?: string) => gqlAs(t, who, PLACE, { coffeeId: c.id, quantity, customerId });
const codeOf = (r: GraphQLResponse) => r.body.errors?.[0]?.extensions?.code ?? "OK";

test("a 30-cup seasonal coffee: one customer holds at most 25% (7 cups, not 8: TOO_MANY_OPEN_ORDERS with details); another customer still orders", async () => {
  const c = await scarceCoffee("Seasonal share", 30);
  ok(await place("alice", c, 5));
  const refused = expectRefused(await place("alice", c, 3), "TOO_MANY_OPEN_ORDERS");
  expect(refused.message).toMatch(/at most 7\.5 .*25 percent/);
  expect(refused.extensions?.details).toEqual({ ingredient: `${c.name} part 1`, held: 8, max_held: 7.5, max_stock_share_percent: 25 });
  ok(await place("alice", c, 2));
  expectRefused(await place("alice", c, 1), "TOO_MANY_OPEN_ORDERS");
  ok(await place("bob", c, 7));
});

test("cancelling and ordering again frees nothing within stock_share_cooldown_seconds; after it, the share is free again", async () => {
  const c = await scarceCoffee("Seasonal cancel", 30);
  const first = ok(await place("alice", c, 7)).createOrder;
  expect(ok(await gqlAs(t, "alice", CANCEL, { id: first.id })).cancelOrder).toBe(true);
  expectRefused(await place("alice", c, 1), "TOO_MANY_OPEN_ORDERS");
  await setSetting("stock_share_cooldown_seconds", 1);
  await sleep(1100);
  ok(await place("alice", c, 7));
  await setSetting("stock_share_cooldown_seconds", 600);
});

test("till orders are supervised and exempt: a barista orders 20 cups for alice, and alice's own 7 still go", async () => {
  const c = await scarceCoffee("Seasonal till", 30);
  ok(await place("barista", c, 20, DEMO.alice.id));
  ok(await place("alice", c, 7));
});

test("the last cups stay orderable: with 3 cups on the shelf each customer may hold one", async () => {
  const c = await scarceCoffee("Seasonal last", 3);
  ok(await place("alice", c, 1));
  expectRefused(await place("alice", c, 1), "TOO_MANY_OPEN_ORDERS");
  ok(await place("bob", c, 1));
});

test("10 one-cup orders at once from one customer on a 30-cup coffee: exactly 7 are taken", async () => {
  const c = await scarceCoffee("Seasonal burst", 30);
  await t.token("bob");
  const answers = await Promise.all(Array.from({ length: 10 }, () => place("bob", c, 1)));
  expect(answers.map(codeOf).sort()).toEqual([...Array(7).fill("OK"), ...Array(3).fill("TOO_MANY_OPEN_ORDERS")]);
});
