import { getComplexity, type ComplexityEstimator } from "graphql-query-complexity";
import {
  getNamedType,
  getNullableType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isObjectType,
  isUnionType,
  Kind,
  type DocumentNode,
  type FieldNode,
  type GraphQLInputObjectType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionNode,
} from "postgraphile/graphql";
import type { PageSize } from "../PageSizePlugin.ts";
import { MAX_EXPANDED_SELECTIONS } from "./rules.ts";

// The pricing: what a request costs, in rows the database reads (see
// ./index.ts for the rules of the price).

/** Rows a `totalCount` (or other whole-relation aggregate) scans per unit of cost. */
export const ROWS_SCANNED_PER_COST_UNIT = 10;
/** Re-reads a subscription is priced for (each event re-runs its selection). */
export const SUBSCRIPTION_EVENTS = 10;

/** The table a connection type lists (its `nodes`' type's `extensions.pgTable`, set by plugins/ComplexityDirectivePlugin.ts). */
function tableOfConnection(connection: GraphQLNamedType): string | undefined {
  if (!isObjectType(connection)) return undefined;
  const nodes = connection.getFields().nodes;
  return nodes ? ((getNamedType(nodes.type).extensions as { pgTable?: string } | undefined)?.pgTable ?? undefined) : undefined;
}

/**
 * What a `totalCount` costs: it counts every row of the relation, whatever
 * page is returned, so it is priced by the rows it may scan (the table's
 * estimated size), not by the one number it returns.
 */
function countCost(connection: GraphQLNamedType, rowsOf: (table: string) => number): number {
  const table = tableOfConnection(connection);
  const rows = table ? rowsOf(table) : 0;
  return Math.max(1, Math.ceil(rows / ROWS_SCANNED_PER_COST_UNIT));
}

/** Whether a selection asks a connection for its totalCount directly (not only through a named fragment). */
function asksTotalCount(node: FieldNode): boolean {
  const look = (selections: readonly SelectionNode[]): boolean =>
    selections.some((sel) => (sel.kind === Kind.FIELD ? sel.name.value === "totalCount" : sel.kind === Kind.INLINE_FRAGMENT ? look(sel.selectionSet.selections) : false));
  return node.selectionSet ? look(node.selectionSet.selections) : false;
}

/** What a filter's computed column costs at least, per row it is evaluated on (a function call; its `@complexity` when higher). */
export const FILTER_CALL_COST = 1;

/** The table a type stands for: an object type's or a filter input type's `extensions.pgTable` (plugins/ComplexityDirectivePlugin.ts). */
function pgTableOf(type: GraphQLNamedType | undefined): string | undefined {
  return (type?.extensions as { pgTable?: string } | undefined)?.pgTable ?? undefined;
}

/** Each table's object type, per schema. */
const objectTypesOf = new WeakMap<GraphQLSchema, Map<string, GraphQLObjectType>>();
function objectTypeOf(schema: GraphQLSchema, table: string): GraphQLObjectType | undefined {
  let byTable = objectTypesOf.get(schema);
  if (!byTable) {
    byTable = new Map();
    for (const type of Object.values(schema.getTypeMap())) {
      const t = isObjectType(type) ? pgTableOf(type) : undefined;
      if (t && !byTable.has(t)) byTable.set(t, type as GraphQLObjectType);
    }
    objectTypesOf.set(schema, byTable);
  }
  return byTable.get(table);
}

/**
 * The work a filter asks for on each row it is evaluated on, in rows read:
 * a column's condition is part of reading the row (0); a computed column
 * calls its function (FILTER_CALL_COST, or its `@complexity`); a relation
 * (`coffee`, `orderItemsByOrderId: { some/every/none }`, `…Exists`) looks up
 * its rows (an index probe each: 1 per row read, as a list's row is priced,
 * not a scan's tenth) and evaluates its own filter on each: to-one 1, to-many
 * the child table's rows per parent row (its size over the parent's, at
 * least 1). `and`/`or`/`not` add their parts. Nested filters compound.
 */
export function filterWork(schema: GraphQLSchema, type: GraphQLInputObjectType, value: unknown, rowsOf: (table: string) => number): number {
  if (value === null || typeof value !== "object") return 0;
  const table = pgTableOf(type);
  const object = table ? objectTypeOf(schema, table) : undefined;
  /** What calling the row's field `name` costs: a computed column's function, else nothing. */
  const call = (name: string) => {
    const ext = object?.getFields()[name]?.extensions as { computed?: boolean; directives?: { complexity?: { value?: number } } } | undefined;
    return ext?.computed ? Math.max(FILTER_CALL_COST, ext.directives?.complexity?.value ?? 0) : 0;
  };
  const fields = type.getFields();
  let work = 0;
  for (const [key, part] of Object.entries(value as Record<string, unknown>)) {
    const field = fields[key];
    if (!field || part === null || part === undefined) continue;
    const named = getNamedType(field.type);
    if (!isInputObjectType(named)) {
      // A Boolean at the filter's level: whether a related row exists (a probe).
      work += 1 + call(key.replace(/Exists?$/, ""));
    } else if (named === type) {
      // and / or (a list of this filter), not (one).
      for (const item of Array.isArray(part) ? part : [part]) work += filterWork(schema, type, item, rowsOf);
    } else if (pgTableOf(named)) {
      // A to-one relation (or a function returning one row): one row read, its filter on it.
      work += 1 + call(key) + filterWork(schema, named, part, rowsOf);
    } else if (named.getFields().some && named.getFields().every && named.getFields().none) {
      // A to-many relation: each quantifier reads the parent's related rows, its filter on each.
      const child = getNamedType(named.getFields().some!.type);
      const childTable = pgTableOf(child);
      const perParent = Math.max(1, childTable ? rowsOf(childTable) / Math.max(1, table ? rowsOf(table) : 0) : 1);
      for (const quantifier of ["some", "every", "none"] as const) {
        const inner = (part as Record<string, unknown>)[quantifier];
        if (inner !== null && inner !== undefined && isInputObjectType(child)) work += perParent * (1 + filterWork(schema, child, inner, rowsOf));
      }
    } else {
      // A scalar's operators (`{ lessThan: -1 }`) on a column or a computed column.
      work += call(key);
    }
  }
  return work;
}

/**
 * What a field's `filter` argument costs: the work per row (filterWork)
 * times the rows it is evaluated on, which is the whole table for a root
 * field (a filter that matches nothing reads every row to say so) and the
 * table's rows per parent row below one (multiplied by the parent's rows
 * as every child is).
 */
function filterCost(
  schema: GraphQLSchema | undefined,
  parentType: GraphQLNamedType,
  field: { args: readonly { name: string; type: unknown }[] },
  args: Record<string, unknown>,
  root: boolean,
  rowsOf: (table: string) => number,
): number {
  const arg = field.args.find((a) => a.name === "filter");
  if (!schema || !arg || args.filter === null || args.filter === undefined) return 0;
  const type = getNamedType(arg.type as GraphQLNamedType);
  const table = pgTableOf(type);
  if (!isInputObjectType(type) || !table) return 0;
  const work = filterWork(schema, type, args.filter, rowsOf);
  if (work === 0) return 0;
  const parentTable = root ? undefined : pgTableOf(parentType);
  const rows = Math.max(1, parentTable ? rowsOf(table) / Math.max(1, rowsOf(parentTable)) : rowsOf(table));
  return Math.ceil(rows * work);
}

export function costEstimator(defaultListSize: number, rowsOf: (table: string) => number = () => 0, schema?: GraphQLSchema): ComplexityEstimator {
  return ({ type: parentType, field, node, args, childComplexity }) => {
    if (field.name.startsWith("__")) return 0;
    // A connection's rows were counted on the connection field itself; each
    // row read costs 1, its columns nothing more.
    if (parentType.name.endsWith("Connection") && (field.name === "nodes" || field.name === "edges")) return 1 + childComplexity;
    if (parentType.name.endsWith("Connection") && field.name === "totalCount") return countCost(parentType, rowsOf);
    // An edge's node is the row the edge already counted.
    if (parentType.name.endsWith("Edge") && field.name === "node") return childComplexity;
    const extensions = field.extensions as { directives?: { complexity?: { value?: number } }; joined?: boolean; pageSize?: PageSize } | undefined;
    const tagged = extensions?.directives?.complexity?.value;
    const type = getNullableType(field.type);
    const named = getNamedType(type);
    const leaf = !isObjectType(named) && !isInterfaceType(named) && !isUnionType(named);
    const paged = field.args.some((a) => a.name === "first" || a.name === "limit");
    // Columns come with their row: a scalar (or a column's array) costs its
    // @complexity (computed columns run a function), else nothing.
    // A root field is a query (or a mutation) of its own: at least 1.
    const root = parentType.name === "Query" || parentType.name === "Mutation" || parentType.name === "Subscription";
    if (leaf && !(isListType(type) && paged)) return (tagged ?? (root ? 1 : 0)) + childComplexity;
    // A to-one relation is a join in the parent's SQL: part of the parent's row.
    // What its filter makes the database do, once per evaluation of the field.
    const own = (tagged ?? (extensions?.joined && !root ? 0 : 1)) + filterCost(schema, parentType, field, args, root, rowsOf);
    const isConnection = !isListType(type) && named.name.endsWith("Connection") && field.args.some((a) => a.name === "first");
    if (!isListType(type) && !isConnection) return own + childComplexity;
    // The rows that can come back. Absent `first`/`last`/`limit`: the
    // field's default page size (plugins/PageSizePlugin.ts applies it in SQL),
    // else `defaultListSize`. Given: priced as given (the smallest of
    // them), even above the page maximum that SQL cuts it to, so a request
    // for 100,000 rows is refused rather than silently shortened.
    const given = [args.first, args.last, args.limit].filter((v): v is number => typeof v === "number" && v >= 0);
    const rows = given.length ? Math.min(...given) : (extensions?.pageSize?.default ?? defaultListSize);
    if (isConnection) {
      // (`nodes`/`edges` price each row.) The count runs once per connection, not once per row of its page.
      if (!asksTotalCount(node)) return own + rows * childComplexity;
      const count = countCost(named, rowsOf);
      return own + rows * Math.max(0, childComplexity - count) + count;
    }
    // A list: each row costs 1, plus what is read below it per row.
    return own + rows * (1 + childComplexity);
  };
}

export function queryCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName: string | undefined,
  defaultListSize: number,
  rowsOf?: (table: string) => number,
): number {
  return getComplexity({
    schema,
    query: document,
    variables: variables ?? {},
    operationName: operationName ?? undefined,
    estimators: [costEstimator(defaultListSize, rowsOf, schema)],
    // Selections visited while pricing, fragments expanded. A document past
    // this was refused by the validation rule that counts them (./rules.ts);
    // this is the walk's own backstop (one more, as the library stops at it).
    maxQueryNodes: MAX_EXPANDED_SELECTIONS + 1,
  });
}
