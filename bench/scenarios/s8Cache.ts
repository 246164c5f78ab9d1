// S8 live cache: the kiosk's menu (KioskMenu, anonymous), polled all day.
// Service: a second service process with the live cache on (the one S1-S7
// measure runs with LIVE_CACHE_MAX_ENTRIES=0, so they measure uncached
// reads), checked to answer the same bytes cached as uncached. Floor: S1's
// bare node:http server answering those bytes (what a hit can cost at
// best). Peer: stock PostGraphile V5 serving the same three root fields.
// Extra: the same cached process asked with Apollo Client 4's Accept (as
// the kiosks of S9 ask), and the service with the cache off.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { APOLLO_ACCEPT, base, gqlBody, postJson, readyForGraphql, type Ctx, type ScenarioResult } from "../lib/context.ts";
import { peakThenLatency } from "../lib/measureVariants.ts";
import { ask, ROOT, readyByHttp, startChild } from "../lib/proc.ts";
import { sig, sleep } from "../lib/stats.ts";

/** The stock schema's KioskMenu: its own names (connections or lists, `rowId` or `id`), found by introspection. */
async function stockKioskMenu(stockUrl: string): Promise<string> {
  const r = await postJson(stockUrl, "/graphql", gqlBody(`{ q: __type(name: "Query") { fields { name type { kind name ofType { kind name } } } } c: __type(name: "Coffee") { fields { name } } }`));
  const fields = r.json?.data?.q?.fields as Array<{ name: string; type: { name: string | null; ofType: { name: string | null } | null } }> | undefined;
  if (!fields) throw new Error(`stock schema introspection failed: ${r.text.slice(0, 200)}`);
  // A `+list` smart comment makes stock name the list `<name>List`.
  const list = (name: string, selection: string) => {
    const f = fields.find((x) => x.name === name) ?? fields.find((x) => x.name === `${name}List`);
    if (!f) throw new Error(`stock schema: no Query.${name}`);
    return /Connection$/.test(f.type.name ?? f.type.ofType?.name ?? "") ? `${f.name} { nodes { ${selection} } }` : `${f.name} { ${selection} }`;
  };
  const coffeeFields = new Set((r.json.data.c.fields as Array<{ name: string }>).map((x) => x.name));
  const id = coffeeFields.has("rowId") ? "rowId" : "id";
  const card = `${id} name price description imageUrl roast`;
  const seasonal = coffeeFields.has("seasonalIngredientsList")
    ? "seasonalIngredientsList { name organic allergens }"
    : coffeeFields.has("seasonalIngredients")
      ? "seasonalIngredients { nodes { name organic allergens } }"
      : "";
  return `query KioskMenuStock {
  ${list("menuItems", `${id} name price imageUrl category limitedTimeOffer inventory`)}
  featuredCoffee { ${card} }
  ${list("seasonalDrinks", `${card} ${seasonal}`)}
}`;
}

/** The live cache's counters on a service's /metrics. */
async function cacheCounters(baseUrl: string, token: string): Promise<{ hits: number; misses: number; invalidations: number }> {
  const text = await (await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
  const value = (name: string) => Number(new RegExp(`^cafe_live_cache_${name}_total (\\d+)$`, "m").exec(text)?.[1] ?? NaN);
  return { hits: value("hits"), misses: value("misses"), invalidations: value("invalidations") };
}

export async function s8(ctx: Ctx): Promise<ScenarioResult> {
  const notes: string[] = [];
  const metricsToken = `bench-metrics-${randomBytes(12).toString("hex")}`;
  const cached = await startChild({
    name: "service-live-cache",
    script: path.join(ROOT, "src/main.ts"),
    args: ["--api"],
    env: { ...ctx.serviceEnv, LIVE_CACHE_MAX_ENTRIES: "1000", METRICS_TOKEN: metricsToken },
    logDir: ctx.logDir,
  });
  try {
    await readyByHttp(cached, "/healthz");
    const svc = base(cached.port);
    await readyForGraphql(svc);
    const stock = base(ctx.stock.port);
    const body = gqlBody(readFileSync(path.join(ROOT, "contract/operations/kiosk.graphql"), "utf8"), "KioskMenu");
    const uncached = await postJson(base(ctx.service.port), "/graphql", body, {});
    if (uncached.status !== 200 || uncached.json?.errors) throw new Error(`KioskMenu failed: ${uncached.text.slice(0, 300)}`);
    // The first answer once the new process has its database (a busy machine may keep its health probe waiting).
    let first = await postJson(svc, "/graphql", body, {});
    for (let tries = 0; first.status !== 200 && tries < 40; tries++) {
      await sleep(250);
      first = await postJson(svc, "/graphql", body, {});
    }
    const second = await postJson(svc, "/graphql", body, {});
    notes.push(
      `KioskMenu answers ${first.text.length} bytes (${uncached.json.data.menuItems.length} menu items); cached = uncached, byte for byte: ${first.text === second.text && second.text === uncached.text ? "yes" : "NO"}`,
    );
    await ask(ctx.floorHttp, { type: "answer", text: uncached.text }, "answer-ok");
    const stockDoc = await stockKioskMenu(stock);
    const peer = await postJson(stock, "/graphql", gqlBody(stockDoc), {});
    if (peer.status !== 200 || peer.json?.errors) notes.push(`peer KioskMenu failed: ${peer.text.slice(0, 200)}`);
    const defaultStore = (await ctx.root.query("select id from app_public.stores where is_default")).rows[0].id as string;
    const before = await cacheCounters(svc, metricsToken);
    const rows = await peakThenLatency(ctx, "S8", "KioskMenu as anonymous", [
      { variant: "service", label: "cafe-api, live cache on", baseUrl: svc, pid: cached.proc.pid, request: { path: "/graphql", body, headers: {} } },
      {
        variant: "extra",
        label: `cafe-api, live cache on, Apollo Client 4's Accept (${APOLLO_ACCEPT})`,
        baseUrl: svc,
        pid: cached.proc.pid,
        request: { path: "/graphql", body, headers: { accept: APOLLO_ACCEPT } },
      },
      {
        variant: "extra",
        label: "cafe-api, live cache on, X-Store-Id: the default store",
        baseUrl: svc,
        pid: cached.proc.pid,
        request: { path: "/graphql", body, headers: { "x-store-id": defaultStore } },
      },
      { variant: "floor", label: "node:http answering the same bytes", baseUrl: base(ctx.floorHttp.port), pid: ctx.floorHttp.proc.pid, request: { path: "/graphql", body, headers: {} } },
      { variant: "extra", label: "cafe-api, live cache off", baseUrl: base(ctx.service.port), pid: ctx.service.proc.pid, request: { path: "/graphql", body, headers: {} } },
      {
        variant: "peer",
        label: "stock PostGraphile V5: menuItems, featuredCoffee, seasonalDrinks",
        baseUrl: stock,
        pid: ctx.stock.proc.pid,
        request: { path: "/graphql", body: gqlBody(stockDoc), headers: {} },
      },
    ]);
    const after = await cacheCounters(svc, metricsToken);
    notes.push(`the cached service meanwhile: ${after.hits - before.hits} hits, ${after.misses - before.misses} misses, ${after.invalidations - before.invalidations} invalidations (GET /metrics)`);
    const apollo = await postJson(svc, "/graphql", body, { accept: APOLLO_ACCEPT });
    notes.push(`with Apollo Client 4's Accept: ${apollo.status}, the same bytes: ${apollo.text === first.text ? "yes" : "NO"}`);
    const ops = (v: string, label?: RegExp) => rows.find((r) => r.variant === v && (!label || label.test(r.label)))?.opsPerSec ?? null;
    const ratio = (a: number | null, b: number | null) => (a && b ? sig(a / b, 3) : "n/a");
    notes.push(
      `live cache on / stock PostGraphile: ${ratio(ops("service"), ops("peer"))}x req/s (target >= 3x); on / off: ${ratio(ops("service"), ops("extra", /cache off/))}x; off (uncached) / stock: ${ratio(ops("extra", /cache off/), ops("peer"))}x (target >= 10x); Apollo's Accept / none: ${ratio(ops("extra", /Apollo/), ops("service"))}x (target >= 0.9); X-Store-Id / none: ${ratio(ops("extra", /X-Store-Id/), ops("service"))}x (target >= 0.9)`,
    );
    return { id: "S8", title: "live cache", rows, notes };
  } finally {
    await cached.stop();
  }
}
