import { getIntrospectionQuery, Kind, parse, type GraphQLSchema, type OperationDefinitionNode } from "graphql";
import { expandedSelections, MAX_EXPANDED_SELECTIONS, queryCost, SUBSCRIPTION_EVENTS } from "../../plugins/QueryCostPlugin/index.ts";
import { type Caller, codes, DEMO, errorsOf, type GraphQLResponse, settled, subscribe, tokenOf } from "../support/client.ts";
import { CLIENT_CALLER, type ClientName, operationsOf } from "../support/contract.ts";
import { SqlRecorder } from "../support/db.ts";
import { say, table } from "../support/figures.ts";
import { insertOrders, makeCoffee, orderIn, placeOrder } from "../support/fixtures.ts";
import { aliasedQuery, countTokens, deepNewCoffeeSubscription, deepOrdersQuery, fieldDepth, longQuery, selectionCount, tokenHeavyQuery } from "../support/queryShapes.ts";
import { listening, startAnotherService, type TestService, useTestService } from "../support/service.ts";

// Query cost control (README "Limits", plugins/QueryCostPlugin/), against the
// real service: a real PostgreSQL, the HTTP server and graphql-ws sockets.
// Refusals must come before any SQL: the server runs in this process, so
// the pg client's query() is wrapped and every statement the API's login
// role sends (other than begin/commit/set_config and the periodic health
// ping) is counted.
//
// Cost rule (rows the database reads): a list or connection costs its
// @complexity (default 1; coffees 10, searchCoffees 50) plus, for each row it
// may return (limit/first/last where given, else the field's default page
// size: DEFAULT_LIST_SIZE = 20, coffees and menuItems 50, recentOrders 10 by
// their @pageSize), 1 plus what is read below that row (a connection's
// nodes/edges count the row and do not multiply again). A column costs 0
// (unless tagged @complexity); a to-one relation (a join in its parent's SQL)
// costs only what it reads below; a root field or other object field (a
// payload, pageInfo) costs 1 plus its children; introspection fields cost 0.

const DEFAULTS = { maxCost: 5000, maxCostStaff: 50_000, maxDepth: 12, maxAliases: 30, maxTokens: 5000, maxLength: 50_000, listSize: 20 };
const STAFF = new Set<Caller>(["barista", "admin"]);
const ceilingOf = (who: Caller) => (STAFF.has(who) ? DEFAULTS.maxCostStaff : DEFAULTS.maxCost);
const suffix = `${process.pid}-${Date.now().toString(36)}`;
/** 20 levels of fragments, each spreading the next 10 times: 10^20 selections once expanded, from 1.4 kB of text. */
const FRAGMENT_BOMB = `query { ...F0 }\n${Array.from(
  { length: 20 },
  (_, i) =>
    `fragment F${i} on Query { ${Array(10)
      .fill(i === 19 ? "menuItems { id }" : `...F${i + 1}`)
      .join(" ")} }\n`,
).join("")}`;
const COFFEE_DETAIL_ID = "40000000-0000-4000-8000-000000000003";

const t = useTestService({
  sandbox: true,
  async cleanup() {
    sql?.uninstall();
  },
});
let served: GraphQLSchema;
let sql: SqlRecorder;
/** A coffee of this suite with no recipe (stock never limits it). */
let plainCoffee: string;

beforeAll(async () => {
  await Promise.all((["alice", "bob", "barista", "admin"] as const).map((u) => t.token(u)));
  plainCoffee = await makeCoffee(t, `Limits Plain ${suffix}`, "3.40");
  const { makeSchema } = await import("postgraphile");
  const { makePreset } = await import("../../src/preset.ts");
  ({ schema: served } = await makeSchema(makePreset({ config: t.config, pool: t.service.api!.pool, viewerFromConnectionParams: () => null, clientAddress: () => "test" })));
  sql = new SqlRecorder(decodeURIComponent(new URL(t.urls.authenticator).username));
  sql.install();
});

const gqlAs = async (who: Caller, query: string, variables?: Record<string, unknown>, operationName?: string, service: TestService = t) =>
  service.gql(query, { token: who === "anonymous" ? null : await service.token(who), variables, operationName });

/** The cost computed by the exported queryCost() against the served schema. */
const costOf = (query: string, variables?: Record<string, unknown>, operationName?: string) => queryCost(served, parse(query), variables, operationName, DEFAULTS.listSize);

function summary(r: GraphQLResponse) {
  return { status: r.status, errors: (r.body.errors ?? []).map((e) => ({ code: e.extensions?.code, message: e.message })) };
}

/** An accepted answer: no errors, data, and extensions.cost within the caller's ceiling. */
function accepted(r: GraphQLResponse, who: Caller, maximum = ceilingOf(who)): { data: any; cost: { requested: number; maximum: number } } {
  expect(summary(r)).toEqual({ status: 200, errors: [] });
  expect(r.body.data).toBeTruthy();
  const cost = r.body.extensions?.cost;
  expect(cost).toEqual({ requested: expect.any(Number), maximum });
  expect(cost.requested).toBeLessThanOrEqual(cost.maximum);
  return { data: r.body.data, cost };
}

/** Sends a request that must be refused with `code` before any SQL runs; returns the one error. */
async function refusedWithoutSql(code: string, send: () => Promise<GraphQLResponse>) {
  const { result: r, statements } = await sql.record(send);
  expect(summary(r).errors.map((e) => e.code)).toEqual([code]);
  expect(r.body.data ?? null).toBeNull();
  expect(r.body.extensions?.cost).toBeUndefined();
  expect(statements).toEqual([]);
  return r.body.errors![0]!;
}

// ---------------------------------------------------------------------------
// 1. Contract operations
// ---------------------------------------------------------------------------

describe("1. every contract operation passes under the default limits, as its client's role", () => {
  const CLIENTS: ClientName[] = ["kiosk", "mobile", "barista", "admin", "pos"];
  const rows: Array<[string, string, string, number, number | string, number]> = [];

  interface Run {
    variables: () => Promise<Record<string, unknown>>;
    /** For subscriptions: makes an event happen once the subscription listens. */
    trigger?: (vars: Record<string, unknown>) => Promise<void>;
    topics?: (vars: Record<string, unknown>) => string[];
  }
  const none = async () => ({});
  const RUNS: Record<string, Run> = {
    KioskMenu: { variables: none },
    FeaturedList: { variables: none },
    MobileHome: { variables: none },
    CoffeeDetail: { variables: async () => ({ id: COFFEE_DETAIL_ID }) },
    Search: { variables: async () => ({ q: "latte" }) },
    SearchByName: { variables: none },
    PlaceOrder: { variables: async () => ({ input: { items: [{ coffeeId: plainCoffee, quantity: 1 }], notes: "limits suite" } }) },
    CancelMine: { variables: async () => ({ id: (await placeOrder(t, await t.token("alice"), [{ coffeeId: plainCoffee, quantity: 1 }])).id }) },
    UpdateProfile: { variables: async () => ({ input: { avatar: `https://example.com/limits-${suffix}.png` } }) },
    TrackOrder: {
      variables: async () => ({ id: (await placeOrder(t, await t.token("alice"), [{ coffeeId: plainCoffee, quantity: 1 }])).id }),
      topics: (v) => [`order:${v.id}`],
      trigger: async (v) => void (await t.db.query("update app_public.orders set status = 'PAID' where id = $1", [v.id])),
    },
    StatusFeed: {
      variables: async () => ({ orderId: (await placeOrder(t, await t.token("alice"), [{ coffeeId: plainCoffee, quantity: 1 }])).id }),
      topics: (v) => [`order_status:${v.orderId}`],
      trigger: async (v) => void (await t.db.query("update app_public.orders set status = 'PAID' where id = $1", [v.orderId])),
    },
    BaristaQueue: { variables: none },
    Preparing: { variables: none },
    OneOrder: { variables: async () => ({ id: DEMO.alicePreparingOrder }) },
    Advance: { variables: async () => ({ id: await orderIn(t, "PAID", plainCoffee, { customerId: DEMO.alice.id }), status: "PREPARING" }) },
    Stock: { variables: none },
    AdminDashboard: { variables: none },
    AddCoffee: { variables: async () => ({ name: `Limits Added ${suffix}`, price: 3.3 }) },
    Reprice: { variables: async () => ({ id: await makeCoffee(t, `Limits Reprice ${suffix}`, "4.10"), newPrice: 4.2 }) },
    NewOnMenu: {
      variables: none,
      topics: () => ["coffee:new"],
      trigger: async () => void (await makeCoffee(t, `Limits New ${suffix}`, "2.90")),
    },
    PosCustomer: { variables: async () => ({ id: DEMO.alice.id }) },
    PosOrder: { variables: async () => ({ coffeeId: plainCoffee, quantity: 2, notes: "limits suite" }) },
  };

  const OPERATIONS = CLIENTS.flatMap((client) =>
    parse(operationsOf(client))
      .definitions.filter((d) => d.kind === "OperationDefinition")
      .map((d) => ({ client, name: (d as any).name.value as string, type: (d as any).operation as string })),
  );

  afterAll(() => {
    say(
      `Contract operations under the default limits (cost: plugins/QueryCostPlugin/'s queryCost against the served schema, equal to extensions.cost.requested for queries and mutations; depth: field nesting computed here, fragments flattened):\n${table(
        ["operation", "client (role)", "type", "cost", "served cost", "depth"],
        rows,
      )}`,
    );
  });

  /** Each operation's price for its role, filled by the per-operation tests. */
  const priced: Array<{ name: string; who: Caller; cost: number }> = [];

  test("the table covers every operation of every client file", () => {
    // kiosk 2, mobile 9, barista 5, admin 4, pos 2
    expect(OPERATIONS.length).toBeGreaterThanOrEqual(22);
    expect(OPERATIONS.map((o) => o.name).filter((n) => !RUNS[n])).toEqual([]);
  });

  test.each(OPERATIONS)("$client $name ($type)", async ({ client, name, type }) => {
    const who = CLIENT_CALLER[client];
    const doc = operationsOf(client);
    const run = RUNS[name]!;
    const variables = await run.variables();
    const computed = costOf(doc, variables, name);
    const depth = fieldDepth(doc, name);
    expect(depth).toBeLessThanOrEqual(DEFAULTS.maxDepth);
    expect(computed).toBeLessThanOrEqual(ceilingOf(who));
    // Far from the expansion limit: a client's real documents never near it.
    expect(selectionCount(doc, name)).toBeLessThan(MAX_EXPANDED_SELECTIONS / 10);
    // A subscription is priced for SUBSCRIPTION_EVENTS re-reads of its selection.
    priced.push({ name, who, cost: computed * (type === "subscription" ? SUBSCRIPTION_EVENTS : 1) });

    if (type === "subscription") {
      // Accepted: it delivers an event, without errors (subscriptions carry no extensions.cost).
      const socket = t.ws(await tokenOf(t, who));
      const sub = subscribe(socket, doc, variables, name);
      try {
        await listening(t, run.topics!(variables));
        await run.trigger!(variables);
        await settled(sub);
        expect(errorsOf(sub)).toEqual([]);
        expect(sub.results).toHaveLength(1);
        expect(sub.results[0]!.data).toBeTruthy();
      } finally {
        sub.dispose();
        await socket.dispose();
      }
      rows.push([name, `${client} (${who})`, type, computed, "-", depth]);
      return;
    }
    const r = await gqlAs(who, doc, variables, name);
    const { cost } = accepted(r, who);
    expect(cost.requested).toBe(computed);
    rows.push([name, `${client} (${who})`, type, computed, cost.requested, depth]);
  });

  test("each role's heaviest contract document costs at most 25% of its budget (a dashboard may add a second list)", async () => {
    expect(priced).toHaveLength(OPERATIONS.length);
    const heaviest = new Map<string, { name: string; cost: number; share: number }>();
    for (const { name, who, cost } of priced) {
      const role = STAFF.has(who) ? "staff" : who === "anonymous" ? "anonymous" : "customer";
      const share = cost / ceilingOf(who);
      if (share > (heaviest.get(role)?.share ?? -1)) heaviest.set(role, { name, cost, share });
    }
    expect([...heaviest.keys()].sort()).toEqual(["anonymous", "customer", "staff"]);
    for (const [role, h] of heaviest) expect({ role, ...h, withinQuarter: h.share <= 0.25 }).toEqual({ role, ...h, withinQuarter: true });
  });
});

// ---------------------------------------------------------------------------
// 2. Costs equal hand-computed values
// ---------------------------------------------------------------------------

describe("2. costs equal hand-computed values, over HTTP (extensions.cost) and through queryCost()", () => {
  const CASES: Array<{ name: string; query: string; variables?: Record<string, unknown>; operationName?: string; expected: number }> = [
    // featuredCoffee 1 + (id 0 + name 0 + price 0) = 1: columns come with the row
    { name: "plain fields on a single object", query: `{ featuredCoffee { id name price } }`, expected: 1 },
    // featuredCoffee 1 + (id 0 + roaster (a join: 0 + name 0 + location 0)) = 1
    { name: "nested single objects", query: `{ featuredCoffee { id roaster { name location } } }`, expected: 1 },
    // menuItems (default 1) + 50 rows (its page: @pageSize 50) × (row 1 + id 0 + name 0) = 1 + 50 = 51
    { name: "a list without a limit: its default page size", query: `{ menuItems { id name } }`, expected: 51 },
    // coffees @complexity 10 + 50 × (row 1 + id 0) = 60
    { name: "@complexity 10 (coffees)", query: `{ coffees { id } }`, expected: 60 },
    // searchCoffees @complexity 50 + 20 × (row 1 + id 0 + name 0) = 70
    { name: "@complexity 50 (searchCoffees)", query: `{ searchCoffees(query: "latte") { id name } }`, expected: 70 },
    // coffees 10 + 50 × (row 1 + reviews (1 + 20 × (row 1 + rating 0 + comment 0))) = 10 + 50 × 22 = 1110
    { name: "nested lists without limit", query: `{ coffees { reviews { rating comment } } }`, expected: 1110 },
    // coffees 10 + 50 × (row 1 + reviews (1 + 5 × 1)) = 10 + 50 × 7 = 360
    { name: "nested lists with limit", query: `{ coffees { reviews(limit: 5) { rating comment } } }`, expected: 360 },
    // coffees 10 + 3 × (row 1) = 13
    { name: "first: on a list", query: `{ coffees(first: 3) { id name } }`, expected: 13 },
    // coffees 10 + 50 × (row 1 + reviews (1 + 0 × 1)) = 10 + 50 × 2 = 110
    { name: "limit: 0", query: `{ coffees { reviews(limit: 0) { rating } } }`, expected: 110 },
    // coffees 10 + 50 × (row 1 + reviews (1 + 5 × 1)) = 10 + 350 = 360
    { name: "limit: $n, n = 5", query: `query($n: Int) { coffees { reviews(limit: $n) { rating } } }`, variables: { n: 5 }, expected: 360 },
    // coffees 10 + 50 × (1 + 1 + 50) = 10 + 2600 = 2610
    { name: "limit: $n, n = 50", query: `query($n: Int) { coffees { reviews(limit: $n) { rating } } }`, variables: { n: 50 }, expected: 2610 },
    // $n not given: reviews defaults to 20 rows: 10 + 50 × (1 + 1 + 20) = 1110
    { name: "limit: $n, n not given", query: `query($n: Int) { coffees { reviews(limit: $n) { rating } } }`, expected: 1110 },
    // $n's default 4: 10 + 50 × (1 + 1 + 4) = 310
    { name: "limit: $n with a default value (4)", query: `query($n: Int = 4) { coffees { reviews(limit: $n) { rating } } }`, expected: 310 },
    // featuredCoffee 1 + fragment (id 0 + name 0 + reviews (1 + 2 × 1)) = 1 + 3 = 4
    {
      name: "a named fragment",
      query: `{ featuredCoffee { ...Card } } fragment Card on Coffee { id name reviews(limit: 2) { rating } }`,
      expected: 4,
    },
    // menuItems 1 + 50 × (row 1 + fragment (id 0 + ingredients (1 + 20 × 1))) = 1 + 50 × 22 = 1101
    { name: "a fragment inside a list", query: `{ menuItems { ...Card } } fragment Card on Coffee { id ingredients { name } }`, expected: 1101 },
    // coffee 1 + inline fragment (id 0 + roaster (a join: 0 + name 0)) = 1
    { name: "an inline fragment", query: `{ coffee(id: "${COFFEE_DETAIL_ID}") { ... on Coffee { id roaster { name } } } }`, expected: 1 },
    // a: coffees 10 + 50 × 1 = 60; b: coffees 10 + 2 × 1 = 12; c: featuredCoffee 1 + 0 = 1 → 73
    { name: "aliases: each alias is paid for", query: `{ a: coffees { id } b: coffees(first: 2) { id } c: featuredCoffee { id } }`, expected: 73 },
    // allCoffees 1 + 5 × nodes (row 1 + id 0 + name 0) = 6 (a totalCount's price depends on the table's size: test/graphql/query-cost.work.test.ts)
    { name: "a connection with first:", query: `{ allCoffees(first: 5) { nodes { id name } } }`, expected: 6 },
    // allCoffees 1 + 20 × (nodes 1 + id 0) = 21
    { name: "a connection without first: 20 rows", query: `{ allCoffees { nodes { id } } }`, expected: 21 },
    // allCoffees 1 + 2 × (nodes 1 + id 0) = 3
    { name: "a connection with last:", query: `{ allCoffees(last: 2) { nodes { id } } }`, expected: 3 },
    // edges 1 + (cursor 0 + node (the edge's row: id 0 + name 0)) = 1; pageInfo 1 + hasNextPage 0 = 1; allCoffees 1 + 3 × 2 = 7
    {
      name: "a connection's edges and pageInfo",
      query: `{ allCoffees(first: 3) { edges { cursor node { id name } } pageInfo { hasNextPage } } }`,
      expected: 7,
    },
    // reviewList 1 + 3 × (nodes 1 + rating 0) = 4; allCoffees 1 + 2 × (nodes 1 + 4) = 11
    {
      name: "nested connections",
      query: `{ allCoffees(first: 2) { nodes { reviewList(first: 3) { nodes { rating } } } } }`,
      expected: 11,
    },
    // allCoffees 1 + 7 × (nodes 1 + id 0) = 8
    { name: "first: $f, f = 7", query: `query($f: Int) { allCoffees(first: $f) { nodes { id } } }`, variables: { f: 7 }, expected: 8 },
    // allCoffees 1 + 700 × 1 = 701
    { name: "first: $f, f = 700", query: `query($f: Int) { allCoffees(first: $f) { nodes { id } } }`, variables: { f: 700 }, expected: 701 },
    // featuredCoffee 1 + (id 0 + reviews (1 + 20 × (row 1 + rating 0))) = 1 + 21 = 22
    {
      name: "@include(if: true)",
      query: `query($with: Boolean!) { featuredCoffee { id reviews @include(if: $with) { rating } } }`,
      variables: { with: true },
      expected: 22,
    },
    // featuredCoffee 1 + id 0 = 1 (reviews not included)
    {
      name: "@include(if: false)",
      query: `query($with: Boolean!) { featuredCoffee { id reviews @include(if: $with) { rating } } }`,
      variables: { with: false },
      expected: 1,
    },
    // featuredCoffee 1 + id 0 = 1 (roaster skipped)
    { name: "@skip(if: true)", query: `{ featuredCoffee { id roaster @skip(if: true) { name } } }`, expected: 1 },
    // featuredCoffee 1 + id 0 + roaster (a join: 0 + name 0) = 1
    { name: "@skip(if: false)", query: `{ featuredCoffee { id roaster @skip(if: false) { name } } }`, expected: 1 },
    // __typename 0 + featuredCoffee (1 + __typename 0 + id 0) = 1
    { name: "__typename costs nothing", query: `{ __typename featuredCoffee { __typename id } }`, expected: 1 },
    // __schema 0 (children not counted), __type 0
    { name: "introspection costs nothing", query: `{ __schema { types { name fields { name } } } __type(name: "Coffee") { name } }`, expected: 0 },
    // only the named operation counts: Second = allCoffees 1 + 3 × (nodes 1 + id 0) = 4
    {
      name: "only the operation named by operationName",
      query: `query First { coffees { id } } query Second { allCoffees(first: 3) { nodes { id } } }`,
      operationName: "Second",
      expected: 4,
    },
  ];

  test.each(CASES)("$name: $expected", async ({ query, variables, operationName, expected }) => {
    expect(costOf(query, variables, operationName)).toBe(expected);
    const { cost } = accepted(await gqlAs("admin", query, variables, operationName), "admin");
    expect(cost.requested).toBe(expected);
  });

  test("limit: $n with different values of $n gives different costs (anonymous, who may read reviews)", async () => {
    const query = `query($n: Int) { coffees { reviews(limit: $n) { rating } } }`;
    const costs: number[] = [];
    // Twice over: the second pass is priced from the per-document cache and
    // must still price each value of $n for itself, and refuse the costly one.
    for (const pass of [1, 2]) {
      for (const n of [1, 5, 50, 80]) {
        const { cost } = accepted(await gqlAs("anonymous", query, { n }), "anonymous");
        // 10 + 50 × (row 1 + reviews (1 + n))
        expect(cost.requested).toBe(10 + 50 * (2 + n));
        if (pass === 1) costs.push(cost.requested);
      }
      const refused = await gqlAs("anonymous", query, { n: 500 });
      expect(codes(refused)).toEqual(["QUERY_TOO_COMPLEX"]);
    }
    expect(costs).toEqual([160, 360, 2610, 4110]);
  });

  test("a mutation's cost: login 1 + (token 0 + role 0) = 1, reported even when the mutation fails", async () => {
    const query = `mutation($e: String!, $p: String!) { login(email: $e, password: $p) { token role } }`;
    expect(costOf(query, { e: DEMO.alice.email, p: "wrong" })).toBe(1);
    const r = await gqlAs("anonymous", query, { e: DEMO.alice.email, p: "wrong" });
    expect(codes(r)).toEqual(["UNAUTHENTICATED"]);
    expect(r.body.extensions?.cost).toEqual({ requested: 1, maximum: DEFAULTS.maxCost });
  });
});

// ---------------------------------------------------------------------------
// 3. Refusals, before any SQL
// ---------------------------------------------------------------------------

describe("3. refusals carry their code and run no SQL", () => {
  test("the SQL recorder sees what an accepted query sends (the control for every 'no SQL' below)", async () => {
    const { result, statements } = await sql.record(() => gqlAs("admin", deepOrdersQuery(12)));
    accepted(result, "admin");
    expect(statements.length).toBeGreaterThan(0);
  });

  describe("depth (MAX_QUERY_DEPTH 12)", () => {
    test("12 levels pass (as admin, who sees orders), with data", async () => {
      const q = deepOrdersQuery(12);
      expect(fieldDepth(q)).toBe(12);
      const { data } = accepted(await gqlAs("admin", q), "admin");
      expect(data.allOrders.nodes).toHaveLength(1);
    });

    test.each([13, 14, 30])("%i levels (allOrders → nodes → customer → orderList → nodes → ...): QUERY_TOO_DEEP, no SQL", async (depth) => {
      const q = deepOrdersQuery(depth);
      expect(fieldDepth(q)).toBe(depth);
      for (const who of ["anonymous", "admin"] as const) {
        const err = await refusedWithoutSql("QUERY_TOO_DEEP", () => gqlAs(who, q));
        expect(err.message).toContain("12");
      }
    });

    test("over GET too (graphqlOverGET): QUERY_TOO_DEEP, no SQL", async () => {
      await refusedWithoutSql("QUERY_TOO_DEEP", async () => {
        const res = await fetch(`${t.url}/graphql?query=${encodeURIComponent(deepOrdersQuery(13))}`, { headers: { accept: "application/json" } });
        return { status: res.status, body: await res.json() };
      });
    });

    // The limit is on how deep the fields nest, whichever way the document is
    // written: a fragment or an inline fragment selects fields at the level
    // where it is spread and adds no level of its own.
    const INNER = `customer { orderList(first: 1) { nodes { customer { orderList(first: 1) { nodes { customer { orderList(first: 1) { nodes { id } } } } } } } } }`;
    test.each([
      ["a named fragment", `{ allOrders(first: 1) { nodes { ...Deep } } } fragment Deep on Order { ${INNER} }`],
      ["an inline fragment", `{ allOrders(first: 1) { nodes { ... on Order { ${INNER} } } } }`],
    ])("12 levels written with %s pass like the same 12 levels written out", async (_how, q) => {
      expect(fieldDepth(q)).toBe(12);
      expect(fieldDepth(deepOrdersQuery(12))).toBe(12);
      accepted(await gqlAs("admin", q), "admin");
    });
  });

  describe("aliases (MAX_QUERY_ALIASES 30)", () => {
    test("30 aliases pass", async () => {
      // 30 × featuredCoffee (1 + id 0) = 30
      const { cost } = accepted(await gqlAs("anonymous", aliasedQuery(30)), "anonymous");
      expect(cost.requested).toBe(30);
    });
    test("31 aliases: TOO_MANY_ALIASES, no SQL", async () => {
      const err = await refusedWithoutSql("TOO_MANY_ALIASES", () => gqlAs("anonymous", aliasedQuery(31)));
      expect(err.message).toContain("30");
    });
    test("`__typename` aliases count too: 30 pass, 1,000 are TOO_MANY_ALIASES, no SQL", async () => {
      const typenames = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `t${i}: __typename`).join(" ")} }`;
      accepted(await gqlAs("anonymous", typenames(30)), "anonymous");
      const err = await refusedWithoutSql("TOO_MANY_ALIASES", () => gqlAs("anonymous", typenames(1000)));
      expect(err.message).toContain("30");
      await refusedWithoutSql("TOO_MANY_ALIASES", () =>
        gqlAs("anonymous", `{ featuredCoffee { ...F } } fragment F on Coffee { ${Array.from({ length: 31 }, (_, i) => `t${i}: __typename`).join(" ")} }`),
      );
    });
    test("aliases hidden in a fragment count too: TOO_MANY_ALIASES, no SQL", async () => {
      const fields = Array.from({ length: 31 }, (_, i) => `n${i}: name`).join(" ");
      await refusedWithoutSql("TOO_MANY_ALIASES", () => gqlAs("anonymous", `{ featuredCoffee { ...F } } fragment F on Coffee { ${fields} }`));
    });
  });

  describe(`selections after fragments are expanded (MAX_EXPANDED_SELECTIONS ${MAX_EXPANDED_SELECTIONS})`, () => {
    /** What the validation rule counts for a document's first operation. */
    const countedByRule = (text: string) => {
      const doc = parse(text);
      const fragments = new Map(doc.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
      return expandedSelections(
        doc.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!,
        (name) => fragments.get(name),
      );
    };
    // featuredCoffee 1 + k spreads × (the spread 1 + m fields), as the pricing visits them.
    const spreads = (k: number, m: number) => `{ featuredCoffee { ${"...F ".repeat(k)}} } fragment F on Coffee { ${"id ".repeat(m)}}`;
    test("exactly the limit is priced and runs (the count agrees with the pricing's own walk)", async () => {
      // The rule counts as a full walk does (and as the pricing visits), one by one.
      for (const [k, m, count] of [
        [99, 100, MAX_EXPANDED_SELECTIONS],
        [100, 99, MAX_EXPANDED_SELECTIONS + 1],
      ] as const) {
        expect({ k, m, walked: selectionCount(spreads(k, m)), byRule: countedByRule(spreads(k, m)) }).toEqual({ k, m, walked: count, byRule: count });
      }
      const r = await gqlAs("admin", spreads(99, 100));
      expect(accepted(r, "admin").data.featuredCoffee).toHaveProperty("id");
    });
    test("one over: QUERY_TOO_COMPLEX, no SQL", async () => {
      const err = await refusedWithoutSql("QUERY_TOO_COMPLEX", () => gqlAs("admin", spreads(100, 99)));
      expect(err.message).toContain(String(MAX_EXPANDED_SELECTIONS));
    });
    test("a fragment bomb (20 levels of 10 spreads: 10^20 selections) is counted once per fragment and refused: QUERY_TOO_COMPLEX, no SQL", async () => {
      // The rule's own count, which never spreads the fragments out (selectionCount would not finish).
      expect(countedByRule(FRAGMENT_BOMB)).toBeGreaterThan(1e20);
      await refusedWithoutSql("QUERY_TOO_COMPLEX", () => gqlAs("anonymous", FRAGMENT_BOMB));
    });
  });

  describe("tokens (MAX_QUERY_TOKENS 5000)", () => {
    test("5000 tokens pass", async () => {
      const q = tokenHeavyQuery(5000);
      expect(countTokens(q)).toBe(5000);
      accepted(await gqlAs("anonymous", q), "anonymous");
    });
    test("5001 tokens (well under the length limit): TOO_MANY_TOKENS, no SQL", async () => {
      const q = tokenHeavyQuery(5001);
      expect(countTokens(q)).toBe(5001);
      expect(q.length).toBeLessThan(DEFAULTS.maxLength);
      await refusedWithoutSql("TOO_MANY_TOKENS", () => gqlAs("anonymous", q));
    });
    test("9000 tokens: TOO_MANY_TOKENS, no SQL", async () => {
      const q = tokenHeavyQuery(9000);
      expect(q.length).toBeLessThan(DEFAULTS.maxLength);
      await refusedWithoutSql("TOO_MANY_TOKENS", () => gqlAs("anonymous", q));
    });
  });

  describe("length (MAX_QUERY_LENGTH 50000 characters; request bodies up to 100 kB)", () => {
    test("exactly 50000 characters pass", async () => {
      const q = longQuery(50_000);
      expect(q.length).toBe(50_000);
      const { cost } = accepted(await gqlAs("anonymous", q), "anonymous");
      expect(cost.requested).toBe(0);
    });
    test.each([50_001, 60_000, 99_000])("%i characters (a body under 100 kB): QUERY_TOO_LARGE, no SQL", async (length) => {
      const q = longQuery(length);
      expect(q.length).toBe(length);
      expect(Buffer.byteLength(JSON.stringify({ query: q }))).toBeLessThan(100_000);
      const err = await refusedWithoutSql("QUERY_TOO_LARGE", () => gqlAs("anonymous", q));
      expect(err.message).toContain("50000");
    });
    test("a body over 100 kB is refused with 413 before GraphQL sees it, no SQL", async () => {
      const { result, statements } = await sql.record(() =>
        fetch(`${t.url}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify({ query: longQuery(150_000) }),
        }),
      );
      expect(result.status).toBe(413);
      expect(statements).toEqual([]);
    });
  });

  describe("cost (MAX_QUERY_COST 5000, MAX_QUERY_COST_STAFF 50000)", () => {
    // allCoffees 1 + 100000 × (nodes 1 + id 0) = 100001
    const EXPENSIVE = `{ allCoffees(first: 100000) { nodes { id } } }`;

    test("allCoffees(first: 100000): QUERY_TOO_COMPLEX with extensions.cost and maximumCost, no SQL", async () => {
      expect(costOf(EXPENSIVE)).toBe(100_001);
      for (const who of ["anonymous", "alice", "barista", "admin"] as const) {
        const err = await refusedWithoutSql("QUERY_TOO_COMPLEX", () => gqlAs(who, EXPENSIVE));
        expect({ who, cost: err.extensions?.cost, maximumCost: err.extensions?.maximumCost }).toEqual({ who, cost: 100_001, maximumCost: ceilingOf(who) });
      }
    });

    test("the same with a variable for first: refused at 100000, accepted at 10", async () => {
      const q = `query($first: Int) { allCoffees(first: $first) { nodes { id } } }`;
      const err = await refusedWithoutSql("QUERY_TOO_COMPLEX", () => gqlAs("anonymous", q, { first: 100_000 }));
      expect(err.extensions).toMatchObject({ cost: 100_001, maximumCost: 5000 });
      // 1 + 10 × 1 = 11
      expect(accepted(await gqlAs("anonymous", q, { first: 10 }), "anonymous").cost.requested).toBe(11);
    });

    test("a mutation over the ceiling is refused before it runs (no order is created)", async () => {
      // createOrder 1 + (id 0 + items(first: 100000) (1 + 100000 × (row 1 + quantity 0))) = 100002
      const q = `mutation($c: ID!) { createOrder(coffeeId: $c, quantity: 1) { id items(first: 100000) { quantity } } }`;
      expect(costOf(q, { c: plainCoffee })).toBe(100_002);
      const before = (await t.db.query("select count(*)::int as n from app_public.orders")).rows[0].n;
      const err = await refusedWithoutSql("QUERY_TOO_COMPLEX", () => gqlAs("barista", q, { c: plainCoffee }));
      expect(err.extensions).toMatchObject({ cost: 100_002, maximumCost: 50_000 });
      expect((await t.db.query("select count(*)::int as n from app_public.orders")).rows[0].n).toBe(before);
    });

    // allCoffees 1 + 6000 × (nodes 1 + id 0 + name 0) = 6001: over 5000, under 50000
    const MIDDLE = `{ allCoffees(first: 6000) { nodes { id name } } }`;
    test("a query costing 6001 is refused for anonymous and customers (no SQL) ...", async () => {
      expect(costOf(MIDDLE)).toBe(6001);
      for (const who of ["anonymous", "alice", "bob"] as const) {
        const err = await refusedWithoutSql("QUERY_TOO_COMPLEX", () => gqlAs(who, MIDDLE));
        expect({ who, ext: err.extensions }).toEqual({ who, ext: { code: "QUERY_TOO_COMPLEX", cost: 6001, maximumCost: 5000 } });
      }
    });
    test("... and allowed for barista and admin, with the rows", async () => {
      const { rows } = await t.db.query("select count(*)::int as n from app_public.coffees");
      for (const who of ["barista", "admin"] as const) {
        const { data, cost } = accepted(await gqlAs(who, MIDDLE), who);
        expect({ who, cost }).toEqual({ who, cost: { requested: 6001, maximum: 50_000 } });
        expect(data.allCoffees.nodes.length).toBeGreaterThan(0);
        expect(data.allCoffees.nodes.length).toBeLessThanOrEqual(rows[0].n);
      }
    });

    test("the ceilings are inclusive: 5000 passes for anonymous, 5001 does not; 50000 passes for staff, 50001 does not", async () => {
      // allCoffees 1 + first × nodes (1 + __typename 0)
      const q = (first: number) => `{ allCoffees(first: ${first}) { nodes { __typename } } }`;
      expect(accepted(await gqlAs("anonymous", q(4999)), "anonymous").cost.requested).toBe(5000);
      expect((await refusedWithoutSql("QUERY_TOO_COMPLEX", () => gqlAs("anonymous", q(5000)))).extensions?.cost).toBe(5001);
      expect(accepted(await gqlAs("barista", q(49_999)), "barista").cost.requested).toBe(50_000);
      expect((await refusedWithoutSql("QUERY_TOO_COMPLEX", () => gqlAs("barista", q(50_000)))).extensions?.cost).toBe(50_001);
    });

    test("staff have a ceiling too: 60001 is refused for admin, no SQL", async () => {
      // allCoffees 1 + 60000 × (nodes 1 + id 0 + name 0) = 60001
      const err = await refusedWithoutSql("QUERY_TOO_COMPLEX", () => gqlAs("admin", `{ allCoffees(first: 60000) { nodes { id name } } }`));
      expect(err.extensions).toMatchObject({ cost: 60_001, maximumCost: 50_000 });
    });

    test("a document within every documented limit is not refused as BAD_USER_INPUT by an undocumented node count", async () => {
      // 300 spreads of a 40-field fragment: 651 tokens, depth 2, no aliases;
      // 12,000 fields to price; cost featuredCoffee 1 + 300 × 40 × id 0 = 1, under the staff ceiling.
      const q = `{ featuredCoffee { ${"...F ".repeat(300)}} } fragment F on Coffee { ${"id ".repeat(40)}}`;
      expect(countTokens(q)).toBeLessThan(DEFAULTS.maxTokens);
      expect(fieldDepth(q)).toBe(2);
      const r = await gqlAs("admin", q);
      const got = summary(r).errors;
      // Either it runs (its documented cost is 1 <= 50000), or it is refused as too complex; never a BAD_USER_INPUT.
      expect(got.filter((e) => e.code !== "QUERY_TOO_COMPLEX")).toEqual([]);
    });
  });

  describe("the limits are configurable (a second service: MAX_QUERY_DEPTH 4, MAX_QUERY_COST 100)", () => {
    let small: TestService;
    beforeAll(async () => {
      small = await startAnotherService({ MAX_QUERY_DEPTH: "4", MAX_QUERY_COST: "100", MAX_QUERY_COST_STAFF: "1000000" });
    });
    afterAll(() => small?.stop());

    const DEPTH4 = `{ featuredCoffee { reviews(limit: 1) { coffee { id } } } }`;
    const DEPTH5 = `{ featuredCoffee { reviews(limit: 1) { coffee { roaster { name } } } } }`;
    test("depth 4 passes, depth 5 is QUERY_TOO_DEEP there (and passes on the default service), no SQL", async () => {
      expect([fieldDepth(DEPTH4), fieldDepth(DEPTH5)]).toEqual([4, 5]);
      accepted(await gqlAs("anonymous", DEPTH4, undefined, undefined, small), "anonymous", 100);
      const err = await refusedWithoutSql("QUERY_TOO_DEEP", () => gqlAs("anonymous", DEPTH5, undefined, undefined, small));
      expect(err.message).toContain("4");
      accepted(await gqlAs("anonymous", DEPTH5), "anonymous");
    });

    test("cost 100 passes for anonymous, 101 is QUERY_TOO_COMPLEX with maximumCost 100 (and passes on the default service), no SQL", async () => {
      // allCoffees 1 + first × nodes (1 + __typename 0)
      const r100 = await gqlAs("anonymous", `{ allCoffees(first: 99) { nodes { __typename } } }`, undefined, undefined, small);
      expect(summary(r100)).toEqual({ status: 200, errors: [] });
      expect(r100.body.extensions?.cost).toEqual({ requested: 100, maximum: 100 });
      const err = await refusedWithoutSql("QUERY_TOO_COMPLEX", () => gqlAs("anonymous", `{ allCoffees(first: 100) { nodes { __typename } } }`, undefined, undefined, small));
      expect(err.extensions).toMatchObject({ cost: 101, maximumCost: 100 });
      accepted(await gqlAs("anonymous", `{ allCoffees(first: 100) { nodes { __typename } } }`), "anonymous");
    });

    test("the staff ceiling is its own setting (MAX_QUERY_COST_STAFF 1000000 there)", async () => {
      const r = await gqlAs("admin", `{ allCoffees(first: 100) { nodes { __typename } } }`, undefined, undefined, small);
      expect(summary(r)).toEqual({ status: 200, errors: [] });
      expect(r.body.extensions?.cost).toEqual({ requested: 101, maximum: 1_000_000 });
    });

    describe("6b. caps in SQL with a ceiling high enough to let limit: 100000 through", () => {
      test("reviews(limit: 100000) costs 100002 and returns at most 100 rows", async () => {
        const coffee = await reviewedCoffee();
        const r = await gqlAs("admin", `query($id: ID!) { coffee(id: $id) { reviews(limit: 100000) { rating } } }`, { id: coffee }, undefined, small);
        expect(summary(r)).toEqual({ status: 200, errors: [] });
        // coffee 1 + (reviews 1 + 100000 × (row 1 + rating 0))
        expect(r.body.extensions?.cost).toEqual({ requested: 100_002, maximum: 1_000_000 });
        expect(r.body.data.coffee.reviews).toHaveLength(100);
      });
      test("recentOrders(limit: 100000) costs 100002 and returns at most 100 rows", async () => {
        await bobWithManyOrders();
        const r = await gqlAs("admin", `query($id: ID!) { user(id: $id) { recentOrders(limit: 100000) { id } } }`, { id: DEMO.bob.id }, undefined, small);
        expect(summary(r)).toEqual({ status: 200, errors: [] });
        // user 1 + (recentOrders 1 + 100000 × (row 1 + id 0))
        expect(r.body.extensions?.cost).toEqual({ requested: 100_002, maximum: 1_000_000 });
        expect(r.body.data.user.recentOrders).toHaveLength(100);
      });
    });
  });
});

// ---------------------------------------------------------------------------
// 4. Introspection
// ---------------------------------------------------------------------------

describe("4. introspection still works for anonymous (Ruru needs it)", () => {
  test.each([
    ["getIntrospectionQuery()", getIntrospectionQuery()],
    [
      "getIntrospectionQuery() with every option Ruru may ask for",
      getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true, oneOf: true }),
    ],
  ])("%s: the whole schema, cost 0, although it nests deeper than 12", async (_name, q) => {
    expect(fieldDepth(q)).toBeGreaterThan(DEFAULTS.maxDepth);
    const r = await gqlAs("anonymous", q);
    expect(summary(r)).toEqual({ status: 200, errors: [] });
    expect(r.body.data.__schema.queryType.name).toBe("Query");
    expect(r.body.data.__schema.types.map((ty: { name: string }) => ty.name)).toEqual(expect.arrayContaining(["Coffee", "Order", "CoffeeConnection"]));
    expect(r.body.extensions?.cost).toEqual({ requested: 0, maximum: DEFAULTS.maxCost });
  });

  test("a __type introspection query (getIntrospectionQuery()'s TypeRef fragment on one type) is exempt from the depth limit too", async () => {
    const full = getIntrospectionQuery();
    const typeRef = full.slice(full.indexOf("fragment TypeRef"));
    const q = `{ __type(name: "Coffee") { name fields { name type { ...TypeRef } } } } ${typeRef}`;
    expect(fieldDepth(q)).toBeGreaterThan(DEFAULTS.maxDepth);
    const r = await gqlAs("anonymous", q);
    expect(summary(r)).toEqual({ status: 200, errors: [] });
    expect(r.body.data.__type.fields.map((f: { name: string }) => f.name)).toEqual(expect.arrayContaining(["id", "name", "reviews"]));
    expect(r.body.extensions?.cost).toEqual({ requested: 0, maximum: DEFAULTS.maxCost });
  });

  describe("but bounded: one __schema and 10 __type per operation (INTROSPECTION_LIMIT), no SQL", () => {
    const walk = `{ types { name fields { name type { name ofType { name } } } } }`;
    test("thirty aliased __schema walks (the finding: 2-10 MB at cost 0) are refused; so are two", async () => {
      const thirty = `{ ${Array.from({ length: 30 }, (_, i) => `s${i}: __schema ${walk}`).join(" ")} }`;
      const err = await refusedWithoutSql("INTROSPECTION_LIMIT", () => gqlAs("anonymous", thirty));
      expect(err.extensions).toMatchObject({ schemaFields: 30, typeFields: 0 });
      await refusedWithoutSql("INTROSPECTION_LIMIT", () => gqlAs("admin", `{ a: __schema ${walk} b: __schema ${walk} }`));
    });
    test("fragments do not hide them: the same __schema spread twice counts twice", async () => {
      const q = `{ ...A ...B } fragment A on Query { a: __schema { queryType { name } } } fragment B on Query { b: __schema { queryType { name } } }`;
      await refusedWithoutSql("INTROSPECTION_LIMIT", () => gqlAs("anonymous", q));
    });
    test("11 __type fields are refused, 10 pass; one __schema with ten __type passes", async () => {
      const types = (n: number) => Array.from({ length: n }, (_, i) => `t${i}: __type(name: "Coffee") { name }`).join(" ");
      const err = await refusedWithoutSql("INTROSPECTION_LIMIT", () => gqlAs("anonymous", `{ ${types(11)} }`));
      expect(err.extensions).toMatchObject({ schemaFields: 0, typeFields: 11 });
      expect(summary(await gqlAs("anonymous", `{ ${types(10)} }`)).errors).toEqual([]);
      expect(summary(await gqlAs("anonymous", `{ __schema { queryType { name } } ${types(10)} }`)).errors).toEqual([]);
    });
    test("each operation of a document is counted on its own", async () => {
      const q = `query A { __schema { queryType { name } } } query B { __schema { queryType { name } } }`;
      expect(summary(await gqlAs("anonymous", q, undefined, "B")).errors).toEqual([]);
    });
  });

  // Who may introspect at all is AD_HOC_QUERIES (test/graphql/trusted-documents.test.ts).

  test("Ruru itself is served on /graphiql", async () => {
    const res = await fetch(`${t.url}/graphiql`, { headers: { accept: "text/html" } });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/ruru/i);
  });
});

// ---------------------------------------------------------------------------
// 5. WebSocket
// ---------------------------------------------------------------------------

describe("5. the same limits over graphql-ws", () => {
  /** Sends one operation over a new socket and waits for its outcome; records the SQL meanwhile. */
  async function overWs(who: Caller, query: string, variables: Record<string, unknown> = {}) {
    const client = t.ws(await tokenOf(t, who));
    const { result, statements } = await sql.record(async () => {
      const sub = subscribe(client, query, variables);
      await settled(sub);
      sub.dispose();
      return sub;
    }, 150);
    await client.dispose();
    return { sub: result, errors: errorsOf(result), statements };
  }

  async function refusedOverWs(code: string, who: Caller, query: string, variables?: Record<string, unknown>) {
    const { sub, errors, statements } = await overWs(who, query, variables);
    expect(errors.map((e) => e.extensions?.code)).toEqual([code]);
    expect(sub.results.filter((r) => r.data)).toEqual([]);
    expect(statements).toEqual([]);
    return errors[0];
  }

  test("an accepted query over the socket carries extensions.cost (and runs SQL: the control)", async () => {
    const { sub, errors, statements } = await overWs("anonymous", `{ coffees { id } }`);
    expect(errors).toEqual([]);
    expect((sub.results[0] as { extensions?: Record<string, unknown> }).extensions?.cost).toEqual({ requested: 60, maximum: DEFAULTS.maxCost });
    expect(statements.length).toBeGreaterThan(0);
  });

  test("an accepted subscription runs SQL (the follow check); the same subscription over the ceiling runs none", async () => {
    const order = await placeOrder(t, await t.token("alice"), [{ coffeeId: plainCoffee, quantity: 1 }]);
    const client = t.ws(await t.token("alice"));
    const { statements } = await sql.record(async () => {
      const sub = subscribe(client, `subscription($id: ID!) { orderUpdated(id: $id) { id status } }`, { id: order.id });
      await listening(t, [`order:${order.id}`]);
      expect(errorsOf(sub)).toEqual([]);
      sub.dispose();
    });
    await client.dispose();
    expect(statements.filter((s) => /assert_can_follow_order/.test(s))).toHaveLength(1);
    // orderUpdated 1 + (id 0 + items(first: 100000) (1 + 100000 × (row 1 + quantity 0))) = 100002
    const q = `subscription($id: ID!) { orderUpdated(id: $id) { id items(first: 100000) { quantity } } }`;
    expect(costOf(q, { id: order.id })).toBe(100_002);
    const err = await refusedOverWs("QUERY_TOO_COMPLEX", "alice", q, { id: order.id });
    // priced for SUBSCRIPTION_EVENTS (10) re-reads of its selection
    expect(err.extensions).toMatchObject({ cost: 10 * 100_002, maximumCost: 5000 });
  });

  test("a too-deep query: QUERY_TOO_DEEP, no SQL", async () => {
    await refusedOverWs("QUERY_TOO_DEEP", "admin", deepOrdersQuery(13));
  });

  test("a too-deep subscription: QUERY_TOO_DEEP, no SQL (no LISTEN either)", async () => {
    const q = deepNewCoffeeSubscription(13);
    expect(fieldDepth(q)).toBe(13);
    await refusedOverWs("QUERY_TOO_DEEP", "admin", q);
  });

  test("a too-costly query: QUERY_TOO_COMPLEX with cost and maximumCost, no SQL", async () => {
    const err = await refusedOverWs("QUERY_TOO_COMPLEX", "anonymous", `{ allCoffees(first: 100000) { nodes { id } } }`);
    expect(err.extensions).toMatchObject({ cost: 100_001, maximumCost: 5000 });
  });

  test("a too-costly subscription: QUERY_TOO_COMPLEX, no SQL (no LISTEN either), for anonymous and for admin", async () => {
    // newCoffee 1 + (reviews 1 + 100000 × (row 1 + rating 0)) = 100002
    const q = `subscription { newCoffee { reviews(limit: 100000) { rating } } }`;
    expect(costOf(q)).toBe(100_002);
    for (const who of ["anonymous", "admin"] as const) {
      const err = await refusedOverWs("QUERY_TOO_COMPLEX", who, q);
      // priced for SUBSCRIPTION_EVENTS (10) re-reads of its selection
      expect({ who, ext: err.extensions }).toMatchObject({ who, ext: { cost: 10 * 100_002, maximumCost: ceilingOf(who) } });
    }
  });

  test("a fragment bomb: QUERY_TOO_COMPLEX, no SQL", async () => {
    await refusedOverWs("QUERY_TOO_COMPLEX", "anonymous", FRAGMENT_BOMB);
  });

  test("a subscription with a variable limit: refused for a large $n", async () => {
    const q = `subscription($n: Int) { newCoffee { reviews(limit: $n) { rating } } }`;
    const err = await refusedOverWs("QUERY_TOO_COMPLEX", "anonymous", q, { n: 10_000 });
    expect(err.extensions).toMatchObject({ cost: 10 * 10_002, maximumCost: 5000 });
  });

  test("per-role ceilings on the socket: 6001 refused for anonymous and alice, allowed for admin", async () => {
    // allCoffees 1 + 6000 × (nodes 1 + id 0 + name 0) = 6001
    const q = `{ allCoffees(first: 6000) { nodes { id name } } }`;
    for (const who of ["anonymous", "alice"] as const) await refusedOverWs("QUERY_TOO_COMPLEX", who, q);
    const { sub, errors } = await overWs("admin", q);
    expect(errors).toEqual([]);
    expect((sub.results[0] as { extensions?: Record<string, unknown> }).extensions?.cost).toEqual({ requested: 6001, maximum: 50_000 });
  });

  test("too many aliases, tokens or characters: TOO_MANY_ALIASES, TOO_MANY_TOKENS, QUERY_TOO_LARGE, no SQL", async () => {
    await refusedOverWs("TOO_MANY_ALIASES", "anonymous", aliasedQuery(31));
    await refusedOverWs("TOO_MANY_TOKENS", "anonymous", tokenHeavyQuery(5001));
    await refusedOverWs("QUERY_TOO_LARGE", "anonymous", longQuery(60_000));
  });
});

// ---------------------------------------------------------------------------
// 6. limit arguments are capped in SQL, and priced as given
// ---------------------------------------------------------------------------

let reviewed: string | null = null;
/** A coffee of this suite with 120 reviews (arranged by the owner). */
async function reviewedCoffee(): Promise<string> {
  if (reviewed) return reviewed;
  const id = await makeCoffee(t, `Limits Reviewed ${suffix}`, "3.60");
  await t.db.query(
    `insert into app_public.reviews (coffee_id, rating, comment, created_at)
     select $1, 1 + g % 5, 'review ' || g, now() - g * interval '1 minute' from generate_series(1, 120) g`,
    [id],
  );
  reviewed = id;
  return id;
}

let bobOrders: string[] | null = null;
/** 110 cancelled orders of bob's, arranged by the owner (cancelled: no stock, no sales, no points). */
async function bobWithManyOrders(): Promise<void> {
  if (bobOrders) return;
  bobOrders = await insertOrders(
    t,
    Array.from({ length: 110 }, (_, i) => ({
      customerId: DEMO.bob.id,
      status: "CANCELLED" as const,
      lines: [{ coffeeId: plainCoffee, quantity: 1 }],
      timeOffset: `-${i + 1} minutes`,
    })),
  );
}

describe("6. limit arguments are capped at 100 rows in SQL and priced as given", () => {
  const REVIEWS = `query($id: ID!, $n: Int) { coffee(id: $id) { reviews(limit: $n) { rating } } }`;

  test("reviews(limit: 1000): cost 1002 (coffee 1 + reviews (1 + 1000 × (row 1 + rating 0))), 100 rows", async () => {
    const id = await reviewedCoffee();
    const { data, cost } = accepted(await gqlAs("anonymous", REVIEWS, { id, n: 1000 }), "anonymous");
    expect(cost.requested).toBe(1002);
    expect(data.coffee.reviews).toHaveLength(100);
  });

  test("reviews without limit: 20 rows, priced as 20 (1 + 1 + 20 × 1 = 22)", async () => {
    const id = await reviewedCoffee();
    const { data, cost } = accepted(await gqlAs("anonymous", REVIEWS, { id }), "anonymous");
    expect(cost.requested).toBe(22);
    expect(data.coffee.reviews).toHaveLength(20);
  });

  test("reviews(limit: 100000) is priced at 100002 although SQL would return 100: refused for anonymous and admin, no SQL", async () => {
    const id = await reviewedCoffee();
    for (const who of ["anonymous", "admin"] as const) {
      const err = await refusedWithoutSql("QUERY_TOO_COMPLEX", () => gqlAs(who, REVIEWS, { id, n: 100_000 }));
      expect(err.extensions).toMatchObject({ cost: 100_002, maximumCost: ceilingOf(who) });
      const literal = await refusedWithoutSql("QUERY_TOO_COMPLEX", () => gqlAs(who, `{ coffee(id: "${id}") { reviews(limit: 100000) { rating } } }`));
      expect(literal.extensions).toMatchObject({ cost: 100_002, maximumCost: ceilingOf(who) });
    }
  });

  const RECENT = `query($n: Int) { customer { recentOrders(limit: $n) { id } } }`;
  test("customer recentOrders(limit: 1000): cost 1002, 100 rows", async () => {
    await bobWithManyOrders();
    const { data, cost } = accepted(await gqlAs("bob", RECENT, { n: 1000 }), "bob");
    expect(cost.requested).toBe(1002);
    expect(data.customer.recentOrders).toHaveLength(100);
  });

  test("recentOrders without limit: 10 rows (its SQL default and @pageSize 10), priced as 10 (1 + 1 + 10 × 1 = 12)", async () => {
    await bobWithManyOrders();
    const { data, cost } = accepted(await gqlAs("bob", RECENT), "bob");
    expect(cost.requested).toBe(12);
    expect(data.customer.recentOrders).toHaveLength(10);
  });

  test("recentOrders(limit: 100000) is priced at 100002: refused for the customer, and for staff through user(id:), no SQL", async () => {
    await bobWithManyOrders();
    const err = await refusedWithoutSql("QUERY_TOO_COMPLEX", () => gqlAs("bob", RECENT, { n: 100_000 }));
    expect(err.extensions).toMatchObject({ cost: 100_002, maximumCost: 5000 });
    const staff = await refusedWithoutSql("QUERY_TOO_COMPLEX", () => gqlAs("barista", `query($id: ID!) { user(id: $id) { recentOrders(limit: 100000) { id } } }`, { id: DEMO.bob.id }));
    expect(staff.extensions).toMatchObject({ cost: 100_002, maximumCost: 50_000 });
  });
});
