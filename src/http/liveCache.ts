import { createHash } from "node:crypto";
import { getOperationAST, TypeInfo, visit, visitWithTypeInfo, BREAK, type DocumentNode, type GraphQLSchema } from "postgraphile/graphql";
import { PUBLIC_READS_TOPIC } from "../../common/topics.ts";
import type { Viewer } from "../../common/services.ts";
import type { ReconnectingPgSubscriber } from "../subscriber.ts";
import { logger } from "../logger.ts";
import { liveCacheEvents } from "../metrics.ts";

// The live cache: answers to public reads (the menu, a coffee, search),
// which every anonymous caller (and every customer) sees alike, kept in
// memory and dropped the moment a table they are made of changes.
//
// - What is public: a query whose every field is in PUBLIC_READS, with only
//   the arguments listed there (no `filter`: it could reach other tables).
// - Who shares an answer: callers of one role class (visibilityClassOf):
//   every RLS policy on the tables PUBLIC_READS reads as the caller is
//   `using (true)` for cafe_anonymous and cafe_customer, and the functions
//   behind its fields look at no user or setting (publicReadsViolations
//   checks both against the database: at start, after every reconnection,
//   and in test/graphql/live-cache.test.ts). The two roles' grants may differ, so
//   they never share with each other. Staff are never served from here.
// - Freshness: a statement that changes one of those tables NOTIFYs
//   PUBLIC_READS_TOPIC (the `-- Live cache:` triggers of the baseline);
//   each NOTIFY drops every entry and moves the generation on. An answer
//   computed while the generation moved is not stored; after the LISTEN
//   connection comes back (NOTIFYs may have been missed) everything is
//   dropped too.
// - Bounds: LIVE_CACHE_MAX_ENTRIES and LIVE_CACHE_MAX_BYTES (src/config.ts),
//   least recently used dropped first.

/** The request roles whose members share answers, each with its own. */
export type VisibilityClass = "cafe_anonymous" | "cafe_customer";
export const SHARING_ROLES: readonly VisibilityClass[] = ["cafe_anonymous", "cafe_customer"];

/** With whom a caller may share a public read's answer: their role class; null (staff) never shares. */
export function visibilityClassOf(viewer: Pick<Viewer, "role"> | null): VisibilityClass | null {
  if (!viewer) return "cafe_anonymous";
  return viewer.role === "customer" ? "cafe_customer" : null;
}

/**
 * A field a public read may ask for: the arguments it may take, the SQL
 * function behind it, the tables it reads as the caller (under RLS) and
 * those its function reads as its owner (security definer).
 */
export interface PublicRead {
  args?: readonly string[];
  fn?: string;
  asCaller?: readonly string[];
  asOwner?: readonly string[];
}

const PAGE = ["first", "offset"] as const;
const COFFEES = "app_public.coffees";
const columns = (type: string, names: string[]): Record<string, PublicRead> => Object.fromEntries(names.map((n) => [`${type}.${n}`, {}]));

/** Every field a cached answer may contain (anything else: not cached). */
// A store's reads (`storeId`; absent: the default store) are cached per
// store: the store is an argument, part of the cached query's key.
const STORE = ["storeId"] as const;
const STORES = "app_public.stores";
const STORE_COFFEES = "app_public.store_coffees";

export const PUBLIC_READS: Readonly<Record<string, PublicRead>> = {
  "Query.menuItems": { args: [...STORE, ...PAGE], fn: "app_public.menu_items", asCaller: [COFFEES, STORE_COFFEES] },
  "Query.seasonalDrinks": { args: [...STORE, ...PAGE], fn: "app_public.seasonal_drinks", asCaller: [COFFEES, STORE_COFFEES] },
  "Query.coffees": { args: ["category", ...PAGE], fn: "app_public.coffee_list", asCaller: [COFFEES] },
  "Query.coffee": { args: ["id"], fn: "app_public.coffee_by_id", asCaller: [COFFEES] },
  "Query.searchCoffees": { args: ["query", "name", ...PAGE], fn: "app_public.search_coffees", asCaller: [COFFEES] },
  "Query.featuredCoffee": { args: STORE, fn: "app_public.featured_coffee", asOwner: [COFFEES, STORES, STORE_COFFEES, "app_public.orders", "app_public.order_items"] },
  "Coffee.roaster": { asCaller: ["app_public.roasters"] },
  "Coffee.inventory": { args: STORE, fn: "app_public.coffees_inventory", asOwner: [STORES, "app_public.recipe_lines", "app_public.stock_items", "app_private.stock_reserved"] },
  "Coffee.availableAt": { args: STORE, fn: "app_public.coffees_available_at", asCaller: [STORE_COFFEES] },
  "Coffee.ingredients": { args: PAGE, fn: "app_public.coffees_ingredients", asCaller: ["app_public.recipe_lines", "app_public.ingredients"] },
  "Coffee.seasonalIngredients": { args: PAGE, fn: "app_public.coffees_seasonal_ingredients", asCaller: ["app_public.recipe_lines", "app_public.ingredients"] },
  "Coffee.reviews": { args: ["limit", ...PAGE], fn: "app_public.coffees_reviews", asCaller: ["app_public.reviews"] },
  ...columns("Coffee", ["id", "name", "price", "roast", "category", "description", "imageUrl", "limitedTimeOffer", "available", "createdAt", "roasterId"]),
  ...columns("Roaster", ["id", "name", "location", "sustainabilityRating", "createdAt"]),
  ...columns("Ingredient", ["id", "name", "organic", "allergens", "createdAt"]),
  ...columns("Review", ["id", "coffeeId", "rating", "comment", "createdAt"]),
};

/** Every table a public read's answer is made of: each must announce its changes on PUBLIC_READS_TOPIC. */
export const PUBLIC_READ_TABLES: readonly string[] = [...new Set(Object.values(PUBLIC_READS).flatMap((r) => [...(r.asCaller ?? []), ...(r.asOwner ?? [])]))].sort();

/** What in a function's body could make its answer depend on who asks. */
const LOOKS_AT_THE_CALLER = /current_user_id|current_customer|current_actor|is_admin|is_staff|current_setting|current_user|session_user|jwt\.|require_/i;

/**
 * Why callers of one role class might not see the same answer to a public
 * read, from the database itself (empty: they do). `query` runs SQL on any
 * connection (the catalogs are readable by every role).
 */
export async function publicReadsViolations(query: (text: string, values: unknown[]) => Promise<{ rows: any[] }>): Promise<string[]> {
  const asCaller = [...new Set(Object.values(PUBLIC_READS).flatMap((r) => r.asCaller ?? []))];
  const fns = Object.values(PUBLIC_READS).flatMap((r) => (r.fn ? [r.fn] : []));
  const violations: string[] = [];
  const policies = await query(
    `select schemaname || '.' || tablename as t, policyname, qual from pg_policies
      where schemaname || '.' || tablename = any($1) and cmd in ('SELECT', 'ALL')
        and roles && ($2::name[] || 'public'::name)`,
    [asCaller, SHARING_ROLES],
  );
  for (const p of policies.rows) if (p.qual !== "true") violations.push(`policy ${p.policyname} on ${p.t} shows rows by ${p.qual}`);
  const tables = await query(
    `select t, c.relrowsecurity as rls from unnest($1::text[]) t
       left join (pg_class c join pg_namespace n on n.oid = c.relnamespace) on n.nspname || '.' || c.relname = t`,
    [asCaller],
  );
  for (const r of tables.rows) if (r.rls !== true) violations.push(`${r.t} has no row level security`);
  const procs = await query(
    `select n.nspname || '.' || p.proname as f, p.prosrc, p.prosecdef from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname || '.' || p.proname = any($1)`,
    [fns],
  );
  const found = new Set(procs.rows.map((r) => r.f));
  for (const f of fns) if (!found.has(f)) violations.push(`${f} does not exist`);
  for (const r of procs.rows) if (LOOKS_AT_THE_CALLER.test(r.prosrc)) violations.push(`${r.f} looks at who calls`);
  for (const [field, r] of Object.entries(PUBLIC_READS)) {
    if (r.asOwner && !procs.rows.some((p) => p.f === r.fn && p.prosecdef)) violations.push(`${field}: ${r.fn} is not security definer`);
  }
  return violations;
}

/** What a document is to the cache: a public read, or not cacheable. */
export function isPublicRead(schema: GraphQLSchema, document: DocumentNode, operationName: string | null): boolean {
  const operation = getOperationAST(document, operationName);
  if (!operation || operation.operation !== "query") return false;
  const typeInfo = new TypeInfo(schema);
  let ok = true;
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        if (node.name.value === "__typename") return;
        const parent = typeInfo.getParentType();
        const read = parent ? PUBLIC_READS[`${parent.name}.${node.name.value}`] : undefined;
        if (!read || node.arguments?.some((a) => !read.args?.includes(a.name.value))) {
          ok = false;
          return BREAK;
        }
      },
    }),
  );
  return ok;
}

/** Variables as JSON with object keys sorted: the same values, the same text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, v[k]]),
        )
      : v,
  );
}

/** The document part of a key: a trusted document's id as sent, or the text's hash. */
export const documentKey = (text: string) => `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;

/** One cache key: the document, the operation, the variables, who shares it, and the response format asked for. */
export function cacheKey(document: string, operationName: string | null, variables: unknown, visibility: VisibilityClass, accept: string): string {
  return `${document}\n${operationName ?? ""}\n${canonicalJson(variables ?? {})}\n${visibility}\n${accept}`;
}

/** An answer as grafserv sent it. */
export interface CachedAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The operation it answered (for the access log). */
  operationName: string | undefined;
}

export interface LiveCacheLimits {
  maxEntries: number;
  maxBytes: number;
}

/** The store: LRU, bounded in entries and bytes, emptied by `invalidate`. */
export class LiveCache {
  private readonly entries = new Map<string, CachedAnswer & { size: number }>();
  private used = 0;
  private gen = 0;
  /** Why the cache is off (publicReadsViolations); off until the database has been checked. */
  private refused: string[] = ["not checked against the database yet"];
  private readonly limits: LiveCacheLimits;

  constructor(limits: LiveCacheLimits) {
    this.limits = limits;
  }

  /** Whether the limits let anything be kept (LIVE_CACHE_MAX_ENTRIES=0 or LIVE_CACHE_MAX_BYTES=0: never). */
  get configured(): boolean {
    return this.limits.maxEntries > 0 && this.limits.maxBytes > 0;
  }

  /** Whether answers are looked up and stored now: configured, and the database's policies as PUBLIC_READS expects. */
  get enabled(): boolean {
    return this.configured && this.refused.length === 0;
  }

  /** Moves on at every invalidation: read it before computing an answer, hand it to `store`. */
  get generation(): number {
    return this.gen;
  }

  get size(): number {
    return this.entries.size;
  }

  get bytes(): number {
    return this.used;
  }

  lookup(key: string): CachedAnswer | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry;
  }

  /** Keeps `answer` unless the cache was invalidated since `generation` was read (or it alone is over the byte limit). */
  store(key: string, generation: number, answer: CachedAnswer): boolean {
    if (!this.enabled || generation !== this.gen) return false;
    const size = answer.body.length + key.length;
    if (size > this.limits.maxBytes) return false;
    this.drop(key);
    this.entries.set(key, { ...answer, size });
    this.used += size;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.limits.maxEntries && this.used <= this.limits.maxBytes) break;
      this.drop(oldest);
    }
    return true;
  }

  private drop(key: string) {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.used -= entry.size;
  }

  /** Drops every answer; answers being computed now will not be stored. */
  invalidate(): void {
    this.gen += 1;
    this.entries.clear();
    this.used = 0;
    liveCacheEvents.invalidations += 1;
  }

  /** Turns the cache off while `violations` (publicReadsViolations) is not empty. */
  refuse(violations: string[]): void {
    if (violations.length) logger.warn({ violations }, "live cache off: callers of one role might not see the same public reads");
    this.refused = violations;
    this.invalidate();
  }
}

/**
 * Invalidates `cache` on every NOTIFY of PUBLIC_READS_TOPIC and after every
 * (re)connection of the LISTEN connection, checking the database's policies
 * each time. Returns the function that stops following.
 */
export function followPublicReads(cache: LiveCache, subscriber: ReconnectingPgSubscriber, query: Parameters<typeof publicReadsViolations>[0]): () => void {
  if (!cache.configured) return () => {};
  const stream = subscriber.subscribe(PUBLIC_READS_TOPIC);
  void (async () => {
    for await (const _table of stream) cache.invalidate();
  })();
  subscriber.onConnected(async () => {
    cache.invalidate();
    cache.refuse(await publicReadsViolations(query));
  });
  return () => void stream.return?.();
}
