import { maxAliasesRule } from "@escape.tech/graphql-armor-max-aliases";
import { getComplexity, type ComplexityEstimator } from "graphql-query-complexity";
import {
  GraphQLError,
  getNamedType,
  getNullableType,
  getVariableValues,
  isListType,
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
import type { PageSize } from "./pageSize.ts";
import { isStaff, servicesOf, type AccountRole } from "./services.ts";

function operationType(document: DocumentNode, operationName: string | null | undefined): string {
  const op = document.definitions.find(
    (d) => d.kind === "OperationDefinition" && (!operationName || d.name?.value === operationName),
  ) as { operation?: string } | undefined;
  return op?.operation ?? "unknown";
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
 * Cost: a field costs its `@complexity` value (default 1) plus its
 * children's cost times the rows it may return: for lists and connections,
 * the page that plugins/pageSize.ts lets through (`first`/`last`/`limit`,
 * else the field's default page size, at most its maximum).
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
}

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

/**
 * Depth of the deepest field path, fragments flattened (a spread adds no
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
            deepest = Math.max(deepest, 1 + (sel.selectionSet ? depthOf(sel.selectionSet.selections, visiting) : 0));
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
export function introspectionCounts(operation: { selectionSet: { selections: readonly SelectionNode[] } }, getFragment: (name: string) => { selectionSet: { selections: readonly SelectionNode[] } } | null | undefined) {
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

export function costEstimator(defaultListSize: number): ComplexityEstimator {
  return ({ type: parentType, field, args, childComplexity }) => {
    if (field.name.startsWith("__")) return 0;
    // A connection's rows were counted on the connection field itself.
    if (parentType.name.endsWith("Connection") && (field.name === "nodes" || field.name === "edges")) return 1 + childComplexity;
    const own = (field.extensions as { directives?: { complexity?: { value?: number } } } | undefined)?.directives?.complexity?.value ?? 1;
    const type = getNullableType(field.type);
    const isConnection = !isListType(type) && getNamedType(type).name.endsWith("Connection") && field.args.some((a) => a.name === "first");
    let rows = 1;
    if (isListType(type) || isConnection) {
      // The rows that can come back. Absent `first`/`last`/`limit`: the
      // field's default page size (plugins/pageSize.ts applies it in SQL),
      // else `defaultListSize`. Given: priced as given (the smallest of
      // them), even above the page maximum that SQL cuts it to, so a request
      // for 100,000 rows is refused rather than silently shortened.
      const given = [args.first, args.last, args.limit].filter((v): v is number => typeof v === "number" && v >= 0);
      const pageSize = (field.extensions as { pageSize?: PageSize } | undefined)?.pageSize;
      rows = given.length ? Math.min(...given) : (pageSize?.default ?? defaultListSize);
    }
    return own + rows * childComplexity;
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

export function queryCost(schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown> | undefined, operationName: string | undefined, defaultListSize: number): number {
  return getComplexity({
    schema,
    query: document,
    variables: variables ?? {},
    operationName: operationName ?? undefined,
    estimators: [costEstimator(defaultListSize)],
    // Fields visited while pricing, fragments expanded; past this the query
    // is refused as too complex (the length and token limits bound it too).
    maxQueryNodes: MAX_PRICED_NODES,
  });
}

type Price = (schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown> | undefined, operationName: string | undefined) => number;

/** `price` (queryCost) of a request, remembered per schema, parsed document, operation and the variables it can depend on. */
export function makeCostCache(price: Price): Price {
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
    const key = `${operationName ?? ""}\u0000${variables ? JSON.stringify(relevant.names.map((n) => (Object.hasOwn(variables, n) ? [variables[n]] : []))) : ""}`;
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
  }
}

export function makeQueryCostPlugin(limits: QueryLimits): GraphileConfig.Plugin {
  const ceilingFor = (viewer: { role: AccountRole } | null | undefined) => (isStaff(viewer) ? limits.maxCostStaff : limits.maxCost);

  const cachedCost = makeCostCache((schema, document, variables, operationName) => queryCost(schema, document, variables, operationName, limits.defaultListSize));

  /** Null when the request may run; else the refusal. */
  function check(args: { schema: GraphQLSchema; document: DocumentNode; variableValues?: Record<string, unknown> | null; operationName?: string | null; contextValue?: unknown }) {
    const viewer = (args.contextValue as { viewer?: { role: AccountRole } | null } | undefined)?.viewer;
    const maximum = ceilingFor(viewer);
    let cost: number;
    try {
      cost = cachedCost(args.schema, args.document, args.variableValues ?? undefined, args.operationName ?? undefined);
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
          const result = next();
          const addCost = (r: any) => {
            services?.observeOperation(operationName, operationType(event.args.document, operationName), (performance.now() - started) / 1000);
            return r && typeof r === "object" && !(Symbol.asyncIterator in r) ? { ...r, extensions: { ...r.extensions, cost: { requested: cost, maximum } } } : r;
          };
          return (result && typeof (result as any).then === "function" ? (result as Promise<unknown>).then(addCost) : addCost(result)) as any;
        },
        subscribe(next, event) {
          const { refusal } = check(event.args as any);
          if (refusal) return refusal as any;
          return next();
        },
      },
    },
  };
}
