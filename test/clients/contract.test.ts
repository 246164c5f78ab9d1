import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { buildClientSchema, getIntrospectionQuery, parse, validate, type GraphQLSchema } from "graphql";
import { CONTRACT_DIR, contractDifferences, contractSchema } from "../support/contract.ts";
import { useTestService } from "../support/service.ts";

// The served schema honours contract/schema.graphql (parsed, not a list) and
// every client document validates against it.
//
// contract/ is this repository's copy of the contract the five clients are
// built against. Where the checkout sits next to a folder holding the
// clients' master copy (a sibling `shared/contract`, as on the team's build
// machine), the last test checks that the copy has not drifted from it;
// elsewhere that test is skipped: contract/ is all a user needs.

const SHARED_CONTRACT = path.resolve(__dirname, "../../../shared/contract");

const t = useTestService();
let served: GraphQLSchema;

beforeAll(async () => {
  const r = await t.gql(getIntrospectionQuery());
  served = buildClientSchema(r.body.data);
});
test("the served schema contains every type, field, argument and enum value of the contract, with its nullability", () => {
  expect(contractDifferences(served)).toEqual([]);
});

test("the comparison itself catches a drifted field", () => {
  const drifted = contractSchema();
  // Compare the contract with itself minus a field: the check must notice.
  const sdl = readFileSync(path.join(CONTRACT_DIR, "schema.graphql"), "utf8").replace("margin: Float", "margin: Int");
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- kept as it was written (jest provides require)
  const { buildSchema } = require("graphql") as typeof import("graphql");
  expect(contractDifferences(buildSchema(sdl), drifted)).toContain("Coffee.margin is Int, not Float");
});

test("every client operation document validates against the served schema", () => {
  const dir = path.join(CONTRACT_DIR, "operations");
  const files = readdirSync(dir).filter((f) => f.endsWith(".graphql"));
  expect(files.length).toBeGreaterThanOrEqual(5);
  for (const file of files) {
    const errors = validate(served, parse(readFileSync(path.join(dir, file), "utf8")));
    expect({ file, errors: errors.map((e) => e.message) }).toEqual({ file, errors: [] });
  }
});

test("the printed SDL carries the @complexity directive values of the contract", async () => {
  const contract = readFileSync(path.join(CONTRACT_DIR, "schema.graphql"), "utf8");
  const { makeSchema } = await import("postgraphile");
  const { printSchemaWithDirectives } = await import("@graphql-tools/utils");
  const { makePreset } = await import("../../src/preset.ts");
  const { schema } = await makeSchema(makePreset({ config: t.config, pool: t.service.api!.pool, viewerFromConnectionParams: () => null, clientAddress: () => "test" }));
  const printed = printSchemaWithDirectives(schema);
  for (const m of contract.matchAll(/^\s+(\w+)\(.*\): .* @complexity\(value: (\d+)\)/gm)) {
    expect(printed).toMatch(new RegExp(`\\n\\s+${m[1]}\\([^)]*\\): [^\\n]*@complexity\\(value: ${m[2]}\\)`));
  }
});

test("the served schema equals the committed snapshot data/schema.graphql (run `npm run schema:snapshot` after a schema change)", async () => {
  const { makeSchema } = await import("postgraphile");
  const { printSchemaWithDirectives } = await import("@graphql-tools/utils");
  const { lexicographicSortSchema } = await import("postgraphile/graphql");
  const { makePreset } = await import("../../src/preset.ts");
  const { schema } = await makeSchema(makePreset({ config: t.config, pool: t.service.api!.pool, viewerFromConnectionParams: () => null, clientAddress: () => "test" }));
  const snapshot = readFileSync(path.resolve(__dirname, "../../data/schema.graphql"), "utf8");
  expect(printSchemaWithDirectives(lexicographicSortSchema(schema)) + "\n").toBe(snapshot);
});

/** The one file of contract/ that is the project's own (`npm run documents`), not a copy. */
const OWN_CONTRACT_FILES = ["trusted-documents.json"];

if (!existsSync(SHARED_CONTRACT)) console.warn(`skipped: no master copy of the contract at ${SHARED_CONTRACT} to compare contract/ with`);
const sharedTest = existsSync(SHARED_CONTRACT) ? test : test.skip;
sharedTest("contract/ is an exact copy of the master copy next to the checkout, where there is one, plus the trusted-documents manifest", () => {
  const list = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true })
      .flatMap((e) => (e.isDirectory() ? list(path.join(dir, e.name)).map((f) => `${e.name}/${f}`) : [e.name]))
      .sort();
  const mine = list(CONTRACT_DIR).filter((f) => !OWN_CONTRACT_FILES.includes(f));
  expect(list(CONTRACT_DIR)).toEqual(expect.arrayContaining(OWN_CONTRACT_FILES));
  expect(mine).toEqual(list(SHARED_CONTRACT));
  for (const f of mine) {
    expect({ f, same: readFileSync(path.join(CONTRACT_DIR, f), "utf8") === readFileSync(path.join(SHARED_CONTRACT, f), "utf8") }).toEqual({ f, same: true });
  }
});
