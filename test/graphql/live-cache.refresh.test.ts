import { liveCacheEvents } from "../../src/metrics.ts";
import { gqlAs, ok, type Caller, type GraphQLResponse } from "../support/client.ts";
import { SqlRecorder } from "../support/db.ts";
import { ownCoffee, removeIngredients, type OwnCoffee } from "../support/fixtures.ts";
import { useTestService } from "../support/service.ts";
import { sleep, waitUntil } from "../support/wait.ts";

// Through a rush (LIVE_CACHE_REFRESH_MS): an answer gone stale by an
// inventory change is recomputed at most once per LIVE_CACHE_REFRESH_MS
// after its last computation began; until then anonymous callers get it as
// it is, with no SQL; after it, the next one recomputes and is fresh.
// Customers never get a stale answer (test/graphql/live-cache.invalidation.test.ts).

const REFRESH_MS = 1500;
const t = useTestService({
  sandbox: true,
  env: { LIVE_CACHE_MAX_ENTRIES: "1000", LIVE_CACHE_STALE_MS: "10000", LIVE_CACHE_REFRESH_MS: String(REFRESH_MS) },
  cleanup: async () => cleanup(),
});
let coffee: OwnCoffee;
let cleanup = async () => {};
let sql: SqlRecorder;

const INVENTORY = "query Inventory($id: ID!) { coffee(id: $id) { id inventory } }";
const read = (who: Caller = "anonymous") => gqlAs(t, who, INVENTORY, { id: coffee.id });
const inventoryOf = (r: GraphQLResponse) => ok(r).coffee.inventory as number;
const told = () => t.service.api!.subscriber.flush();
const restock = (n: number) => t.db.query("update app_public.stock_items set current_stock = current_stock + $2 where ingredient_id = $1", [coffee.ingredients[0]!.id, n]);

beforeAll(async () => {
  coffee = await ownCoffee(t, "Cache Refresh", "3.30", [7]);
  cleanup = async () => {
    await t.db.query("delete from app_public.coffees where id = $1", [coffee.id]);
    await removeIngredients(
      t,
      coffee.ingredients.map((i) => i.id),
    );
  };
  sql = new SqlRecorder(decodeURIComponent(new URL(t.urls.authenticator).username));
  sql.install();
  await waitUntil("the live cache on", async () => {
    const hits = liveCacheEvents.hits;
    await read();
    await read();
    return liveCacheEvents.hits > hits;
  });
});

test("a stale answer is recomputed at most once per LIVE_CACHE_REFRESH_MS: until then served as it is, with no SQL; then fresh", async () => {
  // A computation now (the held answer is older than the floor after the wait below).
  await sleep(REFRESH_MS + 100);
  await restock(7);
  await told();
  const computed = Date.now();
  const before = inventoryOf(await read()); // recomputed: the floor had passed
  await restock(70);
  await told();
  const { stale, misses } = liveCacheEvents;
  const { result, statements } = await sql.record(() => Promise.all(Array.from({ length: 8 }, () => read())));
  expect(Date.now() - computed).toBeLessThan(REFRESH_MS); // (else the test proves nothing: the machine was too slow)
  expect(result.map(inventoryOf)).toEqual(Array.from({ length: 8 }, () => before));
  expect(statements.filter((s) => /coffee_inventory/.test(s))).toEqual([]);
  expect(liveCacheEvents.misses).toBe(misses);
  expect(liveCacheEvents.stale - stale).toBe(8);

  // Past the floor, the next read recomputes, and shows the change.
  await sleep(Math.max(0, computed + REFRESH_MS + 100 - Date.now()));
  const after = inventoryOf(await read());
  expect(liveCacheEvents.misses).toBe(misses + 1);
  expect(after).toBeGreaterThan(before);
});

test("a customer is never served the stale answer, even within the floor", async () => {
  const asAlice = () => read("alice");
  const before = inventoryOf(await asAlice());
  await restock(70);
  await told();
  const stale = liveCacheEvents.stale;
  expect(inventoryOf(await asAlice())).toBeGreaterThan(before);
  expect(liveCacheEvents.stale).toBe(stale);
});
