import { boundedCache } from "../../common/boundedCache.ts";
import { makeOperationCachePlugin, planBytes, PLAN_BYTES_PER_STEP, UNCOUNTED_PLAN_BYTES } from "../../plugins/OperationCachePlugin.ts";
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

describe("plugins/OperationCachePlugin.ts against a grafast that is not the one it knows", () => {
  type Hook = (config: { extensions?: Record<string, unknown> }, build: unknown, context: unknown) => { extensions: { grafast: Record<string, unknown> } };
  type Middleware = (next: () => unknown, event: unknown) => unknown;
  const wiring = () => {
    const charged: number[] = [];
    const warnings: string[] = [];
    const plugin = makeOperationCachePlugin({
      plans: { maxEntries: 30, maxBytes: 1_000_000 },
      trustedPlans: { maxEntries: 5, maxBytes: 1_000_000 },
      queries: 35,
      onPlanBytes: (bytes) => charged.push(bytes),
      onWarning: (message) => warnings.push(message),
    });
    const schemaHook = (plugin.schema!.hooks as unknown as { GraphQLSchema: Hook }).GraphQLSchema;
    const establish = (plugin.grafast!.middleware as unknown as { establishOperationPlan: Middleware }).establishOperationPlan;
    return { charged, warnings, schemaHook, establish };
  };
  const plan = (fields: object) => fields;
  const event = (grafast: object) => ({ args: { document: { kind: "Document", definitions: [] } }, operation: { kind: "OperationDefinition" }, schema: { extensions: { grafast } } });

  test("the schema keeps grafast's own bound in entries (trusted + ad hoc), in force if its cache cannot be replaced", () => {
    const { schemaHook } = wiring();
    const config = schemaHook({ extensions: { grafast: { other: 1 } } }, {}, {});
    expect(config.extensions.grafast).toMatchObject({ other: 1, operationsCacheMaxLength: 35, queryCacheMaxLength: 35, operationOperationPlansCacheMaxLength: 8 });
  });

  test("no plan-cache symbol, plans without stepTracker: planning goes on, each new plan charged a fixed estimate, one warning each", () => {
    const { charged, warnings, establish } = wiring();
    for (let i = 0; i < 3; i++) {
      const grafast = { operationsCacheMaxLength: 35 };
      const made = plan({ steps: 12 });
      expect(establish(() => made, event(grafast))).toBe(made);
      expect(Object.getOwnPropertySymbols(grafast)).toEqual([]);
    }
    expect(charged).toEqual([UNCOUNTED_PLAN_BYTES, UNCOUNTED_PLAN_BYTES, UNCOUNTED_PLAN_BYTES]);
    expect(warnings).toHaveLength(2);
    expect(warnings.join("\n")).toMatch(/cacheByOperation.*bounded in entries only \(35\)/);
    expect(warnings.join("\n")).toMatch(/stepTracker\.stepCount/);
    expect(planBytes(plan({ stepTracker: { stepCount: 3 } }) as never)).toBe(3 * PLAN_BYTES_PER_STEP);
    expect(planBytes(plan({ stepTracker: {} }) as never)).toBe(UNCOUNTED_PLAN_BYTES);
  });
});
