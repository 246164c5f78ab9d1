import { boundedCache } from "../../common/boundedCache.ts";
import { useTestService } from "../support/service.ts";

// common/boundedCache.ts: what every map callers fill is made of. It holds
// its bounds in entries and in bytes, drops the least recently used first,
// and /metrics reports each cache's entries, bytes and evictions by name.

const t = useTestService();

/** One sample of a /metrics scrape (undefined: not there). */
async function sample(name: string): Promise<number | undefined> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

test("a bounded cache keeps at most maxEntries, drops the least recently used first, and /metrics counts it", async () => {
  const cache = boundedCache<string, string>("test_entries", { maxEntries: 3, maxBytes: 1_000_000, bytesOf: (v, k) => v.length + k.length });
  for (const k of ["a", "b", "c"]) cache.set(k, k.repeat(10));
  cache.get("a"); // a is now the most recently used: b goes first
  cache.set("d", "dddddddddd");
  expect([...cache.keys()].sort()).toEqual(["a", "c", "d"]);
  cache.set("e", "eeeeeeeeee");
  expect([...cache.keys()].sort()).toEqual(["a", "d", "e"]);

  expect(await sample('cafe_cache_entries{cache="test_entries"}')).toBe(3);
  expect(await sample('cafe_cache_bytes{cache="test_entries"}')).toBe(33);
  expect(await sample('cafe_cache_evictions_total{cache="test_entries"}')).toBe(2);
});

test("a bounded cache keeps at most maxBytes, whatever the number of entries, and never an entry larger than that", async () => {
  const cache = boundedCache<string, string>("test_bytes", { maxEntries: 1000, maxBytes: 100, bytesOf: (v) => v.length });
  for (let i = 0; i < 50; i++) cache.set(`k${i}`, "x".repeat(30));
  expect(cache.size).toBe(3);
  expect(cache.calculatedSize).toBeLessThanOrEqual(100);
  cache.set("huge", "y".repeat(101));
  expect(cache.has("huge")).toBe(false);
  expect(await sample('cafe_cache_bytes{cache="test_bytes"}')).toBe(90);
  expect(await sample('cafe_cache_evictions_total{cache="test_bytes"}')).toBe(47);
});

test("a bound at 0 keeps nothing", () => {
  const cache = boundedCache<string, string>("test_off", { maxEntries: 0, maxBytes: 100, bytesOf: (v) => v.length });
  cache.set("a", "a");
  expect(cache.size).toBe(0);
});

test("the maps callers fill are bounded caches, each reported in /metrics by name", async () => {
  // The service under test has made each of them by now (its rate limiters, block list, live cache, cost cache);
  // an ad-hoc document through grafserv makes the parsed-documents cache and grafast's plan caches (plugins/OperationCachePlugin.ts).
  const asked = await fetch(`${t.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: "{ __typename }" }) });
  expect(asked.status).toBe(200);
  const names = [
    "rate_limit_windows",
    "blocked_sources",
    "verified_tokens",
    "live_cache",
    "live_cache_offers",
    "query_costs",
    "fast_path_ad_hoc",
    "ad_hoc_documents",
    "password_check_callers",
    "operation_plans",
    "trusted_operation_plans",
  ];
  // One scrape, read for every name (its status and the cache lines shown if one is missing).
  const scrape = await fetch(`${t.url}/metrics`);
  const text = await scrape.text();
  const reported = text.split("\n").filter((l) => l.startsWith("cafe_cache_entries{"));
  const missing = names.filter((name) => !reported.some((l) => l.startsWith(`cafe_cache_entries{cache="${name}"} `)));
  expect({ status: scrape.status, missing, reported: missing.length ? reported : [] }).toEqual({ status: 200, missing: [], reported: [] });
});
