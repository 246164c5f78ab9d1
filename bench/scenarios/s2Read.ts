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
import { ROOT, captureSql, countSql, isControl, type CapturedQuery } from "../lib/proc.ts";
import { analyze, generateOrders, tableCounts } from "../lib/db.ts";
import { explainStatement, planVerdict, type Plans } from "../lib/explain.ts";
import { logLogSlope, sig } from "../lib/stats.ts";
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
  const itemsSel = named(items.type) === "OrderItemConnection" ? `${items.name}(orderBy: [POSITION_ASC]) { nodes { ...QueueItem } }` : `${items.name} { ...QueueItem }`;
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

type Op = "BaristaQueue" | "CoffeeDetail";
const OPS: Op[] = ["BaristaQueue", "CoffeeDetail"];

interface Prepared {
  variants: Record<Op, VariantSpec[]>;
  statements: Record<Op, { settings: Array<[string, string]>; list: CapturedQuery[] }>;
  notes: string[];
}

async function prepare(ctx: Ctx): Promise<Prepared> {
  const headers = { BaristaQueue: { authorization: `Bearer ${ctx.tokens.barista}` }, CoffeeDetail: { authorization: `Bearer ${ctx.tokens.alice}` } };
  const stockDocs = await stockDocuments(base(ctx.stock.port), headers.BaristaQueue);
  const [queue, mobile] = [ops("barista.graphql"), ops("mobile.graphql")];
  // Each variant's request for one coffee id (BaristaQueue takes none).
  const variants = [
    { variant: "service", child: ctx.service, label: () => "cafe-api", path: () => "/graphql" },
    { variant: "extra", child: ctx.service, label: () => "cafe-api, trusted document by documentId", path: () => "/graphql" },
    { variant: "floor", child: ctx.floorSql, label: () => "node:http + pg, the service's SQL", path: (op: Op) => `/s2/${op}` },
    {
      variant: "peer",
      child: ctx.stock,
      label: (op: Op) => `stock PostGraphile V5: ${op === "BaristaQueue" ? "allOrders(condition: {status}) x2 + order_items relation" : "coffeeByRowId + relations"}`,
      path: () => "/graphql",
    },
  ] as const;
  const bodies: Record<Op, Record<(typeof variants)[number]["variant"], (id: string) => string>> = {
    BaristaQueue: { service: () => gqlBody(queue, "BaristaQueue"), extra: () => trustedBody("BaristaQueue"), floor: () => "{}", peer: () => gqlBody(stockDocs.queue) },
    CoffeeDetail: {
      service: (id) => gqlBody(mobile, "CoffeeDetail", { id }),
      extra: (id) => trustedBody("CoffeeDetail", { id }),
      floor: (id) => JSON.stringify({ variables: { id } }),
      peer: (id) => gqlBody(stockDocs.coffee, undefined, { id }),
    },
  };
  const sample = ctx.coffeeIds[0]!;
  const send = (v: (typeof variants)[number], op: Op) => postJson(base(v.child.port), v.path(op), bodies[op][v.variant](sample), headers[op]);
  const captured = (v: (typeof variants)[number], op: Op) => captureSql(v.child, () => send(v, op));
  const notes: string[] = [];

  // The service's SQL, one request each; the same by documentId answers the same.
  const svc = { BaristaQueue: await captured(variants[0], "BaristaQueue"), CoffeeDetail: await captured(variants[0], "CoffeeDetail") };
  const statements = {} as Prepared["statements"];
  for (const op of OPS) {
    const { result, queries } = svc[op];
    if (result.status !== 200 || result.json?.errors) throw new Error(`${op} failed: ${result.text.slice(0, 300)}`);
    const trusted = await send(variants[1], op);
    if (!isDeepStrictEqual(trusted.json?.data, result.json.data)) throw new Error(`${op} by documentId answered differently: ${trusted.status} ${trusted.text.slice(0, 300)}`);
    const settings = JSON.parse(String(queries.find((x) => /set_config\(/.test(x.text))?.values[0] ?? "[]"));
    statements[op] = { settings, list: queries.filter((x) => !isControl(x)) };
  }
  const [q, c] = [statements.BaristaQueue.list, statements.CoffeeDetail.list];
  const statement = (x: CapturedQuery) => ({ text: x.text, values: x.values, name: x.name });
  await sendFloorSpec(ctx, {
    BaristaQueue: { orders: statement(q[0]!), extensions: svc.BaristaQueue.result.json.extensions ?? null },
    CoffeeDetail: { select: statement(c[0]!), idIndex: c[0]!.values.indexOf(sample), extensions: svc.CoffeeDetail.result.json.extensions ?? null },
  });
  const named = [...q, ...c].every((x) => x.name);
  notes.push(`the service sends its statements ${named ? "as named prepared statements (after 5 executions PostgreSQL may switch to a generic plan); the floor does the same" : "unnamed"}`);
  if (q.length > 1 || c.length > 1) notes.push(`the service sent more statements than the floor replays (${q.length} and ${c.length}); the floor replays the first one`);
  const orders = svc.BaristaQueue.result.json.data.orders as any[];
  const lines = orders.reduce((n, o) => n + o.items.length, 0);
  notes.push(`BaristaQueue returns ${orders.length} orders with ${lines} lines (${svc.BaristaQueue.result.text.length} bytes) in ${q.length} statement(s); CoffeeDetail in ${c.length} statement(s)`);

  // The floor answers the same JSON; the peer's and the floor's SQL (counts only).
  const sql: Record<string, ReturnType<typeof countSql>> = {};
  for (const op of OPS) {
    sql[`${op} service`] = countSql(svc[op].queries);
    for (const v of [variants[2], variants[3]]) {
      const { result, queries } = await captured(v, op);
      sql[`${op} ${v.variant}`] = countSql(queries);
      if (v.variant === "floor") notes.push(`floor answers the same JSON as the service, ${op}: ${isDeepStrictEqual(result.json, svc[op].result.json) ? "yes" : `NO: ${result.text.slice(0, 200)}`}`);
      else if (result.status !== 200 || result.json?.errors) notes.push(`peer ${op} failed: ${result.text.slice(0, 200)}`);
    }
  }

  const randomCoffee = () => ctx.coffeeIds[Math.floor(Math.random() * ctx.coffeeIds.length)]!;
  const specs = (op: Op): VariantSpec[] =>
    variants.map((v) => ({
      variant: v.variant,
      label: v.label(op),
      baseUrl: base(v.child.port),
      pid: v.child.proc.pid,
      request: {
        path: v.path(op),
        headers: headers[op],
        ...(op === "CoffeeDetail" ? { setup: () => ({ body: bodies[op][v.variant](randomCoffee()) }) } : { body: bodies[op][v.variant]("") }),
      },
      sql: sql[`${op} ${v.variant}`],
    }));
  return { notes, statements, variants: { BaristaQueue: specs("BaristaQueue"), CoffeeDetail: specs("CoffeeDetail") } };
}

async function explainAll(ctx: Ctx, p: Prepared): Promise<Record<string, Plans[]>> {
  const out: Record<string, Plans[]> = {};
  for (const op of OPS) {
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
  const o = ctx.opts;
  const probe = async () => (await vacuumForProbe(ctx), createOrderProbe(ctx, o.probeCalls));
  const firstOrders = (first.counts as Record<string, number>).orders;
  const points = [{ scale: 1, orders: firstOrders, rows: first.rows, plans: first.plans as Record<string, Plans[]>, createOrderMs: await probe() }];
  const rows: Row[] = [];
  const notes: string[] = [];
  for (let i = 1, generated = o.orders; i < o.scales.length; i++) {
    const [scale, target, t0] = [o.scales[i]!, o.orders * o.scales[i]!, Date.now()];
    ctx.log(`S2 scale ${scale}x: generating orders ${generated + 1}..${target}`);
    // In slices, so one statement never holds millions of rows in memory.
    for (let from = generated + 1; from <= target; from += 200_000) await generateOrders(ctx.root, o, from, Math.min(target, from + 199_999));
    generated = target;
    await analyze(ctx.root);
    const orders = (await tableCounts(ctx.root)).orders!;
    notes.push(`generating up to ${orders} orders took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const r = await measureAt(ctx, p, o.profile === "full", ` @${scale}x`);
    rows.push(...r);
    points.push({ scale, orders, rows: r, plans: await explainAll(ctx, p), createOrderMs: await probe() });
  }
  // Per-request cost is 1 / closed-loop throughput (latencies are at each
  // scale's own half-peak rate, so their slope says little); the EXPLAIN
  // time (the statement alone, unloaded) is the other measure.
  type Pts = Array<{ x: number; y: number | null }>;
  const slopes: Record<string, { points: Pts; slope: number | null }> = {};
  const slope = (name: string, pts: Pts) => (slopes[name] = { points: pts, slope: logLogSlope(pts) }).slope;
  const list = (pts: Pts, unit: string) => pts.map((x) => `${x.x} orders: ${sig(x.y)} ${unit}`).join("; ");
  for (const op of ["BaristaQueue", "CoffeeDetail"] as const) {
    for (const variant of ["service", "floor"] as const) {
      const ops = points.map((pt) => ({ x: pt.orders, y: pt.rows.find((r) => r.case.startsWith(op) && r.variant === variant)?.opsPerSec ?? null }));
      const s = slope(
        `${op} ${variant}: cost per request (1 / req/s)`,
        ops.map((x) => ({ x: x.x, y: x.y && 1 / x.y })),
      );
      notes.push(`${op} ${variant}: ${list(ops, "req/s")}; cost per request grows as orders^${sig(s, 2) ?? "n/a"} (0 = flat, 1 = linear)`);
    }
    const sql = points.map((pt) => ({ x: pt.orders, y: pt.plans[op]?.[0]?.custom.executionMs ?? null }));
    notes.push(`${op} SQL alone (EXPLAIN ANALYZE): ${list(sql, "ms")}; grows as orders^${sig(slope(`${op} SQL: EXPLAIN ANALYZE time (custom plan)`, sql), 2) ?? "n/a"}`);
  }
  const probes = points.map((pt) => ({ x: pt.orders, y: pt.createOrderMs.p50 }));
  notes.push(`create_order() alone, one call at a time, by history size (vacuumed first), p50: ${list(probes, "ms")}; log-log slope ${sig(logLogSlope(probes), 2) ?? "n/a"}`);
  for (const pt of points) for (const [op, l] of Object.entries(pt.plans)) l.forEach((pl, i) => notes.push(`EXPLAIN at ${pt.orders} orders, ${op} statement ${i + 1}: ${planVerdict(pl)}`));
  return { id: "S2x", title: "nested read at larger scales", rows, notes, slopes, points: points.map(({ rows: _rows, ...pt }) => pt) };
}
