import { Kind, Lexer, parse, Source, TokenKind, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode, type SelectionSetNode } from "graphql";

// The shape of GraphQL documents, computed here rather than by the code
// under test (depth, token count), and builders of deep, wide and long
// documents for the query limits.

function operationOf(doc: DocumentNode, operationName?: string): OperationDefinitionNode {
  const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const op = operationName ? ops.find((o) => o.name?.value === operationName) : ops[0];
  if (!op) throw new Error(`no operation ${operationName ?? ""}`);
  return op;
}

/**
 * The nesting depth of an operation's fields: `{ a }` is 1, `{ a { b } }` is
 * 2. Fragments (named or inline) are flattened: they select fields at the
 * level where they are spread and add no level of their own.
 */
export function fieldDepth(document: DocumentNode | string, operationName?: string): number {
  const doc = typeof document === "string" ? parse(document) : document;
  const fragments = new Map(doc.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f] as const));
  const depthOf = (set: SelectionSetNode | undefined, level: number, active: ReadonlySet<string>): number => {
    if (!set) return level;
    let max = level;
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) max = Math.max(max, depthOf(s.selectionSet, level + 1, active));
      else if (s.kind === Kind.INLINE_FRAGMENT) max = Math.max(max, depthOf(s.selectionSet, level, active));
      else {
        const f = fragments.get(s.name.value);
        if (f && !active.has(f.name.value)) max = Math.max(max, depthOf(f.selectionSet, level, new Set([...active, f.name.value])));
      }
    }
    return max;
  };
  return depthOf(operationOf(doc, operationName).selectionSet, 0, new Set());
}

/**
 * The selections an operation expands to, walked in full (fragments spread
 * out where they are spread, each field, spread and inline fragment counting
 * one): `{ a { b } }` is 2, `{ ...F } fragment F on Query { a b }` is 3.
 * For documents of ordinary size only: a fragment bomb would not finish.
 */
export function selectionCount(document: DocumentNode | string, operationName?: string): number {
  const doc = typeof document === "string" ? parse(document) : document;
  const fragments = new Map(doc.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f] as const));
  const countOf = (set: SelectionSetNode | undefined, active: ReadonlySet<string>): number => {
    let n = 0;
    for (const s of set?.selections ?? []) {
      n += 1;
      if (s.kind === Kind.FIELD) n += countOf(s.selectionSet, active);
      else if (s.kind === Kind.INLINE_FRAGMENT) n += countOf(s.selectionSet, active);
      else {
        const f = fragments.get(s.name.value);
        if (f && !active.has(f.name.value)) n += countOf(f.selectionSet, new Set([...active, f.name.value]));
      }
    }
    return n;
  };
  return countOf(operationOf(doc, operationName).selectionSet, new Set());
}

/** The lexical tokens of a document (punctuation, names, values; not commas, blanks or comments). */
export function countTokens(document: string): number {
  const lexer = new Lexer(new Source(document));
  let n = 0;
  while (lexer.advance().kind !== TokenKind.EOF) n += 1;
  return n;
}

/**
 * A query exactly `depth` fields deep, each list or connection asked for one
 * row (so the cost stays tiny): allOrders(first: 1) → nodes → customer →
 * orderList(first: 1) → nodes → customer → ... → a scalar.
 */
export function deepOrdersQuery(depth: number): string {
  if (depth < 2) throw new Error("depth >= 2");
  const cycle = ["nodes", "customer", "orderList(first: 1)"];
  const fields = ["allOrders(first: 1)"];
  for (let i = 0; fields.length < depth - 1; i++) fields.push(cycle[i % 3]!);
  const last = fields[fields.length - 1]!;
  const leaf = last.startsWith("orderList") || last.startsWith("allOrders") ? "totalCount" : "id";
  return `{ ${fields.map((f) => `${f} {`).join(" ")} ${leaf} ${"} ".repeat(fields.length)}}`;
}

/** A subscription exactly `depth` fields deep: newCoffee → reviews(limit: 1) → coffee → reviews(limit: 1) → ... → id. */
export function deepNewCoffeeSubscription(depth: number): string {
  const cycle = ["reviews(limit: 1)", "coffee"];
  const fields = ["newCoffee"];
  for (let i = 0; fields.length < depth - 1; i++) fields.push(cycle[i % 2]!);
  return `subscription { ${fields.map((f) => `${f} {`).join(" ")} id ${"} ".repeat(fields.length)}}`;
}

/** `n` aliased root fields. */
export function aliasedQuery(n: number): string {
  return `{ ${Array.from({ length: n }, (_, i) => `c${i}: featuredCoffee { id }`).join(" ")} }`;
}

/**
 * A cheap query (coffees with a name filter) of exactly `tokens` tokens:
 * 20 tokens of structure plus one string token per listed name.
 */
export function tokenHeavyQuery(tokens: number): string {
  const names = Array.from({ length: tokens - 20 }, (_, i) => `"n${i % 10}"`).join(" ");
  return `{ coffees(filter: { name: { in: [${names}] } }) { id } }`;
}

/** `{ __typename }` padded with a comment to exactly `length` characters (2 tokens whatever the length). */
export function longQuery(length: number): string {
  const start = "{ __typename }\n#";
  return start + "x".repeat(length - start.length);
}
