import { getComplexity, type ComplexityEstimator } from "graphql-query-complexity";
import {
  getNamedType,
  getNullableType,
  isInterfaceType,
  isListType,
  isObjectType,
  isUnionType,
  Kind,
  type DocumentNode,
  type FieldNode,
  type GraphQLNamedType,
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

export function costEstimator(defaultListSize: number, rowsOf: (table: string) => number = () => 0): ComplexityEstimator {
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
    const own = tagged ?? (extensions?.joined && !root ? 0 : 1);
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
    estimators: [costEstimator(defaultListSize, rowsOf)],
    // Selections visited while pricing, fragments expanded. A document past
    // this was refused by the validation rule that counts them (./rules.ts);
    // this is the walk's own backstop (one more, as the library stops at it).
    maxQueryNodes: MAX_EXPANDED_SELECTIONS + 1,
  });
}
