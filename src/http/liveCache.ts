import { boundedCache, textBytes, type BoundedCache } from "../../common/boundedCache.ts";
import { getOperationAST, Kind, TypeInfo, visit, visitWithTypeInfo, BREAK, type DocumentNode, type FragmentDefinitionNode, type GraphQLSchema, type SelectionSetNode } from "postgraphile/graphql";
import { ALL_CHANGED, FEATURED_CHANGE, publicReadChanges, PUBLIC_READS_TOPIC } from "../../common/topics.ts";
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
// - Freshness: an answer remembers what it was made of (publicReadOf: the
//   tables it shows rows of, `featured`, and the coffees whose inventory it
//   shows); a NOTIFY on PUBLIC_READS_TOPIC names what changed
//   (common/topics.ts, migration 000005-live-reads.sql) and drops exactly
//   the answers made of it. An answer computed while something it is made
//   of changed is not stored; after the LISTEN connection comes back
//   (NOTIFYs may have been missed) everything is dropped.
// - One miss per key: requests for a key being computed wait for that
//   answer (errors included) instead of computing it again; it is shared
//   only with those who asked before a change was heard.
// - A rush (LIVE_CACHE_STALE_MS): a change of inventory marks the answers
//   showing it stale instead of dropping them. The next request for one
//   recomputes it, as a miss; while that one recomputation is running,
//   other anonymous requests for the key (kiosks: anonymous callers write
//   nothing) are answered the stale answer at once instead of waiting or
//   computing again, for at most LIVE_CACHE_STALE_MS after the change.
//   Customers, who may have just ordered, and staff never get a stale
//   answer, so a read after one's own write sees it. An answer whose
//   computation saw an inventory change go by is kept, stale. So at most one
//   computation per key runs at a time however fast orders come, and
//   kiosks are answered from memory through a rush. Every other change
//   (the menu, prices, availability, the featured coffee) drops at once.
// - Bounds: LIVE_CACHE_MAX_ENTRIES and LIVE_CACHE_MAX_BYTES (src/config.ts),
//   least recently used dropped first: a common/boundedCache.ts, in
//   /metrics as cache="live_cache". The index by token holds only keys of
//   answers held; answers being computed are one per request in flight.
// - Keys: a request's variables the operation does not define are not in
//   its key (they change nothing in the answer). A new answer is kept only
//   if it pushes out no answer served from here at least as many times as
//   its key was offered before (cache="live_cache_offers" counts them), so
//   a flood of distinct keys (random search texts) never pushes out the
//   menu's answer. Those counts of hits age: halved for every
//   HIT_HALF_LIFE_MS an answer goes unread, so an answer once popular and
//   read no more (an old app's documentIds) gives way within minutes to a
//   key asked for a few times; an answer dropped by a change keeps its
//   count, as offers, for when it is computed again.

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
 * those its function reads as its owner (security definer), and what
 * announced change drops an answer showing it (PUBLIC_READS_TOPIC's tokens;
 * default: the tables it reads as the caller; INVENTORY: the inventory of
 * the coffees it shows).
 */
export interface PublicRead {
  args?: readonly string[];
  fn?: string;
  asCaller?: readonly string[];
  asOwner?: readonly string[];
  changes?: readonly string[];
}

/** In `changes`: dropped when the inventory of a coffee the answer shows changes. */
export const INVENTORY = "inventory";

const PAGE = ["first", "offset"] as const;
const COFFEES = "app_public.coffees";
const columns = (type: string, names: string[]): Record<string, PublicRead> => Object.fromEntries(names.map((n) => [`${type}.${n}`, {}]));

// A store's reads (`storeId`; absent: the default store) are cached per
// store: the store is an argument, part of the cached query's key.
const STORE = ["storeId"] as const;
const STORES = "app_public.stores";
const STORE_COFFEES = "app_public.store_coffees";

/** Every field a cached answer may contain (anything else: not cached). */
export const PUBLIC_READS: Readonly<Record<string, PublicRead>> = {
  "Query.menuItems": { args: [...STORE, ...PAGE], fn: "app_public.menu_items", asCaller: [COFFEES, STORE_COFFEES] },
  "Query.seasonalDrinks": { args: [...STORE, ...PAGE], fn: "app_public.seasonal_drinks", asCaller: [COFFEES, STORE_COFFEES] },
  "Query.coffees": { args: ["category", ...PAGE], fn: "app_public.coffee_list", asCaller: [COFFEES] },
  "Query.coffee": { args: ["id"], fn: "app_public.coffee_by_id", asCaller: [COFFEES] },
  "Query.searchCoffees": { args: ["query", "name", ...PAGE], fn: "app_public.search_coffees", asCaller: [COFFEES] },
  "Query.featuredCoffee": {
    args: STORE,
    fn: "app_public.featured_coffee",
    asOwner: [COFFEES, STORES, STORE_COFFEES, "app_public.orders", "app_public.order_items"],
    changes: [COFFEES, STORE_COFFEES, FEATURED_CHANGE],
  },
  "Coffee.roaster": { asCaller: ["app_public.roasters"] },
  // The price at the request's store (plugins/InventoryPlugin.ts): the coffee's row, or the store's own price.
  "Coffee.price": { asCaller: ["app_public.store_coffee_prices"], changes: [COFFEES, "app_public.store_coffee_prices"] },
  // Read from app_public.coffee_inventory (per store) in the coffees' statement (plugins/InventoryPlugin.ts).
  "Coffee.inventory": { args: STORE, asCaller: ["app_public.coffee_inventory"], changes: [INVENTORY] },
  "Coffee.availableAt": { args: STORE, fn: "app_public.coffees_available_at", asCaller: [STORE_COFFEES] },
  "Coffee.ingredients": { args: PAGE, fn: "app_public.coffees_ingredients", asCaller: ["app_public.recipe_lines", "app_public.ingredients"] },
  "Coffee.seasonalIngredients": { args: PAGE, fn: "app_public.coffees_seasonal_ingredients", asCaller: ["app_public.recipe_lines", "app_public.ingredients"] },
  "Coffee.reviews": { args: ["limit", ...PAGE], fn: "app_public.coffees_reviews", asCaller: ["app_public.reviews"] },
  ...columns("Coffee", ["id", "name", "roast", "category", "description", "imageUrl", "limitedTimeOffer", "available", "createdAt", "roasterId"]),
  ...columns("Roaster", ["id", "name", "location", "sustainabilityRating", "createdAt"]),
  ...columns("Ingredient", ["id", "name", "organic", "allergens", "createdAt"]),
  ...columns("Review", ["id", "coffeeId", "rating", "comment", "createdAt"]),
};

const changesOf = (read: PublicRead): readonly string[] => read.changes ?? read.asCaller ?? [];

/** Every table a public read's answer shows rows of as they are: each must announce its changes on PUBLIC_READS_TOPIC by name. */
export const PUBLIC_READ_TABLES: readonly string[] = [...new Set(Object.values(PUBLIC_READS).flatMap((r) => changesOf(r).filter((c) => c.includes("."))))].sort();

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

/** What an operation's answers are made of: announced tokens, and whether the inventory of the coffees they show. */
export interface PublicReadSpec {
  changes: readonly string[];
  inventory: boolean;
}

/** What a document is to the cache: a public read (what drops its answers), or null: not cacheable. */
export function publicReadOf(schema: GraphQLSchema, document: DocumentNode, operationName: string | null): PublicReadSpec | null {
  const operation = getOperationAST(document, operationName);
  if (!operation || operation.operation !== "query") return null;
  const typeInfo = new TypeInfo(schema);
  let ok = true;
  const changes = new Set<string>();
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
        for (const c of changesOf(read)) changes.add(c);
      },
    }),
  );
  if (!ok) return null;
  const inventory = changes.delete(INVENTORY);
  return { changes: [...changes].sort(), inventory };
}

/** Whether a document's operation is a public read. */
export const isPublicRead = (schema: GraphQLSchema, document: DocumentNode, operationName: string | null): boolean => publicReadOf(schema, document, operationName) !== null;

/**
 * The coffees whose `inventory` an answer shows, by their `id` in the same
 * selection; null when one of them has no `id` there (then the answer goes
 * with any coffee's inventory). Public reads have no unions or interfaces:
 * every fragment applies.
 */
export function inventoryShown(document: DocumentNode, operationName: string | null, data: unknown): string[] | null {
  const operation = getOperationAST(document, operationName);
  if (!operation) return null;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const ids = new Set<string>();
  let unknown = false;
  /** The fields of a selection set, fragments spread: response key to the sub-selections under it. */
  const fieldsOf = (set: SelectionSetNode, into = new Map<string, { name: string; sets: SelectionSetNode[] }>()) => {
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        const key = sel.alias?.value ?? sel.name.value;
        const f = into.get(key) ?? { name: sel.name.value, sets: [] };
        if (sel.selectionSet) f.sets.push(sel.selectionSet);
        into.set(key, f);
      } else if (sel.kind === Kind.INLINE_FRAGMENT) fieldsOf(sel.selectionSet, into);
      else {
        const fragment = fragments.get(sel.name.value);
        if (fragment) fieldsOf(fragment.selectionSet, into);
      }
    }
    return into;
  };
  const walk = (sets: SelectionSetNode[], value: unknown): void => {
    if (value === null || typeof value !== "object") return;
    if (Array.isArray(value)) return value.forEach((v) => walk(sets, v));
    const fields = new Map<string, { name: string; sets: SelectionSetNode[] }>();
    for (const set of sets) fieldsOf(set, fields);
    const object = value as Record<string, unknown>;
    if ([...fields.values()].some((f) => f.name === "inventory")) {
      const idKey = [...fields].find(([, f]) => f.name === "id")?.[0];
      const id = idKey === undefined ? undefined : object[idKey];
      if (typeof id === "string") ids.add(id.toLowerCase());
      else unknown = true;
    }
    for (const [key, f] of fields) if (f.sets.length) walk(f.sets, object[key]);
  };
  walk([operation.selectionSet], data);
  return unknown ? null : [...ids];
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

/** The names of the variables an operation of a parsed document defines (memoized per document). */
const definedByDocument = new WeakMap<DocumentNode, Map<string, readonly string[]>>();
export function definedVariables(document: DocumentNode, operationName: string | null): readonly string[] {
  let byName = definedByDocument.get(document);
  if (!byName) definedByDocument.set(document, (byName = new Map()));
  let names = byName.get(operationName ?? "");
  if (!names) {
    names = (getOperationAST(document, operationName)?.variableDefinitions ?? []).map((d) => d.variable.name.value);
    byName.set(operationName ?? "", names);
  }
  return names;
}

/**
 * One cache key: the document, the operation, the variables it defines
 * (`defined`: a request's other variables change nothing in its answer, and
 * are no new key), who shares it, the response format asked for, and the store the request
 * is for (X-Store-Id).
 */
export function cacheKey(document: string, operationName: string | null, variables: unknown, defined: readonly string[], visibility: VisibilityClass, accept: string, store?: string): string {
  const given = (variables ?? {}) as Record<string, unknown>;
  const kept = Object.fromEntries(defined.filter((name) => Object.hasOwn(given, name)).map((name) => [name, given[name]]));
  return `${document}\n${operationName ?? ""}\n${canonicalJson(kept)}\n${visibility}\n${accept}\n${store ?? ""}`;
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
  /** How long after an inventory change a stale answer may still be served while its key is recomputed (0: never). */
  staleMs?: number;
  /** How soon after its computation began a stale answer is recomputed at the earliest: until then it is served as it is (0: at once). */
  refreshMs?: number;
}

/**
 * How long an answer's count of hits lasts unread: halved for each such
 * time since its last hit. The menu, read every few seconds, keeps its
 * count however long a flood lasts; an answer served 1,000 times and then
 * never again protects its place against a key asked for 4 times for 8 minutes.
 */
export const HIT_HALF_LIFE_MS = 60_000;

/** An entry's hits, halved for each HIT_HALF_LIFE_MS since it was last read. */
function agedHits(entry: { hits: number; readAt: number }, now: number): number {
  const halvings = Math.floor((now - entry.readAt) / HIT_HALF_LIFE_MS);
  return halvings <= 0 ? entry.hits : halvings >= 31 ? 0 : entry.hits >>> halvings;
}

/** An answer held: stale (an inventory it shows changed since) or not. */
export interface Held {
  answer: CachedAnswer;
  stale: boolean;
  /** Stale, but its computation began less than LIVE_CACHE_REFRESH_MS ago: served as it is, not recomputed yet. */
  recent: boolean;
}

/** An answer being computed: those who ask for its key meanwhile wait for it. */
interface Flight {
  since: number;
  /** When it began (ms). */
  startedAt: number;
  /** What its answer may be made of (`inventory:*` for any coffee's inventory). */
  madeOf: readonly string[];
  answer: Promise<CachedAnswer | null>;
}

/** What an answer is made of, as announced tokens (`inventory:*`: any coffee's inventory). */
const ANY_INVENTORY = "inventory:*";
const isInventory = (token: string) => token.startsWith("inventory:");

type Entry = CachedAnswer & {
  madeOf: readonly string[];
  /** Times it was served from here, as of `readAt` (aged: agedHits): only a key offered more times than that may push it out. */
  hits: number;
  /** When (ms) it was last served from here (or kept). */
  readAt: number;
  /** Since when (ms) an inventory it shows has changed: served only while a recomputation runs, until LIVE_CACHE_STALE_MS after. */
  staleSince?: number;
  /** When (ms) the computation that made it began. */
  computedAt: number;
};

/** The store: LRU, bounded in entries and bytes; `changed` drops the answers made of what changed. */
export class LiveCache {
  private readonly entries: BoundedCache<string, Entry>;
  /** How many times each key's answer was offered to `store` before (admission: see store). */
  private readonly offers: BoundedCache<string, number>;
  /** token -> the keys of the answers made of it. */
  private readonly byToken = new Map<string, Set<string>>();
  private readonly flights = new Map<string, Flight>();
  /** Moves on at every change heard. */
  private seq = 0;
  /** token -> the seq at which it last changed; everything: `allAt`. */
  private readonly changedAt = new Map<string, number>();
  private allAt = 0;
  /** Why the cache is off (publicReadsViolations); off until the database has been checked. */
  private refused: string[] = ["not checked against the database yet"];
  private readonly limits: LiveCacheLimits;
  /** A round trip on the LISTEN connection (followPublicReads). */
  private flusher: (() => Promise<void>) | null = null;
  private lastFlush: Promise<void> = Promise.resolve();
  private nextFlush: Promise<void> | null = null;

  constructor(limits: LiveCacheLimits) {
    this.limits = limits;
    this.entries = boundedCache("live_cache", {
      ...limits,
      bytesOf: (entry, key) => entry.body.length + textBytes(key),
      // However an answer leaves (dropped by a change, evicted, replaced), its key leaves the index.
      onRemove: (entry, key) => {
        for (const token of entry.madeOf) {
          const keys = this.byToken.get(token);
          keys?.delete(key);
          if (keys?.size === 0) this.byToken.delete(token);
        }
      },
    });
    // Keys only, bounded apart (their own cache in /metrics): four times as many as the answers, an eighth of their bytes.
    this.offers = boundedCache("live_cache_offers", {
      maxEntries: 4 * limits.maxEntries,
      maxBytes: Math.floor(limits.maxBytes / 8),
      bytesOf: (_count, key) => textBytes(key) + 32,
    });
  }

  /** Whether the limits let anything be kept (LIVE_CACHE_MAX_ENTRIES=0 or LIVE_CACHE_MAX_BYTES=0: never). */
  get configured(): boolean {
    return this.limits.maxEntries > 0 && this.limits.maxBytes > 0;
  }

  /** Whether answers are looked up and stored now: configured, and the database's policies as PUBLIC_READS expects. */
  get enabled(): boolean {
    return this.configured && this.refused.length === 0;
  }

  /** The point in time of the last change heard: read it before computing an answer, hand it to `store`. */
  get generation(): number {
    return this.seq;
  }

  get size(): number {
    return this.entries.size;
  }

  get bytes(): number {
    return this.entries.calculatedSize;
  }

  /** The answer held for `key`, fresh or stale (a stale one past LIVE_CACHE_STALE_MS is dropped here). */
  lookup(key: string): Held | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    const now = Date.now();
    entry.hits = agedHits(entry, now) + 1;
    entry.readAt = now;
    if (entry.staleSince === undefined) return { answer: entry, stale: false, recent: false };
    if (now - entry.staleSince > this.staleMs) {
      this.drop(key);
      return undefined;
    }
    return { answer: entry, stale: true, recent: now - entry.computedAt < (this.limits.refreshMs ?? 0) };
  }

  /** Whether `key` is being computed now (its stale answer is then served to the others). */
  refreshing(key: string): boolean {
    return this.flights.has(key);
  }

  private get staleMs(): number {
    return this.limits.staleMs ?? 0;
  }

  /** Whether something of `madeOf` other than an inventory changed after `generation`. */
  private changedBeyondInventory(generation: number, madeOf: readonly string[]): boolean {
    if (this.allAt > generation) return true;
    if (madeOf.includes(ALL_CHANGED)) return this.seq > generation;
    return madeOf.some((token) => !isInventory(token) && (this.changedAt.get(token) ?? 0) > generation);
  }

  /** Whether something of `madeOf` changed after `generation`. */
  private changedSince(generation: number, madeOf: readonly string[]): boolean {
    if (this.allAt > generation) return true;
    if (madeOf.includes(ALL_CHANGED)) return this.seq > generation; // made of everything
    // (`inventory:*` is marked changed by every coffee's inventory change.)
    return madeOf.some((token) => (this.changedAt.get(token) ?? 0) > generation);
  }

  /**
   * Keeps `answer`, made of `madeOf` (announced tokens), unless one of them
   * changed since `generation` was read (or it alone is over the byte limit).
   */
  store(key: string, generation: number, answer: CachedAnswer, madeOf: readonly string[] = [ALL_CHANGED], startedAt = Date.now()): boolean {
    if (!this.enabled) return false;
    // Only an inventory changed while it was computed: kept, stale since it began.
    let staleSince: number | undefined;
    if (this.changedSince(generation, madeOf)) {
      if (this.staleMs <= 0 || this.changedBeyondInventory(generation, madeOf)) return false;
      staleSince = startedAt;
    }
    const bytes = answer.body.length + textBytes(key);
    if (bytes > this.limits.maxBytes) return false;
    // Admission: a key is kept only if it pushes out (least recently used
    // first) no answer served from here as many times as the key was offered
    // before. A one-off (a random search text) fills free room and pushes
    // out answers no one asked for again, never the menu everyone reads; a
    // key asked for again and again earns its place.
    const offered = this.entries.has(key) ? Infinity : (this.offers.get(key) ?? 0);
    if (offered !== Infinity) this.offers.set(key, offered + 1);
    const now = Date.now();
    if (this.wouldPushOutServed(key, bytes, offered, now)) return false;
    this.entries.set(key, { ...answer, madeOf, hits: 0, readAt: now, computedAt: startedAt, ...(staleSince === undefined ? null : { staleSince }) });
    if (!this.entries.has(key)) return false;
    for (const token of madeOf) {
      let keys = this.byToken.get(token);
      if (!keys) this.byToken.set(token, (keys = new Set()));
      keys.add(key);
    }
    return true;
  }

  /** Whether keeping `bytes` more under `key` would push out (least recently used first) an answer served from here at least `offered` times. */
  private wouldPushOutServed(key: string, bytes: number, offered: number, now: number): boolean {
    let entries = this.entries.size + 1;
    let total = this.entries.calculatedSize + bytes;
    for (const victim of this.entries.rkeys()) {
      if (entries <= this.limits.maxEntries && total <= this.limits.maxBytes) return false;
      if (victim === key) continue;
      const entry = this.entries.peek(victim, { allowStale: true });
      if (!entry) continue;
      if (agedHits(entry, now) >= Math.max(1, offered)) return true;
      entries -= 1;
      total -= entry.body.length + textBytes(victim);
    }
    return false;
  }

  /** Drops an answer; its count of hits stays as its key's offers, so it earns its place back at its next computation. */
  private drop(key: string) {
    const entry = this.entries.peek(key, { allowStale: true });
    const hits = entry ? agedHits(entry, Date.now()) : 0;
    if (hits > (this.offers.peek(key) ?? 0)) this.offers.set(key, hits);
    this.entries.delete(key);
  }

  /**
   * The answer to `key` being computed, to wait for, unless what it may be
   * made of changed since it began (undefined: none). With `staleAllowed`,
   * also when only an inventory changed: its answer then counts as a stale
   * one, and resolves to null (compute your own) when it arrives later than
   * LIVE_CACHE_STALE_MS after the flight began.
   */
  joinFlight(key: string, staleAllowed = false): Promise<CachedAnswer | null> | undefined {
    const flight = this.flights.get(key);
    if (!flight) return undefined;
    if (!this.changedSince(flight.since, flight.madeOf)) return flight.answer;
    if (!staleAllowed || this.staleMs <= 0 || this.changedBeyondInventory(flight.since, flight.madeOf)) return undefined;
    const inTime = () => Date.now() - flight.startedAt <= this.staleMs;
    return inTime() ? flight.answer.then((answer) => (inTime() ? answer : null)) : undefined;
  }

  /** Announces a computation of `key`, whose answer may be made of `madeOf`; `settle` hands its answer (null: none, e.g. it failed) to those waiting. */
  beginFlight(key: string, madeOf: readonly string[] = [ALL_CHANGED]): (answer: CachedAnswer | null) => void {
    let settle!: (answer: CachedAnswer | null) => void;
    const flight: Flight = { since: this.seq, startedAt: Date.now(), madeOf, answer: new Promise((resolve) => (settle = resolve)) };
    this.flights.set(key, flight);
    return (answer) => {
      if (this.flights.get(key) === flight) this.flights.delete(key);
      settle(answer);
    };
  }

  /** What changed (PUBLIC_READS_TOPIC's tokens): drops the answers made of it; answers being computed from it will not be stored. */
  changed(tokens: readonly string[]): void {
    if (tokens.includes(ALL_CHANGED)) return this.invalidate();
    this.seq += 1;
    const now = Date.now();
    // An inventory change: its answers go stale (LIVE_CACHE_STALE_MS), or are dropped.
    const staleOrDrop = (key: string) => {
      const entry = this.staleMs > 0 ? this.entries.peek(key) : undefined;
      if (entry) entry.staleSince ??= now;
      else this.drop(key);
    };
    for (const token of tokens) {
      this.changedAt.set(token, this.seq);
      if (isInventory(token)) {
        for (const key of [...(this.byToken.get(token) ?? [])]) staleOrDrop(key);
        this.changedAt.set(ANY_INVENTORY, this.seq);
        for (const key of [...(this.byToken.get(ANY_INVENTORY) ?? [])]) staleOrDrop(key);
      } else for (const key of [...(this.byToken.get(token) ?? [])]) this.drop(key);
    }
    liveCacheEvents.invalidations += 1;
  }

  /** Drops every answer; answers being computed now will not be stored. */
  invalidate(): void {
    this.seq += 1;
    this.allAt = this.seq;
    this.changedAt.clear();
    this.entries.clear();
    this.offers.clear();
    this.byToken.clear();
    liveCacheEvents.invalidations += 1;
  }

  /**
   * Resolves once every change committed before the call has been heard
   * (a round trip on the LISTEN connection, shared by the callers that
   * arrive while one is queued; at most 2 s): a mutation's answer waits
   * for it, so its caller's next read sees its own write.
   */
  caughtUp(): Promise<void> {
    const flush = this.flusher;
    if (!flush) return Promise.resolve();
    if (!this.nextFlush) {
      const next: Promise<void> = this.lastFlush.then(() => {
        if (this.nextFlush === next) this.nextFlush = null;
        return (this.lastFlush = flush().catch(() => {}));
      });
      this.nextFlush = next;
    }
    const heard = this.nextFlush;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 2000);
      timer.unref();
      void heard.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Where `caughtUp` makes its round trip (followPublicReads). */
  listensThrough(flush: () => Promise<void>): void {
    this.flusher = flush;
  }

  /** Turns the cache off while `violations` (publicReadsViolations) is not empty. */
  refuse(violations: string[]): void {
    if (violations.length) logger.warn({ violations }, "live cache off: callers of one role might not see the same public reads");
    this.refused = violations;
    this.invalidate();
  }
}

/**
 * Drops what changed from `cache` on every NOTIFY of PUBLIC_READS_TOPIC, everything after every
 * (re)connection of the LISTEN connection, checking the database's policies
 * each time. Returns the function that stops following.
 */
export function followPublicReads(cache: LiveCache, subscriber: ReconnectingPgSubscriber, query: Parameters<typeof publicReadsViolations>[0]): () => void {
  if (!cache.configured) return () => {};
  const stream = subscriber.subscribe(PUBLIC_READS_TOPIC);
  cache.listensThrough(() => subscriber.flush());
  void (async () => {
    for await (const payload of stream) cache.changed(publicReadChanges(payload));
  })();
  subscriber.onConnected(async () => {
    cache.invalidate();
    cache.refuse(await publicReadsViolations(query));
  });
  return () => void stream.return?.();
}
