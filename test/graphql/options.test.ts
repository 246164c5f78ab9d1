import { DEMO, expectRefused, ok, settled, subscribe } from "../support/client.ts";
import { orderQueueTopic } from "../../common/topics.ts";
import { listening, useTestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";

// Options (migrations/committed/000018-options.sql) through the API, on the
// demo chain's groups (data/demo.sql): on every MILK_BASED coffee "Size"
// (Small -0.30 x0.75, Regular, Large +0.50 x1.5) and "Milk" (Whole, Oat +0.40
// using oat milk in the whole milk's place, Skimmed); on espresso-based
// coffees "Extra shot" (+0.60, 9 g of espresso beans each, at most 2).

const t = useTestService({
  sandbox: true,
  worker: true,
  async cleanup(s) {
    await s.db.query("delete from app_public.store_options");
    await s.db.query("delete from app_public.store_coffee_prices");
    await s.db.query("delete from app_public.option_groups where name like 'Test %'");
  },
});
const { baixa, ribeira } = DEMO.stores;
const LATTE = "40000000-0000-4000-8000-000000000003";
const ESPRESSO = "40000000-0000-4000-8000-000000000001";
const WHOLE_MILK = "30000000-0000-4000-8000-000000000003";
const OAT_MILK = "30000000-0000-4000-8000-000000000004";
const BEANS = "30000000-0000-4000-8000-000000000001";
let tok: Record<"alice" | "barista" | "admin" | "ribeiraBarista" | "ribeiraManager", string>;
let opt: Record<string, string>;

const MENU = `query($id: ID!, $storeId: ID) { coffee: coffeeById(id: $id) { name price storePrice(storeId: $storeId)
  optionGroups { name minSelections maxSelections options { id name priceDelta isDefault available(storeId: $storeId) inventory(storeId: $storeId) } } } }`;
const ORDER = `mutation($items: [OrderItemInput!]!, $storeId: ID) { createOrder(input: { items: $items }, storeId: $storeId) {
  id total items { quantity unitPrice lineTotal options { name priceDelta } } } }`;
const PAY = `mutation($id: ID!) { markOrderPaid(id: $id, method: CASH) { id status } }`;
const MOVEMENTS = `query($id: ID!) { order(id: $id) { stockMovementList { nodes { ingredientId delta } } } }`;
const AVAILABLE = `mutation($storeId: ID!, $optionId: ID!, $available: Boolean!) { setOptionAvailable(storeId: $storeId, optionId: $optionId, available: $available) { name available(storeId: $storeId) } }`;
const PRICE = `mutation($storeId: ID!, $coffeeId: ID!, $price: Float) { setStorePrice(storeId: $storeId, coffeeId: $coffeeId, price: $price) { name storePrice(storeId: $storeId) } }`;

async function reserved(orderId: string) {
  const { rows } = await t.db.query("select ingredient_id, amount::float8 as amount from app_private.stock_reservations where order_id = $1 order by ingredient_id", [orderId]);
  return Object.fromEntries(rows.map((r) => [r.ingredient_id, r.amount]));
}
async function orderCount() {
  return Number((await t.db.query("select count(*) from app_public.orders")).rows[0].count);
}

beforeAll(async () => {
  tok = {
    alice: await t.token("alice"),
    barista: await t.token("barista"),
    admin: await t.token("admin"),
    ribeiraBarista: await t.token("ribeiraBarista"),
    ribeiraManager: await t.token("ribeiraManager"),
  };
  const menu = ok(await t.gql(MENU, { variables: { id: LATTE } })).coffee;
  opt = Object.fromEntries(menu.optionGroups.flatMap((g: any) => g.options.map((o: any) => [o.name, o.id])));
});

describe("options on the menu", () => {
  test("a latte offers Size, Milk and Extra shot, with prices, defaults, availability and stock", async () => {
    const menu = ok(await t.gql(MENU, { variables: { id: LATTE } })).coffee;
    expect(menu.optionGroups.map((g: any) => [g.name, g.minSelections, g.maxSelections])).toEqual([
      ["Size", 1, 1],
      ["Milk", 1, 1],
      ["Extra shot", 0, 2],
    ]);
    const [size, milk, shot] = menu.optionGroups;
    expect(size.options.map((o: any) => [o.name, o.priceDelta, o.isDefault, o.available, o.inventory])).toEqual([
      ["Small", -0.3, false, true, null],
      ["Regular", 0, true, true, null],
      ["Large", 0.5, false, true, null],
    ]);
    expect(milk.options.map((o: any) => [o.name, o.priceDelta, o.isDefault])).toEqual([
      ["Whole", 0, true],
      ["Oat", 0.4, false],
      ["Skimmed", 0, false],
    ]);
    // Oat: Baixa's 1500 ml over the most a Milk coffee's recipe takes of whole milk (220 ml).
    expect(milk.options[1].inventory).toBe(6);
    expect(shot.options.map((o: any) => o.name)).toEqual(["Extra shot", "Second extra shot"]);
    // An espresso offers extra shots only.
    const espresso = ok(await t.gql(MENU, { variables: { id: ESPRESSO } })).coffee;
    expect(espresso.optionGroups.map((g: any) => g.name)).toEqual(["Extra shot"]);
  });
});

describe("orders with options", () => {
  test("a large oat latte with an extra shot: priced in SQL, reserving oat milk and no milk, taking it when paid", async () => {
    const r = await t.gql(ORDER, { variables: { items: [{ coffeeId: LATTE, quantity: 2, optionIds: [opt.Large, opt.Oat, opt["Extra shot"]] }] }, token: tok.barista });
    const order = ok(r).createOrder;
    // 3.80 + 0.50 + 0.40 + 0.60 = 5.30 a cup.
    expect(order.items).toEqual([
      {
        quantity: 2,
        unitPrice: 5.3,
        lineTotal: 10.6,
        options: [
          { name: "Extra shot", priceDelta: 0.6 },
          { name: "Oat", priceDelta: 0.4 },
          { name: "Large", priceDelta: 0.5 },
        ],
      },
    ]);
    expect(order.total).toBe(10.6);
    // Two cups of 1.5 x (18 g beans, 220 ml milk as oat milk) plus 9 g a shot.
    expect(await reserved(order.id)).toEqual({ [BEANS]: 72, [OAT_MILK]: 660 });
    const oat = ok(await t.gql(MENU, { variables: { id: LATTE } })).coffee.optionGroups[1].options[1];
    expect(oat.inventory).toBe(3); // (1500 - 660) / 220
    ok(await t.gql(PAY, { variables: { id: order.id }, token: tok.barista }));
    // The worker takes the stock of a paid order.
    const moves = await waitUntil("the stock taken", async () => {
      const nodes = ok(await t.gql(MOVEMENTS, { variables: { id: order.id }, token: tok.barista })).order.stockMovementList.nodes;
      return nodes.length > 0 ? nodes : null;
    });
    expect(Object.fromEntries(moves.map((m: any) => [m.ingredientId, m.delta]))).toEqual({ [BEANS]: -72, [OAT_MILK]: -660 });
    // The options sold, by name (salesReport groupBy OPTION): cups with each, and what its deltas took.
    const day = (offset: number) => new Date(Date.now() + offset * 86400_000).toISOString().slice(0, 10);
    const REPORT = `query($s: ID) { salesReport(from: "${day(-1)}", to: "${day(2)}", groupBy: OPTION, storeId: $s) { bucket orders cups revenue } }`;
    const sold = ok(await t.gql(REPORT, { variables: { s: baixa }, token: tok.admin })).salesReport;
    expect(sold).toEqual(
      expect.arrayContaining([
        { bucket: "Extra shot", orders: 1, cups: 2, revenue: 1.2 },
        { bucket: "Large", orders: 1, cups: 2, revenue: 1 },
        { bucket: "Oat", orders: 1, cups: 2, revenue: 0.8 },
      ]),
    );
  });

  test("without optionIds each group's defaults are used: a regular whole-milk latte at the chain's price", async () => {
    const order = ok(await t.gql(ORDER, { variables: { items: [{ coffeeId: LATTE, quantity: 1 }] }, token: tok.alice })).createOrder;
    expect(order.items[0]).toEqual({
      quantity: 1,
      unitPrice: 3.8,
      lineTotal: 3.8,
      options: [
        { name: "Whole", priceDelta: 0 },
        { name: "Regular", priceDelta: 0 },
      ],
    });
    expect(await reserved(order.id)).toEqual({ [BEANS]: 18, [WHOLE_MILK]: 220 });
    ok(await t.gql(`mutation($id: ID!) { cancelOrder(id: $id) }`, { variables: { id: order.id }, token: tok.alice }));
  });

  test("each refusal is BAD_USER_INPUT naming the group or option, and writes nothing", async () => {
    const cases: Array<[string[], RegExp]> = [
      [[opt.Small, opt.Large, opt.Whole], /at most 1 from "Size"/],
      [[opt.Whole], /at least 1 from "Size"/],
      [[], /at least 1 from "Size"/],
      [[opt.Regular, opt.Whole, opt.Oat], /at most 1 from "Milk"/],
      [[opt.Regular, opt.Whole, opt.Whole], /"Whole" is chosen twice/],
      [[opt.Regular, opt.Whole, "00000000-0000-4000-8000-000000000000"], /00000000-0000-4000-8000-000000000000 is not offered/],
      [[opt.Regular, opt.Whole, "not-an-id"], /No option with id not-an-id/],
    ];
    const before = await orderCount();
    for (const [optionIds, message] of cases) {
      const e = expectRefused(await t.gql(ORDER, { variables: { items: [{ coffeeId: LATTE, quantity: 1, optionIds }] }, token: tok.barista }), "BAD_USER_INPUT");
      expect(e.message).toMatch(message);
    }
    // An option of another coffee's group: a Size on an espresso.
    const e = expectRefused(await t.gql(ORDER, { variables: { items: [{ coffeeId: ESPRESSO, quantity: 1, optionIds: [opt.Large] }] }, token: tok.barista }), "BAD_USER_INPUT");
    expect(e.message).toMatch(/"Large" is not offered for House Espresso/);
    // Unavailable at the store: Baixa ran out of oat milk.
    ok(await t.gql(AVAILABLE, { variables: { storeId: baixa, optionId: opt.Oat, available: false }, token: tok.barista }));
    const off = expectRefused(await t.gql(ORDER, { variables: { items: [{ coffeeId: LATTE, quantity: 1, optionIds: [opt.Regular, opt.Oat] }] }, token: tok.barista }), "BAD_USER_INPUT");
    expect(off.message).toMatch(/"Oat" is not available at Baixa/);
    ok(await t.gql(AVAILABLE, { variables: { storeId: baixa, optionId: opt.Oat, available: true }, token: tok.barista }));
    expect(await orderCount()).toBe(before);
  });
});

describe("the options reach those who make and see the order", () => {
  test("the barista queue (orderQueueChanged) and the till's order show each line's options", async () => {
    const QUEUE = `subscription { orderQueueChanged { id status items { quantity options { name } } } }`;
    const queue = subscribe<{ orderQueueChanged: { id: string; status: string; items: Array<{ quantity: number; options: Array<{ name: string }> }> } }>(t.ws(tok.barista), QUEUE);
    await listening(t, [orderQueueTopic(baixa)]);
    const order = ok(await t.gql(ORDER, { variables: { items: [{ coffeeId: LATTE, quantity: 1, optionIds: [opt.Small, opt.Skimmed] }] }, token: tok.barista })).createOrder;
    ok(await t.gql(PAY, { variables: { id: order.id }, token: tok.barista }));
    await settled(queue);
    const event = queue.results.map((r) => r.data?.orderQueueChanged).find((o) => o?.id === order.id);
    expect(event?.items).toEqual([{ quantity: 1, options: [{ name: "Skimmed" }, { name: "Small" }] }]);
    const till = ok(await t.gql(`query($id: ID!) { order(id: $id) { items { unitPrice options { name priceDelta } } } }`, { variables: { id: order.id }, token: tok.barista })).order;
    expect(till.items).toEqual([
      {
        unitPrice: 3.5,
        options: [
          { name: "Skimmed", priceDelta: 0 },
          { name: "Small", priceDelta: -0.3 },
        ],
      },
    ]);
  });
});

describe("per store", () => {
  test("a store's price: set by its admin, charged there only, null goes back to the chain's; audited", async () => {
    const set = ok(await t.gql(PRICE, { variables: { storeId: ribeira, coffeeId: LATTE, price: 4.2 }, token: tok.ribeiraManager })).setStorePrice;
    expect(set).toEqual({ name: "Caffè Latte", storePrice: 4.2 });
    expect(ok(await t.gql(MENU, { variables: { id: LATTE, storeId: baixa } })).coffee.storePrice).toBe(3.8);
    const order = ok(await t.gql(ORDER, { variables: { items: [{ coffeeId: LATTE, quantity: 1, optionIds: [opt.Small, opt.Oat] }], storeId: ribeira }, token: tok.ribeiraBarista })).createOrder;
    expect(order.items[0].unitPrice).toBe(4.3); // 4.20 - 0.30 + 0.40
    // Ribeira's manager is no admin of Baixa; a barista sets no price.
    expectRefused(await t.gql(PRICE, { variables: { storeId: baixa, coffeeId: LATTE, price: 1 }, token: tok.ribeiraManager }), "FORBIDDEN");
    expectRefused(await t.gql(PRICE, { variables: { storeId: ribeira, coffeeId: LATTE, price: 1 }, token: tok.ribeiraBarista }), "FORBIDDEN");
    expectRefused(await t.gql(PRICE, { variables: { storeId: ribeira, coffeeId: LATTE, price: 0 }, token: tok.ribeiraManager }), "BAD_USER_INPUT");
    const back = ok(await t.gql(PRICE, { variables: { storeId: ribeira, coffeeId: LATTE, price: null }, token: tok.ribeiraManager })).setStorePrice;
    expect(back.storePrice).toBe(3.8);
    const { rows } = await t.db.query("select action from app_private.audit_log where entity = $1 order by id", [`app_public.store_coffee_prices ${ribeira} ${LATTE}`]);
    expect(rows.map((r) => r.action).slice(-2)).toEqual(["INSERT", "DELETE"]);
  });

  test("availability: a store's barista switches an option off there, never at another store", async () => {
    const off = ok(await t.gql(AVAILABLE, { variables: { storeId: ribeira, optionId: opt.Oat, available: false }, token: tok.ribeiraBarista })).setOptionAvailable;
    expect(off).toEqual({ name: "Oat", available: false });
    const oatAt = async (storeId: string) => ok(await t.gql(MENU, { variables: { id: LATTE, storeId } })).coffee.optionGroups[1].options[1].available;
    expect(await oatAt(ribeira)).toBe(false);
    expect(await oatAt(baixa)).toBe(true);
    expectRefused(await t.gql(AVAILABLE, { variables: { storeId: baixa, optionId: opt.Oat, available: false }, token: tok.ribeiraBarista }), "FORBIDDEN");
    expectRefused(await t.gql(AVAILABLE, { variables: { storeId: ribeira, optionId: opt.Oat, available: true }, token: tok.barista }), "FORBIDDEN");
    expectRefused(await t.gql(AVAILABLE, { variables: { storeId: baixa, optionId: opt.Oat, available: false }, token: tok.alice }), "FORBIDDEN");
    expect(await oatAt(baixa)).toBe(true);
    ok(await t.gql(AVAILABLE, { variables: { storeId: ribeira, optionId: opt.Oat, available: true }, token: tok.ribeiraManager }));
    expect(await oatAt(ribeira)).toBe(true);
  });
});

describe("the chain's admin adds groups and options", () => {
  test("addOptionGroup and addOption: chain admins only; the new option is ordered and takes its ingredient", async () => {
    const GROUP = `mutation($coffeeIds: [ID!]!) { addOptionGroup(name: "Test syrup", minSelections: 0, maxSelections: 1, coffeeIds: $coffeeIds) { id name minSelections maxSelections options { id } } }`;
    expectRefused(await t.gql(GROUP, { variables: { coffeeIds: [LATTE] }, token: tok.ribeiraManager }), "FORBIDDEN");
    expectRefused(await t.gql(GROUP, { variables: { coffeeIds: [LATTE] }, token: tok.barista }), "FORBIDDEN");
    const group = ok(await t.gql(GROUP, { variables: { coffeeIds: [LATTE] }, token: tok.admin })).addOptionGroup;
    expect(group).toMatchObject({ name: "Test syrup", minSelections: 0, maxSelections: 1, options: [] });
    const OPTION = `mutation($groupId: ID!, $ingredientId: ID) { addOption(groupId: $groupId, name: "Vanilla", priceDelta: 0.35, ingredientId: $ingredientId, ingredientAmount: 20) { id name priceDelta isDefault } }`;
    const vanillaSyrup = "30000000-0000-4000-8000-000000000009";
    expectRefused(await t.gql(OPTION, { variables: { groupId: group.id, ingredientId: vanillaSyrup }, token: tok.ribeiraManager }), "FORBIDDEN");
    const vanilla = ok(await t.gql(OPTION, { variables: { groupId: group.id, ingredientId: vanillaSyrup }, token: tok.admin })).addOption;
    expect(vanilla).toMatchObject({ name: "Vanilla", priceDelta: 0.35, isDefault: false });
    const order = ok(await t.gql(ORDER, { variables: { items: [{ coffeeId: LATTE, quantity: 1, optionIds: [opt.Regular, opt.Whole, vanilla.id] }] }, token: tok.barista })).createOrder;
    expect(order.items[0].unitPrice).toBe(4.15);
    expect(await reserved(order.id)).toEqual({ [BEANS]: 18, [WHOLE_MILK]: 220, [vanillaSyrup]: 20 });
    const { rows } = await t.db.query("select count(*)::int as n from app_private.audit_log where entity in ($1, $2)", [`app_public.option_groups ${group.id}`, `app_public.options ${vanilla.id}`]);
    expect(rows[0].n).toBe(2);
  });
});
