// S3 write: createOrder with 3 lines as a customer (PlaceOrder). Floor: the
// service's own SQL function, create_order(), and a read of the lines the
// document asks for, in one transaction through pg behind node:http: the
// same rules, without GraphQL.
// Stock is raised first so no order is refused; open orders made by a run are
// closed before the next run, so every run starts from the same data.
import { readFileSync } from "node:fs";
import path from "node:path";
import { base, gqlBody, postJson, sendFloorSpec, type Ctx, type ScenarioResult } from "../lib/context.ts";
import { peakThenLatency } from "../lib/measureVariants.ts";
import { ROOT, captureSql, countSql } from "../lib/proc.ts";
import pg from "pg";
import { closeBenchOrders, endTriggerlessLoad, makePendingOrders } from "../lib/db.ts";
import { summarize, type Summary } from "../lib/stats.ts";

const SET_CONFIG = "select set_config(el->>0, el->>1, true) from json_array_elements($1::json) el";

/** Vacuums what create_order() reads, and the catalogs (where a temporary table per call would leave dead rows). */
export async function vacuumForProbe(ctx: Ctx): Promise<void> {
  for (const t of ["app_public.orders", "app_public.order_items", "pg_catalog.pg_class", "pg_catalog.pg_attribute", "pg_catalog.pg_type", "pg_catalog.pg_depend"]) {
    await ctx.root.query(`vacuum analyze ${t}`);
  }
}

async function createOrderProbeKeepingOpen(ctx: Ctx): Promise<Summary> {
  return probe(ctx, ctx.opts.probeCalls, false);
}

/**
 * create_order() timed one call at a time through pg, as a customer, in the
 * service's transaction shape: what the SQL function costs with no
 * concurrency, for the open orders and the history present now.
 */
export async function createOrderProbe(ctx: Ctx, calls: number): Promise<Summary> {
  return probe(ctx, calls, true);
}

async function probe(ctx: Ctx, calls: number, close: boolean): Promise<Summary> {
  await ctx.root.query("update app_public.stock_items set current_stock = 99999999 where current_stock < 99999999");
  const c = new pg.Client({ connectionString: ctx.db.urls.authenticator });
  await c.connect();
  const customer = ctx.tokens.customers[0]!;
  const settings = JSON.stringify([
    ["role", "cafe_customer"],
    ["jwt.claims.user_id", customer.id],
    ["jwt.claims.role", "customer"],
  ]);
  const times: number[] = [];
  try {
    for (let i = 0; i < calls + 2; i++) {
      const items = [1, 2, 3].map((k) => ({
        coffee_id: ctx.coffeeIds[(i * 7 + k * 13) % ctx.coffeeIds.length],
        quantity: 1 + (k % 2),
        special_instructions: null,
      }));
      const t = performance.now();
      await c.query("begin");
      await c.query(SET_CONFIG, [settings]);
      await c.query("select id from app_public.create_order($1::jsonb, $2::text)", [JSON.stringify(items), "bench probe"]);
      await c.query("commit");
      if (i >= 2) times.push(performance.now() - t);
    }
  } finally {
    await c.end();
  }
  if (close) await closeBenchOrders(ctx.root);
  else {
    await ctx.root.query("set session_replication_role = replica; update app_public.orders set status = 'COMPLETED', inventory_taken_at = now() where notes = 'bench probe' and status = 'PENDING'");
    await endTriggerlessLoad(ctx.root);
  }
  return summarize(times);
}

export async function s3(ctx: Ctx): Promise<ScenarioResult> {
  const doc = readFileSync(path.join(ROOT, "contract/operations/mobile.graphql"), "utf8");
  await ctx.root.query("update app_public.stock_items set current_stock = 99999999");
  const coffees = ctx.coffeeIds;
  let n = 0;
  const nextInput = () => {
    n++;
    const pick = (k: number) => coffees[(n * 7 + k * 13) % coffees.length]!;
    return {
      items: [
        { coffeeId: pick(1), quantity: 1 },
        { coffeeId: pick(2), quantity: 2, specialInstructions: "extra hot" },
        { coffeeId: pick(3), quantity: 1 },
      ],
      notes: "bench s3",
    };
  };
  const customer = () => ctx.tokens.customers[n % ctx.tokens.customers.length]!;
  const svc = base(ctx.service.port);
  const floor = base(ctx.floorSql.port);

  // One request each with SQL capture: statements, round trips, and the
  // extensions the service adds (the floor answers the same JSON shape).
  const cap = await captureSql(ctx.service, () => postJson(svc, "/graphql", gqlBody(doc, "PlaceOrder", { input: nextInput() }), { authorization: `Bearer ${customer().token}` }));
  if (cap.result.status !== 200 || cap.result.json?.errors) throw new Error(`PlaceOrder failed: ${cap.result.text.slice(0, 300)}`);
  await sendFloorSpec(ctx, { PlaceOrder: { extensions: cap.result.json.extensions ?? null } });
  const fcap = await captureSql(ctx.floorSql, () => postJson(floor, "/s3/PlaceOrder", JSON.stringify({ variables: { input: nextInput() } }), { authorization: `Bearer ${customer().token}` }));
  if (fcap.result.status !== 200) throw new Error(`floor PlaceOrder failed: ${fcap.result.text.slice(0, 300)}`);
  const sameShape =
    JSON.stringify(fcap.result.json, (_k, v) => (typeof v === "string" || typeof v === "number" ? typeof v : v)) ===
    JSON.stringify(cap.result.json, (_k, v) => (typeof v === "string" || typeof v === "number" ? typeof v : v));
  const catalogDead = async () =>
    (await ctx.root.query("select coalesce(sum(n_dead_tup), 0)::int as dead from pg_stat_sys_tables where relname in ('pg_class', 'pg_attribute', 'pg_type', 'pg_depend')")).rows[0].dead as number;
  const deadBefore = await catalogDead();
  const reset = async () => {
    await closeBenchOrders(ctx.root);
  };
  const body = () => gqlBody(doc, "PlaceOrder", { input: nextInput() });
  // The same order with 2 options a line: each line a coffee with
  // a Size and a Milk group (the demo chain's MILK_BASED coffees), Large or
  // Small, Oat or Whole, so the options' prices and stock swaps are computed.
  const { rows: optioned } = await ctx.root.query(
    `select c.id,
            array[(select o.id from app_public.coffee_option_groups cg join app_public.option_groups g on g.id = cg.group_id join app_public.options o on o.group_id = g.id
                    where cg.coffee_id = c.id and g.name = 'Size' and o.name = 'Large'),
                  (select o.id from app_public.coffee_option_groups cg join app_public.option_groups g on g.id = cg.group_id join app_public.options o on o.group_id = g.id
                    where cg.coffee_id = c.id and g.name = 'Milk' and o.name = 'Oat'),
                  (select o.id from app_public.coffee_option_groups cg join app_public.option_groups g on g.id = cg.group_id join app_public.options o on o.group_id = g.id
                    where cg.coffee_id = c.id and g.name = 'Size' and o.name = 'Small'),
                  (select o.id from app_public.coffee_option_groups cg join app_public.option_groups g on g.id = cg.group_id join app_public.options o on o.group_id = g.id
                    where cg.coffee_id = c.id and g.name = 'Milk' and o.name = 'Whole')]::text[] as options
       from app_public.coffees c where c.available and c.category = 'MILK_BASED' order by c.id`,
  );
  const withOptions = optioned.filter((r) => r.options.every((o: string | null) => o !== null));
  const optionedBody = () => {
    n++;
    const line = (k: number) => {
      const c = withOptions[(n * 7 + k * 13) % withOptions.length]!;
      return { coffeeId: c.id, quantity: k === 2 ? 2 : 1, optionIds: (n + k) % 2 ? [c.options[0], c.options[1]] : [c.options[2], c.options[3]] };
    };
    return gqlBody(doc, "PlaceOrder", { input: { items: [line(1), line(2), line(3)], notes: "bench s3 options" } });
  };
  const rows = await peakThenLatency(ctx, "S3", "PlaceOrder, 3 lines, as a customer", [
    {
      variant: "service",
      label: "cafe-api createOrder",
      baseUrl: svc,
      pid: ctx.service.proc.pid,
      before: reset,
      sql: countSql(cap.queries),
      request: { path: "/graphql", setup: () => ({ body: body(), headers: { authorization: `Bearer ${customer().token}` } }) },
    },
    ...(withOptions.length
      ? [
          {
            variant: "extra" as const,
            label: "cafe-api createOrder, 3 lines with 2 options each",
            baseUrl: svc,
            pid: ctx.service.proc.pid,
            before: reset,
            request: { path: "/graphql", setup: () => ({ body: optionedBody(), headers: { authorization: `Bearer ${customer().token}` } }) },
          },
        ]
      : []),
    {
      variant: "floor",
      label: "node:http + pg: the service's create_order() and the lines, in one transaction",
      baseUrl: floor,
      pid: ctx.floorSql.proc.pid,
      before: reset,
      sql: countSql(fcap.queries),
      notes: [`answers JSON of the same shape as the service: ${sameShape ? "yes" : "NO"}`],
      request: {
        path: "/s3/PlaceOrder",
        setup: () => ({ body: JSON.stringify({ variables: { input: nextInput() } }), headers: { authorization: `Bearer ${customer().token}` } }),
      },
    },
  ]);
  await reset();
  await new Promise((r) => setTimeout(r, 600)); // statistics reach pg_stat_* within half a second
  const deadAfter = await catalogDead();
  // create_order() alone, one call at a time: first as the runs left the
  // database (dead rows in orders' partial index and in the catalogs), then
  // vacuumed, with more and more open (unpaid) orders.
  const asLeft = await createOrderProbeKeepingOpen(ctx);
  const openProbe: Array<{ extraOpen: number; openOrders: number; ms: Summary }> = [];
  for (const extra of ctx.opts.s3OpenOrders) {
    if (extra > 0) await makePendingOrders(ctx.root, extra, "bench s3open");
    const { rows } = await ctx.root.query("select count(*)::int as n from app_public.orders where inventory_taken_at is null and status not in ('COMPLETED', 'CANCELLED')");
    await vacuumForProbe(ctx);
    openProbe.push({ extraOpen: extra, openOrders: rows[0].n, ms: await createOrderProbeKeepingOpen(ctx) });
  }
  await reset();
  const { rows: open } = await ctx.root.query("select count(*)::int as n from app_public.orders where inventory_taken_at is null and status not in ('COMPLETED', 'CANCELLED')");
  return {
    id: "S3",
    title: "write",
    rows,
    openProbe,
    probeAsLeft: asLeft,
    notes: [
      `each run starts with the base data's open orders (${open[0].n}); orders made by a run are closed before the next`,
      `dead rows in pg_class/pg_attribute/pg_type/pg_depend: ${deadBefore} before S3, ${deadAfter} after (${deadAfter > deadBefore + 100 ? "GROWING: something creates catalog rows per call" : "flat: no temporary tables per call"})`,
      `create_order() alone, one call at a time, right after the runs (not vacuumed): p50 ${asLeft.p50.toFixed(1)} ms; vacuumed, by open (unpaid, stock-reserving) orders: ${openProbe
        .map((p) => `${p.openOrders} open: p50 ${p.ms.p50.toFixed(1)} ms`)
        .join("; ")} (the stock check reads per-ingredient running totals, app_private.stock_reserved: it should not grow with the open orders)`,
      `with 2 options a line / plain: ${(() => {
        const ops = (re: RegExp) => rows.find((r) => re.test(r.label))?.opsPerSec ?? null;
        const a = ops(/options each/);
        const b = ops(/^cafe-api createOrder$/);
        return a && b ? (a / b).toFixed(3) : "n/a";
      })()}x req/s (target >= 0.9)`,
      `service SQL per createOrder: ${cap.queries.filter((q) => !/^\s*(begin|commit)|set_config/i.test(q.text)).length} statements in ${countSql(cap.queries).transactions} transactions`,
    ],
  };
}
