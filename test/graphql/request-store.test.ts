import { readFileSync } from "node:fs";
import path from "node:path";
import { DEMO, expectRefused, ok, settled, subscribe, wsClient } from "../support/client.ts";
import { useTestService } from "../support/service.ts";

// The store a request is for (migration 000019-request-store.sql,
// src/requestStore.ts): the X-Store-Id header (graphql-ws:
// connectionParams.storeId) is what an argument naming no store means; an
// unknown, malformed or closed one is BAD_USER_INPUT. The live cache keys its
// answers by it. The contract's own KioskMenu, unchanged, is the kiosk.

const t = useTestService({
  sandbox: true,
  env: { LIVE_CACHE_MAX_ENTRIES: "1000" },
  async cleanup(s) {
    await s.db.query("delete from app_public.store_coffee_prices");
    await s.db.query("update app_public.stores set is_open = true where id = $1", [DEMO.stores.ribeira]);
  },
});
const { baixa, ribeira } = DEMO.stores;
const LATTE = "40000000-0000-4000-8000-000000000003";
const PUMPKIN = "40000000-0000-4000-8000-000000000011"; // off Ribeira's menu (data/demo.sql)
const KIOSK = readFileSync(path.join(import.meta.dirname, "../../contract/operations/kiosk.graphql"), "utf8");
const AT = (storeId: string) => ({ "x-store-id": storeId });

type Item = { id: string; name: string; inventory: number | null };
async function kiosk(headers: Record<string, string> = {}) {
  return ok(await t.gql(KIOSK, { operationName: "KioskMenu", headers })).menuItems as Item[];
}
async function inventoryAt(storeId: string) {
  const r = ok(await t.gql(`query($s: ID) { menuItems(storeId: $s) { id inventory(storeId: $s) } }`, { variables: { s: storeId } }));
  return Object.fromEntries(r.menuItems.map((c: any) => [c.id, c.inventory]));
}

describe("X-Store-Id", () => {
  test("the contract's KioskMenu sent with X-Store-Id is that store's menu and inventory, also after the other store's answer was cached", async () => {
    const atBaixa = await kiosk();
    const atRibeira = await kiosk(AT(ribeira));
    expect(atBaixa.map((c) => c.id)).toContain(PUMPKIN);
    expect(atRibeira.map((c) => c.id)).not.toContain(PUMPKIN);
    const ribeiraStock = await inventoryAt(ribeira);
    expect(Object.fromEntries(atRibeira.map((c) => [c.id, c.inventory]))).toEqual(ribeiraStock);
    const baixaStock = await inventoryAt(baixa);
    expect(Object.fromEntries(atBaixa.map((c) => [c.id, c.inventory]))).toEqual(baixaStock);
    expect(ribeiraStock[LATTE]).not.toBe(baixaStock[LATTE]);
    // Asked again, each store keeps its own answer (the live cache keys by the store).
    expect(await kiosk(AT(ribeira))).toEqual(atRibeira);
    expect(await kiosk(AT(baixa))).toEqual(atBaixa);
    expect(await kiosk()).toEqual(atBaixa);
  });

  test("prices and orders: the header's store, unless an argument names another", async () => {
    const manager = await t.token("ribeiraManager");
    ok(await t.gql(`mutation { setStorePrice(storeId: "${ribeira}", coffeeId: "${LATTE}", price: 4.2) { id } }`, { token: manager }));
    const price = async (headers: Record<string, string>, arg = "") => ok(await t.gql(`{ coffeeById(id: "${LATTE}") { storePrice${arg} } }`, { headers })).coffeeById.storePrice;
    expect(await price(AT(ribeira))).toBe(4.2);
    expect(await price({})).toBe(3.8);
    expect(await price(AT(ribeira), `(storeId: "${baixa}")`)).toBe(3.8);
    // Coffee.price is the request's store's too: the contract's KioskMenu at Ribeira (its cached answer dropped by the change).
    const latte = (items: Array<Item & { price?: number }>) => items.find((c) => c.id === LATTE)!.price;
    expect(latte(await kiosk(AT(ribeira)))).toBe(4.2);
    expect(latte(await kiosk())).toBe(3.8);
    const barista = await t.token("ribeiraBarista");
    const order = ok(await t.gql(`mutation { createOrder(coffeeId: "${LATTE}", quantity: 1) { storeId total } }`, { token: barista, headers: AT(ribeira) })).createOrder;
    expect(order).toEqual({ storeId: ribeira, total: 4.2 });
  });

  test("an unknown, malformed or closed store is BAD_USER_INPUT, never the default store", async () => {
    for (const store of ["5707e000-0000-4000-8000-0000000000ff", "not-a-store"]) {
      expectRefused(await t.gql(KIOSK, { operationName: "KioskMenu", headers: AT(store) }), "BAD_USER_INPUT");
    }
    await t.db.query("update app_public.stores set is_open = false where id = $1", [ribeira]);
    const e = expectRefused(await t.gql(KIOSK, { operationName: "KioskMenu", headers: AT(ribeira) }), "BAD_USER_INPUT");
    expect(e.message).toMatch(/closed/);
    await t.db.query("update app_public.stores set is_open = true where id = $1", [ribeira]);
  });
});

describe("the nearest enclosing storeId", () => {
  test("menuItems(storeId: B) { inventory } is B's inventory, over HTTP and graphql-ws, whatever the header says", async () => {
    const ribeiraStock = await inventoryAt(ribeira);
    const NESTED = `query($s: ID) { menuItems(storeId: $s) { id inventory } }`;
    const over = (items: Item[]) => Object.fromEntries(items.map((c) => [c.id, c.inventory]));
    expect(over(ok(await t.gql(NESTED, { variables: { s: ribeira } })).menuItems)).toEqual(ribeiraStock);
    expect(over(ok(await t.gql(NESTED, { variables: { s: ribeira }, headers: AT(baixa) })).menuItems)).toEqual(ribeiraStock);
    const { client } = wsClient(t.url);
    try {
      const sub = subscribe(client, NESTED, { s: ribeira });
      await settled(sub);
      expect(over(sub.results[0]!.data!.menuItems as Item[])).toEqual(ribeiraStock);
    } finally {
      await client.dispose();
    }
  });
});

describe("connectionParams.storeId over graphql-ws", () => {
  test("a socket opened for a store reads that store's menu", async () => {
    const { client } = wsClient(t.url, null, { storeId: ribeira });
    try {
      const sub = subscribe(client, `query { menuItems { id inventory } }`);
      await settled(sub);
      const items = sub.results[0]!.data!.menuItems as Item[];
      expect(items.map((c) => c.id)).not.toContain(PUMPKIN);
      expect(Object.fromEntries(items.map((c) => [c.id, c.inventory]))).toEqual(await inventoryAt(ribeira));
    } finally {
      await client.dispose();
    }
  });
});
