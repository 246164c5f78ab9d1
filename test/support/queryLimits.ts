import pg from "pg";
import { registry } from "../../src/metrics.ts";
import { startTestService, type TestService } from "./harness.ts";
import { Kind, Lexer, parse, Source, TokenKind, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode, type SelectionSetNode } from "graphql";

// Helpers for the query-limits suite: a recorder of the SQL the API sends
// (the server runs in this process, so pg.Client.prototype.query sees every
// statement), the depth and token count of a document computed here rather
// than by the code under test, and builders of deep, wide and long documents.

/** The statement's first words, without leading comments and blanks, lower-cased. */
function head(text: string): string {
  return text
    .replace(/^(\s|--[^\n]*\n|\/\*[\s\S]*?\*\/)+/, "")
    .slice(0, 80)
    .toLowerCase();
}

function textOf(arg: unknown): string | undefined {
  if (typeof arg === "string") return arg;
  if (arg && typeof arg === "object" && typeof (arg as { text?: unknown }).text === "string") return (arg as { text: string }).text;
  return undefined;
}

/** Transaction wrapping and role/claim settings: not "work". */
const OVERHEAD = /^(begin|commit|start transaction)\b|^select\s+set_config\(/;
/** The API's health ping (src/dbHealth.ts), every 2 s on the same pool: never caused by a request. */
const HEALTH_PING = /^select 1;?\s*$/;

/**
 * Counts the statements the API's login role sends while recording: every
 * statement except begin/commit/set_config (and the periodic health ping).
 * LISTEN statements of the subscription connection count too.
 */
export class SqlRecorder {
  private readonly original = pg.Client.prototype.query;
  private current: string[] | null = null;
  private installed = false;

  private readonly user: string;
  constructor(user: string) {
    this.user = user;
  }

  install(): void {
    if (this.installed) return;
    this.installed = true;
    const original = this.original;
    const self = this;
    pg.Client.prototype.query = function (this: pg.Client & { user?: string }, ...args: unknown[]) {
      const text = textOf(args[0]);
      if (self.current && text !== undefined && this.user === self.user) {
        const h = head(text);
        if (!OVERHEAD.test(h) && !HEALTH_PING.test(h)) self.current.push(text.replace(/\s+/g, " ").slice(0, 160));
      }
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof pg.Client.prototype.query;
  }

  uninstall(): void {
    if (!this.installed) return;
    pg.Client.prototype.query = this.original;
    this.installed = false;
  }

  /** Runs `fn` and returns its result with the statements sent meanwhile (and for `settleMs` after). */
  async record<T>(fn: () => Promise<T>, settleMs = 50): Promise<{ result: T; statements: string[] }> {
    if (this.current) throw new Error("already recording");
    const statements: string[] = [];
    this.current = statements;
    try {
      const result = await fn();
      if (settleMs) await new Promise((r) => setTimeout(r, settleMs));
      return { result, statements };
    } finally {
      this.current = null;
    }
  }
}

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
  const fragments = new Map(
    doc.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f] as const),
  );
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

/** A fixed-width text table. */
export function table(header: string[], rows: Array<Array<string | number>>): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 || i === 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...cells.slice(1).map(line)].join("\n");
}

/**
 * A second service in this process, with its own settings. src/server.ts
 * registers its pool, queue and socket gauges on the process-wide metrics
 * registry at every start, so a second start in one process throws "A
 * metric with the name cafe_db_pool_connections has already been
 * registered"; the first service's gauges are dropped first (this suite
 * does not read /metrics).
 */
export async function startAnotherService(env: Record<string, string>): Promise<TestService> {
  for (const name of ["cafe_db_pool_connections", "cafe_jobs", "cafe_subscriptions_open"]) registry.removeSingleMetric(name);
  return startTestService({ env });
}

/**
 * Waits until a subscription (from harness.ts's subscribe) has `count`
 * results, an error or its completion, polling briefly: unlike its own
 * waitFor, this leaves no timer running once it returns.
 */
export async function settled(sub: { results: unknown[]; error: unknown; completed: boolean }, count = 1, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (sub.results.length < count && !sub.error && !sub.completed && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
}
