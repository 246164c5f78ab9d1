import { maxAliasesRule } from "@escape.tech/graphql-armor-max-aliases";
import { getComplexity, type ComplexityEstimator } from "graphql-query-complexity";
import {
  GraphQLError,
  getNamedType,
  getNullableType,
  isListType,
  Kind,
  Lexer,
  Source,
  TokenKind,
  type DocumentNode,
  type SelectionNode,
  type GraphQLSchema,
  type ValidationContext,
  type ValidationRule,
} from "postgraphile/graphql";
import type { Viewer } from "../src/auth.ts";
import { logger } from "../src/logger.ts";
import { graphqlOperations, operationLabel } from "../src/metrics.ts";

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
 *   ceiling for staff. The cost is reported in `extensions.cost`.
 *
 * Cost: a field costs its `@complexity` value (default 1) plus its
 * children's cost times the rows it may return: `limit`, `first` or `last`
 * where given, else `defaultListSize` for lists and connections.
 * Introspection costs nothing (Ruru must work).
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
      const requested = [args.limit, args.first, args.last].find((v) => typeof v === "number" && v >= 0) as number | undefined;
      rows = requested ?? defaultListSize;
    }
    return own + rows * childComplexity;
  };
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

export function makeQueryCostPlugin(limits: QueryLimits): GraphileConfig.Plugin {
  const ceilingFor = (viewer: Viewer | null | undefined) =>
    viewer && (viewer.role === "barista" || viewer.role === "admin") ? limits.maxCostStaff : limits.maxCost;

  // A document's cost depends only on the schema, the operation and the
  // variables: priced once per distinct (operation, variables) of a parsed
  // document (grafserv reuses the parsed document of a repeated query text),
  // at most COST_CACHE_PER_DOCUMENT of them, so a client that repeats a
  // request does not pay the pricing walk again.
  const costCache = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Map<string, number | Error>>>();
  function cachedCost(schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown> | undefined, operationName: string | undefined): number {
    let byDocument = costCache.get(schema);
    if (!byDocument) costCache.set(schema, (byDocument = new WeakMap()));
    let entries = byDocument.get(document);
    if (!entries) byDocument.set(document, (entries = new Map()));
    const key = `${operationName ?? ""}\u0000${variables ? JSON.stringify(variables) : ""}`;
    let priced = entries.get(key);
    if (priced === undefined) {
      try {
        priced = queryCost(schema, document, variables, operationName, limits.defaultListSize);
      } catch (e) {
        priced = e as Error;
      }
      if (entries.size >= COST_CACHE_PER_DOCUMENT) entries.clear();
      entries.set(key, priced);
    }
    if (priced instanceof Error) throw priced;
    return priced;
  }

  /** Null when the request may run; else the refusal. */
  function check(args: { schema: GraphQLSchema; document: DocumentNode; variableValues?: Record<string, unknown> | null; operationName?: string | null; contextValue?: unknown }) {
    const viewer = (args.contextValue as { viewer?: Viewer | null } | undefined)?.viewer;
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
          if (refusal) {
            logger.info({ operationName, cost, maximumCost: maximum }, "query refused: too complex");
            return refusal as any;
          }
          logger.debug({ operationName, cost }, "query cost");
          const stopTimer = graphqlOperations.startTimer({
            operation: operationLabel(operationName),
            type: operationType(event.args.document, operationName),
          });
          const result = next();
          const addCost = (r: any) => {
            stopTimer();
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
