// S2 nested read: BaristaQueue (as barista) and CoffeeDetail (as alice).
// Floor: the SQL the service generated (captured from it), replayed in the
// same transaction shape by node:http + pg, answering the same JSON (checked).
// Peer: stock PostGraphile V5 serving the equivalent auto-generated query.
// Also: SQL statements and round trips per request, EXPLAIN plans, and the
// same at 10x and 100x the order count (history grows, the queue does not).
import { readFileSync } from "node:fs";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";
import { base, gqlBody, postJson, sendFloorSpec, trustedBody, type Ctx, type Row, type ScenarioResult } from "../lib/context.ts";
import { peakThenLatency, type VariantSpec } from "../lib/measureVariants.ts";
import { ROOT, captureSql, countSql, type CapturedQuery } from "../lib/proc.ts";
import { analyze, generateOrders, tableCounts } from "../lib/db.ts";
import { explainStatement, planVerdict, type Plans } from "../lib/explain.ts";
import { logLogSlope, sig, type Summary } from "../lib/stats.ts";
import { createOrderProbe, vacuumForProbe } from "./s3Write.ts";

const ops = (file: string) => readFileSync(path.join(ROOT, "contract/operations", file), "utf8");

/**
 * The stock PostGraphile's equivalents of the two documents, built from its
 * own schema (names follow the database's smart comments, which change as
 * the service evolves): the orders of both statuses through allOrders with
 * their lines through the order_items relation, and one coffee by primary
 * key with its recipe lines' ingredients, its roaster and its newest three
 * reviews through the relations.
 */
export async function stockDocuments(stockUrl: string, headers: Record<string, string>): Promise<{ queue: string; coffee: string }> {
  const typeRef = "kind name ofType { kind name ofType { kind name ofType { kind name } } }";
  const r = await postJson(
    stockUrl,
    "/graphql",
    gqlBody(`{
      query: __type(name: "Query") { fields { name args { name type { ${typeRef} } } type { ${typeRef} } } }
      order: __type(name: "Order") { fields { name args { name } type { ${typeRef} } } }
      orderItem: __type(name: "OrderItem") { fields { name type { ${typeRef} } } }
      coffee: __type(name: "Coffee") { fields { name args { name } type { ${typeRef} } } }
      recipeLine: __type(name: "RecipeLine") { fields { name type { ${typeRef} } } }
    }`),
    headers,
  );
  const t = r.json?.data;
  if (!t?.order || !t?.coffee) throw new Error(`stock schema introspection failed: ${r.text.slice(0, 200)}`);
  const named = (ty: any): string => (ty.name ? ty.name : named(ty.ofType));
  const field = (type: any, test: (typeName: string, f: any) => boolean, what: string) => {
    const f = type.fields.find((x: any) => test(named(x.type), x));
    if (!f) throw new Error(`stock schema: no ${what}`);
    return f;
  };
  const items = t.order.fields.find((f: any) => named(f.type) === "OrderItemConnection") ?? field(t.order, (n) => n === "OrderItem", "Order -> order items");
  const itemsSel =
    named(items.type) === "OrderItemConnection" ? `${items.name}(orderBy: [POSITION_ASC]) { nodes { ...QueueItem } }` : `${items.name} { ...QueueItem }`;
  const itemCoffee = field(t.orderItem, (n) => n === "Coffee", "OrderItem -> Coffee").name;
  const customer = field(t.order, (n) => n === "Customer", "Order -> Customer").name;
  const barista = field(t.order, (n) => n === "Barista", "Order -> Barista").name;
  const orderId = t.order.fields.some((f: any) => f.name === "rowId") ? "rowId" : "id";
  const allOrders = field(t.query, (n, f) => n === "OrderConnection" && f.args.some((a: any) => a.name === "condition"), "allOrders").name;
  const queue = `query BaristaQueueStock {
  preparing: ${allOrders}(condition: {status: PREPARING}, orderBy: [TIME_ORDERED_ASC, PRIMARY_KEY_ASC]) { nodes { ...QueueOrder } }
  brewing: ${allOrders}(condition: {status: BREWING}, orderBy: [TIME_ORDERED_ASC, PRIMARY_KEY_ASC]) { nodes { ...QueueOrder } }
}
fragment QueueOrder on Order {
  ${orderId} status timeOrdered notes total
  ${itemsSel}
  ${customer} { name }
  ${barista} { name }
}
fragment QueueItem on OrderItem { ${itemCoffee} { name } quantity specialInstructions }`;
  const byKey =
    t.query.fields.find((f: any) => named(f.type) === "Coffee" && f.args.length === 1 && named(f.args[0].type) === "UUID" && /row/i.test(f.args[0].name)) ??
    field(t.query, (n, f) => n === "Coffee" && f.args.length === 1 && named(f.args[0].type) === "UUID", "a coffee by primary key");
  const lines = t.coffee.fields.find((f: any) => named(f.type) === "RecipeLineConnection");
  const ingredient = field(t.recipeLine, (n) => n === "Ingredient", "RecipeLine -> Ingredient").name;
  const roaster = field(t.coffee, (n) => n === "Roaster", "Coffee -> Roaster").name;
  const reviews = field(t.coffee, (n) => n === "ReviewConnection", "Coffee -> reviews").name;
  const coffeeId = t.coffee.fields.some((f: any) => f.name === "rowId") ? "rowId" : "id";
  const coffee = `query CoffeeDetailStock($id: UUID!) {
  ${byKey.name}(${byKey.args[0].name}: $id) {
    ${coffeeId} name price roast description category
    ${lines ? `${lines.name} { nodes { ${ingredient} { name organic allergens } } }` : ""}
    ${roaster} { name location sustainabilityRating }
    ${reviews}(first: 3, orderBy: [CREATED_AT_DESC]) { nodes { rating comment } }
  }
}`;
  return { queue, coffee };
}

interface Prepared {
  variants: Record<"BaristaQueue" | "CoffeeDetail", VariantSpec[]>;
  statements: Record<"BaristaQueue" | "CoffeeDetail", { settings: Array<[string, string]>; list: CapturedQuery[] }>;
  notes: string[];
}

// Also a new connection's set-up (@dataplan/pg's `set jit_optimize_above_cost`)
// and the health probe's `select 1` (its own connection), when they fall in
// the capture.
const isControl = (q: CapturedQuery) => /^\s*(begin|commit|rollback|set)\b|set_config\(|^\s*select 1\s*$/i.test(q.text);

async function prepare(ctx: Ctx): Promise<Prepared> {
  const svc = base(ctx.service.port);
  const floor = base(ctx.floorSql.port);
  const stock = base(ctx.stock.port);
  const barista = { authorization: `Bearer ${ctx.tokens.barista}` };
  const alice = { authorization: `Bearer ${ctx.tokens.alice}` };
  const notes: string[] = [];
  const queueBody = gqlBody(ops("barista.graphql"), "BaristaQueue");
  const coffeeDoc = ops("mobile.graphql");
  const sampleCoffee = ctx.coffeeIds[0]!;
  const coffeeBody = (id: string) => gqlBody(coffeeDoc, "CoffeeDetail", { id });

  // The service's SQL, one request each.
  const q = await captureSql(ctx.service, () => postJson(svc, "/graphql", queueBody, barista));
  if (q.result.status !== 200 || q.result.json?.errors) throw new Error(`BaristaQueue failed: ${q.result.text.slice(0, 300)}`);
  const c = await captureSql(ctx.service, () => postJson(svc, "/graphql", coffeeBody(sampleCoffee), alice));
  if (c.result.status !== 200 || c.result.json?.errors) throw new Error(`CoffeeDetail failed: ${c.result.text.slice(0, 300)}`);
  // The same two by documentId (trusted documents): the same answers.
  const trustedQueue = trustedBody("BaristaQueue");
  const trustedCoffee = (id: string) => trustedBody("CoffeeDetail", { id });
  for (const [name, body, headers, adHoc] of [
    ["BaristaQueue", trustedQueue, barista, q.result],
    ["CoffeeDetail", trustedCoffee(sampleCoffee), alice, c.result],
  ] as const) {
    const r = await postJson(svc, "/graphql", body, headers);
    if (!isDeepStrictEqual(r.json?.data, adHoc.json.data)) throw new Error(`${name} by documentId answered differently: ${r.status} ${r.text.slice(0, 300)}`);
  }
  const qStatements = q.queries.filter((x) => !isControl(x));
  const cStatements = c.queries.filter((x) => !isControl(x));
  const settingsOf = (list: CapturedQuery[]) => JSON.parse(String(list.find((x) => /set_config\(/.test(x.text))?.values[0] ?? "[]"));
  const itemCount = (q.result.json.data.orders as any[]).reduce((n, o) => n + o.items.length, 0);
  const coffeesStmt = qStatements[1] ?? null;
  const coffeeIdsSent = coffeesStmt ? (JSON.parse(String(coffeesStmt.values[0])) as unknown[]).length : 0;
  const spec = {
    BaristaQueue: {
      orders: { text: qStatements[0]!.text, values: qStatements[0]!.values, name: qStatements[0]!.name },
      coffees: coffeesStmt ? { text: coffeesStmt.text, values: [], name: coffeesStmt.name } : null,
      dedupe: coffeesStmt ? coffeeIdsSent < itemCount : false,
      extensions: q.result.json.extensions ?? null,
    },
    CoffeeDetail: {
      select: { text: cStatements[0]!.text, values: cStatements[0]!.values, name: cStatements[0]!.name },
      idIndex: cStatements[0]!.values.findIndex((v) => v === sampleCoffee),
      extensions: c.result.json.extensions ?? null,
    },
  };
  notes.push(
    `the service sends its statements ${qStatements.every((x) => x.name) && cStatements.every((x) => x.name) ? "as named prepared statements (after 5 executions PostgreSQL may switch to a generic plan); the floor does the same" : "unnamed"}`,
  );
  if (qStatements.length > 2 || cStatements.length > 1)
    notes.push(`the service sent more statements than the floor replays (${qStatements.length} and ${cStatements.length}); the floor replays the first ones`);
  await sendFloorSpec(ctx, spec);

  // Same JSON?
  const fq = await postJson(floor, "/s2/BaristaQueue", "{}", barista);
  const fc = await postJson(floor, "/s2/CoffeeDetail", JSON.stringify({ variables: { id: sampleCoffee } }), alice);
  const sameQ = isDeepStrictEqual(fq.json, q.result.json);
  const sameC = isDeepStrictEqual(fc.json, c.result.json);
  notes.push(`floor answers the same JSON as the service: BaristaQueue ${sameQ ? "yes" : "NO"}, CoffeeDetail ${sameC ? "yes" : "NO"}`);
  if (!sameQ) notes.push(`BaristaQueue floor answer differs: ${fq.text.slice(0, 200)}`);
  if (!sameC) notes.push(`CoffeeDetail floor answer differs: ${fc.text.slice(0, 200)} vs ${c.result.text.slice(0, 200)}`);
  notes.push(
    `BaristaQueue returns ${q.result.json.data.orders.length} orders with ${itemCount} lines (${q.result.text.length} bytes) in ${qStatements.length} statement(s)${coffeesStmt ? `; the coffee names come from a second statement in a second transaction (${coffeeIdsSent} ids sent)` : ""}; CoffeeDetail in ${cStatements.length} statement(s)`,
  );

  // The peer's and the floor's SQL (counts only).
  const { queue: STOCK_QUEUE, coffee: STOCK_COFFEE } = await stockDocuments(stock, barista);
  ctx.shared.stockDocuments = { queue: STOCK_QUEUE, coffee: STOCK_COFFEE };
  const pq = await captureSql(ctx.stock, () => postJson(stock, "/graphql", gqlBody(STOCK_QUEUE), barista));
  const pc = await captureSql(ctx.stock, () => postJson(stock, "/graphql", gqlBody(STOCK_COFFEE, undefined, { id: sampleCoffee }), alice));
  for (const [name, r] of [
    ["BaristaQueue", pq.result],
    ["CoffeeDetail", pc.result],
  ] as const) {
    if (r.status !== 200 || r.json?.errors) notes.push(`peer ${name} failed: ${r.text.slice(0, 200)}`);
  }
  const fqs = await captureSql(ctx.floorSql, () => postJson(floor, "/s2/BaristaQueue", "{}", barista));
  const fcs = await captureSql(ctx.floorSql, () => postJson(floor, "/s2/CoffeeDetail", JSON.stringify({ variables: { id: sampleCoffee } }), alice));

  const randomCoffee = () => ctx.coffeeIds[Math.floor(Math.random() * ctx.coffeeIds.length)]!;
  return {
    notes,
    statements: {
      BaristaQueue: { settings: settingsOf(q.queries), list: qStatements },
      CoffeeDetail: { settings: settingsOf(c.queries), list: cStatements },
    },
    variants: {
      BaristaQueue: [
        {
          variant: "service",
          label: "cafe-api",
          baseUrl: svc,
          pid: ctx.service.proc.pid,
          request: { path: "/graphql", body: queueBody, headers: barista },
          sql: countSql(q.queries),
        },
        {
          variant: "extra",
          label: "cafe-api, trusted document by documentId",
          baseUrl: svc,
          pid: ctx.service.proc.pid,
          request: { path: "/graphql", body: trustedQueue, headers: barista },
        },
        {
          variant: "floor",
          label: "node:http + pg, the service's SQL",
          baseUrl: floor,
          pid: ctx.floorSql.proc.pid,
          request: { path: "/s2/BaristaQueue", body: "{}", headers: barista },
          sql: countSql(fqs.queries),
        },
        {
          variant: "peer",
          label: "stock PostGraphile V5: allOrders(condition: {status}) x2 + order_items relation",
          baseUrl: stock,
          pid: ctx.stock.proc.pid,
          request: { path: "/graphql", body: gqlBody(STOCK_QUEUE), headers: barista },
          sql: countSql(pq.queries),
        },
      ],
      CoffeeDetail: [
        {
          variant: "service",
          label: "cafe-api",
          baseUrl: svc,
          pid: ctx.service.proc.pid,
          request: { path: "/graphql", headers: alice, setup: () => ({ body: coffeeBody(randomCoffee()) }) },
          sql: countSql(c.queries),
        },
        {
          variant: "extra",
          label: "cafe-api, trusted document by documentId",
          baseUrl: svc,
          pid: ctx.service.proc.pid,
          request: { path: "/graphql", headers: alice, setup: () => ({ body: trustedCoffee(randomCoffee()) }) },
        },
        {
          variant: "floor",
          label: "node:http + pg, the service's SQL",
          baseUrl: floor,
          pid: ctx.floorSql.proc.pid,
          request: { path: "/s2/CoffeeDetail", headers: alice, setup: () => ({ body: JSON.stringify({ variables: { id: randomCoffee() } }) }) },
          sql: countSql(fcs.queries),
        },
        {
          variant: "peer",
          label: "stock PostGraphile V5: coffeeByRowId + relations",
          baseUrl: stock,
          pid: ctx.stock.proc.pid,
          request: { path: "/graphql", headers: alice, setup: () => ({ body: gqlBody(STOCK_COFFEE, undefined, { id: randomCoffee() }) }) },
          sql: countSql(pc.queries),
        },
      ],
    },
  };
}

async function explainAll(ctx: Ctx, p: Prepared): Promise<Record<string, Plans[]>> {
  const out: Record<string, Plans[]> = {};
  for (const op of ["BaristaQueue", "CoffeeDetail"] as const) {
    const { settings, list } = p.statements[op];
    out[op] = [];
    for (const st of list) out[op].push(await explainStatement(ctx.db.urls.authenticator, settings, st.text, st.values));
  }
  return out;
}

async function measureAt(ctx: Ctx, p: Prepared, withPeer: boolean, suffix: string): Promise<Row[]> {
  const rows: Row[] = [];
  for (const op of ["BaristaQueue", "CoffeeDetail"] as const) {
    // At larger scales: the service and its floor only.
    const variants = p.variants[op].filter((v) => withPeer || (v.variant !== "peer" && v.variant !== "extra"));
    const caseName = `${op} as ${op === "BaristaQueue" ? "barista" : "alice"}${suffix}`;
    rows.push(...(await peakThenLatency(ctx, "S2", caseName, variants)));
  }
  return rows;
}

export async function s2(ctx: Ctx): Promise<ScenarioResult> {
  const p = await prepare(ctx);
  ctx.shared.s2 = p;
  const counts = await tableCounts(ctx.root);
  const rows = await measureAt(ctx, p, true, "");
  const plans = await explainAll(ctx, p);
  const notes = [
    ...p.notes,
    `data: ${Object.entries(counts)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
  ];
  for (const [op, list] of Object.entries(plans)) list.forEach((pl, i) => notes.push(`EXPLAIN ${op} statement ${i + 1}: ${planVerdict(pl)}`));
  return { id: "S2", title: "nested read", rows, notes, plans, counts, scale: [{ orders: counts.orders, plans }] };
}

/** S2 again at each larger scale (after the other scenarios: it only adds history). */
export async function s2Scale(ctx: Ctx, first: ScenarioResult): Promise<ScenarioResult> {
  const p: Prepared = ctx.shared.s2;
  if (!p) throw new Error("S2 did not run");
  const o = ctx.opts;
  const size = { coffees: o.coffees, customers: o.customers, orders: o.orders, queue: o.queue, pending: o.pending, reviewsPerCoffee: o.reviewsPerCoffee };
  const points: Array<{
    scale: number;
    orders: number;
    rows: Row[];
    plans: Record<string, Plans[]>;
    generateSeconds: number;
    createOrder?: Summary;
    probeOrders?: number;
  }> = [];
  const firstOrders = (first.counts as Record<string, number> | undefined)?.orders ?? o.orders;
  points.push({
    scale: 1,
    orders: firstOrders,
    rows: first.rows,
    plans: first.plans as Record<string, Plans[]>,
    generateSeconds: 0,
    probeOrders: (await tableCounts(ctx.root)).orders,
    createOrder: await vacuumForProbe(ctx).then(() => createOrderProbe(ctx, o.probeCalls)),
  });
  let generated = o.orders;
  const rows: Row[] = [];
  for (const scale of o.scales.filter((s) => s > 1)) {
    const target = o.orders * scale;
    const t0 = Date.now();
    ctx.log(`S2 scale ${scale}x: generating orders ${generated + 1}..${target}`);
    // In slices, so one statement never holds millions of rows in memory.
    for (let from = generated + 1; from <= target; from += 200_000) await generateOrders(ctx.root, size, from, Math.min(target, from + 199_999));
    generated = target;
    await analyze(ctx.root);
    const generateSeconds = (Date.now() - t0) / 1000;
    const counts = await tableCounts(ctx.root);
    const r = await measureAt(ctx, p, o.profile === "full", ` @${scale}x`);
    rows.push(...r);
    points.push({
      scale,
      orders: counts.orders,
      rows: r,
      plans: await explainAll(ctx, p),
      generateSeconds,
      probeOrders: counts.orders,
      createOrder: await vacuumForProbe(ctx).then(() => createOrderProbe(ctx, o.probeCalls)),
    });
  }
  const notes: string[] = [];
  const slopes: Record<string, unknown> = {};
  // Per-request cost is 1 / closed-loop throughput; latencies are at each
  // scale's own half-peak rate, so their slope says little: the EXPLAIN time
  // (unloaded, the statement alone) is the other measure.
  for (const op of ["BaristaQueue", "CoffeeDetail"] as const) {
    for (const variant of ["service", "floor"] as const) {
      const pts = points.map((pt) => {
        const row = pt.rows.find((r) => r.case.startsWith(op) && r.variant === variant);
        return { orders: pt.orders, ops: row?.opsPerSec ?? null, p50: row?.p50 ?? null };
      });
      const slopeCost = logLogSlope(pts.map((x) => ({ x: x.orders, y: x.ops ? 1 / x.ops : null })));
      slopes[`${op} ${variant}: cost per request (1 / req/s)`] = { points: pts, slope: slopeCost };
      notes.push(
        `${op} ${variant}: ${pts.map((x) => `${x.orders} orders: ${sig(x.ops)} req/s`).join("; ")}; cost per request grows as orders^${sig(slopeCost, 2) ?? "n/a"} (0 = flat, 1 = linear)`,
      );
    }
    const sqlPts = points.map((pt) => ({ x: pt.orders, y: pt.plans[op]?.[0]?.custom.executionMs ?? null }));
    const slopeSql = logLogSlope(sqlPts);
    slopes[`${op} SQL: EXPLAIN ANALYZE time (custom plan)`] = { points: sqlPts, slope: slopeSql };
    notes.push(
      `${op} SQL alone (EXPLAIN ANALYZE): ${sqlPts.map((x) => `${x.x} orders: ${x.y?.toFixed(2)} ms`).join("; ")}; grows as orders^${sig(slopeSql, 2) ?? "n/a"}`,
    );
  }
  notes.push(
    `create_order() alone, one call at a time, by history size: ${points.map((pt) => `${pt.probeOrders} orders: p50 ${pt.createOrder?.p50.toFixed(1)} ms`).join("; ")}; log-log slope ${
      sig(logLogSlope(points.map((pt) => ({ x: pt.probeOrders ?? pt.orders, y: pt.createOrder?.p50 ?? null }))), 2) ?? "n/a"
    } (vacuumed first)`,
  );
  for (const pt of points) {
    for (const [op, list] of Object.entries(pt.plans)) {
      list.forEach((pl, i) => notes.push(`EXPLAIN at ${pt.orders} orders, ${op} statement ${i + 1}: ${planVerdict(pl)}`));
    }
    if (pt.generateSeconds) notes.push(`generating up to ${pt.orders} orders took ${pt.generateSeconds.toFixed(1)} s`);
  }
  return {
    id: "S2x",
    title: "nested read at larger scales",
    rows,
    notes,
    slopes,
    points: points.map((p) => ({ scale: p.scale, orders: p.orders, plans: p.plans, createOrderMs: p.createOrder, probeOrders: p.probeOrders })),
  };
}
