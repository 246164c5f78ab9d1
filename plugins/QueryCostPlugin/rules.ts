import { maxAliasesRule } from "@escape.tech/graphql-armor-max-aliases";
import { GraphQLError, Kind, Lexer, Source, TokenKind, type DocumentNode, type FieldNode, type SelectionNode, type ValidationContext, type ValidationRule, type ValueNode } from "postgraphile/graphql";

// The rules: what a document may be (checked once per document, cached with
// it) and what a request's variables may add. No SQL, no pricing.

/** The limits every document is held to (QueryLimits in ./index.ts adds the cost's). */
export interface DocumentLimits {
  maxDepth: number;
  maxAliases: number;
  maxTokens: number;
  maxLength: number;
}

/**
 * Selections (fields, fragment spreads, inline fragments) an operation may
 * expand to, fragments expanded where they are spread: the pricing
 * (./pricing.ts) visits each one, so past this a query is refused before it
 * is priced. A contract document expands to a few hundred.
 */
export const MAX_EXPANDED_SELECTIONS = 10_000;

/** `__type` fields per operation (Ruru sends none; a client asking after a few types needs no more). */
export const MAX_TYPE_FIELDS = 10;

export function limitError(code: string, message: string, extra: Record<string, unknown> = {}): GraphQLError {
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

/** An operation or a fragment: what has selections. */
interface Selecting {
  selectionSet: { selections: readonly SelectionNode[] };
}
type FragmentOf = (name: string) => Selecting | null | undefined;

/**
 * Folds an operation's selections into one value, fragments flattened:
 * `field` is a field's value (`below()` folds its own selections, if any),
 * `fragment` a spread's or inline fragment's from what it holds, and
 * siblings combine with `plus` from `zero`. Each named fragment is folded
 * once and its value reused wherever it is spread: a fragment bomb spreads
 * 10^n times, and walking it would hang. A spread that would cycle (reported
 * by NoFragmentCycles) or names no fragment holds `zero`.
 */
function foldOperation<T>(operation: Selecting, getFragment: FragmentOf, f: { zero: T; plus(a: T, b: T): T; field(sel: FieldNode, below: () => T): T; fragment(inner: T): T }): T {
  const perFragment = new Map<string, T>();
  const fold = (selections: readonly SelectionNode[], visiting: Set<string>): T => {
    let acc = f.zero;
    for (const sel of selections) {
      let value: T;
      if (sel.kind === Kind.FIELD) {
        value = f.field(sel, () => (sel.selectionSet ? fold(sel.selectionSet.selections, visiting) : f.zero));
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        value = f.fragment(fold(sel.selectionSet.selections, visiting));
      } else {
        const name = sel.name.value;
        let inner = visiting.has(name) ? f.zero : perFragment.get(name);
        if (inner === undefined) {
          const fragment = getFragment(name);
          visiting.add(name);
          inner = fragment ? fold(fragment.selectionSet.selections, visiting) : f.zero;
          visiting.delete(name);
          perFragment.set(name, inner);
        }
        value = f.fragment(inner);
      }
      acc = f.plus(acc, value);
    }
    return acc;
  };
  return fold(operation.selectionSet.selections, new Set());
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
      const depth = foldOperation(operation, (name) => context.getFragment(name), {
        zero: 0,
        plus: Math.max,
        // An argument's literal counts too: `filter: {and: [{or: ...}]}`
        // nests as deep as a selection does, and costs as much to coerce.
        field: (sel, below) => (sel.name.value.startsWith("__") ? 0 : 1 + Math.max(below(), ...(sel.arguments ?? []).map((a) => valueDepth(a.value)))),
        fragment: (inner) => inner,
      });
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
export function introspectionCounts(operation: Selecting, getFragment: FragmentOf): { schema: number; type: number } {
  // Introspection fields live on the root type: its selection set (and the
  // fragments spread there) is all there is to look at, so fields are not descended.
  return foldOperation(operation, getFragment, {
    zero: { schema: 0, type: 0 },
    plus: (a, b) => ({ schema: a.schema + b.schema, type: a.type + b.type }),
    field: (sel) => ({ schema: sel.name.value === "__schema" ? 1 : 0, type: sel.name.value === "__type" ? 1 : 0 }),
    fragment: (inner) => inner,
  });
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

/**
 * The selections an operation expands to (see MAX_EXPANDED_SELECTIONS):
 * each field, fragment spread and inline fragment, as the pricing visits
 * them, but with each fragment counted once (foldOperation): linear in the
 * document, where the pricing's walk of a fragment bomb visits the limit's
 * worth of nodes before refusing it.
 */
export function expandedSelections(operation: Selecting, getFragment: FragmentOf): number {
  return foldOperation(operation, getFragment, {
    zero: 0,
    plus: (a, b) => a + b,
    field: (_sel, below) => 1 + below(),
    fragment: (inner) => 1 + inner,
  });
}

function expansionRule(maxSelections: number): ValidationRule {
  return (context) => ({
    OperationDefinition(operation) {
      if (expandedSelections(operation, (name) => context.getFragment(name)) > maxSelections) {
        context.reportError(limitError("QUERY_TOO_COMPLEX", `The query expands to more than ${maxSelections} fields.`));
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
  limits: Pick<DocumentLimits, "maxDepth" | "maxTokens" | "maxLength">,
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

/** The validation rules of a document (grafserv caches their verdict with the parsed document). */
export function documentRules(limits: DocumentLimits): ValidationRule[] {
  return [
    depthRule(limits.maxDepth),
    // Every alias counts, `__typename`'s too (the rule's default exempts it: 1,000 of them were accepted).
    maxAliasesRule({ n: limits.maxAliases, allowList: [], ...withCode("TOO_MANY_ALIASES") }) as unknown as ValidationRule,
    tokensRule(limits.maxTokens, limits.maxLength),
    introspectionRule(MAX_TYPE_FIELDS),
    expansionRule(MAX_EXPANDED_SELECTIONS),
  ];
}
