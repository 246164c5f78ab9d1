import { buildSchema, parse } from "postgraphile/graphql";
import { coordinatesUsed } from "../../scripts/schema-check.ts";
import { schemaCheck, scratchCopy } from "../support/schemaCheck.ts";

// `npm run schema:check` (scripts/schema-check.ts) on a scratch copy of
// migrations/, contract/, documents/ and data/released-schema.graphql, with
// a migration in current.sql: a renamed field a contract operation uses
// fails the check, naming the operation and its client; an added field
// passes; a deprecated field is reported with the operations still using it.

jest.setTimeout(60_000);

const check = (dir: string) => schemaCheck(dir);

test("renaming a field that trusted operations use exits 1 and names each operation and its client", () => {
  const r = check(scratchCopy("alter table app_public.coffees rename column name to title;\n"));
  expect(r.stderr).toBe("");
  expect(r.status).toBe(1);
  expect(r.stdout).toMatch(/BREAKING: Field 'name' was removed from object type 'Coffee'; breaks:/);
  // The kiosk's CoffeeCard fragment reads Coffee.name, the admin's AddCoffee too.
  expect(r.stdout).toMatch(/- AddCoffee \(contract\/operations\/admin\.graphql, sha256:/);
  expect(r.stdout).toMatch(/\(contract\/operations\/kiosk\.graphql, sha256:/);
  expect(r.stdout).toMatch(/BROKEN: AddCoffee \(contract\/operations\/admin\.graphql.*Cannot query field "name" on type "Coffee"/);
  expect(r.stdout).toMatch(/schema:check FAILED/);
});

test("adding a field exits 0 and reports it as safe", () => {
  const r = check(scratchCopy("alter table app_public.coffees add column origin text;\n"));
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/safe: Field 'origin' was added to object type 'Coffee'/);
  // No breaking change of its own: as many as the migrations already make since the release.
  const breaking = (out: string) => /(\d+) breaking/.exec(out)?.[1];
  expect(breaking(r.stdout)).toBe(breaking(check(scratchCopy("")).stdout));
  expect(r.stdout).toMatch(/schema:check passed/);
});

test("a field retired with @deprecated is reported with the operations that still use it, and does not fail the check", () => {
  const r = check(scratchCopy("comment on column app_public.coffees.roast is E'@deprecated Use origin instead.';\n"));
  expect(r.stderr).toBe("");
  // Together, so that a failure shows the report (CI once saw exit 1 here, not reproduced).
  expect({ status: r.status, stdout: r.stdout }).toEqual({
    status: 0,
    stdout: expect.stringMatching(/DEPRECATED: Coffee\.roast \(Use origin instead\.\) is still used by:\n(\s+- .*\n)*\s+- \w+ \(contract\/operations\/kiosk\.graphql/),
  });
});

test("what a document uses: fields, arguments, enum values it writes, and every value of a type a variable carries", () => {
  const schema = buildSchema(`
    enum Status { NEW READY }
    input Filter { status: Status, name: String }
    type Coffee { id: ID!, name: String }
    type Query { coffees(status: Status, filter: Filter): [Coffee] }`);
  const used = coordinatesUsed(schema, parse(`query A($f: Filter) { coffees(status: READY, filter: $f) { name } }`));
  expect([...used].sort()).toEqual(
    ["Coffee", "Coffee.name", "Filter", "Filter.*", "Query", "Query.coffees", "Query.coffees.filter", "Query.coffees.status", "Status", "Status.READY", "String"].sort(),
  );
});
