import { boundedCache, textBytes, type CacheBounds } from "../../common/boundedCache.ts";
import { getVariableValues, Kind, visit, type ASTNode, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode } from "postgraphile/graphql";

// The cost cache: a request's price, remembered per parsed document.

/**
 * The variables a document's price can depend on: those used in a `first`,
 * `last` or `limit` argument (the row counts of costEstimator), in a
 * `filter` (the relations and computed columns it walks), or in a
 * directive's arguments (`@skip`/`@include` leave fields out), anywhere in
 * the document; and the operation that runs (null when there is no single
 * one to pick: every request is then priced in full).
 */
function costVariables(document: DocumentNode, operationName: string | undefined): { names: string[]; operation: OperationDefinitionNode | null } {
  const names = new Set<string>();
  const collect = (node: ASTNode) =>
    visit(node, {
      Variable(v) {
        names.add(v.name.value);
      },
    });
  visit(document, {
    Argument(arg) {
      if (arg.name.value === "first" || arg.name.value === "last" || arg.name.value === "limit" || arg.name.value === "filter") collect(arg.value);
    },
    Directive(directive) {
      collect(directive);
    },
  });
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName ? (operations.find((o) => o.name?.value === operationName) ?? null) : operations.length === 1 ? operations[0]! : null;
  return { names: [...names].sort(), operation };
}

/** Whether a request's variables coerce to the operation's variable types (as graphql-js checks them). */
function coerces(schema: GraphQLSchema, operation: OperationDefinitionNode | null, variables: Record<string, unknown> | undefined): boolean {
  if (!operation) return false;
  return !getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {}).errors;
}

/** Operation names (beyond the document's own) whose price-relevant variables are kept per document. */
const OPERATION_NAMES_KEPT = 8;

/** What the cache holds when its owner gives no bounds (the server gives src/config.ts MEMORY_BOUNDS.queryCosts). */
const DEFAULT_BOUNDS: CacheBounds = { maxEntries: 20_000, maxBytes: 8 * 1024 * 1024 };

type Price = (schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown> | undefined, operationName: string | undefined) => number;

/**
 * `price` (queryCost) of a request, remembered per schema, parsed document,
 * operation and the variables it can depend on; and `generation` (the table
 * size estimates it was priced with: a new estimate prices anew).
 */
export function makeCostCache(price: Price, generation: () => number = () => 0, bounds: CacheBounds = DEFAULT_BOUNDS): Price {
  // A document's cost depends only on the schema, the operation and the
  // variables: priced once per distinct (operation, variables) of a parsed
  // document (grafserv reuses the parsed document of a repeated query text),
  // so a client that repeats a request does not pay the pricing walk again.
  // The prices are one bounded cache (in /metrics as cache="query_costs"),
  // keyed by a number given to each schema and parsed document (held
  // weakly: a document its own cache dropped is forgotten here too).
  //
  // Only the variables the price can depend on are in the key (those in a
  // `first`, `last`, `limit` or `filter` argument, or in a directive's arguments: see
  // costVariables), so CoffeeDetail's id, different on every request, does
  // not make every request a miss. A hit still coerces all the variables,
  // and a request whose variables do not coerce is priced in full, failing
  // as it always did.
  const prices = boundedCache<string, number | Error>("query_costs", { ...bounds, bytesOf: (_price, key) => textBytes(key) + 64 });
  const ids = new WeakMap<GraphQLSchema | DocumentNode, number>();
  let lastId = 0;
  const idOf = (o: GraphQLSchema | DocumentNode) => {
    let id = ids.get(o);
    if (id === undefined) ids.set(o, (id = ++lastId));
    return id;
  };
  const variablesOfDocument = new WeakMap<DocumentNode, Map<string, { names: string[]; operation: OperationDefinitionNode | null }>>();
  return function cachedCost(schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown> | undefined, operationName: string | undefined): number {
    let byOperation = variablesOfDocument.get(document);
    if (!byOperation) variablesOfDocument.set(document, (byOperation = new Map()));
    let relevant = byOperation.get(operationName ?? "");
    if (!relevant) {
      relevant = costVariables(document, operationName);
      // Kept for the names a document's operations may have (a caller's other names are looked at anew).
      if (relevant.operation || byOperation.size < OPERATION_NAMES_KEPT) byOperation.set(operationName ?? "", relevant);
    }
    const key = `${idOf(schema)}\u0000${idOf(document)}\u0000${generation()}\u0000${operationName ?? ""}\u0000${variables ? JSON.stringify(relevant.names.map((n) => (Object.hasOwn(variables, n) ? [variables[n]] : []))) : ""}`;
    let priced = prices.get(key);
    // What the key leaves out may still be wrong: only variables that
    // coerce may use the entry; others are priced in full (and fail as they
    // always did), and that failure, about those variables, is not kept.
    const coerced = coerces(schema, relevant.operation, variables);
    if (priced === undefined || !coerced) {
      try {
        priced = price(schema, document, variables, operationName);
      } catch (e) {
        priced = e as Error;
      }
      if (coerced) prices.set(key, priced);
    }
    if (priced instanceof Error) throw priced;
    return priced;
  };
}
