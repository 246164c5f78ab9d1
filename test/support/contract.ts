import { readFileSync } from "node:fs";
import path from "node:path";
import {
  buildSchema,
  isEnumType,
  isInputObjectType,
  isObjectType,
  isScalarType,
  type GraphQLSchema,
} from "graphql";

// The contract copy (contract/): its schema, the clients' operations, and
// what a served schema lacks of it.

export const CONTRACT_DIR = path.resolve(__dirname, "../../contract");

/** The text of a client's operations file in the project's contract copy. */
export function operationsOf(client: "admin" | "barista" | "kiosk" | "mobile" | "pos"): string {
  return readFileSync(path.join(CONTRACT_DIR, "operations", `${client}.graphql`), "utf8");
}

/** The text of a dashboard's documents beyond the contract (documents/, README "The café's day"). */
export function documentsOf(client: "admin" | "barista"): string {
  return readFileSync(path.join(CONTRACT_DIR, "..", "documents", `${client}.graphql`), "utf8");
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
        if (!type.getFields()[m.name] && String(m.type).endsWith("!"))
          problems.push(`input ${type.name}.${m.name} is an extra required field`);
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
          else if (String(ma.type) !== String(a.type))
            problems.push(`${type.name}.${f.name}(${a.name}:) is ${ma.type}, not ${a.type}`);
        }
        for (const ma of m.args) {
          if (!f.args.find((x) => x.name === ma.name) && String(ma.type).endsWith("!"))
            problems.push(`${type.name}.${f.name}(${ma.name}:) is an extra required argument`);
        }
      }
    }
  }
  for (const d of contract.getDirectives()) {
    if (!served.getDirective(d.name)) problems.push(`directive @${d.name} is missing`);
  }
  return problems;
}
