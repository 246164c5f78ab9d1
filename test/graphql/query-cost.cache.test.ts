import { buildSchema, parse } from "graphql";
import { makeCostCache, queryCost } from "../../plugins/QueryCostPlugin/index.ts";

// The cost check prices a request once per parsed document, operation and
// the variables its price can depend on (first/last/limit and directive
// arguments): a variable such as CoffeeDetail's id, different on every
// request, no longer makes every request pay the pricing walk.

const schema = buildSchema(`
  type Query { coffee(id: ID!): Coffee  coffees(first: Int): [Coffee] }
  type Coffee { name: String  reviews(limit: Int): [Review] }
  type Review { rating: Int }
`);
const LIST = 20;
const direct = (doc: ReturnType<typeof parse>, variables?: Record<string, unknown>, op?: string) => queryCost(schema, doc, variables, op, LIST);

function counted() {
  let calls = 0;
  const cached = makeCostCache((s, d, v, o) => {
    calls++;
    return queryCost(s, d, v, o, LIST);
  });
  return { cached, calls: () => calls };
}

test("a variable the price cannot depend on (an id) is priced once for every value", () => {
  const doc = parse("query C($id: ID!) { coffee(id: $id) { name reviews(limit: 3) { rating } } }");
  const { cached, calls } = counted();
  for (let i = 0; i < 100; i++) expect(cached(schema, doc, { id: `coffee-${i}` }, "C")).toBe(direct(doc, { id: `coffee-${i}` }, "C"));
  expect(calls()).toBe(1);
});

test("variables in first/last/limit and in directives are part of the key: each value is priced", () => {
  const doc = parse("query L($n: Int, $skip: Boolean!) { coffees(first: $n) @skip(if: $skip) { name reviews(limit: $n) { rating } } }");
  const { cached, calls } = counted();
  const cases = [{ n: 5, skip: false }, { n: 10, skip: false }, { n: 10, skip: true }, { skip: false }, { n: null, skip: false }];
  for (const v of cases) expect(cached(schema, doc, v, "L")).toBe(direct(doc, v, "L"));
  expect(new Set(cases.map((v) => direct(doc, v, "L"))).size).toBeGreaterThan(2);
  expect(calls()).toBe(cases.length);
  for (const v of cases) cached(schema, doc, v, "L");
  expect(calls()).toBe(cases.length);
});

test("an absent variable (its default applies) and an explicit null are priced apart", () => {
  const doc = parse("query D($n: Int = 5) { coffees(first: $n) { name } }");
  const { cached } = counted();
  expect(cached(schema, doc, {}, "D")).toBe(direct(doc, {}, "D"));
  expect(cached(schema, doc, { n: null }, "D")).toBe(direct(doc, { n: null }, "D"));
  expect(direct(doc, {}, "D")).not.toBe(direct(doc, { n: null }, "D"));
});

test("variables that do not coerce fail as before, every time, and leave the entry good for the next request", () => {
  const doc = parse("query C($id: ID!) { coffee(id: $id) { name } }");
  const { cached } = counted();
  expect(cached(schema, doc, { id: "a" }, "C")).toBe(direct(doc, { id: "a" }, "C"));
  const expected = (() => {
    try {
      direct(doc, { id: { not: "an id" } }, "C");
    } catch (e) {
      return (e as Error).message;
    }
    throw new Error("queryCost accepted a bad id");
  })();
  for (let i = 0; i < 2; i++) expect(() => cached(schema, doc, { id: { not: "an id" } }, "C")).toThrow(expected);
  expect(() => cached(schema, doc, {}, "C")).toThrow(/\$id/);
  expect(cached(schema, doc, { id: "b" }, "C")).toBe(direct(doc, { id: "b" }, "C"));
});
