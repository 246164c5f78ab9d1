import { maxAliasesRule } from "@escape.tech/graphql-armor-max-aliases";
import { getComplexity, type ComplexityEstimator } from "graphql-query-complexity";
import {
  GraphQLError,
  getNamedType,
  getNullableType,
  getVariableValues,
  isInterfaceType,
  isListType,
  isObjectType,
  isUnionType,
  type FieldNode,
  type ValueNode,
  type GraphQLNamedType,
  Kind,
  Lexer,
  visit,
  type ASTNode,
  type OperationDefinitionNode,
  Source,
  TokenKind,
  type DocumentNode,
  type SelectionNode,
  type GraphQLSchema,
  type ValidationContext,
  type ValidationRule,
} from "postgraphile/graphql";
import type { PageSize } from "./PageSizePlugin.ts";
import { isStaff, servicesOf, type AccountRole } from "../common/services.ts";

/** The operation that runs: its type and its name (the document's, when the request names none). */
function operationOf(document: DocumentNode, operationName: string | null | undefined): { type: string; name: string | undefined } {
  const op = document.definitions.find((d) => d.kind === "OperationDefinition" && (!operationName || d.name?.value === operationName)) as { operation?: string; name?: { value: string } } | undefined;
  return { type: op?.operation ?? "unknown", name: operationName ?? op?.name?.value };
}

/**
 * What a request may ask for, checked before any SQL runs:
 * - per document (validation rules, cached with the document, HTTP and
 *   WebSocket alike): depth (QUERY_TOO_DEEP; fragments flattened,
 *   introspection exempt), aliases (TOO_MANY_ALIASES),
 *   tokens (TOO_MANY_TOKENS), length (QUERY_TOO_LARGE);
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
export interface QueryLimits {
  maxDepth: number;
  maxAliases: number;
  maxTokens: number;
  maxLength: number;
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
}

/** Rows a `totalCount` (or other whole-relation aggregate) scans per unit of cost. */
export const ROWS_SCANNED_PER_COST_UNIT = 10;
/** Re-reads a subscription is priced for (each event re-runs its selection). */
export const SUBSCRIPTION_EVENTS = 10;

const MAX_PRICED_NODES = 50_000;
/** `__type` fields per operation (Ruru sends none; a client asking after a few types needs no more). */
export const MAX_TYPE_FIELDS = 10;

function limitError(code: string, message: string, extra: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code, ...extra } });
}

/** Reports an armor rule's refusal with our code instead of throwing its plain error. */
function withCode(code: string) {
  return {
    propagateOnRejection: false,
    onReject: [(ctx: ValidationContext | null, err: GraphQLError) => ctx?.reportError(limitError(code, err.message.replace(/^Syntax Error: /, "")))],
  };
}

/** Nesting of a literal: each object or list a level. */
function valueDepth(value: ValueNode): number {
  if (value.kind === Kind.OBJECT) return 1 + Math.max(0, ...value.fields.map((f) => valueDepth(f.value)));
  if (value.kind === Kind.LIST) return 1 + Math.max(0, ...value.values.map(valueDepth));
  return 0;
}

/**
 * Depth of the deepest field path (an argument's literal adds its nesting), fragments flattened (a spread adds no
 * level) and introspection (`__schema`, `__type`) exempt so Ruru works.
 * Written here because graphql-armor's rule exempts only `__schema` and
 * counts fragment spreads as levels unless told otherwise.
 */
function depthRule(maxDepth: number): ValidationRule {
  return (context) => ({
    OperationDefinition(operation) {
      const fragmentDepth = new Map<string, number>();
      const depthOf = (selections: readonly SelectionNode[], visiting: Set<string>): number => {
        let deepest = 0;
        for (const sel of selections) {
          if (sel.kind === Kind.FIELD) {
            if (sel.name.value.startsWith("__")) continue;
            // An argument's literal counts too: `filter: {and: [{or: ...}]}`
            // nests as deep as a selection does, and costs as much to coerce.
            const below = sel.selectionSet ? depthOf(sel.selectionSet.selections, visiting) : 0;
            deepest = Math.max(deepest, 1 + Math.max(below, ...(sel.arguments ?? []).map((a) => valueDepth(a.value))));
          } else if (sel.kind === Kind.INLINE_FRAGMENT) {
            deepest = Math.max(deepest, depthOf(sel.selectionSet.selections, visiting));
          } else {
            const name = sel.name.value;
            if (visiting.has(name)) continue; // a cycle: reported by NoFragmentCycles
            let d = fragmentDepth.get(name);
            if (d === undefined) {
              const fragment = context.getFragment(name);
              visiting.add(name);
              d = fragment ? depthOf(fragment.selectionSet.selections, visiting) : 0;
              visiting.delete(name);
              fragmentDepth.set(name, d);
            }
            deepest = Math.max(deepest, d);
          }
        }
        return deepest;
      };
      const depth = depthOf(operation.selectionSet.selections, new Set());
      if (depth > maxDepth) {
        context.reportError(limitError("QUERY_TOO_DEEP", `The query is ${depth} levels deep; the limit is ${maxDepth}.`, { depth, maximumDepth: maxDepth }));
      }
    },
  });
}

/**
 * Introspection is free (Ruru must work) but not unlimited: per operation,
 * at most one `__schema` and `maxTypes` `__type` fields (fragments
 * expanded), else INTROSPECTION_LIMIT. Thirty aliased `__schema` walks
 * would otherwise answer megabytes at cost 0.
 */
export function introspectionCounts(
  operation: { selectionSet: { selections: readonly SelectionNode[] } },
  getFragment: (name: string) => { selectionSet: { selections: readonly SelectionNode[] } } | null | undefined,
) {
  // Each fragment is counted once and its count reused wherever it is
  // spread (a fragment bomb spreads 2^n times: walking it would hang).
  const perFragment = new Map<string, { schema: number; type: number }>();
  const count = (selections: readonly SelectionNode[], visiting: Set<string>) => {
    const counts = { schema: 0, type: 0 };
    for (const sel of selections) {
      let inner: { schema: number; type: number } | null = null;
      if (sel.kind === Kind.FIELD) {
        if (sel.name.value === "__schema") counts.schema++;
        else if (sel.name.value === "__type") counts.type++;
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        inner = count(sel.selectionSet.selections, visiting);
      } else if (!visiting.has(sel.name.value)) {
        const name = sel.name.value;
        inner = perFragment.get(name) ?? null;
        if (!inner) {
          const fragment = getFragment(name);
          visiting.add(name);
          inner = fragment ? count(fragment.selectionSet.selections, visiting) : { schema: 0, type: 0 };
          visiting.delete(name);
          perFragment.set(name, inner);
        }
      }
      if (inner) {
        counts.schema += inner.schema;
        counts.type += inner.type;
      }
    }
    return counts;
  };
  // Introspection fields live on the root type: its selection set (and the
  // fragments spread there) is all there is to look at.
  return count(operation.selectionSet.selections, new Set());
}

function introspectionRule(maxTypes: number): ValidationRule {
  return (context) => ({
    OperationDefinition(operation) {
      const { schema, type } = introspectionCounts(operation, (name) => context.getFragment(name));
      if (schema > 1 || type > maxTypes) {
        context.reportError(
          limitError("INTROSPECTION_LIMIT", `An operation may introspect with at most one __schema and ${maxTypes} __type fields; this one has ${schema} and ${type}.`, {
            schemaFields: schema,
            typeFields: type,
          }),
        );
      }
    },
  });
}

function tokensRule(maxTokens: number, maxLength: number): ValidationRule {
  return (context) => {
    const body = context.getDocument().loc?.source.body;
    if (body !== undefined) {
      if (body.length > maxLength) {
        context.reportError(limitError("QUERY_TOO_LARGE", `The document has ${body.length} characters; the limit is ${maxLength}.`));
      } else {
        const lexer = new Lexer(new Source(body));
        let count = 0;
        try {
          while (lexer.advance().kind !== TokenKind.EOF) {
            if (++count > maxTokens) {
              context.reportError(limitError("TOO_MANY_TOKENS", `The document has more than ${maxTokens} tokens.`));
              break;
            }
          }
        } catch {
          // A lexing error was already reported by the parser.
        }
      }
    }
    return {};
  };
}

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

/** Tokens of a parsed document (lexed once per document). */
const documentTokens = new WeakMap<DocumentNode, number>();
function tokensOf(document: DocumentNode): number {
  let n = documentTokens.get(document);
  if (n === undefined) {
    n = 0;
    const body = document.loc?.source.body;
    if (body !== undefined) {
      const lexer = new Lexer(new Source(body));
      try {
        while (lexer.advance().kind !== TokenKind.EOF) n++;
      } catch {
        // (the parser accepted it)
      }
    }
    documentTokens.set(document, n);
  }
  return n;
}

/**
 * A request's variables measured as if they were written in the document:
 * nesting (each object or list a level), tokens (as the lexer would count
 * the same value as a literal: braces, names, colons, scalars) and
 * characters. The walk stops as soon as a limit is passed, so a huge value
 * costs no more than the limit to refuse.
 */
export function variablesRefusal(
  document: DocumentNode,
  variables: Record<string, unknown> | null | undefined,
  limits: Pick<QueryLimits, "maxDepth" | "maxTokens" | "maxLength">,
): GraphQLError | null {
  if (!variables || typeof variables !== "object") return null;
  const tokenBudget = limits.maxTokens - tokensOf(document);
  const lengthBudget = limits.maxLength - (document.loc?.source.body.length ?? 0);
  let tokens = 0;
  let length = 0;
  let deepest = 0;
  class Over extends Error {}
  const walk = (value: unknown, depth: number): void => {
    if (depth > deepest) deepest = depth;
    if (depth > limits.maxDepth) throw new Over("depth");
    if (value !== null && typeof value === "object") {
      tokens += 2; // { } or [ ]
      length += 2;
      if (Array.isArray(value)) {
        for (const item of value) {
          walk(item, depth + 1);
          if (tokens > tokenBudget || length > lengthBudget) throw new Over("size");
        }
      } else {
        for (const key in value) {
          if (!Object.hasOwn(value, key)) continue;
          tokens += 2; // name :
          length += key.length + 2;
          walk((value as Record<string, unknown>)[key], depth + 1);
          if (tokens > tokenBudget || length > lengthBudget) throw new Over("size");
        }
      }
    } else {
      tokens += 1;
      length += typeof value === "string" ? value.length + 2 : String(value).length;
    }
  };
  try {
    for (const key in variables) if (Object.hasOwn(variables, key)) walk(variables[key], 0);
  } catch (e) {
    if (!(e instanceof Over)) throw e;
  }
  if (deepest > limits.maxDepth) {
    return limitError("QUERY_TOO_DEEP", `A variable's value is nested more than ${limits.maxDepth} levels deep; the limit is ${limits.maxDepth}.`, { maximumDepth: limits.maxDepth });
  }
  if (length > lengthBudget) return limitError("QUERY_TOO_LARGE", `The document and its variables have more than ${limits.maxLength} characters.`);
  if (tokens > tokenBudget) return limitError("TOO_MANY_TOKENS", `The document and its variables have more than ${limits.maxTokens} tokens.`);
  return null;
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

/**
 * The variables a document's price can depend on: those used in a `first`,
 * `last` or `limit` argument (the row counts of costEstimator) or in a
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
      if (arg.name.value === "first" || arg.name.value === "last" || arg.name.value === "limit") collect(arg.value);
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

/** Distinct (operation, variables) pairs whose cost is kept per parsed document. */
const COST_CACHE_PER_DOCUMENT = 64;

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
    // Fields visited while pricing, fragments expanded; past this the query
    // is refused as too complex (the length and token limits bound it too).
    maxQueryNodes: MAX_PRICED_NODES,
  });
}

type Price = (schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown> | undefined, operationName: string | undefined) => number;

/**
 * `price` (queryCost) of a request, remembered per schema, parsed document,
 * operation and the variables it can depend on; and `generation` (the table
 * size estimates it was priced with: a new estimate prices anew).
 */
export function makeCostCache(price: Price, generation: () => number = () => 0): Price {
  // A document's cost depends only on the schema, the operation and the
  // variables: priced once per distinct (operation, variables) of a parsed
  // document (grafserv reuses the parsed document of a repeated query text),
  // at most COST_CACHE_PER_DOCUMENT of them, so a client that repeats a
  // request does not pay the pricing walk again.
  //
  // Only the variables the price can depend on are in the key (those in a
  // `first`, `last` or `limit` argument, or in a directive's arguments: see
  // costVariables), so CoffeeDetail's id, different on every request, does
  // not make every request a miss. A hit still coerces all the variables,
  // and a request whose variables do not coerce is priced in full, failing
  // as it always did.
  const costCache = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Map<string, number | Error>>>();
  const variablesOfDocument = new WeakMap<DocumentNode, Map<string, { names: string[]; operation: OperationDefinitionNode | null }>>();
  return function cachedCost(schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown> | undefined, operationName: string | undefined): number {
    let byDocument = costCache.get(schema);
    if (!byDocument) costCache.set(schema, (byDocument = new WeakMap()));
    let entries = byDocument.get(document);
    if (!entries) byDocument.set(document, (entries = new Map()));
    let byOperation = variablesOfDocument.get(document);
    if (!byOperation) variablesOfDocument.set(document, (byOperation = new Map()));
    let relevant = byOperation.get(operationName ?? "");
    if (!relevant) byOperation.set(operationName ?? "", (relevant = costVariables(document, operationName)));
    const key = `${generation()}\u0000${operationName ?? ""}\u0000${variables ? JSON.stringify(relevant.names.map((n) => (Object.hasOwn(variables, n) ? [variables[n]] : []))) : ""}`;
    let priced = entries.get(key);
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
      if (coerced) {
        if (entries.size >= COST_CACHE_PER_DOCUMENT) entries.clear();
        entries.set(key, priced);
      }
    }
    if (priced instanceof Error) throw priced;
    return priced;
  };
}

export function makeQueryCostPlugin(limits: QueryLimits): GraphileConfig.Plugin {
  const ceilingFor = (viewer: { role: AccountRole } | null | undefined) => (isStaff(viewer) ? limits.maxCostStaff : limits.maxCost);

  const rowsOf = limits.tableRows ? (table: string) => limits.tableRows!.rows(table) : undefined;
  const cachedCost = makeCostCache(
    (schema, document, variables, operationName) => queryCost(schema, document, variables, operationName, limits.defaultListSize, rowsOf),
    limits.tableRows ? () => limits.tableRows!.generation() : undefined,
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
        refusal: { errors: [limitError(code, code === "QUERY_TOO_COMPLEX" ? `The query expands to more than ${MAX_PRICED_NODES} fields.` : message)] },
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
          event.validationRules.push(
            depthRule(limits.maxDepth),
            maxAliasesRule({ n: limits.maxAliases, ...withCode("TOO_MANY_ALIASES") }) as unknown as ValidationRule,
            tokensRule(limits.maxTokens, limits.maxLength),
            introspectionRule(MAX_TYPE_FIELDS),
          );
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
            services?.logger.info({ operationName, cost, maximumCost: maximum }, "query refused: too complex");
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
