import { jest } from "@jest/globals";
import { HIT_HALF_LIFE_MS, LiveCache, PUBLIC_READ_TABLES, publicReadsViolations, type CachedAnswer } from "../../src/http/liveCache.ts";
import { liveCacheEvents } from "../../src/metrics.ts";
import { PUBLIC_READS_TOPIC } from "../../common/topics.ts";
import { request, type RawResponse } from "../support/client.ts";
import { operationsOf } from "../support/contract.ts";
import pg from "pg";
import { SqlRecorder, testDatabaseUrl, tryInRollback } from "../support/db.ts";
import { insertOrders } from "../support/fixtures.ts";
import { listenerPid, useTestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";
import { report } from "../support/figures.ts";
import { DEMO } from "../support/client.ts";

// The live cache (src/http/liveCache.ts): public reads answered from
// memory, shared only by callers whose visibility is the same (held to
// pg_policies here), dropped by every change of the tables they are made of
// (a GraphQL mutation, the worker, a DBA's SQL) and by a reconnection,
// bounded in entries and bytes.

const answer = (bytes: number): CachedAnswer => ({ statusCode: 200, headers: {}, body: Buffer.alloc(bytes), operationName: undefined });
const openCache = (maxEntries: number, maxBytes: number) => {
  const cache = new LiveCache({ maxEntries, maxBytes });
  cache.refuse([]); // as if the database had been checked
  return cache;
};

describe("the store (unit)", () => {
  test("keeps at most maxEntries answers, the least recently used dropped first", () => {
    const cache = openCache(2, 1_000_000);
    const g = cache.generation;
    cache.store("a", g, answer(1));
    cache.store("b", g, answer(1));
    expect(cache.lookup("a")).toBeDefined(); // a is now the most recent
    cache.store("c", g, answer(1));
    expect([cache.lookup("a"), cache.lookup("b"), cache.lookup("c")].map(Boolean)).toEqual([true, false, true]);
    expect(cache.size).toBe(2);
  });

  test("keeps at most maxBytes (body and key), and never an answer larger than that alone", () => {
    const cache = openCache(100, 250);
    const g = cache.generation;
    expect(cache.store("a", g, answer(100))).toBe(true);
    expect(cache.store("b", g, answer(100))).toBe(true);
    expect(cache.store("c", g, answer(100))).toBe(true);
    expect(cache.bytes).toBeLessThanOrEqual(250);
    expect(cache.lookup("a")).toBeUndefined();
    expect(cache.store("huge", g, answer(300))).toBe(false);
    expect(cache.lookup("huge")).toBeUndefined();
  });

  test("a change drops the answers made of it and only those; an answer of any coffee's inventory goes with each", () => {
    const cache = openCache(10, 1000);
    const g = cache.generation;
    cache.store("roasters", g, answer(1), ["app_public.coffees", "app_public.roasters"]);
    cache.store("inventory a", g, answer(1), ["app_public.coffees", "inventory:a"]);
    cache.store("inventory b", g, answer(1), ["app_public.coffees", "inventory:b"]);
    cache.store("any inventory", g, answer(1), ["app_public.coffees", "inventory:*"]);
    const held = () => ["roasters", "inventory a", "inventory b", "any inventory"].filter((k) => cache.lookup(k));
    cache.changed(["inventory:a"]);
    expect(held()).toEqual(["roasters", "inventory b"]);
    cache.changed(["app_public.roasters"]);
    expect(held()).toEqual(["inventory b"]);
    cache.changed(["all"]);
    expect(held()).toEqual([]);
    expect(cache.bytes).toBe(0);
  });

  test("an answer computed while what it is made of changed is not stored; another change does not stop it", () => {
    const cache = openCache(10, 1000);
    const before = cache.generation;
    cache.changed(["inventory:a"]);
    expect(cache.store("a", before, answer(1), ["inventory:a"])).toBe(false);
    expect(cache.store("any", before, answer(1), ["inventory:*"])).toBe(false);
    expect(cache.store("b", before, answer(1), ["inventory:b", "app_public.coffees"])).toBe(true);
  });

  test("an answer computed while an invalidation arrived is not stored; off while refused or with a zero limit", () => {
    const cache = openCache(10, 1000);
    const before = cache.generation;
    cache.invalidate();
    expect(cache.store("a", before, answer(1))).toBe(false);
    expect(cache.store("a", cache.generation, answer(1))).toBe(true);
    cache.refuse(["a user-dependent policy"]);
    expect(cache.enabled).toBe(false);
    expect(cache.lookup("a")).toBeUndefined();
    expect(cache.store("b", cache.generation, answer(1))).toBe(false);
    expect(new LiveCache({ maxEntries: 0, maxBytes: 1000 }).configured).toBe(false);
  });

  test("a count of hits ages: an answer served 1,000 times and then never again keeps a new key out for minutes, not for ever (HIT_HALF_LIFE_MS)", () => {
    let now = Date.now();
    const clock = jest.spyOn(Date, "now").mockImplementation(() => now);
    try {
      const cache = openCache(2, 1_000_000);
      const g = cache.generation;
      cache.store("old app's menu", g, answer(1));
      for (let i = 0; i < 1000; i++) cache.lookup("old app's menu");
      cache.store("other", g, answer(1));
      cache.lookup("other"); // the old menu is now the least recently used
      // Asked for (a miss, then kept or not) at: once a second for 5 s; then once a minute.
      const kept: string[] = [];
      for (let i = 0; i < 5; i++, now += 1000) if (cache.store("new app's menu", g, answer(1))) kept.push(`${i} s`);
      for (let minute = 1; minute <= 15 && !kept.length; minute++) {
        now += HIT_HALF_LIFE_MS;
        cache.lookup("other");
        if (cache.store("new app's menu", g, answer(1))) kept.push(`${minute} min`);
      }
      report("aged hits", { new_key_kept_after: kept[0] ?? "never (15 min)" });
      expect(kept).toEqual(["7 min"]); // 1000 >> 7 = 7 hits; the new key offered 11 times before
      expect([Boolean(cache.lookup("new app's menu")), Boolean(cache.lookup("other")), Boolean(cache.lookup("old app's menu"))]).toEqual([true, true, false]);
    } finally {
      clock.mockRestore();
    }
  });

  test("an answer dropped by a change keeps its count: recomputed, it takes its place back from answers read less", () => {
    const cache = openCache(3, 1_000_000);
    cache.store("menu", cache.generation, answer(1), ["app_public.coffees"]);
    for (let i = 0; i < 5; i++) cache.lookup("menu");
    cache.changed(["app_public.coffees"]);
    const g = cache.generation;
    for (const k of ["a", "b", "c"]) {
      cache.store(k, g, answer(1));
      cache.lookup(k);
      cache.lookup(k);
    }
    expect(cache.store("menu", g, answer(1), ["app_public.coffees"])).toBe(true);
    expect(cache.lookup("menu")).toBeDefined();
  });
});

describe("the store through a rush (unit, LIVE_CACHE_STALE_MS)", () => {
  const staleCache = (staleMs: number) => {
    const cache = new LiveCache({ maxEntries: 10, maxBytes: 1000, staleMs });
    cache.refuse([]);
    return cache;
  };

  test("an inventory change makes its answers stale, not gone; one recomputation at a time; a table change still drops", () => {
    const cache = staleCache(60_000);
    const g = cache.generation;
    cache.store("inventory a", g, answer(1), ["app_public.coffees", "inventory:a"]);
    cache.store("any inventory", g, answer(2), ["app_public.coffees", "inventory:*"]);
    cache.store("inventory b", g, answer(3), ["app_public.coffees", "inventory:b"]);
    cache.changed(["inventory:a"]);
    expect(["inventory a", "any inventory", "inventory b"].map((k) => cache.lookup(k)?.stale)).toEqual([true, true, false]);
    // The first request after it recomputes (a flight); meanwhile the key is being refreshed.
    expect(cache.refreshing("inventory a")).toBe(false);
    const settle = cache.beginFlight("inventory a", ["app_public.coffees", "inventory:a"]);
    const during = cache.generation;
    expect(cache.refreshing("inventory a")).toBe(true);
    cache.changed(["inventory:a"]); // another order meanwhile
    expect(cache.joinFlight("inventory a", true)).toBeDefined(); // within the bound, for who may get a stale answer
    expect(cache.joinFlight("inventory a")).toBeUndefined(); // the others compute their own
    // Its answer is kept, stale (an inventory changed while it was computed); a fresh one replaces it.
    expect(cache.store("inventory a", during, answer(4), ["app_public.coffees", "inventory:a"])).toBe(true);
    settle(null);
    expect(cache.lookup("inventory a")).toMatchObject({ stale: true });
    expect(cache.store("inventory a", cache.generation, answer(5), ["app_public.coffees", "inventory:a"])).toBe(true);
    expect(cache.lookup("inventory a")).toMatchObject({ stale: false });
    // Anything but an inventory drops, stale or not.
    cache.changed(["app_public.coffees"]);
    expect(["inventory a", "any inventory", "inventory b"].map((k) => cache.lookup(k))).toEqual([undefined, undefined, undefined]);
    const before = cache.generation;
    cache.changed(["app_public.coffees"]);
    expect(cache.store("c", before, answer(1), ["app_public.coffees", "inventory:a"])).toBe(false);
  });

  test("a stale answer is served for at most LIVE_CACHE_STALE_MS after the change; at 0 an inventory change drops as any other", async () => {
    const cache = staleCache(50);
    cache.store("a", cache.generation, answer(1), ["inventory:a"]);
    cache.changed(["inventory:a"]);
    expect(cache.lookup("a")?.stale).toBe(true);
    await new Promise((r) => setTimeout(r, 80));
    expect(cache.lookup("a")).toBeUndefined();
    const exact = staleCache(0);
    exact.store("a", exact.generation, answer(1), ["inventory:a"]);
    const g = exact.generation;
    exact.changed(["inventory:a"]);
    expect(exact.lookup("a")).toBeUndefined();
    expect(exact.store("a", g, answer(1), ["inventory:a"])).toBe(false);
  });
});

describe("against the database", () => {
  const t = useTestService({ sandbox: true, deleteNewOrders: true, worker: true, env: { LIVE_CACHE_MAX_ENTRIES: "1000" }, cleanup: async (s) => restore(s) });
  const KIOSK = operationsOf("kiosk");
  let coffee: { id: string; name: string; price: string };
  let restore: (s: typeof t) => Promise<void> = async () => {};
  let sql: SqlRecorder;

  beforeAll(async () => {
    // A coffee on the menu with a recipe whose every ingredient is stocked (its inventory is a number).
    const { rows } = await t.db.query(
      `select c.id, c.name, c.price::text from app_public.coffees c
        where c.available and exists (select 1 from app_public.recipe_lines rl where rl.coffee_id = c.id)
          and not exists (select 1 from app_public.recipe_lines rl left join app_public.stock_items s using (ingredient_id)
                           where rl.coffee_id = c.id and s.ingredient_id is null)
        order by c.category, c.name limit 1`,
    );
    coffee = rows[0];
    restore = async (s) => void (await s.db.query("update app_public.coffees set name = $2, price = $3 where id = $1", [coffee.id, coffee.name, coffee.price]));
    sql = new SqlRecorder(decodeURIComponent(new URL(t.urls.authenticator).username));
    sql.install();
    // On once the service has checked the database's policies.
    await waitUntil("the live cache on", async () => {
      const hits = liveCacheEvents.hits;
      await menu();
      await menu();
      return liveCacheEvents.hits > hits;
    });
    await t.db.query("select pg_notify($1, 'all')", [PUBLIC_READS_TOPIC]); // as after a bulk load: nothing cached now
    await told();
  });
  afterAll(() => sql?.uninstall());

  const post = (query: string, token?: string, operationName?: string, variables?: Record<string, unknown>): Promise<RawResponse> =>
    request(`${t.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, operationName, variables }),
    });
  const menu = (token?: string) => post(KIOSK, token, "KioskMenu");
  const menuItem = (r: RawResponse) => r.json.data.menuItems.find((c: { id: string }) => c.id === coffee.id);
  /** A round trip on the API's LISTEN connection: every NOTIFY committed before has reached it. */
  const told = () => t.service.api!.subscriber.flush();

  test("every SELECT policy on a table public reads use as the caller is `using (true)` for cafe_anonymous and cafe_customer, and their functions look at nobody", async () => {
    expect(await publicReadsViolations((text, values) => t.db.query(text, values))).toEqual([]);
  });

  test("a DBA's user-dependent policy on a cached table is caught (and turns the cache off)", async () => {
    let violations: string[] = [];
    const error = await tryInRollback(t, async (c) => {
      await c.query("create policy select_own_coffees on app_public.coffees for select to cafe_customer using (app_public.current_user_id() is not null)");
      violations = await publicReadsViolations((text, values) => c.query(text, values));
    });
    expect(error).toBeNull();
    expect(violations).toEqual([expect.stringMatching(/select_own_coffees on app_public\.coffees/)]);
    const cache = openCache(10, 1000);
    cache.refuse(violations);
    expect(cache.enabled).toBe(false);
  });

  test("every table a public read is made of announces its changes on the topic", async () => {
    const { rows } = await t.db.query(
      `select n.nspname || '.' || c.relname as t from pg_trigger g join pg_class c on c.oid = g.tgrelid join pg_namespace n on n.oid = c.relnamespace
        where g.tgfoid = 'app_private.tg__announce_public_reads'::regproc order by 1`,
    );
    expect(rows.map((r) => r.t)).toEqual(expect.arrayContaining([...PUBLIC_READ_TABLES]));
    const { rows: src } = await t.db.query("select prosrc from pg_proc where oid = 'app_private.tg__announce_public_reads'::regproc");
    expect(src[0].prosrc).toContain(`'${PUBLIC_READS_TOPIC}'`);
  });

  const scrapedHits = async () => Number(/^cafe_live_cache_hits_total (\d+)$/m.exec(await (await fetch(`${t.url}/metrics`)).text())?.[1]);

  test("a repeated read is answered from memory, byte for byte, with no SQL; anonymous callers and customers each get their own", async () => {
    const scraped = await scrapedHits();
    const alice = await t.token("alice");
    const bob = await t.token("bob");
    for (const [first, second] of [
      [undefined, undefined],
      [alice, bob],
    ]) {
      const hits = liveCacheEvents.hits;
      const misses = liveCacheEvents.misses;
      const uncached = await menu(first);
      expect(uncached.status).toBe(200);
      expect(uncached.json.errors).toBeUndefined();
      expect(liveCacheEvents.misses).toBe(misses + 1);
      const { result: cached, statements } = await sql.record(() => menu(second));
      expect(liveCacheEvents.hits).toBe(hits + 1);
      expect(statements).toEqual([]);
      expect(cached.text).toBe(uncached.text);
      expect(cached.headers["content-type"]).toBe(uncached.headers["content-type"]);
      expect(cached.headers["x-request-id"]).toBeDefined();
      expect(cached.json.extensions).toEqual(uncached.json.extensions);
    }
    expect(await scrapedHits()).toBeGreaterThan(scraped); // GET /metrics shows them
  });

  test("texts that differ only in what GraphQL ignores share one answer: a whitespace-and-comment variant of the kiosk's menu is a hit, with no SQL", async () => {
    const first = await menu();
    expect(first.status).toBe(200);
    const variants = [`# kiosk 7\n${KIOSK}`, KIOSK.replace(/\n/g, "\n\n  ,"), `${KIOSK}   # the end`];
    for (const variant of variants) {
      expect(variant).not.toBe(KIOSK);
      const hits = liveCacheEvents.hits;
      const { result, statements } = await sql.record(() => post(variant, undefined, "KioskMenu"));
      expect(liveCacheEvents.hits).toBe(hits + 1);
      expect(statements).toEqual([]);
      expect(result.text).toBe(first.text);
    }
    // Another document (one field fewer) is not the same answer.
    const misses = liveCacheEvents.misses;
    const other = await post(KIOSK.replace(/\bname\b/, ""), undefined, "KioskMenu");
    expect(other.status).toBe(200);
    expect(liveCacheEvents.misses).toBe(misses + 1);
  });

  test("staff, mutations and caller-specific reads are never cached", async () => {
    const barista = await t.token("barista");
    const alice = await t.token("alice");
    const hits = liveCacheEvents.hits;
    await menu(barista);
    await menu(barista);
    await post("query Me { customer { id name } menuItems { id } }", alice);
    await post("query Me { customer { id name } menuItems { id } }", alice);
    await post('query Filtered { menuItems(filter: { name: { startsWith: "A" } }) { id } }');
    await post('query Filtered { menuItems(filter: { name: { startsWith: "A" } }) { id } }');
    expect(liveCacheEvents.hits).toBe(hits);
  });

  test("a GraphQL mutation (an admin's new price) shows in the next read", async () => {
    await menu(); // cached
    expect(menuItem(await menu())).toMatchObject({ price: Number(coffee.price) });
    const admin = await t.token("admin");
    const newPrice = Number(coffee.price) + 1;
    const r = await post(operationsOf("admin"), admin, "Reprice", { id: coffee.id, newPrice });
    expect(r.json.errors).toBeUndefined();
    await told();
    expect(menuItem(await menu())).toMatchObject({ price: newPrice });
  });

  test("a DBA's plain UPDATE shows in the next read", async () => {
    await menu();
    await t.db.query("update app_public.coffees set name = name || ' (new)' where id = $1", [coffee.id]);
    await told();
    expect(menuItem(await menu()).name).toBe(`${coffee.name} (new)`);
  });

  test("the worker taking an order's ingredients from stock shows in the next read (inventory)", async () => {
    const [orderId] = await insertOrders(t, [{ customerId: DEMO.alice.id, status: "PAID", lines: [{ coffeeId: coffee.id, quantity: 1 }] }]);
    // Not yet taken, and nothing reserved for it: taking it lowers what the menu says is left.
    await t.db.query("update app_public.orders set inventory_taken_at = null where id = $1", [orderId]);
    await told();
    const before = menuItem(await menu()).inventory as number;
    expect(menuItem(await menu()).inventory).toBe(before); // from the cache
    expect(before).toBeGreaterThan(0);
    await t.db.query("select graphile_worker.add_job('update_inventory', json_build_object('orderId', $1::uuid))", [orderId]);
    await waitUntil("the worker took the stock", async () => (await t.db.query("select inventory_taken_at from app_public.orders where id = $1", [orderId])).rows[0].inventory_taken_at !== null);
    await told();
    expect(menuItem(await menu()).inventory).toBeLessThan(before);
  });

  test("after the LISTEN connection comes back, nothing cached before is served", async () => {
    await menu();
    const hits = liveCacheEvents.hits;
    await menu();
    expect(liveCacheEvents.hits).toBe(hits + 1);
    const invalidations = liveCacheEvents.invalidations;
    const su = new pg.Client({ connectionString: testDatabaseUrl() });
    await su.connect();
    await su.query("select pg_terminate_backend($1)", [listenerPid(t)]);
    await su.end();
    await waitUntil("the cache emptied after the reconnection", () => liveCacheEvents.invalidations > invalidations && t.service.api!.subscriber.reconnects > 0);
    await menu();
    expect(liveCacheEvents.hits).toBe(hits + 1);
  });
});
