import { expectRefused, ok, type GraphQLResponse } from "../support/client.ts";
import { forgetAccounts, maxId, removeStockedCoffee, stockedCoffee, type StockedCoffee } from "../support/fixtures.ts";
import { useTestService } from "../support/service.ts";

// Fair stock per source and for new accounts: what customers' own orders
// placed from one source (an address; an IPv6 /64) hold of an ingredient,
// across all their accounts, is bounded by max_stock_share_percent_per_source
// of the shelf, as one account's share is (TRUSTED_NETWORK_FACTOR times more
// inside TRUSTED_NETWORKS, where the default factor lifts the bound); refused
// TOO_MANY_OPEN_ORDERS with details. An account registered less than
// new_account_scarce_stock_seconds ago may not order an ingredient its order
// would leave at or below its alert level unreserved: RATE_LIMITED with
// retry_after_seconds. The service trusts the loopback proxy, so each test
// sends from its own addresses (X-Forwarded-For). The other suites run with
// both lifted (test/support/db.ts); test/sql/fair-stock.test.ts holds the
// share per account.

const PLACE = `mutation($coffeeId: ID!, $quantity: Int!, $customerId: ID) { createOrder(coffeeId: $coffeeId, quantity: $quantity, customerId: $customerId) { id status } }`;
const CANCEL = `mutation($id: ID!) { cancelOrder(id: $id) }`;
const LOGIN = `mutation($e: String!, $p: String!) { login(email: $e, password: $p) { token } }`;
const KEYS = ["max_stock_share_percent", "max_stock_share_percent_per_source", "stock_share_cooldown_seconds", "new_account_scarce_stock_seconds"];
const PASSWORD = "Seasonal-Share-1!";
const run = `${process.pid}${Date.now().toString(36)}`;
const OUTSIDE = "198.51.100.7";
const TRUSTED = "203.0.113.5";

const coffees: StockedCoffee[] = [];
let settingsAtStart: Array<{ key: string; value: string }> = [];
let firstAttemptId = 0;
let accountSerial = 0;

const t = useTestService({
  env: { TRUST_PROXY: "loopback", TRUSTED_NETWORKS: "203.0.113.0/24" },
  deleteNewOrders: true,
  async cleanup() {
    for (const s of settingsAtStart) await setSetting(s.key, s.value);
    for (const c of coffees) await removeStockedCoffee(t, c);
    await forgetAccounts(t, `share-%-${run}@example.test`, "app_public.customers", firstAttemptId);
  },
});

const setSetting = (key: string, value: number | string) => t.db.query("update app_private.settings set value = $2 where key = $1", [key, value]);

beforeAll(async () => {
  settingsAtStart = (await t.db.query("select key, value::text from app_private.settings where key = any($1)", [KEYS])).rows;
  expect(settingsAtStart.map((s) => s.key).sort()).toEqual([...KEYS].sort());
  firstAttemptId = await maxId(t, "app_private.login_attempts");
  await setSetting("max_stock_share_percent", 25);
  await setSetting("max_stock_share_percent_per_source", 25);
  await setSetting("stock_share_cooldown_seconds", 600);
  await setSetting("new_account_scarce_stock_seconds", 600);
});

/** A coffee of its own at the default store: one ingredient, one unit a cup, `cups` on the shelf, alert level `alert`. */
async function coffee(label: string, cups: number, alert = 0): Promise<StockedCoffee> {
  const c = await stockedCoffee(t, label, "5.00", 1, cups);
  coffees.push(c);
  await t.db.query("update app_public.stock_items set alert_level = $2 where ingredient_id = $1 and store_id = app_hidden.default_store_id()", [c.ingredientId, alert]);
  return c;
}

/** A customer who registered `registeredSecondsAgo` ago, signed in from `source`: a token. */
async function customer(source: string, registeredSecondsAgo: number): Promise<{ id: string; token: string }> {
  const email = `share-${++accountSerial}-${run}@example.test`;
  const { rows } = await t.db.query(
    `with a as (insert into app_private.accounts (email, password_hash, role, created_at)
                values ($1, public.crypt($2, public.gen_salt('bf', 4)), 'customer', now() - make_interval(secs => $3)) returning id)
     insert into app_public.customers (id, name) select id, 'Share customer' from a returning id`,
    [email, PASSWORD, registeredSecondsAgo],
  );
  const r = await from(source, null, LOGIN, { e: email, p: PASSWORD });
  return { id: rows[0].id, token: ok(r).login.token };
}

/** Regulars (registered a year ago) at one source. */
const regulars = async (source: string, n: number) => {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await customer(source, 365 * 86400));
  return out;
};

/** GraphQL from `source` (X-Forwarded-For), with a token or none. */
const from = (source: string, token: string | null, query: string, variables: Record<string, unknown>) => t.gql(query, { token, variables, headers: { "x-forwarded-for": source } });

const order = (source: string, who: { token: string }, c: StockedCoffee, quantity: number, customerId?: string) => from(source, who.token, PLACE, { coffeeId: c.id, quantity, customerId });

const codeOf = (r: GraphQLResponse) => r.body.errors?.[0]?.extensions?.code ?? "OK";

/** What open orders hold of `c` at the default store, per source that placed them (null: none recorded). */
async function heldBySource(c: StockedCoffee): Promise<Record<string, number>> {
  const { rows } = await t.db.query(
    `select coalesce(os.source, '-') as source, sum(r.amount)::float8 as held
       from app_private.stock_reservations r left join app_private.order_sources os on os.order_id = r.order_id
      where r.ingredient_id = $1 and r.store_id = app_hidden.default_store_id() group by 1 order by 1`,
    [c.ingredientId],
  );
  return Object.fromEntries(rows.map((r) => [r.source, r.held]));
}

describe("the share per source", () => {
  test("6 accounts from one outside address cannot take all 29 cups of a seasonal coffee: together they hold at most 25% (7.25 cups); a customer at another address still orders", async () => {
    const c = await coffee("Seasonal six", 29);
    const six = await regulars(OUTSIDE, 6);
    const answers = [];
    for (const who of six) answers.push(await order(OUTSIDE, who, c, 5));
    expect(answers.map(codeOf)).toEqual(["OK", ...Array(5).fill("TOO_MANY_OPEN_ORDERS")]);
    const refused = expectRefused(answers[1]!, "TOO_MANY_OPEN_ORDERS");
    expect(refused.message).toMatch(/one address may hold at most 7\.25 .*25 percent/);
    expect(refused.extensions?.details).toEqual({ ingredient: `${c.name} part 1`, held_by_source: 10, max_held_by_source: 7.25, max_stock_share_percent_per_source: 25 });
    // Up to the share, from any of its accounts; not a cup more.
    ok(await order(OUTSIDE, six[1]!, c, 2));
    expectRefused(await order(OUTSIDE, six[2]!, c, 1), "TOO_MANY_OPEN_ORDERS");
    const elsewhere = await customer("198.51.100.99", 365 * 86400);
    ok(await order("198.51.100.99", elsewhere, c, 7));
    expect(await heldBySource(c)).toEqual({ [OUTSIDE]: 7, "198.51.100.99": 7 });
  }, 60_000);

  test("after a restock to 20 cups, 2 accounts in one IPv6 /64 (two addresses) take 5, not all 20", async () => {
    const c = await coffee("Seasonal restock", 0);
    await t.db.query("update app_public.stock_items set current_stock = 20 where ingredient_id = $1 and store_id = app_hidden.default_store_id()", [c.ingredientId]);
    const [a, b] = [await customer("2001:db8:7:7::a", 365 * 86400), await customer("2001:db8:7:7::b", 365 * 86400)];
    ok(await order("2001:db8:7:7::a", a, c, 5));
    expectRefused(await order("2001:db8:7:7::b", b, c, 5), "TOO_MANY_OPEN_ORDERS");
    expectRefused(await order("2001:db8:7:7::b", b, c, 1), "TOO_MANY_OPEN_ORDERS");
    expect(await heldBySource(c)).toEqual({ "2001:db8:7:7::/64": 5 });
  }, 60_000);

  test("cancelling on one account and ordering on another of the same address frees nothing within stock_share_cooldown_seconds", async () => {
    const c = await coffee("Seasonal swap", 29);
    const [a, b] = await regulars("198.51.100.8", 2);
    const first = ok(await order("198.51.100.8", a!, c, 7)).createOrder;
    expect(ok(await from("198.51.100.8", a!.token, CANCEL, { id: first.id })).cancelOrder).toBe(true);
    expectRefused(await order("198.51.100.8", b!, c, 1), "TOO_MANY_OPEN_ORDERS");
  }, 60_000);

  test("12 orders of 2 cups at once from 6 accounts of one address, on a 29-cup coffee: exactly 3 are taken", async () => {
    const c = await coffee("Seasonal burst", 29);
    const six = await regulars("198.51.100.9", 6);
    const answers = await Promise.all([...six, ...six].map((who) => order("198.51.100.9", who, c, 2)));
    expect(answers.map(codeOf).sort()).toEqual([...Array(3).fill("OK"), ...Array(9).fill("TOO_MANY_OPEN_ORDERS")]);
    expect(await heldBySource(c)).toEqual({ "198.51.100.9": 6 });
  }, 60_000);

  test("a trusted network is not hurt: 6 customers on the café's Wi-Fi (TRUSTED_NETWORKS, factor 10) order 4 cups each, 24 of 29, as at 6 addresses", async () => {
    const c = await coffee("Seasonal Wi-Fi", 29);
    const six = await regulars(TRUSTED, 6);
    for (const who of six) ok(await order(TRUSTED, who, c, 4));
    expect(await heldBySource(c)).toEqual({ [TRUSTED]: 24 });
  }, 60_000);

  test("till orders do not count: a barista at an outside address orders 20 cups for a customer, whose own 7 from there still go", async () => {
    const c = await coffee("Seasonal till", 29);
    const [who] = await regulars("198.51.100.10", 1);
    ok(await order("198.51.100.10", { token: await t.token("barista") }, c, 20, who!.id));
    ok(await order("198.51.100.10", who!, c, 7));
  }, 60_000);
});

describe("new accounts and scarce stock", () => {
  test("a new account is refused an ingredient at or below its alert level (RATE_LIMITED, with when it may), but orders plentiful stock; a regular orders the scarce one", async () => {
    const scarce = await coffee("Seasonal low", 29, 30);
    const plentiful = await coffee("Plentiful", 1000, 100);
    const fresh = await customer("198.51.100.30", 0);
    const refused = expectRefused(await order("198.51.100.30", fresh, scarce, 1), "RATE_LIMITED");
    expect(refused.message).toMatch(/account is new: .* is scarce, so you may order it in 10 minutes/);
    const details = refused.extensions?.details;
    expect(details).toMatchObject({ ingredient: `${scarce.name} part 1`, new_account_scarce_stock_seconds: 600 });
    expect(details.retry_after_seconds).toBeGreaterThan(500);
    expect(details.retry_after_seconds).toBeLessThanOrEqual(600);
    ok(await order("198.51.100.30", fresh, plentiful, 2));
    const regular = await customer("198.51.100.31", 11 * 60);
    ok(await order("198.51.100.31", regular, scarce, 1));
  }, 60_000);

  test("scarce is what the order would leave unreserved: 30 on the shelf, alert level 25: a new account's 4 cups go (26 left), a 5th does not (25 left)", async () => {
    const c = await coffee("Seasonal edge", 30, 25);
    const fresh = await customer("198.51.100.32", 0);
    ok(await order("198.51.100.32", fresh, c, 4));
    expectRefused(await order("198.51.100.32", fresh, c, 1), "RATE_LIMITED");
  }, 60_000);
});

describe("the DBA's settings", () => {
  test("a DBA raises the share per source and lifts the wait in SQL, and the next orders follow; values out of range are refused", async () => {
    const c = await coffee("Seasonal DBA", 29, 30);
    const [a, b, late] = await regulars("198.51.100.40", 3);
    const fresh = await customer("198.51.100.41", 0);
    try {
      await setSetting("max_stock_share_percent_per_source", 50);
      ok(await order("198.51.100.40", a!, c, 7));
      ok(await order("198.51.100.40", b!, c, 7));
      expectRefused(await order("198.51.100.40", late!, c, 1), "TOO_MANY_OPEN_ORDERS");
      expectRefused(await order("198.51.100.41", fresh, c, 1), "RATE_LIMITED");
      await setSetting("new_account_scarce_stock_seconds", 0);
      ok(await order("198.51.100.41", fresh, c, 1));
      await expect(setSetting("max_stock_share_percent_per_source", 150)).rejects.toMatchObject({ code: "22023" });
      await expect(setSetting("new_account_scarce_stock_seconds", -1)).rejects.toMatchObject({ code: "22023" });
    } finally {
      await setSetting("max_stock_share_percent_per_source", 25);
      await setSetting("new_account_scarce_stock_seconds", 600);
    }
  }, 60_000);

  test("an order's source is purged with the sign-in logs once the order holds nothing and is older than sign_in_log_retention_days", async () => {
    const c = await coffee("Seasonal purge", 29);
    const [a] = await regulars("198.51.100.50", 1);
    const done = ok(await order("198.51.100.50", a!, c, 1)).createOrder;
    const open = ok(await order("198.51.100.50", a!, c, 1)).createOrder;
    expect(ok(await from("198.51.100.50", a!.token, CANCEL, { id: done.id })).cancelOrder).toBe(true);
    await t.db.query("update app_private.order_sources set placed_at = now() - interval '30 days' where order_id = any($1::uuid[])", [[done.id, open.id]]);
    await t.db.query("select app_private.purge_sign_in_logs()");
    const { rows } = await t.db.query("select order_id from app_private.order_sources where order_id = any($1::uuid[])", [[done.id, open.id]]);
    expect(rows.map((r) => r.order_id)).toEqual([open.id]);
  }, 60_000);
});
