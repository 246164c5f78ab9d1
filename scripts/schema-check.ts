// `npm run schema:check`: can this schema change break a client in the
// field? It builds the schema from the migrations (migrations/current.sql
// included) on a scratch database, compares it with the last released schema
// (data/released-schema.graphql, committed), classifies each change with
// @graphql-inspector/core (breaking, dangerous, safe), and validates every
// trusted document (contract/trusted-documents.json, old ids still served
// included) against the new schema. Exit 1 when a breaking change touches a
// field, argument or type a trusted document uses, or a trusted document no
// longer validates, naming each operation and the client that sends it.
// Deprecated fields (`@deprecated` smart comment) are listed with the
// operations that still use them.
//
// `npm run schema:check -- --release` rewrites data/released-schema.graphql
// with the new schema (at release, after the check passes).
// `--dir <path>` checks another copy of migrations/, contract/, documents/
// and data/released-schema.graphql (the test's scratch copy).
//
// The database: SHADOW_DATABASE_URL or DATABASE_URL, a superuser's (a
// scratch database is created on its server and dropped after), else the
// embedded PostgreSQL that `npm start` uses. A development tool: it imports
// @graphql-inspector/core, a devDependency.
import "../src/envDefaults.ts";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { makeSchema } from "postgraphile";
import { printSchemaWithDirectives } from "@graphql-tools/utils";
import { buildSchema, getNamedType, lexicographicSortSchema, parse, TypeInfo, validate, visit, visitWithTypeInfo, type DocumentNode, type GraphQLSchema } from "postgraphile/graphql";
import { CriticalityLevel, diff, type Change } from "@graphql-inspector/core";
import { watch as migrateWatch } from "graphile-migrate";
import { applyEnvFile, ConfigError, loadConfig } from "../src/config.ts";
import { makePreset } from "../src/preset.ts";
import { dropDatabase, prepareDatabase, resolveDatabaseUrls, startEmbeddedPostgres, withMigratePools } from "../src/db/database.ts";
import { operationOf, printedDocuments, ROOT } from "./operations.ts";

export const RELEASED = "data/released-schema.graphql";
export const MANIFEST = "contract/trusted-documents.json";

export interface UsedBy {
  operation: string;
  /** The file that holds it, e.g. contract/operations/kiosk.graphql (the client), or a note for an id no source holds any more. */
  client: string;
  id: string;
}

export interface CheckResult {
  ok: boolean;
  /** The new schema, printed as data/released-schema.graphql holds it. */
  printed: string;
  changes: Change[];
  /** Breaking changes and the trusted operations they break. */
  breaking: Array<{ change: Change; usedBy: UsedBy[] }>;
  dangerous: Change[];
  /** Trusted documents that do not validate against the new schema. */
  invalid: Array<UsedBy & { errors: string[] }>;
  /** Deprecated fields still in use: coordinate, reason, operations. */
  deprecated: Array<{ coordinate: string; reason: string; usedBy: UsedBy[] }>;
}

/** Builds the schema from `dir`'s migrations, current.sql included, on a scratch database on the server of `serverUrl` (a superuser's). */
export async function buildSchemaFromMigrations(dir: string, serverUrl: string): Promise<string> {
  const config = loadConfig();
  const scratch = `cafe_schema_check_${randomBytes(4).toString("hex")}`;
  const base = new URL(serverUrl);
  base.pathname = `/${scratch}`;
  const urls = await resolveDatabaseUrls(config, base.toString());
  if (!urls.root) throw new ConfigError("npm run schema:check creates a scratch database: SHADOW_DATABASE_URL or DATABASE_URL must be a superuser's (or unset, for the embedded server)");
  try {
    await prepareDatabase(urls, config, { demoData: false, migrationsFolder: path.join(dir, "migrations") });
    // graphile-migrate applies current.sql as `migrate watch --once` does.
    await withMigratePools(() => migrateWatch({ connectionString: urls.owner, migrationsFolder: path.join(dir, "migrations") }, true));
    const pool = new pg.Pool({ connectionString: urls.authenticator });
    try {
      const { schema } = await makeSchema(makePreset({ config, pool, viewerFromConnectionParams: () => null, clientAddress: () => "schema-check" }));
      return printSchemaWithDirectives(lexicographicSortSchema(schema)) + "\n";
    } finally {
      await pool.end();
    }
  } finally {
    await dropDatabase(urls.root, scratch);
  }
}

/** Schema coordinates a document touches: `Type`, `Type.field`, `Type.field.arg`, and input and enum types of its variables and arguments. */
export function coordinatesUsed(schema: GraphQLSchema, document: DocumentNode): Set<string> {
  const used = new Set<string>();
  const typeInfo = new TypeInfo(schema);
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field() {
        const parent = typeInfo.getParentType();
        const field = typeInfo.getFieldDef();
        if (!parent || !field) return;
        used.add(parent.name);
        used.add(`${parent.name}.${field.name}`);
        used.add(getNamedType(field.type).name);
      },
      Argument() {
        const parent = typeInfo.getParentType();
        const field = typeInfo.getFieldDef();
        const arg = typeInfo.getArgument();
        if (!parent || !field || !arg) return;
        used.add(`${parent.name}.${field.name}.${arg.name}`);
        used.add(getNamedType(arg.type).name);
      },
      ObjectField(node) {
        const input = typeInfo.getParentInputType();
        const type = input ? getNamedType(input) : null;
        if (type) used.add(`${type.name}.${node.name.value}`);
      },
      EnumValue(node) {
        const type = typeInfo.getInputType();
        if (type) used.add(`${getNamedType(type).name}.${node.value}`);
      },
      VariableDefinition() {
        // A variable's value comes from the client at run time: any field or
        // value of its type may be in it.
        const type = typeInfo.getInputType();
        if (type) used.add(getNamedType(type).name).add(`${getNamedType(type).name}.*`);
      },
      InlineFragment() {
        const type = typeInfo.getType();
        if (type) used.add(getNamedType(type).name);
      },
    }),
  );
  return used;
}

/** Does a change at `changePath` (e.g. Coffee.name, Query.orders.status) touch a document using `used`? */
function touches(changePath: string | undefined, used: Set<string>): boolean {
  if (!changePath) return false;
  if (used.has(changePath)) return true;
  // A removed type or field: everything under it.
  for (const c of used) if (c.startsWith(`${changePath}.`)) return true;
  // A removed enum value or input field of a type a variable carries.
  const dot = changePath.indexOf(".");
  return dot > 0 && used.has(`${changePath.slice(0, dot)}.*`);
}

/** The trusted documents (every id of the manifest) with the client that sends each. */
export function trustedDocuments(dir: string): Array<UsedBy & { text: string }> {
  const manifest: Record<string, string> = JSON.parse(readFileSync(path.join(dir, MANIFEST), "utf8"));
  const clientOf = new Map(printedDocuments(dir).map((d) => [d.operation, d.file]));
  return Object.entries(manifest).map(([id, text]) => {
    const operation = operationOf(text);
    return { id, text, operation, client: clientOf.get(operation) ?? "(an old id: the operation is in no source file any more)" };
  });
}

/** Compares `newSdl` with `dir`'s released schema and checks the trusted documents against it. */
export async function compare(dir: string, newSdl: string): Promise<CheckResult> {
  const oldSchema = buildSchema(readFileSync(path.join(dir, RELEASED), "utf8"));
  const newSchema = buildSchema(newSdl);
  const changes = await diff(oldSchema, newSchema);
  const docs = trustedDocuments(dir).map((d) => {
    const ast = parse(d.text);
    // What the document used in the released schema (a removed field is not in the new one).
    return { ...d, ast, usedOld: coordinatesUsed(oldSchema, ast), usedNew: coordinatesUsed(newSchema, ast) };
  });
  const who = ({ operation, client, id }: UsedBy): UsedBy => ({ operation, client, id });
  const breaking = changes.filter((c) => c.criticality.level === CriticalityLevel.Breaking).map((change) => ({ change, usedBy: docs.filter((d) => touches(change.path, d.usedOld)).map(who) }));
  const dangerous = changes.filter((c) => c.criticality.level === CriticalityLevel.Dangerous);
  const invalid = docs.map((d) => ({ ...who(d), errors: validate(newSchema, d.ast).map((e) => e.message) })).filter((d) => d.errors.length);
  const deprecated: CheckResult["deprecated"] = [];
  for (const type of Object.values(newSchema.getTypeMap())) {
    if (type.name.startsWith("__") || !("getFields" in type)) continue;
    for (const field of Object.values(type.getFields())) {
      if (field.deprecationReason == null) continue;
      const coordinate = `${type.name}.${field.name}`;
      const usedBy = docs.filter((d) => d.usedNew.has(coordinate)).map(who);
      if (usedBy.length) deprecated.push({ coordinate, reason: field.deprecationReason, usedBy });
    }
  }
  const ok = !invalid.length && !breaking.some((b) => b.usedBy.length);
  return { ok, printed: newSdl, changes, breaking, dangerous, invalid, deprecated };
}

/** The report a DBA reads. */
export function report(result: CheckResult): string {
  const lines: string[] = [];
  const ops = (usedBy: UsedBy[]) => usedBy.map((u) => `    - ${u.operation} (${u.client}, ${u.id.slice(0, 19)}…)`);
  const safe = result.changes.filter((c) => c.criticality.level === CriticalityLevel.NonBreaking);
  lines.push(`${result.changes.length} change(s) since the released schema: ${result.breaking.length} breaking, ${result.dangerous.length} dangerous, ${safe.length} safe.`);
  for (const b of result.breaking) {
    lines.push(`BREAKING: ${b.change.message}${b.usedBy.length ? "; breaks:" : " (no trusted operation uses it)"}`);
    lines.push(...ops(b.usedBy));
  }
  for (const d of result.invalid) {
    lines.push(`BROKEN: ${d.operation} (${d.client}, ${d.id.slice(0, 19)}…) no longer validates: ${d.errors.join("; ")}`);
  }
  for (const c of result.dangerous) lines.push(`DANGEROUS: ${c.message}${c.criticality.reason ? ` (${c.criticality.reason})` : ""}`);
  for (const c of safe) lines.push(`safe: ${c.message}`);
  for (const d of result.deprecated) {
    lines.push(`DEPRECATED: ${d.coordinate} (${d.reason}) is still used by:`);
    lines.push(...ops(d.usedBy));
  }
  lines.push(result.ok ? "schema:check passed: no trusted operation breaks." : "schema:check FAILED: the changes above break trusted operations that clients in the field send.");
  return lines.join("\n");
}

/** The server to build on: a superuser's URL, else the embedded PostgreSQL (started, and a stop function). */
async function server(): Promise<{ url: string; stop: () => Promise<void> }> {
  const given = process.env.SHADOW_DATABASE_URL || process.env.DATABASE_URL;
  if (given) return { url: given, stop: async () => {} };
  const embedded = await startEmbeddedPostgres(loadConfig());
  return { url: embedded.url, stop: () => embedded.stop() };
}

async function main() {
  const { values } = parseArgs({ options: { release: { type: "boolean", default: false }, dir: { type: "string" } } });
  applyEnvFile();
  const dir = path.resolve(values.dir ?? ROOT);
  if (!existsSync(path.join(dir, RELEASED))) throw new ConfigError(`${RELEASED} is missing in ${dir}: copy data/schema.graphql of the last release there`);
  const { url, stop } = await server();
  let sdl: string;
  try {
    sdl = await buildSchemaFromMigrations(dir, url);
  } finally {
    await stop();
  }
  const result = await compare(dir, sdl);
  process.stdout.write(report(result) + "\n");
  if (values.release) {
    if (!result.ok) throw new ConfigError(`not released: ${RELEASED} stays as it is`);
    writeFileSync(path.join(dir, RELEASED), sdl);
    process.stdout.write(`wrote ${RELEASED}\n`);
  }
  process.exitCode = result.ok ? 0 : 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  main().catch((e) => {
    console.error(e instanceof ConfigError ? e.message : e);
    process.exit(2);
  });
}
