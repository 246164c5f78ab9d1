import { codes, DEMO, errorSummary, gqlAs, ok } from "../support/client.ts";
import { type ClientName, queryOperationsOf, runOperation } from "../support/contract.ts";
import { allCoffees, CATEGORY_ORDER, type CoffeeRow, dbSorted, deleteOrders, insertOrders } from "../support/fixtures.ts";
import { useTestService } from "../support/service.ts";

// The query side of the contract, through real HTTP against the real
// service and database: every client's query operations, as the role that
// client signs in as, and the rules behind what they return (menu, search,
// the barista queue, admin figures). Rows a test arranges are removed
// afterwards, so other suites see the demo café as it was.

const CLIENTS: ClientName[] = ["kiosk", "mobile", "barista", "admin", "pos"];
const QUERY_OPERATIONS = CLIENTS.flatMap((client) => queryOperationsOf(client).map((op) => ({ client, ...op })));
const SUFFIX = `${process.pid}-${Date.now().toString(36)}`;

const t = useTestService({
  async cleanup() {
    await deleteOrders(t, arrangedOrders);
    await removeCoffees(arrangedCoffees);
  },
});
/** Every coffee as the owner sees it, after beforeAll added `offMenu`. */
let coffees: CoffeeRow[];
/** An unavailable SEASONAL limited-time latte: must never show on the menu or in searches. */
let offMenu: CoffeeRow;
/** The demo coffee with the most reviews. */
let reviewed: CoffeeRow;
const arrangedOrders: string[] = [];
const arrangedCoffees: string[] = [];

async function addCoffee(fields: { name: string; category: string; available: boolean; limitedTimeOffer?: boolean; price?: number; cost?: number | null }) {
  const { rows } = await t.db.query<{ id: string }>(
    `insert into app_public.coffees (name, price, category, available, limited_time_offer, roaster_id, description)
     values ($1, $2, $3, $4, $5, (select id from app_public.roasters order by name limit 1), 'Arranged by test/graphql/queries.test.ts')
     returning id`,
    [fields.name, fields.price ?? 4, fields.category, fields.available, fields.limitedTimeOffer ?? false],
  );
  const id = rows[0]!.id;
  arrangedCoffees.push(id);
  await t.db.query("insert into app_private.coffee_costs (coffee_id, cost) values ($1, $2)", [id, fields.cost ?? null]);
  return id;
}

/** Removes coffees this suite added, with any order that has a line of them (all arranged here). */
async function removeCoffees(ids: string[]) {
  const { rows } = await t.db.query("select distinct order_id from app_public.order_items where coffee_id = any($1::uuid[])", [ids]);
  await deleteOrders(
    t,
    rows.map((r) => r.order_id),
  );
  await t.db.query("delete from app_public.coffees where id = any($1::uuid[])", [ids]);
}

const onSale = () => coffees.filter((c) => c.available);
const byId = (id: string) => coffees.find((c) => c.id === id)!;
const hasLatte = (name: string) => /latte/i.test(name);

beforeAll(async () => {
  const offMenuId = await addCoffee({ name: `QA Off-Menu Latte ${SUFFIX}`, category: "SEASONAL", available: false, limitedTimeOffer: true });
  coffees = await allCoffees(t);
  offMenu = byId(offMenuId);
  const { rows } = await t.db.query<{ coffee_id: string }>(
    `select r.coffee_id from app_public.reviews r join app_public.coffees c on c.id = r.coffee_id
     where c.available group by r.coffee_id order by count(*) desc, r.coffee_id limit 1`,
  );
  reviewed = byId(rows[0]?.coffee_id ?? onSale()[0]!.id);
});

describe("every query operation of the contract", () => {
  const variablesFor = (name: string): Record<string, unknown> | undefined =>
    ({
      CoffeeDetail: { id: reviewed.id },
      Search: { q: "latte" },
      OneOrder: { id: DEMO.alicePreparingOrder },
      PosCustomer: { id: DEMO.alice.id },
    })[name];

  test("the documents hold the query operations this suite checks", () => {
    expect(QUERY_OPERATIONS.map((o) => `${o.client}:${o.name}`).sort()).toEqual(
      expect.arrayContaining([
        "admin:AdminDashboard",
        "barista:BaristaQueue",
        "barista:OneOrder",
        "barista:Preparing",
        "barista:Stock",
        "kiosk:FeaturedList",
        "kiosk:KioskMenu",
        "mobile:CoffeeDetail",
        "mobile:MobileHome",
        "mobile:Search",
        "mobile:SearchByName",
        "pos:PosCustomer",
      ]),
    );
  });

  test.each(QUERY_OPERATIONS.map((o) => [o.client, o.name, o.variables] as const))("%s %s runs as its client's role (whole file, operationName) without errors", async (client, name, declared) => {
    const variables = variablesFor(name);
    // A new operation with variables needs its values added above.
    expect(declared.filter((v) => !(variables && v in variables))).toEqual([]);
    const data = ok(await runOperation(t, client, name, variables));
    for (const [field, value] of Object.entries(data as Record<string, unknown>)) {
      expect({ field, value: value === null ? null : "present" }).toEqual({ field, value: "present" });
    }
  });
});

describe("kiosk (anonymous)", () => {
  test("KioskMenu: menuItems are exactly the coffees on sale, by category then name", async () => {
    const { menuItems } = ok(await runOperation(t, "kiosk", "KioskMenu"));
    expect(menuItems.map((c: any) => c.id).sort()).toEqual(
      onSale()
        .map((c) => c.id)
        .sort(),
    );
    expect(menuItems.map((c: any) => c.id)).not.toContain(offMenu.id);

    const categories = menuItems.map((c: any) => CATEGORY_ORDER.indexOf(c.category));
    expect(categories).not.toContain(-1);
    expect(categories).toEqual([...categories].sort((a, b) => a - b));
    for (const category of CATEGORY_ORDER) {
      const names = menuItems.filter((c: any) => c.category === category).map((c: any) => c.name);
      expect({ category, names }).toEqual({ category, names: await dbSorted(t, names) });
    }
    for (const item of menuItems) {
      const row = byId(item.id);
      expect(item).toEqual({
        id: row.id,
        name: row.name,
        price: row.price,
        imageUrl: row.image_url,
        category: row.category,
        limitedTimeOffer: row.limited_time_offer,
        inventory: item.inventory === null ? null : expect.any(Number),
      });
      if (item.inventory !== null) {
        expect(Number.isInteger(item.inventory)).toBe(true);
        expect(item.inventory).toBeGreaterThanOrEqual(0);
      }
    }
  });

  test("KioskMenu: featuredCoffee is a FEATURED coffee on sale; seasonalDrinks are the SEASONAL or limited-time coffees on sale", async () => {
    const { featuredCoffee, seasonalDrinks } = ok(await runOperation(t, "kiosk", "KioskMenu"));
    const featured = byId(featuredCoffee.id);
    expect(featured).toMatchObject({ category: "FEATURED", available: true });
    expect(featuredCoffee).toEqual({
      id: featured.id,
      name: featured.name,
      price: featured.price,
      description: featured.description,
      imageUrl: featured.image_url,
      roast: featured.roast,
    });

    const expected = onSale().filter((c) => c.category === "SEASONAL" || c.limited_time_offer);
    expect(expected.length).toBeGreaterThan(0); // the demo café has some
    expect(seasonalDrinks.map((c: any) => c.id).sort()).toEqual(expected.map((c) => c.id).sort());
    expect(seasonalDrinks.map((c: any) => c.id)).not.toContain(offMenu.id);
    for (const drink of seasonalDrinks) {
      const row = byId(drink.id);
      expect(row.category === "SEASONAL" || row.limited_time_offer).toBe(true);
      for (const i of drink.seasonalIngredients) {
        expect(i).toEqual({ name: expect.any(String), organic: expect.any(Boolean), allergens: expect.any(Array) });
      }
    }
  });

  test("seasonalIngredients are the seasonal lines of each drink's recipe, a subset of its ingredients", async () => {
    const { seasonalDrinks } = ok(await gqlAs(t, "anonymous", `{ seasonalDrinks { id ingredients { name } seasonalIngredients { name organic allergens } } }`));
    const { rows } = await t.db.query<{ coffee_id: string; name: string; organic: boolean; allergens: string[]; seasonal: boolean }>(
      `select rl.coffee_id, i.name, i.organic, i.allergens::text[] as allergens, rl.seasonal
       from app_public.recipe_lines rl join app_public.ingredients i on i.id = rl.ingredient_id`,
    );
    let seasonalSeen = 0;
    for (const drink of seasonalDrinks) {
      const recipe = rows.filter((r) => r.coffee_id === drink.id);
      const ingredientNames = drink.ingredients.map((i: any) => i.name);
      expect(ingredientNames.sort()).toEqual(recipe.map((r) => r.name).sort());
      for (const s of drink.seasonalIngredients) expect(ingredientNames).toContain(s.name);
      const seasonal = recipe.filter((r) => r.seasonal);
      expect(drink.seasonalIngredients.map((i: any) => i.name).sort()).toEqual(seasonal.map((r) => r.name).sort());
      for (const s of drink.seasonalIngredients) {
        const r = seasonal.find((x) => x.name === s.name)!;
        expect(s).toEqual({ name: r.name, organic: r.organic, allergens: r.allergens });
      }
      seasonalSeen += seasonal.length;
    }
    expect(seasonalSeen).toBeGreaterThan(0); // the demo café has seasonal ingredients
  });

  test("featuredCoffee is the FEATURED coffee on sale that sold most in the last 7 days (PAID or later only)", async () => {
    const coffeeIds: string[] = [];
    const orderIds: string[] = [];
    try {
      const winner = await addCoffee({ name: `ZZ QA Featured Winner ${SUFFIX}`, category: "FEATURED", available: true });
      const unpaid = await addCoffee({ name: `ZZ QA Featured Unpaid ${SUFFIX}`, category: "FEATURED", available: true });
      const offSale = await addCoffee({ name: `ZZ QA Featured Off ${SUFFIX}`, category: "FEATURED", available: false });
      coffeeIds.push(winner, unpaid, offSale);
      orderIds.push(
        ...(await insertOrders(t, [
          { customerId: DEMO.bob.id, status: "COMPLETED", lines: [{ coffeeId: winner, quantity: 10_000 }] },
          // None of these may count: not paid, cancelled, too old, not on sale.
          { customerId: DEMO.bob.id, status: "PENDING", lines: [{ coffeeId: unpaid, quantity: 20_000 }] },
          { customerId: DEMO.bob.id, status: "CANCELLED", lines: [{ coffeeId: unpaid, quantity: 20_000 }] },
          { customerId: DEMO.bob.id, status: "COMPLETED", timeOffset: "-8 days", lines: [{ coffeeId: unpaid, quantity: 20_000 }] },
          { customerId: DEMO.bob.id, status: "COMPLETED", lines: [{ coffeeId: offSale, quantity: 50_000 }] },
        ])),
      );
      const { featuredCoffee } = ok(await gqlAs(t, "anonymous", `{ featuredCoffee { id name } }`));
      expect(featuredCoffee).toEqual({ id: winner, name: `ZZ QA Featured Winner ${SUFFIX}` });
    } finally {
      await deleteOrders(t, orderIds);
      await removeCoffees(coffeeIds);
    }
  });

  test("FeaturedList: coffees(category: FEATURED) are all the FEATURED coffees, by name", async () => {
    const { coffees: list } = ok(await runOperation(t, "kiosk", "FeaturedList"));
    expect(list.length).toBeGreaterThan(0);
    for (const c of list) {
      expect(byId(c.id)).toMatchObject({ category: "FEATURED", name: c.name, price: c.price, roast: c.roast });
    }
    const names = list.map((c: any) => c.name);
    expect(names).toEqual(await dbSorted(t, names));
    const featuredOnSale = onSale()
      .filter((c) => c.category === "FEATURED")
      .map((c) => c.id);
    expect(list.map((c: any) => c.id)).toEqual(expect.arrayContaining(featuredOnSale));
  });

  test("coffees without a category lists every category, by name", async () => {
    const { coffees: list } = ok(await gqlAs(t, "anonymous", `{ coffees { id name category } }`));
    const names = list.map((c: any) => c.name);
    expect(names).toEqual(await dbSorted(t, names));
    expect(new Set(list.map((c: any) => c.category)).size).toBeGreaterThan(1);
    expect(list.map((c: any) => c.id)).toEqual(expect.arrayContaining(onSale().map((c) => c.id)));
  });
});

describe("mobile (Alice)", () => {
  test("MobileHome: the customer is Alice, with her three newest orders, newest first, and the FEATURED coffees", async () => {
    // Four more orders of Alice's, so she has more than three.
    const latte = onSale()[0]!.id;
    arrangedOrders.push(
      ...(await insertOrders(
        t,
        [1, 2, 3, 4].map((i) => ({ customerId: DEMO.alice.id, status: "COMPLETED" as const, timeOffset: `-${i} minutes`, lines: [{ coffeeId: latte, quantity: i }] })),
      )),
    );
    const { customer, featured } = ok(await runOperation(t, "mobile", "MobileHome"));
    const { rows: me } = await t.db.query("select name, points from app_public.customers where id = $1", [DEMO.alice.id]);
    const { rows: profile } = await t.db.query("select username::text, avatar from app_public.profiles where customer_id = $1", [DEMO.alice.id]);
    expect(customer).toMatchObject({ name: me[0].name, points: me[0].points });
    expect(customer.profile).toEqual(profile[0] ? { username: profile[0].username, avatar: profile[0].avatar } : null);

    expect(customer.recentOrders).toHaveLength(3);
    const { rows } = await t.db.query<{ id: string; customer_id: string; time_ordered: Date; total: string; status: string }>(
      "select id, customer_id, time_ordered, total, status::text from app_public.orders where customer_id = $1 order by time_ordered desc",
      [DEMO.alice.id],
    );
    const mine = new Map(rows.map((r) => [r.id, r]));
    const returned = customer.recentOrders.map((o: any) => mine.get(o.id));
    expect(returned.every(Boolean)).toBe(true); // only hers
    for (const o of customer.recentOrders) expect(o).toEqual({ id: o.id, total: Number(mine.get(o.id)!.total), status: mine.get(o.id)!.status });
    const times = returned.map((r: any) => r.time_ordered.getTime());
    expect(times).toEqual([...times].sort((a, b) => b - a));
    // Nothing of hers that was left out is newer than the oldest returned.
    const oldestReturned = Math.min(...times);
    for (const r of rows) if (!customer.recentOrders.some((o: any) => o.id === r.id)) expect(r.time_ordered.getTime()).toBeLessThanOrEqual(oldestReturned);

    expect(featured.length).toBeGreaterThan(0);
    for (const c of featured) expect(byId(c.id)).toMatchObject({ category: "FEATURED", name: c.name, price: c.price });
  });

  test("recentOrders(limit:) honours the limit, and Bob's home shows only Bob's orders", async () => {
    const one = ok(await gqlAs(t, "alice", `{ customer { recentOrders(limit: 1) { id } } }`));
    expect(one.customer.recentOrders).toHaveLength(1);
    const bob = ok(await gqlAs(t, "bob", `{ customer { id name recentOrders { id customer { id } } } }`));
    expect(bob.customer.id).toBe(DEMO.bob.id);
    expect(bob.customer.recentOrders.map((o: any) => o.id)).toContain(DEMO.bobPendingOrder);
    for (const o of bob.customer.recentOrders) expect(o.customer.id).toBe(DEMO.bob.id);
  });

  test("CoffeeDetail: a demo coffee with its roaster, recipe and at most three reviews, newest first", async () => {
    const { coffee } = ok(await runOperation(t, "mobile", "CoffeeDetail", { id: reviewed.id }));
    const { rows: roaster } = await t.db.query("select r.name, r.location, r.sustainability_rating::float8 as rating from app_public.roasters r where r.id = $1", [reviewed.roaster_id]);
    expect(coffee).toMatchObject({
      id: reviewed.id,
      name: reviewed.name,
      price: reviewed.price,
      roast: reviewed.roast,
      description: reviewed.description,
      category: reviewed.category,
    });
    expect(coffee.roaster).toEqual({ name: roaster[0].name, location: roaster[0].location, sustainabilityRating: roaster[0].rating });

    const { rows: recipe } = await t.db.query<{ name: string }>("select i.name from app_public.recipe_lines rl join app_public.ingredients i on i.id = rl.ingredient_id where rl.coffee_id = $1", [
      reviewed.id,
    ]);
    expect(coffee.ingredients.map((i: any) => i.name).sort()).toEqual(recipe.map((r) => r.name).sort());
    for (const i of coffee.ingredients) expect(i).toEqual({ name: expect.any(String), organic: expect.any(Boolean), allergens: expect.any(Array) });

    const { rows: reviews } = await t.db.query<{ rating: number; comment: string | null; created_at: Date }>(
      "select rating, comment, created_at from app_public.reviews where coffee_id = $1 order by created_at desc",
      [reviewed.id],
    );
    expect(reviews.length).toBeGreaterThan(0); // the demo café has reviews
    expect(coffee.reviews).toHaveLength(Math.min(3, reviews.length));
    // Each returned review exists, and none left out is newer than those returned.
    const times = coffee.reviews.map((r: any) => {
      const row = reviews.find((x) => x.rating === r.rating && x.comment === r.comment);
      expect(row).toBeDefined();
      return row!.created_at.getTime();
    });
    expect(times).toEqual([...times].sort((a: number, b: number) => b - a));
    const newestLeftOut = reviews.filter((x) => !coffee.reviews.some((r: any) => r.rating === x.rating && r.comment === x.comment));
    for (const r of newestLeftOut) expect(r.created_at.getTime()).toBeLessThanOrEqual(Math.min(...times));
  });

  test("reviews(limit: 3) are the three newest, newest first", async () => {
    const { rows } = await t.db.query<{ id: string }>(
      `insert into app_public.reviews (coffee_id, customer_id, rating, comment, created_at)
       select $1, $2, n, 'QA review ' || n || ' ${SUFFIX}', now() + make_interval(mins => 10 + n) from generate_series(1, 4) n
       returning id`,
      [reviewed.id, DEMO.bob.id],
    );
    try {
      const { coffee } = ok(await runOperation(t, "mobile", "CoffeeDetail", { id: reviewed.id }));
      expect(coffee.reviews).toEqual([4, 3, 2].map((n) => ({ rating: n, comment: `QA review ${n} ${SUFFIX}` })));
      const all = ok(await gqlAs(t, "anonymous", `query($id: ID!) { coffee(id: $id) { reviews { comment } } }`, { id: reviewed.id }));
      expect(all.coffee.reviews.slice(0, 4).map((r: any) => r.comment)).toEqual([4, 3, 2, 1].map((n) => `QA review ${n} ${SUFFIX}`));
    } finally {
      await t.db.query("delete from app_public.reviews where id = any($1::uuid[])", [rows.map((r) => r.id)]);
    }
  });

  const expectLatteSearch = async (results: Array<{ id: string; name: string }>) => {
    expect(results.length).toBeGreaterThan(0);
    const ids = results.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of results) expect(byId(r.id)).toMatchObject({ available: true, name: r.name });
    expect(ids).not.toContain(offMenu.id);
    // Every latte on sale is found, and the name matches come first.
    const lattes = onSale()
      .filter((c) => hasLatte(c.name))
      .map((c) => c.id);
    expect(lattes.length).toBeGreaterThan(0); // the demo café sells lattes
    expect(ids).toEqual(expect.arrayContaining(lattes));
    const flags = results.map((r) => hasLatte(r.name));
    expect(flags).toEqual([...flags].sort((a, b) => Number(b) - Number(a)));
    expect(hasLatte(results[0]!.name)).toBe(true);
  };

  test("Search('latte'): the lattes on sale, name matches first", async () => {
    const { searchCoffees } = ok(await runOperation(t, "mobile", "Search", { q: "latte" }));
    await expectLatteSearch(searchCoffees);
    const upper = ok(await runOperation(t, "mobile", "Search", { q: "  LATTE " }));
    expect(upper.searchCoffees).toEqual(searchCoffees.map((c: any) => ({ id: c.id, name: c.name, price: c.price })));
  });

  test('SearchByName: searchCoffees(name: "latte") finds the same lattes', async () => {
    const { searchCoffees } = ok(await runOperation(t, "mobile", "SearchByName"));
    await expectLatteSearch(searchCoffees);
  });

  test.each([
    ["lattee", /latte/i],
    ["expresso", /espresso/i],
  ])("a misspelt search (%s) still finds the coffee", async (term, wanted) => {
    const { searchCoffees } = ok(await runOperation(t, "mobile", "Search", { q: term }));
    expect(searchCoffees.length).toBeGreaterThan(0);
    expect(searchCoffees[0].name).toMatch(wanted);
  });

  test.each(["%", "_"])("the characters of a term are matched literally (%s is no wildcard)", async (term) => {
    const { searchCoffees } = ok(await runOperation(t, "mobile", "Search", { q: term }));
    // No coffee has these characters in its name or description; the whole menu would mean the term became a pattern.
    expect(searchCoffees.map((c: any) => c.name)).toEqual([]);
  });

  test.each([
    ["both arguments", `{ searchCoffees(query: "latte", name: "latte") { id } }`],
    ["neither argument", `{ searchCoffees { id } }`],
    ["an empty term", `{ searchCoffees(query: "") { id } }`],
    ["a blank term", `{ searchCoffees(name: "   ") { id } }`],
    ["a term of 101 characters", `{ searchCoffees(query: "${"a".repeat(101)}") { id } }`],
  ])("searchCoffees with %s is BAD_USER_INPUT", async (_label, query) => {
    const r = await gqlAs(t, "alice", query);
    expect(errorSummary(r)).toEqual([expect.objectContaining({ code: "BAD_USER_INPUT" })]);
    expect(r.body.data ?? null).toBeNull();
  });

  test("coffee(id:) with a malformed id is BAD_USER_INPUT; an unknown uuid is null", async () => {
    const bad = await gqlAs(t, "alice", `{ coffee(id: "not-a-uuid") { id } }`);
    expect(codes(bad)).toEqual(["BAD_USER_INPUT"]);
    expect(bad.body.data).toEqual({ coffee: null });
    const unknown = await gqlAs(t, "alice", `{ coffee(id: "00000000-0000-4000-8000-00000000dead") { id } }`);
    expect(ok(unknown)).toEqual({ coffee: null });
    const anon = await gqlAs(t, "anonymous", `{ coffee(id: "12345") { id } }`);
    expect(codes(anon)).toEqual(["BAD_USER_INPUT"]);
  });

  test("an off-menu coffee is still readable by id (order lines keep their link)", async () => {
    const { coffee } = ok(await gqlAs(t, "alice", `query($id: ID!) { coffee(id: $id) { id name category limitedTimeOffer } }`, { id: offMenu.id }));
    expect(coffee).toEqual({ id: offMenu.id, name: offMenu.name, category: "SEASONAL", limitedTimeOffer: true });
  });
});

describe("barista dashboard and point of sale (staff)", () => {
  let coffeeA: CoffeeRow;
  let coffeeB: CoffeeRow;
  let preparing: string;
  let brewing: string;
  let ready: string;
  let paid: string;
  let baristaName: string;

  beforeAll(async () => {
    [coffeeA, coffeeB] = onSale();
    const ids = await insertOrders(t, [
      {
        customerId: DEMO.alice.id,
        status: "PREPARING",
        timeOffset: "-50 minutes",
        notes: `QA preparing ${SUFFIX}`,
        lines: [
          { coffeeId: coffeeB!.id, quantity: 2, specialInstructions: "extra hot" },
          { coffeeId: coffeeA!.id, quantity: 1 },
        ],
      },
      { customerId: DEMO.bob.id, status: "BREWING", timeOffset: "-40 minutes", baristaId: DEMO.barista.id, lines: [{ coffeeId: coffeeA!.id, quantity: 3 }] },
      { customerId: DEMO.bob.id, status: "READY", timeOffset: "-45 minutes", lines: [{ coffeeId: coffeeA!.id, quantity: 1 }] },
      { customerId: DEMO.alice.id, status: "PAID", timeOffset: "-55 minutes", lines: [{ coffeeId: coffeeA!.id, quantity: 1 }] },
    ]);
    arrangedOrders.push(...ids);
    [preparing, brewing, ready, paid] = ids as [string, string, string, string];
    const { rows } = await t.db.query("select name from app_public.baristas where id = $1", [DEMO.barista.id]);
    baristaName = rows[0].name;
  });

  test("BaristaQueue: only PREPARING and BREWING orders, oldest first, with their lines, customer and barista", async () => {
    for (const as of ["barista", "admin"] as const) {
      const { orders } = ok(await runOperation(t, "barista", "BaristaQueue", undefined, as));
      const ids = orders.map((o: any) => o.id);
      for (const o of orders) expect(["PREPARING", "BREWING"]).toContain(o.status);
      const times = orders.map((o: any) => Date.parse(o.timeOrdered));
      expect(times).toEqual([...times].sort((a, b) => a - b));
      expect(ids).toEqual(expect.arrayContaining([preparing, brewing, DEMO.alicePreparingOrder]));
      expect(ids).not.toContain(ready);
      expect(ids).not.toContain(paid);
      expect(ids.indexOf(preparing)).toBeLessThan(ids.indexOf(brewing));

      const mine = orders.find((o: any) => o.id === preparing);
      expect(mine).toEqual({
        id: preparing,
        status: "PREPARING",
        timeOrdered: expect.any(String),
        notes: `QA preparing ${SUFFIX}`,
        total: Math.round((2 * coffeeB!.price + coffeeA!.price) * 100) / 100,
        items: [
          { coffee: { name: coffeeB!.name }, quantity: 2, specialInstructions: "extra hot" },
          { coffee: { name: coffeeA!.name }, quantity: 1, specialInstructions: null },
        ],
        customer: { name: expect.any(String) },
        barista: null,
      });
      const { rows } = await t.db.query("select name from app_public.customers where id = $1", [DEMO.alice.id]);
      expect(mine.customer.name).toBe(rows[0].name);
      expect(orders.find((o: any) => o.id === brewing).barista).toEqual({ name: baristaName });
    }
  });

  test("Preparing: orders(status: PREPARING), the single-enum form, equals the list form and a list variable", async () => {
    const single = ok(await runOperation(t, "barista", "Preparing")).orders.map((o: any) => o.id);
    expect(single).toEqual(expect.arrayContaining([preparing, DEMO.alicePreparingOrder]));
    expect(single).not.toContain(brewing);
    const { rows } = await t.db.query<{ status: string }>("select distinct status::text from app_public.orders where id = any($1::uuid[])", [single]);
    expect(rows).toEqual([{ status: "PREPARING" }]);

    const list = ok(await gqlAs(t, "barista", `{ orders(status: [PREPARING]) { id } }`)).orders.map((o: any) => o.id);
    expect(list).toEqual(single);
    const variable = ok(await gqlAs(t, "barista", `query($s: [OrderStatus!]) { orders(status: $s) { id } }`, { s: ["PREPARING"] })).orders.map((o: any) => o.id);
    expect(variable).toEqual(single);
    const coerced = ok(await gqlAs(t, "barista", `query($s: [OrderStatus!]) { orders(status: $s) { id } }`, { s: "PREPARING" })).orders.map((o: any) => o.id);
    expect(coerced).toEqual(single);

    const two = ok(await gqlAs(t, "barista", `{ orders(status: [PREPARING, BREWING]) { id status } }`)).orders;
    expect(two.map((o: any) => o.id).sort()).toEqual(
      ok(await runOperation(t, "barista", "BaristaQueue"))
        .orders.map((o: any) => o.id)
        .sort(),
    );
  });

  test("orders without a status lists every status, oldest first", async () => {
    const { orders } = ok(await gqlAs(t, "barista", `{ orders { id status timeOrdered } }`));
    const ids = orders.map((o: any) => o.id);
    expect(ids).toEqual(expect.arrayContaining([DEMO.alicePendingOrder, DEMO.bobPendingOrder, DEMO.alicePreparingOrder, preparing, brewing, ready, paid]));
    const times = orders.map((o: any) => Date.parse(o.timeOrdered));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const bad = await gqlAs(t, "barista", `{ orders(status: [SIMMERING]) { id } }`);
    expect(bad.body.errors?.length).toBeGreaterThan(0);
    expect(bad.body.data ?? null).toBeNull();
  });

  test("orders(first:, offset:) pages through the same oldest-first list", async () => {
    const all = ok(await gqlAs(t, "barista", `{ orders { id } }`)).orders.map((o: any) => o.id);
    expect(all.length).toBeGreaterThan(4);
    const page1 = ok(await gqlAs(t, "barista", `{ orders(first: 2) { id } }`)).orders.map((o: any) => o.id);
    const page2 = ok(await gqlAs(t, "barista", `{ orders(first: 2, offset: 2) { id } }`)).orders.map((o: any) => o.id);
    expect([...page1, ...page2]).toEqual(all.slice(0, 4));
  });

  test("OneOrder: one order with its total and lines; unknown is null, malformed is BAD_USER_INPUT", async () => {
    const { order } = ok(await runOperation(t, "barista", "OneOrder", { id: preparing }));
    expect(order).toEqual({
      id: preparing,
      status: "PREPARING",
      total: Math.round((2 * coffeeB!.price + coffeeA!.price) * 100) / 100,
      items: [
        { quantity: 2, coffee: { name: coffeeB!.name } },
        { quantity: 1, coffee: { name: coffeeA!.name } },
      ],
    });
    const demo = ok(await runOperation(t, "barista", "OneOrder", { id: DEMO.alicePreparingOrder }));
    const { rows } = await t.db.query("select sum(quantity * unit_price)::float8 as total from app_public.order_items where order_id = $1", [DEMO.alicePreparingOrder]);
    expect(demo.order).toMatchObject({ id: DEMO.alicePreparingOrder, status: "PREPARING", total: rows[0].total });
    expect(demo.order.items.length).toBeGreaterThan(0);

    expect(ok(await runOperation(t, "barista", "OneOrder", { id: "00000000-0000-4000-8000-00000000beef" }))).toEqual({ order: null });
    const bad = await runOperation(t, "barista", "OneOrder", { id: "order-1" });
    expect(codes(bad)).toEqual(["BAD_USER_INPUT"]);
  });

  const expectLowStock = async (items: any[]) => {
    const { rows } = await t.db.query<{ name: string; current: number; alert: number }>(
      `select i.name, s.current_stock::float8 as current, s.alert_level::float8 as alert
       from app_public.stock_items s join app_public.ingredients i on i.id = s.ingredient_id
       where s.current_stock <= s.alert_level and s.store_id = app_hidden.default_store_id()`,
    );
    expect(items.map((s) => s.ingredient.name).sort()).toEqual(rows.map((r) => r.name).sort());
    for (const s of items) {
      const row = rows.find((r) => r.name === s.ingredient.name)!;
      expect(s).toEqual({ ingredient: { name: row.name }, currentStock: row.current, alertLevel: row.alert });
      expect(s.currentStock).toBeLessThanOrEqual(s.alertLevel);
    }
    // Emptiest first: the share of the alert level left grows along the list.
    const ratios = items.map((s) => (s.alertLevel === 0 ? Infinity : s.currentStock / s.alertLevel));
    expect(ratios).toEqual([...ratios].sort((a, b) => a - b));
  };

  test("Stock: lowStockItems are the ingredients at or below their alert level, emptiest first", async () => {
    const { lowStockItems } = ok(await runOperation(t, "barista", "Stock"));
    expect(lowStockItems.length).toBeGreaterThan(0); // the demo café runs low on something
    await expectLowStock(lowStockItems);
  });

  test("PosCustomer: staff read a customer by id; unknown is null; malformed is BAD_USER_INPUT", async () => {
    const { rows } = await t.db.query("select id, name, points from app_public.customers where id = any($1::uuid[])", [[DEMO.alice.id, DEMO.bob.id]]);
    for (const as of ["barista", "admin"] as const) {
      for (const row of rows) {
        const { user } = ok(await runOperation(t, "pos", "PosCustomer", { id: row.id }, as));
        expect(user).toEqual({ id: row.id, name: row.name, points: row.points });
      }
    }
    expect(rows.find((r) => r.id === DEMO.alice.id)).toBeDefined();
    expect(ok(await runOperation(t, "pos", "PosCustomer", { id: "00000000-0000-4000-8000-00000000beef" }))).toEqual({ user: null });
    expect(codes(await runOperation(t, "pos", "PosCustomer", { id: "alice" }))).toEqual(["BAD_USER_INPUT"]);
  });
});

describe("admin dashboard", () => {
  test("AdminDashboard: every coffee with cost, margin = (price - cost) / price, sales data and supplier", async () => {
    const { coffees: list, lowStockItems } = ok(await runOperation(t, "admin", "AdminDashboard"));
    expect(list.map((c: any) => c.id).sort()).toEqual(coffees.map((c) => c.id).sort());
    const { rows } = await t.db.query<{ coffee_id: string; cost: number | null; supplier: string | null; contact: string | null }>(
      `select cc.coffee_id, cc.cost::float8 as cost, s.name as supplier, s.contact
       from app_private.coffee_costs cc left join app_public.suppliers s on s.id = cc.supplier_id`,
    );
    const costs = new Map(rows.map((r) => [r.coffee_id, r]));
    let withCost = 0;
    let withSupplier = 0;
    for (const c of list) {
      const row = byId(c.id);
      const cost = costs.get(c.id);
      expect(c).toMatchObject({ name: row.name, price: row.price });
      expect(c.cost).toBe(cost?.cost ?? null);
      if (c.cost !== null) {
        withCost += 1;
        expect(c.margin).toBeCloseTo((c.price - c.cost) / c.price, 4);
      } else {
        expect(c.margin).toBeNull();
      }
      expect(c.salesData).toEqual({ lastWeek: expect.any(Number), trend: expect.any(Number) });
      expect(Number.isInteger(c.salesData.lastWeek)).toBe(true);
      expect(c.salesData.lastWeek).toBeGreaterThanOrEqual(0);
      expect(c.supplier).toEqual(cost?.supplier ? { name: cost.supplier, contact: cost.contact } : null);
      if (c.supplier) withSupplier += 1;
      expect(c.inventory === null || Number.isInteger(c.inventory)).toBe(true);
    }
    expect(withCost).toBeGreaterThan(0);
    expect(withSupplier).toBeGreaterThan(0);
    await expectLowStockAsAdmin(lowStockItems);
  });

  async function expectLowStockAsAdmin(items: any[]) {
    const { rows } = await t.db.query<{ name: string }>(
      `select i.name from app_public.stock_items s join app_public.ingredients i on i.id = s.ingredient_id where s.current_stock <= s.alert_level and s.store_id = app_hidden.default_store_id()`,
    );
    expect(items.map((s) => s.ingredient.name).sort()).toEqual(rows.map((r) => r.name).sort());
  }

  test("salesData counts cups of PAID-or-later orders: last 7 days, and the trend against the 7 before", async () => {
    const coffee = await addCoffee({ name: `QA Sales ${SUFFIX}`, category: "FILTER", available: true, price: 4, cost: 1.25 });
    const query = `query($id: ID!) { coffee(id: $id) { cost margin salesData { lastWeek trend } } }`;
    const read = async () => ok(await gqlAs(t, "admin", query, { id: coffee })).coffee;
    const ids: string[] = [];
    try {
      expect(await read()).toEqual({ cost: 1.25, margin: 0.6875, salesData: { lastWeek: 0, trend: 0 } });
      ids.push(
        ...(await insertOrders(t, [
          { customerId: DEMO.bob.id, status: "COMPLETED", timeOffset: "-1 day", lines: [{ coffeeId: coffee, quantity: 2 }] },
          { customerId: DEMO.bob.id, status: "PREPARING", lines: [{ coffeeId: coffee, quantity: 1 }] },
          { customerId: DEMO.bob.id, status: "PENDING", lines: [{ coffeeId: coffee, quantity: 5 }] },
          { customerId: DEMO.bob.id, status: "CANCELLED", lines: [{ coffeeId: coffee, quantity: 7 }] },
        ])),
      );
      expect((await read()).salesData).toEqual({ lastWeek: 3, trend: 1 });
      ids.push(
        ...(await insertOrders(t, [
          { customerId: DEMO.bob.id, status: "COMPLETED", timeOffset: "-10 days", lines: [{ coffeeId: coffee, quantity: 2 }] },
          { customerId: DEMO.bob.id, status: "PAID", timeOffset: "-20 days", lines: [{ coffeeId: coffee, quantity: 100 }] },
        ])),
      );
      expect((await read()).salesData).toEqual({ lastWeek: 3, trend: 0.5 });
    } finally {
      await deleteOrders(t, ids);
      await removeCoffees([coffee]);
    }
  });
});

describe("GraphQL over GET", () => {
  const get = async (params: Record<string, string>, token?: string) => {
    const res = await fetch(`${t.url}/graphql?${new URLSearchParams(params)}`, {
      headers: { accept: "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    });
    const text = await res.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = { raw: text.slice(0, 200) };
    }
    return { status: res.status, body };
  };

  test("GET /graphql?query=... answers a query like POST does", async () => {
    const r = await get({ query: "{ menuItems { id name } }" });
    const posted = ok(await gqlAs(t, "anonymous", "{ menuItems { id name } }"));
    expect(ok(r)).toEqual(posted);
  });

  test("GET with a whole document, operationName and variables, and with a bearer token", async () => {
    const { operationsOf } = await import("../support/contract.ts");
    const featured = await get({ query: operationsOf("kiosk"), operationName: "FeaturedList" });
    expect(ok(featured)).toEqual(ok(await runOperation(t, "kiosk", "FeaturedList")));
    const detail = await get({ query: `query($id: ID!) { coffee(id: $id) { id name } }`, variables: JSON.stringify({ id: reviewed.id }) });
    expect(ok(detail)).toEqual({ coffee: { id: reviewed.id, name: reviewed.name } });
    const staff = await get({ query: '{ user(id: "' + DEMO.bob.id + '") { id } }' }, await t.token("barista"));
    expect(ok(staff)).toEqual({ user: { id: DEMO.bob.id } });
  });

  test("a mutation over GET is refused and does nothing", async () => {
    const r = await get({ query: `mutation { login(email: "${DEMO.alice.email}", password: "${DEMO.password}") { token } }` });
    expect(r.body?.data?.login?.token).toBeUndefined();
    expect(r.status).not.toBe(200);
  });
});
