// A rough in-process measurement of what trusted documents save per request
// (docs/trusted-documents.md): grafserv's parse-and-validate (cold, its LRU
// hit, the trusted lookup), queryCost's pricing walk, and grafast's planning
// of a DocumentNode it has not seen. Not a benchmark of the service: no HTTP.
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/<a migrated database> node scripts/node.mjs scripts/trusted-microbench.ts
import "../src/envDefaults.ts";
import pg from "pg";
import { postgraphile } from "postgraphile";
import { grafserv } from "postgraphile/grafserv/node";
import { execute, hookArgs } from "postgraphile/grafast";
import { getNamedType, isEnumType, isInputObjectType, isListType, isNonNullType, parse, typeFromAST, type GraphQLInputType, type OperationDefinitionNode } from "postgraphile/graphql";
import { loadConfig } from "../src/config.ts";
import { resolveDatabaseUrls } from "../src/db/database.ts";
import { makePreset } from "../src/preset.ts";
import { queryCost } from "../plugins/QueryCostPlugin/index.ts";
import { printedDocuments as trustedDocuments } from "./operations.ts";

const config = { ...loadConfig(), LOG_LEVEL: "silent" as const };
if (!config.DATABASE_URL) throw new Error("set DATABASE_URL to a migrated database");
const urls = await resolveDatabaseUrls(config, config.DATABASE_URL);
const pool = new pg.Pool({ connectionString: urls.authenticator, max: 2 });
const preset = makePreset({ config, pool, viewerFromConnectionParams: () => null, clientAddress: () => "bench" });
const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
await serv.ready();
const { schema, parseAndValidate } = await serv.getExecutionConfig({});
const resolvedPreset = pgl.getResolvedPreset();

/** Microseconds per call of fn, after a warm-up. */
async function per(fn: (i: number) => unknown, n = 2000): Promise<number> {
  for (let i = 0; i < Math.min(200, n); i++) await fn(i);
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn(i);
  return Number(process.hrtime.bigint() - start) / 1000 / n;
}

/** A value of an input type, required fields only (for pricing; never executed). */
function sample(type: GraphQLInputType): unknown {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) return [sample(inner.ofType as GraphQLInputType)];
  const named = getNamedType(inner);
  if (isEnumType(named)) return named.getValues()[0]!.value;
  if (isInputObjectType(named)) {
    return Object.fromEntries(
      Object.values(named.getFields())
        .filter((f) => isNonNullType(f.type))
        .map((f) => [f.name, sample(f.type)]),
    );
  }
  return ({ ID: "40000000-0000-4000-8000-000000000003", Int: 1, Float: 1.5, Boolean: true } as Record<string, unknown>)[named.name] ?? "x";
}

const docs = trustedDocuments();
const other = (i: number) => docs[(i + 1) % docs.length]!.text; // defeats grafserv's one-entry memo
const rows: Array<Record<string, string | number>> = [];
let sums = { cold: 0, lru: 0, trusted: 0, cost: 0 };
for (const [k, d] of docs.entries()) {
  // Cold: a text grafserv has not seen (a comment makes it new; parse and every validation rule run).
  const cold = await per((i) => parseAndValidate(`${d.text}\n# ${k}-${i}`), 300);
  // grafserv's LRU hit for an ad-hoc text (sha1 of texts over 500 characters, then a lookup).
  const adHoc = `${d.text}\n# ad hoc`;
  parseAndValidate(adHoc);
  const lru = await per((i) => (i % 2 ? parseAndValidate(adHoc) : parseAndValidate(other(i))));
  const trusted = await per((i) => (i % 2 ? parseAndValidate(d.text) : parseAndValidate(other(i))));
  // queryCost's walk, paid on every new set of variables (its cache is per document and variables).
  const document = parseAndValidate(d.text).document!;
  const operation = document.definitions[0] as OperationDefinitionNode;
  const variables = Object.fromEntries((operation.variableDefinitions ?? []).map((v) => [v.variable.name.value, sample(typeFromAST(schema, v.type as never) as GraphQLInputType)]));
  const cost = await per(() => queryCost(schema, document, variables, d.operation, config.DEFAULT_LIST_SIZE), 500);
  rows.push({ operation: d.operation, chars: d.text.length, "cold µs": cold.toFixed(1), "LRU hit µs": lru.toFixed(2), "trusted µs": trusted.toFixed(2), "pricing µs": cost.toFixed(1) });
  sums = { cold: sums.cold + cold, lru: sums.lru + lru, trusted: sums.trusted + trusted, cost: sums.cost + cost };
}
console.table(rows);
const n = docs.length;
console.log(
  `mean over ${n} documents: cold parse+validate ${(sums.cold / n).toFixed(1)} µs, LRU hit ${(sums.lru / n).toFixed(2)} µs, trusted lookup ${(sums.trusted / n).toFixed(2)} µs, cost pricing ${(sums.cost / n).toFixed(1)} µs`,
);

// Grafast plans once per DocumentNode (and variable constraints): a new node
// (a text parsed again after eviction) is planned again.
const featured = docs.find((d) => d.operation === "FeaturedList")!.text;
const run = async (document: ReturnType<typeof parse>) => {
  const args = { schema, document, variableValues: {}, contextValue: {}, resolvedPreset, requestContext: {} };
  await hookArgs(args as never);
  const result = (await execute(args as never)) as { errors?: unknown };
  if (result.errors) throw new Error(JSON.stringify(result.errors));
};
const pinned = parseAndValidate(featured).document!;
const samePlan = await per(() => run(pinned), 300);
const newPlan = await per(() => run(parse(featured)), 300);
console.log(
  `FeaturedList executed in-process (SQL included): same DocumentNode ${samePlan.toFixed(0)} µs, a new DocumentNode each time ${newPlan.toFixed(0)} µs (planning: ${(newPlan - samePlan).toFixed(0)} µs)`,
);

await pgl.release();
await pool.end();
