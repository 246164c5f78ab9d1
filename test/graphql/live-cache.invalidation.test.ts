import pg from "pg";
import { liveCacheEvents } from "../../src/metrics.ts";
import { PUBLIC_READS_TOPIC } from "../../common/topics.ts";
import { DEMO, request, type RawResponse } from "../support/client.ts";
import { operationsOf } from "../support/contract.ts";
import { SqlRecorder, testDatabaseUrl } from "../support/db.ts";
import { insertOrders, orderRow, ownCoffee, placeOrder, removeIngredients, type OwnCoffee } from "../support/fixtures.ts";
import { useTestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";

// The live cache drops a public read when a row it was made of changed in a
// way its answer can see, and only that read (migration 000005-live-reads.sql,
// src/http/liveCache.ts): from every path that writes (a GraphQL mutation, the
// worker, a DBA's SQL); a statement that changes nothing announces nothing;
// concurrent misses of one key make one computation.

const t = useTestService({ sandbox: true, deleteNewOrders: true, worker: true, env: { LIVE_CACHE_MAX_ENTRIES: "1000" }, cleanup: async () => cleanup() });
let x: OwnCoffee; // its own ingredients
let y: OwnCoffee; // its own ingredients
let w: OwnCoffee; // its own, and one of x's
let cleanup = async () => {};
let sql: SqlRecorder;

const post = (query: string, variables?: Record<string, unknown>, token?: string, operationName?: string): Promise<RawResponse> =>
  request(`${t.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables, operationName }),
  });
const told = () => t.service.api!.subscriber.flush();

const INVENTORY = "query Inventory($id: ID!) { coffee(id: $id) { id inventory } }";
/** Every public read the tests watch: each is a hit once cached, until what it shows changes. */
const reads = () => ({
  inventoryX: [INVENTORY, { id: x.id }],
  inventoryY: [INVENTORY, { id: y.id }],
  inventoryW: [INVENTORY, { id: w.id }],
  detailX: ["query Detail($id: ID!) { coffee(id: $id) { id name price ingredients { name } reviews(limit: 3) { rating } } }", { id: x.id }],
  roasterY: ["query Roaster($id: ID!) { coffee(id: $id) { roaster { name location } } }", { id: y.id }],
  featured: ["{ featuredCoffee { id name } }", undefined],
  names: ["{ menuItems { id name price } }", undefined],
  kiosk: [operationsOf("kiosk"), undefined, "KioskMenu"],
  inventoryWithoutIds: ["{ menuItems { name inventory } }", undefined],
});
type Read = keyof ReturnType<typeof reads>;

/** Each read once (cached), then: which were answered from the cache. */
async function served(): Promise<Record<Read, "hit" | "miss">> {
  const out = {} as Record<Read, "hit" | "miss">;
  for (const [name, [query, variables, operationName]] of Object.entries(reads()) as Array<[Read, [string, Record<string, unknown> | undefined, string?]]>) {
    const hits = liveCacheEvents.hits;
    const r = await post(query, variables, undefined, operationName);
    expect(r.json.errors).toBeUndefined();
    out[name] = liveCacheEvents.hits > hits ? "hit" : "miss";
  }
  return out;
}
const all = (value: "hit" | "miss") => Object.fromEntries(Object.keys(reads()).map((k) => [k, value]));
const hitsBut = (...missed: Read[]) => ({ ...all("hit"), ...Object.fromEntries(missed.map((k) => [k, "miss"])) });

/** Every payload on PUBLIC_READS_TOPIC while `fn` runs, on a LISTEN connection of the test's own (a sentinel marks the end). */
async function announced(fn: () => Promise<unknown>): Promise<string[]> {
  const c = new pg.Client({ connectionString: testDatabaseUrl() });
  await c.connect();
  const payloads: string[] = [];
  c.on("notification", (n) => payloads.push(n.payload ?? ""));
  try {
    await c.query(`listen ${PUBLIC_READS_TOPIC}`);
    await fn();
    const sentinel = `sentinel-${Date.now()}`;
    await c.query("select pg_notify($1, $2)", [PUBLIC_READS_TOPIC, sentinel]);
    await waitUntil("the sentinel", () => payloads.includes(sentinel));
    return payloads.filter((p) => p !== sentinel);
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  x = await ownCoffee(t, "Cache X", "3.00", [10, 5]);
  y = await ownCoffee(t, "Cache Y", "3.10", [7]);
  w = await ownCoffee(t, "Cache W", "3.20", [4]);
  await t.db.query("insert into app_public.recipe_lines (coffee_id, ingredient_id, quantity) values ($1, $2, 20)", [w.id, x.ingredients[0]!.id]); // the shared one is what limits w
  cleanup = async () => {
    await t.db.query("delete from app_public.coffees where id = any($1::uuid[])", [[x.id, y.id, w.id]]);
    await removeIngredients(
      t,
      [...x.ingredients, ...y.ingredients, ...w.ingredients].map((i) => i.id),
    );
  };
  sql = new SqlRecorder(decodeURIComponent(new URL(t.urls.authenticator).username));
  sql.install();
  await waitUntil("the live cache on", async () => {
    const hits = liveCacheEvents.hits;
    await post("{ menuItems { id } }");
    await post("{ menuItems { id } }");
    return liveCacheEvents.hits > hits;
  });
  await served();
  await told();
}, 60_000);
afterAll(() => sql?.uninstall());

test("the inventory kept by triggers is what the old per-coffee computation gave, for every coffee at every store", async () => {
  const { rows } = await t.db.query(
    `select c.id, i.servings,
            (select case when count(*) = 0 then null
                    else greatest(0, min(floor(coalesce(s.current_stock - coalesce(r.amount, 0), 1e9) / rl.quantity)))::integer end
               from app_public.recipe_lines rl
               left join app_public.stock_items s on s.store_id = st.id and s.ingredient_id = rl.ingredient_id
               left join app_private.stock_reserved r on r.store_id = st.id and r.ingredient_id = rl.ingredient_id
              where rl.coffee_id = c.id) as computed
       from app_public.stores st cross join app_public.coffees c left join app_public.coffee_inventory i on i.store_id = st.id and i.coffee_id = c.id`,
  );
  expect(rows.length).toBeGreaterThan(3);
  for (const r of rows) expect({ id: r.id, servings: r.servings }).toEqual({ id: r.id, servings: r.computed }); // every store's
});

test("a mutation (createOrder) drops the inventory of the coffees its lines use, and nothing else; its later steps drop nothing", async () => {
  expect(await served()).toEqual(all("hit"));
  const before = (await post(INVENTORY, { id: x.id })).json.data.coffee.inventory as number;
  const alice = await t.token("alice");
  let order = { id: "" };
  const onCreate = await announced(async () => (order = await placeOrder(t, alice, [{ coffeeId: x.id, quantity: 1 }])));
  expect(onCreate.join(" ").split(" ").sort()).toEqual([`inventory:${w.id}`, `inventory:${x.id}`].sort());
  await told();
  // x's and w's inventory (w shares an ingredient), the kiosk's menu (it shows x's), and a menu
  // whose inventory it cannot tell apart (no ids): nothing else.
  expect(await served()).toEqual(hitsBut("inventoryX", "inventoryW", "kiosk", "inventoryWithoutIds"));
  expect((await post(INVENTORY, { id: x.id })).json.data.coffee.inventory).toBeLessThan(before);

  // Paid at the till, then the worker: PREPARING and the stock taken (taken = no longer reserved): no public read changes.
  const barista = await t.token("barista");
  const paid = await announced(async () => {
    const r = await post("mutation Pay($id: ID!) { markOrderPaid(id: $id, method: CASH) { id status } }", { id: order.id }, barista);
    expect(r.json.errors).toBeUndefined();
    await waitUntil(
      "the worker took the stock",
      async () =>
        (await orderRow(t, order.id)).status === "PREPARING" && (await t.db.query("select inventory_taken_at from app_public.orders where id = $1", [order.id])).rows[0].inventory_taken_at !== null,
    );
  });
  expect(paid.filter((p) => p !== "featured")).toEqual([]); // (x is not a FEATURED coffee: its sales rank nothing)
  expect(paid).toEqual([]);
  await told();
  expect(await served()).toEqual(all("hit"));
  const steps = await announced(async () => {
    for (const status of ["BREWING", "READY", "COMPLETED"]) {
      const r = await post(operationsOf("barista"), { id: order.id, status }, barista, "Advance");
      expect(r.json.errors).toBeUndefined();
    }
  });
  expect(steps).toEqual([]);
  expect(await served()).toEqual(all("hit"));
});

test("the worker and a DBA's SQL: restocking one coffee's ingredient drops that coffee's inventory only; a roaster's change only what shows roasters", async () => {
  expect(await served()).toEqual(all("hit"));
  await t.db.query("update app_public.stock_items set current_stock = current_stock + 70 where ingredient_id = $1", [y.ingredients[0]!.id]);
  await told();
  expect(await served()).toEqual(hitsBut("inventoryY", "kiosk", "inventoryWithoutIds"));
  const roaster = (await t.db.query("select r.id, r.location from app_public.roasters r join app_public.coffees c on c.roaster_id = r.id where c.id = $1", [y.id])).rows[0];
  try {
    await t.db.query("update app_public.roasters set location = location || ' (moved)' where id = $1", [roaster.id]);
    await told();
    expect(await served()).toEqual(hitsBut("roasterY"));
    expect((await post(reads().roasterY[0] as string, { id: y.id })).json.data.coffee.roaster.location).toBe(`${roaster.location} (moved)`);
  } finally {
    await t.db.query("update app_public.roasters set location = $2 where id = $1", [roaster.id, roaster.location]);
  }
  await told();
});

test("featuredCoffee moves when the ranking changes, and only its reads are dropped", async () => {
  await served();
  const featured = (await post("{ featuredCoffee { id name } }")).json.data.featuredCoffee;
  const other = (await t.db.query("select id from app_public.coffees where category = 'FEATURED' and available and id <> $1 order by name limit 1", [featured.id])).rows[0];
  expect(other).toBeDefined();
  expect(await served()).toEqual(all("hit"));
  // A DBA records a big sale of another FEATURED coffee (already taken from stock: no inventory changes).
  const payloads = await announced(() => insertOrders(t, [{ customerId: DEMO.alice.id, status: "COMPLETED", lines: [{ coffeeId: other.id, quantity: 500 }] }]));
  expect(payloads).toEqual(["featured"]);
  await told();
  expect(await served()).toEqual(hitsBut("featured", "kiosk")); // (the kiosk's menu shows it)
  expect((await post("{ featuredCoffee { id name } }")).json.data.featuredCoffee.id).toBe(other.id);
});

test("a statement that changes no row announces nothing", async () => {
  const payloads = await announced(async () => {
    await t.db.query("update app_public.coffees set name = name where false");
    await t.db.query("update app_public.coffees set name = name, price = price where id = $1", [x.id]);
    await t.db.query("delete from app_public.reviews where false");
    await t.db.query("insert into app_public.roasters select * from app_public.roasters where false");
    await t.db.query("update app_public.stock_items set current_stock = current_stock where ingredient_id = $1", [x.ingredients[0]!.id]);
    await t.db.query("update app_public.stock_items set alert_level = alert_level + 1 where ingredient_id = $1", [x.ingredients[0]!.id]);
    await t.db.query("update app_private.stock_reserved set amount = amount");
    await t.db.query("update app_public.recipe_lines set seasonal = seasonal where coffee_id = $1", [x.id]);
    await t.db.query("update app_public.orders set notes = notes where status = 'COMPLETED'");
    await t.db.query("update app_public.orders set status = status");
  });
  expect(payloads).toEqual([]);
});

test("an anonymous mutation that changes nothing (Logout with a junk token) drops nothing", async () => {
  await served();
  const invalidations = liveCacheEvents.invalidations;
  const r = await post("mutation Logout($refreshToken: String!) { logout(refreshToken: $refreshToken) }", { refreshToken: "junk" });
  expect(r.status).toBe(200);
  await told();
  expect(liveCacheEvents.invalidations).toBe(invalidations);
  expect(await served()).toEqual(all("hit"));
});

describe("one miss per key", () => {
  const menu = (n: number) => `query Cold${n} { menuItems { id name inventory } }`;
  const coffeeStatements = (statements: string[]) => statements.filter((s) => /coffee_inventory/.test(s)).length;

  test("concurrent misses of one key wait for the first one's answer: one statement, the same bytes", async () => {
    const { misses, coalesced, hits } = liveCacheEvents;
    const query = menu(Date.now());
    const { result, statements } = await sql.record(() => Promise.all(Array.from({ length: 8 }, () => post(query))));
    expect(result.every((r) => r.status === 200 && !r.json.errors && r.text === result[0]!.text)).toBe(true);
    expect(coffeeStatements(statements)).toBe(1);
    expect(liveCacheEvents.misses).toBe(misses + 1);
    // The other 7 waited for that answer, or (on a slow machine, arriving
    // after it was kept) were answered from the cache: none reached SQL.
    expect(liveCacheEvents.coalesced - coalesced + (liveCacheEvents.hits - hits)).toBe(7);
    expect(liveCacheEvents.coalesced).toBeGreaterThan(coalesced);
  });

  test("an error is shared with that flight only: not cached, the next request computes again", async () => {
    const query = menu(Date.now() + 2);
    await t.db.query("revoke select on app_public.coffee_inventory from cafe_anonymous");
    let failed: RawResponse[];
    try {
      const coalesced = liveCacheEvents.coalesced;
      const { result, statements } = await sql.record(() => Promise.all(Array.from({ length: 6 }, () => post(query))));
      failed = result;
      expect(failed.every((r) => r.json.errors?.length && r.text === failed[0]!.text)).toBe(true);
      // Those that waited got that error; one arriving after it was answered
      // (a busy machine) computes again, as nothing was kept.
      const waited = liveCacheEvents.coalesced - coalesced;
      expect(statements.filter((s) => /coffee_inventory/.test(s)).length).toBe(6 - waited);
    } finally {
      await t.db.query("grant select on app_public.coffee_inventory to cafe_anonymous");
    }
    const misses = liveCacheEvents.misses;
    const next = await post(query);
    expect(next.json.errors).toBeUndefined();
    expect(liveCacheEvents.misses).toBe(misses + 1);
  });
});

describe("a rush (LIVE_CACHE_STALE_MS, 2 s by default)", () => {
  const coffeeStatements = (statements: string[]) => statements.filter((s) => /coffee_inventory/.test(s)).length;
  const inventoryOf = (r: RawResponse) => r.json.data.coffee.inventory as number;

  test("after an inventory change, one request recomputes the answer while the others get the stale one at once; the next read is fresh", async () => {
    const read = () => post(INVENTORY, { id: y.id });
    const before = inventoryOf(await read());
    expect(inventoryOf(await read())).toBe(before); // held
    await t.db.query("update app_public.stock_items set current_stock = current_stock + 70 where ingredient_id = $1", [y.ingredients[0]!.id]);
    await told();
    const { misses, stale, coalesced } = liveCacheEvents;
    const { result, statements } = await sql.record(() => Promise.all(Array.from({ length: 12 }, read)));
    // One computation reached SQL; every other request was answered from
    // memory: the stale answer while it ran, or (arriving after it was kept)
    // the new one.
    expect(coffeeStatements(statements)).toBe(1);
    expect(liveCacheEvents.misses - misses).toBe(1);
    expect(liveCacheEvents.coalesced).toBe(coalesced);
    const seen = result.map(inventoryOf);
    const after = inventoryOf(await read());
    expect(after).toBeGreaterThan(before);
    expect(seen.filter((v) => v === before).length).toBe(liveCacheEvents.stale - stale);
    expect(seen.filter((v) => v !== before)).toEqual(seen.filter((v) => v !== before).map(() => after));
  });

  test("a customer (who may have just ordered) never gets a stale answer: concurrent reads after a change all show it", async () => {
    const token = await t.token("alice");
    const read = () =>
      request(`${t.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ query: INVENTORY, variables: { id: y.id } }),
      });
    const before = inventoryOf(await read());
    expect(inventoryOf(await read())).toBe(before);
    await t.db.query("update app_public.stock_items set current_stock = current_stock + 70 where ingredient_id = $1", [y.ingredients[0]!.id]);
    await told();
    const stale = liveCacheEvents.stale;
    const seen = (await Promise.all(Array.from({ length: 8 }, read))).map(inventoryOf);
    expect(liveCacheEvents.stale).toBe(stale);
    expect(new Set(seen).size).toBe(1);
    expect(seen[0]).toBeGreaterThan(before);
  });

  test("a change that is not an inventory (a coffee's price) drops at once: nothing stale is served", async () => {
    const read = () => post("query Detail($id: ID!) { coffee(id: $id) { id name price inventory } }", { id: y.id });
    const price = Number((await read()).json.data.coffee.price);
    await read();
    await t.db.query("update app_public.coffees set price = price + 1 where id = $1", [y.id]);
    try {
      await told();
      const stale = liveCacheEvents.stale;
      const result = await Promise.all(Array.from({ length: 8 }, read));
      expect(result.map((r) => Number(r.json.data.coffee.price))).toEqual(Array.from({ length: 8 }, () => price + 1));
      expect(liveCacheEvents.stale).toBe(stale);
    } finally {
      await t.db.query("update app_public.coffees set price = price - 1 where id = $1", [y.id]);
      await told();
    }
  });
});
