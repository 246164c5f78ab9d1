import type { DocumentNode, GraphQLSchema } from "postgraphile/graphql";
import type { CacheBounds } from "../../common/boundedCache.ts";
import { isStaff, servicesOf, type AccountRole } from "../../common/services.ts";
import { makeCostCache } from "./cache.ts";
import { queryCost, SUBSCRIPTION_EVENTS } from "./pricing.ts";
import { documentRules, limitError, MAX_EXPANDED_SELECTIONS, variablesRefusal, type DocumentLimits } from "./rules.ts";

export { makeCostCache } from "./cache.ts";
export { costEstimator, queryCost, ROWS_SCANNED_PER_COST_UNIT, SUBSCRIPTION_EVENTS } from "./pricing.ts";
export { expandedSelections, introspectionCounts, MAX_EXPANDED_SELECTIONS, MAX_TYPE_FIELDS, variablesRefusal } from "./rules.ts";

/** The operation that runs: its type and its name (the document's, when the request names none). */
function operationOf(document: DocumentNode, operationName: string | null | undefined): { type: string; name: string | undefined } {
  const op = document.definitions.find((d) => d.kind === "OperationDefinition" && (!operationName || d.name?.value === operationName)) as { operation?: string; name?: { value: string } } | undefined;
  return { type: op?.operation ?? "unknown", name: operationName ?? op?.name?.value };
}

/**
 * QueryCostPlugin: what a request may ask for, checked before any SQL runs.
 * This folder: the rules (./rules.ts: depth, aliases, tokens, length,
 * introspection, the variables' size), the pricing (./pricing.ts), the
 * cost cache (./cache.ts), and here the plugin that applies them:
 *
 * - per document (validation rules, cached with the document, HTTP and
 *   WebSocket alike): depth (QUERY_TOO_DEEP; fragments flattened,
 *   introspection exempt), aliases (TOO_MANY_ALIASES),
 *   tokens (TOO_MANY_TOKENS), length (QUERY_TOO_LARGE), and the
 *   selections it expands to (QUERY_TOO_COMPLEX past
 *   MAX_EXPANDED_SELECTIONS: counted once per fragment, so a fragment bomb
 *   is refused in time linear in its text, before any pricing);
 * - per request (grafast's execute/subscribe middleware, which sees the
 *   variables and the caller): cost (QUERY_TOO_COMPLEX), with a higher
 *   ceiling for staff. The cost is reported in `extensions.cost`;
 *   (who may introspect at all is the trusted-documents policy,
 *   AD_HOC_QUERIES: no trusted document introspects);
 * - per operation: at most one `__schema` and MAX_TYPE_FIELDS `__type`
 *   (INTROSPECTION_LIMIT).
 *
 * Cost is the rows the database reads: a list or connection costs 1 plus,
 * for each row it may return (the page that plugins/PageSizePlugin.ts lets
 * through: `first`/`last`/`limit`, else the field's default page size),
 * 1 plus what is read below that row. A column costs nothing more than its
 * row (unless its `@complexity` says so: a computed column runs a function);
 * a to-one relation is a join in its parent's SQL and costs only what it
 * reads below; any other object field (a root field, a payload) costs its
 * `@complexity` (default 1) plus its children.
 * Introspection costs nothing (Ruru must work) but is bounded in number.
 */
export interface QueryLimits extends DocumentLimits {
  maxCost: number;
  maxCostStaff: number;
  defaultListSize: number;
  /**
   * Estimated rows of a table ("app_public.order_items"; src/db/tableSizes.ts
   * reads pg_class), and a number that changes when the estimates do (the
   * cost cache is keyed on it). Absent: every table counts as empty.
   */
  tableRows?: { rows(table: string): number; generation(): number };
  /** What one subscription is priced for: its selection times this many re-reads. */
  subscriptionEvents?: number;
  /** The bounds of the cache of prices (absent: the cache's own default). */
  costCache?: CacheBounds;
}

export function makeQueryCostPlugin(limits: QueryLimits): GraphileConfig.Plugin {
  const ceilingFor = (viewer: { role: AccountRole } | null | undefined) => (isStaff(viewer) ? limits.maxCostStaff : limits.maxCost);

  const rowsOf = limits.tableRows ? (table: string) => limits.tableRows!.rows(table) : undefined;
  const cachedCost = makeCostCache(
    (schema, document, variables, operationName) => queryCost(schema, document, variables, operationName, limits.defaultListSize, rowsOf),
    limits.tableRows ? () => limits.tableRows!.generation() : undefined,
    limits.costCache,
  );
  const events = limits.subscriptionEvents ?? SUBSCRIPTION_EVENTS;

  /** Null when the request may run; else the refusal. A subscription is priced for `events` re-reads of its selection. */
  function check(args: { schema: GraphQLSchema; document: DocumentNode; variableValues?: Record<string, unknown> | null; operationName?: string | null; contextValue?: unknown }, perEvent = 1) {
    const viewer = (args.contextValue as { viewer?: { role: AccountRole } | null } | undefined)?.viewer;
    const maximum = ceilingFor(viewer);
    // The variables first, before anything coerces them (the pricing below
    // does): their nesting, tokens and size count toward the same limits as
    // the document's.
    const tooBig = variablesRefusal(args.document, args.variableValues, limits);
    if (tooBig) return { cost: NaN, maximum, refusal: { errors: [tooBig] } };
    let cost: number;
    try {
      cost = perEvent * cachedCost(args.schema, args.document, args.variableValues ?? undefined, args.operationName ?? undefined);
    } catch (e) {
      const message = (e as Error).message;
      const code = /maximum allowed number of nodes/i.test(message) ? "QUERY_TOO_COMPLEX" : "BAD_USER_INPUT";
      return {
        cost: NaN,
        maximum,
        refusal: { errors: [limitError(code, code === "QUERY_TOO_COMPLEX" ? `The query expands to more than ${MAX_EXPANDED_SELECTIONS} fields.` : message)] },
      };
    }
    if (cost > maximum) {
      return {
        cost,
        maximum,
        refusal: { errors: [limitError("QUERY_TOO_COMPLEX", `The query costs ${cost}; the limit is ${maximum}.`, { cost, maximumCost: maximum })] },
      };
    }
    return { cost, maximum, refusal: null };
  }

  return {
    name: "QueryCostPlugin",
    version: "1.0.0",
    grafserv: {
      middleware: {
        setPreset(next, event) {
          event.validationRules.push(...documentRules(limits));
          return next();
        },
      },
    },
    grafast: {
      middleware: {
        execute(next, event) {
          const { cost, maximum, refusal } = check(event.args as any);
          const operationName = event.args.operationName;
          const services = servicesOf(event.args.resolvedPreset);
          if (refusal) {
            // Counted by source in the access log's refusal lines, not logged one by one.
            services?.refused?.("QUERY_TOO_COMPLEX");
            services?.logger.debug({ operationName, cost, maximumCost: maximum }, "query refused: too complex");
            return refusal as any;
          }
          services?.logger.debug({ operationName, cost }, "query cost");
          const started = performance.now();
          const { type, name } = operationOf(event.args.document, operationName);
          // While tracing is on, the operation runs in its span: name, type, trusted document id and cost, never the variables.
          const result = services?.operationSpan
            ? services.operationSpan(
                { "graphql.operation.name": name, "graphql.operation.type": type, "cafe.graphql.document_id": services.requestScope()?.documentId, "cafe.graphql.cost": cost },
                next,
              )
            : next();
          const addCost = (r: any) => {
            services?.observeOperation(name, type, (performance.now() - started) / 1000);
            return r && typeof r === "object" && !(Symbol.asyncIterator in r) ? { ...r, extensions: { ...r.extensions, cost: { requested: cost, maximum } } } : r;
          };
          return (result && typeof (result as any).then === "function" ? (result as Promise<unknown>).then(addCost) : addCost(result)) as any;
        },
        subscribe(next, event) {
          const { refusal } = check(event.args as any, events);
          if (refusal) return refusal as any;
          return next();
        },
      },
    },
  };
}
