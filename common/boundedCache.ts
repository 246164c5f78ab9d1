import { LRUCache } from "lru-cache";

// Every map or cache that callers fill is one of these: bounded in entries
// AND bytes, least recently used dropped first (the `lru-cache` package),
// and counted in /metrics under its name (src/metrics.ts reads
// `cacheStats()`: cafe_cache_entries, cafe_cache_bytes,
// cafe_cache_evictions_total). The limits come from the caller (src/config.ts,
// handed to plugins through common/services.ts); nothing here reads them.

/** A cache's bounds; both hold at once. Either at 0: nothing is ever kept. */
export interface CacheBounds {
  maxEntries: number;
  maxBytes: number;
}

export interface BoundedCacheOptions<K, V> extends CacheBounds {
  /** What one entry costs in bytes, its key included (an estimate; counted as at least 1). */
  bytesOf(value: V, key: K): number;
  /** Milliseconds after which an entry is dropped even if used (none: kept until evicted). */
  ttl?: number;
  /** Called for every entry that leaves (evicted, deleted, replaced, expired, cleared): what the owner keeps beside it goes too. */
  onRemove?(value: V, key: K, reason: "evict" | "delete" | "set" | "expire" | "fetch"): void;
}

/** An LRUCache bounded in entries and bytes whose size /metrics reports under `name`. */
export type BoundedCache<K extends NonNullable<unknown>, V extends NonNullable<unknown>> = LRUCache<K, V>;

/** The caches made so far, held weakly: a cache its owner dropped is forgotten here too. */
const live = new Set<{ name: string; cache: WeakRef<LRUCache<any, any>> }>();
/** Evictions by cache name since the process started (names are fixed in code: a bounded set). */
const evictions = new Map<string, number>();

/**
 * A new bounded cache called `name` (a fixed word naming what it holds, e.g.
 * "trusted_variants"; several instances of one name add up in /metrics).
 */
export function boundedCache<K extends NonNullable<unknown>, V extends NonNullable<unknown>>(name: string, options: BoundedCacheOptions<K, V>): BoundedCache<K, V> {
  const off = options.maxEntries <= 0 || options.maxBytes <= 0;
  if (!evictions.has(name)) evictions.set(name, 0);
  const cache = new LRUCache<K, V>({
    max: off ? 1 : options.maxEntries,
    maxSize: off ? 1 : options.maxBytes,
    // An entry over maxEntrySize is not kept: when off, every entry is.
    sizeCalculation: off ? () => 2 : (value, key) => Math.max(1, Math.ceil(options.bytesOf(value, key))),
    ...(options.ttl ? { ttl: options.ttl, ttlAutopurge: false } : {}),
    dispose: (value, key, reason) => {
      if (reason === "evict") evictions.set(name, evictions.get(name)! + 1);
      options.onRemove?.(value, key, reason);
    },
  });
  live.add({ name, cache: new WeakRef(cache) });
  return cache;
}

export interface CacheStats {
  name: string;
  entries: number;
  bytes: number;
  evictions: number;
}

/** Every cache name's entries and bytes now (its live instances added up) and evictions so far. */
export function cacheStats(): CacheStats[] {
  const stats = new Map<string, CacheStats>();
  for (const [name, count] of evictions) stats.set(name, { name, entries: 0, bytes: 0, evictions: count });
  for (const tracked of live) {
    const cache = tracked.cache.deref();
    if (!cache) {
      live.delete(tracked);
      continue;
    }
    const s = stats.get(tracked.name)!;
    s.entries += cache.size;
    s.bytes += cache.calculatedSize;
  }
  return [...stats.values()];
}

/** Bytes a string takes, roughly (V8 keeps most as one byte a character, some as two). */
export function textBytes(text: string): number {
  return 2 * text.length;
}
