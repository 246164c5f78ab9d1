import { readFileSync } from "node:fs";
import path from "node:path";
import { buildSchema, Kind, parse, type OperationDefinitionNode, isEnumType, isInputObjectType, isObjectType, isScalarType, type GraphQLSchema } from "graphql";
import { gqlAs, type Api, type Caller, type GraphQLResponse } from "./client.ts";

// The contract copy (contract/): its schema, the clients' operations (and
// sending them as each client's role), and what a served schema lacks of it.

export type ClientName = "kiosk" | "mobile" | "barista" | "admin" | "pos";

export const CONTRACT_DIR = path.resolve(__dirname, "../../contract");

/** The text of a client's operations file in the project's contract copy. */
export function operationsOf(client: ClientName): string {
  return readFileSync(path.join(CONTRACT_DIR, "operations", `${client}.graphql`), "utf8");
}

/** The text of a dashboard's documents beyond the contract (documents/, docs/api.md "The café's day"). */
export function documentsOf(client: "admin" | "barista" | "mobile"): string {
  return readFileSync(path.join(CONTRACT_DIR, "..", "documents", `${client}.graphql`), "utf8");
}

/** The role each client of the contract signs in as. */
export const CLIENT_CALLER: Record<ClientName, Caller> = {
  kiosk: "anonymous",
  mobile: "alice",
  barista: "barista",
  admin: "admin",
  pos: "barista",
};

/** Sends a client's whole operations file with `operationName`, as that client's role (or `as`). */
export async function runOperation<T = any>(t: Api, client: ClientName, operationName: string, variables?: Record<string, unknown>, as: Caller = CLIENT_CALLER[client]): Promise<GraphQLResponse<T>> {
  return gqlAs<T>(t, as, operationsOf(client), variables, operationName);
}

/** The query operations (name, whether it declares variables) of a client's file. */
export function queryOperationsOf(client: ClientName): Array<{ name: string; variables: string[] }> {
  return parse(operationsOf(client))
    .definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION && d.operation === "query")
    .map((d) => ({ name: d.name!.value, variables: (d.variableDefinitions ?? []).map((v) => v.variable.name.value) }));
}

export function contractSchema(): GraphQLSchema {
  return buildSchema(readFileSync(path.join(CONTRACT_DIR, "schema.graphql"), "utf8"));
}

/**
 * Everything the contract declares that the served schema lacks or serves
 * differently (types, fields, arguments, nullability, enum values), as
 * human-readable lines. Empty means the served schema honours the contract.
 */
export function contractDifferences(served: GraphQLSchema, contract = contractSchema()): string[] {
  const problems: string[] = [];
  for (const type of Object.values(contract.getTypeMap())) {
    if (type.name.startsWith("__")) continue;
    const mine = served.getType(type.name);
    if (!mine) {
      problems.push(`type ${type.name} is missing`);
      continue;
    }
    if (mine.constructor !== type.constructor) {
      problems.push(`type ${type.name} is a ${mine.constructor.name}, not a ${type.constructor.name}`);
      continue;
    }
    if (isScalarType(type)) continue;
    if (isEnumType(type) && isEnumType(mine)) {
      for (const v of type.getValues()) {
        if (!mine.getValue(v.name)) problems.push(`enum ${type.name} lacks ${v.name}`);
      }
    }
    if (isInputObjectType(type) && isInputObjectType(mine)) {
      const fields = mine.getFields();
      for (const f of Object.values(type.getFields())) {
        const m = fields[f.name];
        if (!m) problems.push(`input ${type.name}.${f.name} is missing`);
        else if (String(m.type) !== String(f.type)) problems.push(`input ${type.name}.${f.name} is ${m.type}, not ${f.type}`);
      }
      for (const m of Object.values(fields)) {
        if (!type.getFields()[m.name] && String(m.type).endsWith("!")) problems.push(`input ${type.name}.${m.name} is an extra required field`);
      }
    }
    if (isObjectType(type) && isObjectType(mine)) {
      const fields = mine.getFields();
      for (const f of Object.values(type.getFields())) {
        const m = fields[f.name];
        if (!m) {
          problems.push(`${type.name}.${f.name} is missing`);
          continue;
        }
        if (String(m.type) !== String(f.type)) problems.push(`${type.name}.${f.name} is ${m.type}, not ${f.type}`);
        for (const a of f.args) {
          const ma = m.args.find((x) => x.name === a.name);
          if (!ma) problems.push(`${type.name}.${f.name}(${a.name}:) is missing`);
          else if (String(ma.type) !== String(a.type)) problems.push(`${type.name}.${f.name}(${a.name}:) is ${ma.type}, not ${a.type}`);
        }
        for (const ma of m.args) {
          if (!f.args.find((x) => x.name === ma.name) && String(ma.type).endsWith("!")) problems.push(`${type.name}.${f.name}(${ma.name}:) is an extra required argument`);
        }
      }
    }
  }
  for (const d of contract.getDirectives()) {
    if (!served.getDirective(d.name)) problems.push(`directive @${d.name} is missing`);
  }
  return problems;
}
