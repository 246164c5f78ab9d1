import {
  buildClientSchema,
  getIntrospectionQuery,
  getNamedType,
  getNullableType,
  isListType,
  isLeafType,
  isNonNullType,
  isObjectType,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
} from "graphql";
import { type Caller, codes, DEMO, gqlAs } from "../support/client.ts";
import { report } from "../support/figures.ts";
import { insertOrders } from "../support/fixtures.ts";
import { startTestService, type TestService } from "../support/service.ts";

// Drill 10: every list and connection field reachable by anonymous and
// admin callers (read from the served schema: a new field is covered
// without editing this file), asked for WITHOUT `first` over seeded data
// bigger than its default page: at most the default page comes back, and
// the priced cost (extensions.cost.requested) is at least the rows
// returned. Then negative first/offset and garbage cursors on each:
// BAD_USER_INPUT, never an internal error. Page sizes: plugins/PageSizePlugin.ts.

let t: TestService;
let served: GraphQLSchema;
/** "Type.field" -> its default page size, from the schema the server builds (extensions.pageSize). */
const defaults = new Map<string, number>();
const seeded = { coffees: [] as string[], reviewed: "", roaster: "", customers: [] as string[], orders: [] as string[] };
const SEED = 130; // more than any default page (MAX_LIST_SIZE 100 is the largest default)

beforeAll(async () => {
  t = await startTestService();
  const r = await t.gql(getIntrospectionQuery());
  served = buildClientSchema(r.body.data);
  const { makeSchema } = await import("postgraphile");
  const { makePreset } = await import("../../src/preset.ts");
  const { schema } = await makeSchema(makePreset({ config: t.config, pool: t.service.api!.pool, viewerFromConnectionParams: () => null, clientAddress: () => "test" }));
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type)) continue;
    for (const f of Object.values(type.getFields())) {
      const ps = (f.extensions as { pageSize?: { default: number } }).pageSize;
      if (ps) defaults.set(`${type.name}.${f.name}`, ps.default);
    }
  }
  // Seed: a roaster with SEED coffees (on sale, half seasonal), one coffee
  // with SEED reviews, SEED customers, SEED orders of alice's (one line each).
  seeded.roaster = (await t.db.query("insert into app_public.roasters (name) values ('Drill10 Roaster') returning id")).rows[0].id;
  const { rows: coffees } = await t.db.query(
    `insert into app_public.coffees (name, price, roaster_id, category, limited_time_offer, description)
     select 'Drill10 coffee ' || n, 3.50, $1, (case when n % 2 = 0 then 'SEASONAL' else 'FEATURED' end)::app_public.coffee_category, n % 3 = 0, 'drillten'
       from generate_series(1, $2) n returning id`,
    [seeded.roaster, SEED],
  );
  seeded.coffees = coffees.map((c) => c.id);
  seeded.reviewed = seeded.coffees[0]!;
  await t.db.query("insert into app_public.reviews (coffee_id, customer_id, rating) select $1, null, 1 + n % 5 from generate_series(1, $2) n", [seeded.reviewed, SEED]);
  seeded.customers = (await t.db.query("insert into app_public.customers (name) select 'Drill10 customer ' || n from generate_series(1, $1) n returning id", [SEED])).rows.map((c) => c.id);
  seeded.orders = await insertOrders(
    t,
    Array.from({ length: SEED }, (_, i) => ({ customerId: DEMO.alice.id, status: "COMPLETED" as const, lines: [{ coffeeId: seeded.coffees[i]!, quantity: 1 }], timeOffset: `-${i + 1} days` })),
  );
}, 120_000);

afterAll(async () => {
  if (!t) return;
  await t.db.query("delete from app_public.orders where id = any($1::uuid[])", [seeded.orders]);
  await t.db.query("delete from app_public.customers where id = any($1::uuid[])", [seeded.customers]);
  await t.db.query("delete from app_public.coffees where roaster_id = $1", [seeded.roaster]);
  await t.db.query("delete from app_public.roasters where id = $1", [seeded.roaster]);
  await t.stop();
});

/** Arguments a list field cannot do without (a field missing here that needs one fails the drill). */
const REQUIRED_ARGS: Record<string, string> = {
  "Query.searchCoffees": `query: "drillten"`,
  "Query.searchCustomers": `query: "Drill10"`,
  "Query.salesReport": `from: "2020-01-01", to: "2030-01-01", groupBy: COFFEE`,
};

interface ListField {
  coordinate: string;
  parent: GraphQLObjectType;
  field: GraphQLField<unknown, unknown>;
  connection: boolean;
}

function listFields(schema: GraphQLSchema): ListField[] {
  const out: ListField[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith("__") || /(Connection|Edge|Payload)$/.test(type.name) || type.name === "Subscription" || type.name === "Mutation") continue;
    for (const field of Object.values(type.getFields())) {
      const nullable = getNullableType(field.type);
      const named = getNamedType(field.type);
      const connection = !isListType(nullable) && named.name.endsWith("Connection");
      if (!connection && !(isListType(nullable) && isObjectType(named))) continue; // lists of scalars (allergens) are columns, not pages
      out.push({ coordinate: `${type.name}.${field.name}`, parent: type, field, connection });
    }
  }
  return out;
}

/** A leaf to select on each row (costs 1). */
function leafOf(type: GraphQLObjectType): string {
  const fields = Object.values(type.getFields());
  const leaf = fields.find((f) => f.name === "id" && f.args.length === 0) ?? fields.find((f) => isLeafType(getNamedType(f.type)) && f.args.length === 0);
  if (!leaf) throw new Error(`${type.name} has no argument-free leaf`);
  return leaf.name;
}

/** How to reach a parent row of a type: a root lookup by id and the id to use. */
function parentFor(type: GraphQLObjectType, caller: Caller): { field: string; id: string } | null {
  const name = type.name[0]!.toLowerCase() + type.name.slice(1);
  const ids: Record<string, string> = { Coffee: seeded.reviewed, Customer: DEMO.alice.id, Order: seeded.orders[0]!, Roaster: seeded.roaster, Barista: DEMO.barista.id };
  const id = ids[type.name];
  const lookup = served.getQueryType()!.getFields()[`${name}ById`];
  if (!id || !lookup) return null;
  return caller === "anonymous" && (type.name === "Order" || type.name === "Customer" || type.name === "Barista") ? null : { field: `${name}ById`, id };
}

function selection(lf: ListField, args: string): string {
  const named = getNamedType(lf.field.type) as GraphQLObjectType;
  const required = REQUIRED_ARGS[lf.coordinate];
  const all = [required, args].filter(Boolean).join(", ");
  const a = all ? `(${all})` : "";
  if (lf.connection) {
    const node = getNamedType(named.getFields().nodes!.type) as GraphQLObjectType;
    return `${lf.field.name}${a} { nodes { ${leafOf(node)} } }`;
  }
  return `${lf.field.name}${a} { ${leafOf(named)} }`;
}

function documentFor(lf: ListField, caller: Caller, args = ""): string | null {
  const requiredArgs = lf.field.args.filter((a) => isNonNullType(a.type) && a.defaultValue === undefined);
  if (requiredArgs.length && !REQUIRED_ARGS[lf.coordinate]) throw new Error(`${lf.coordinate} needs arguments: add them to REQUIRED_ARGS`);
  if (lf.parent.name === "Query") return `{ ${selection(lf, args)} }`;
  const parent = parentFor(lf.parent, caller);
  if (!parent) return null;
  return `{ ${parent.field}(id: "${parent.id}") { ${selection(lf, args)} } }`;
}

function rowsIn(data: unknown, lf: ListField): number {
  // The list is the only list in the answer: find it.
  const walk = (v: unknown): unknown[] | null => {
    if (Array.isArray(v)) return v;
    if (v && typeof v === "object")
      for (const x of Object.values(v)) {
        const found = walk(x);
        if (found) return found;
      }
    return null;
  };
  const node = lf.parent.name === "Query" ? (data as any)[lf.field.name] : (Object.values(data as object)[0] as any)?.[lf.field.name];
  return walk(node)?.length ?? 0;
}

describe.each(["anonymous", "admin"] as const)("as %s", (caller) => {
  test("every list and connection without `first` returns at most its default page, priced at least at the rows returned", async () => {
    const fields = listFields(served);
    expect(fields.length).toBeGreaterThan(40);
    const lines: Array<{ field: string; default: number; rows: number; cost: number }> = [];
    const problems: string[] = [];
    for (const lf of fields) {
      const def = defaults.get(lf.coordinate);
      if (def === undefined) {
        problems.push(`${lf.coordinate}: no page size`);
        continue;
      }
      const doc = documentFor(lf, caller);
      if (!doc) continue; // no parent row this caller may see
      const r = await gqlAs(t, caller, doc);
      if (r.body.errors) {
        const c = codes(r);
        if (!c.every((x) => x === "FORBIDDEN" || x === "UNAUTHENTICATED")) problems.push(`${lf.coordinate}: ${JSON.stringify(r.body.errors)}`);
        continue;
      }
      const rows = rowsIn(r.body.data, lf);
      const cost = r.body.extensions?.cost?.requested as number;
      lines.push({ field: lf.coordinate, default: def, rows, cost });
      if (rows > def) problems.push(`${lf.coordinate}: ${rows} rows, default page ${def}`);
      if (!(cost >= rows)) problems.push(`${lf.coordinate}: ${rows} rows priced at ${cost}`);
    }
    expect(problems).toEqual([]);
    // The seeded lists really were bigger than their page: the LIMIT did it.
    const full = (f: string) => lines.find((l) => l.field === f);
    const mustBeFull =
      caller === "admin"
        ? [
            "Query.allCoffees",
            "Query.coffees",
            "Query.menuItems",
            "Query.allReviews",
            "Query.allCustomers",
            "Query.allOrders",
            "Coffee.reviewList",
            "Coffee.reviews",
            "Roaster.coffees",
            "Customer.orderList",
            "Customer.recentOrders",
            "Query.searchCoffees",
            "Query.seasonalDrinks",
            "Query.allOrderItems",
            "Query.searchCustomers",
          ]
        : ["Query.allCoffees", "Query.coffees", "Query.menuItems", "Query.allReviews", "Coffee.reviewList", "Coffee.reviews", "Roaster.coffees", "Query.searchCoffees", "Query.seasonalDrinks"];
    for (const f of mustBeFull) expect({ f, full: full(f)?.rows === full(f)?.default }).toEqual({ f, full: true });
    report(`10-every-list-without-first (${caller})`, { fields: lines.length, full_pages: mustBeFull.length, largest: Math.max(...lines.map((l) => l.rows)) });
  }, 120_000);

  test("negative first or offset, and cursors that are not ours, are BAD_USER_INPUT on every list", async () => {
    const bad: string[] = [];
    const junkCursors = ["garbage", Buffer.from("[1,2,3]").toString("base64"), Buffer.from('["natural", "x"]').toString("base64"), Buffer.from("{}").toString("base64")];
    for (const lf of listFields(served)) {
      const names = new Set(lf.field.args.map((a) => a.name));
      const variants = [
        names.has("first") ? "first: -1" : null,
        names.has("offset") ? "offset: -1" : null,
        names.has("last") ? "last: -1" : null,
        names.has("limit") ? "limit: -1" : null,
        ...(names.has("after") ? junkCursors.map((c) => `after: "${c}"`) : []),
        ...(names.has("before") ? junkCursors.slice(0, 1).map((c) => `before: "${c}"`) : []),
      ].filter((v): v is string => v !== null);
      for (const v of variants) {
        const doc = documentFor(lf, caller, v);
        if (!doc) continue;
        const r = await gqlAs(t, caller, doc);
        const c = codes(r);
        const ok = c.length > 0 && c.every((x) => x === "BAD_USER_INPUT" || (caller === "anonymous" && (x === "UNAUTHENTICATED" || x === "FORBIDDEN")));
        if (!ok) bad.push(`${lf.coordinate}(${v}): ${JSON.stringify(r.body.errors ?? "no error")}`);
      }
    }
    expect(bad).toEqual([]);
  }, 120_000);
});

test("the finding: anonymous nested reviewList walks over 130 reviews come back as pages, priced above what they return; one level more is refused", async () => {
  const two = `query($id: ID!) { coffee(id: $id) { reviewList { nodes { coffee { reviewList { nodes { rating } } } } } } }`;
  const r = await gqlAs(t, "anonymous", two, { id: seeded.reviewed });
  expect(r.body.errors).toBeUndefined();
  const count = JSON.stringify(r.body.data).match(/"rating"/g)?.length ?? 0;
  expect(count).toBe(20 * 20);
  expect(r.body.extensions!.cost.requested).toBeGreaterThanOrEqual(count);
  const three = `query($id: ID!) { coffee(id: $id) { reviewList { nodes { coffee { reviewList { nodes { coffee { reviewList { nodes { rating } } } } } } } } } }`;
  const refused = await gqlAs(t, "anonymous", three, { id: seeded.reviewed });
  expect(codes(refused)).toEqual(["QUERY_TOO_COMPLEX"]);
  report("10-every-list-without-first (finding)", {
    ratings: count,
    bytes: JSON.stringify(r.body).length,
    cost: r.body.extensions!.cost.requested,
    three_levels_cost: refused.body.errors?.[0]?.extensions?.cost as number,
  });
});
