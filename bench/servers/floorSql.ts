// The floors of S2, S3 and S4: hand-written node:http + pg endpoints.
//
// S2: runs the very SQL the service generated for BaristaQueue and
// CoffeeDetail (captured from the service by bench/run.ts and sent here over
// IPC), in the same transaction shape (BEGIN, set_config of role and claims,
// the SELECT, COMMIT; BaristaQueue's second statement for the coffee names
// too), and builds the same JSON by hand.
// S3: the service's own create_order() call and the payload's lines, in one
// transaction as the customer.
// S4: the service's own app_private.process_payment_callback() as
// cafe_system, after checking the token and the signature.
import http from "node:http";
import { createHmac, timingSafeEqual, createHash } from "node:crypto";
import pg from "pg";
import { parse as parseArray } from "postgres-array";
import { findArray, findColumn, selectLayout } from "../lib/sqlLayout.ts";
import { asSystem, inTransaction } from "../../src/db/asSystem.ts";
import { pgSettingsFor, stopOn } from "./child.ts";

const port = Number(process.env.PORT ?? 0);
const poolSize = Number(process.env.DATABASE_POOL_SIZE ?? 10);
const webhookToken = process.env.WEBHOOK_TOKEN!;
const signingSecret = process.env.SIGNING_SECRET!;
const reader = new pg.Pool({ connectionString: process.env.BENCH_AUTHENTICATOR_URL, max: poolSize });
const owner = new pg.Pool({ connectionString: process.env.BENCH_OWNER_URL, max: poolSize });

interface Statement {
  text: string;
  values: unknown[];
  /** The service's statement name: the floor prepares it the same way. */
  name?: string;
}
interface Spec {
  BaristaQueue?: { orders: Statement; extensions: unknown };
  CoffeeDetail?: { select: Statement; idIndex: number; extensions: unknown };
  PlaceOrder?: { extensions: unknown };
}
let spec: Spec = {};
process.on("message", (m: any) => {
  if (m?.type === "spec") {
    spec = m.spec;
    layouts = {};
    process.send?.({ type: "spec-ok" });
  }
});

const SET_CONFIG = "select set_config(el->>0, el->>1, true) from json_array_elements($1::json) el";

const settingsFor = (authorization: string | undefined) => Object.entries(pgSettingsFor(authorization));

/** A pooled connection, in the service's transaction shape (BEGIN, set_config of role and claims, ..., COMMIT). */
async function withSettings<T>(pool: pg.Pool, settings: Array<[string, string]> | null, fn: (c: pg.ClientBase) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    return await inTransaction(client, settings && { text: SET_CONFIG, values: [JSON.stringify(settings)] }, fn);
  } finally {
    client.release();
  }
}

const num = (v: string | null) => (v === null || v === undefined ? null : Number(v));
const int = (v: string | null) => (v === null || v === undefined ? null : parseInt(v, 10));
const bool = (v: string | null) => (v === null || v === undefined ? null : v === "true" || v === "t");
const arr = (v: string | null) => (v === null || v === undefined ? null : (parseArray(v) as any[]));
const at = (row: any[], i: number) => (i < 0 ? null : row[i]);

// Where each field of the two documents comes from, found in the captured
// SQL's select list (bench/lib/sqlLayout.ts), not assumed.
function queueLayout(s: NonNullable<Spec["BaristaQueue"]>) {
  const l = selectLayout(s.orders.text);
  const col = (alias: string, column: string) => findColumn(l, { aliases: [alias], column });
  const items = findArray(l, (a) => /items/.test(a));
  const item = (test: (alias: string) => boolean, column: string) => (l[items]?.elements ?? []).findIndex((e) => e && test(e.alias) && e.column === column);
  const isItem = (a: string) => /items/.test(a);
  return {
    ...{ id: col("orders", "id"), status: col("orders", "status"), timeOrdered: col("orders", "time_ordered"), notes: col("orders", "notes") },
    ...{ total: col("orders", "total"), customer: col("customers", "name"), barista: col("baristas", "name"), items },
    quantity: item(isItem, "quantity"),
    special: item(isItem, "special_instructions"),
    coffeeName: item((a) => a === "coffees", "name"),
  };
}

function coffeeLayout(text: string) {
  const l = selectLayout(text);
  const col = (aliases: string[], column: string) => findColumn(l, { aliases, column });
  const coffee = (column: string) => col(["coffee_by_id", "coffees", "coffee"], column);
  const [ingredients, reviews] = [findArray(l, (a) => /ingredient/.test(a)), findArray(l, (a) => /review/.test(a))];
  const el = (array: number, column: string) => (l[array]?.elements ?? []).findIndex((e) => e?.column === column);
  return {
    ...{ id: coffee("id"), name: coffee("name"), price: coffee("price"), roast: coffee("roast"), description: coffee("description"), category: coffee("category") },
    ...{ ingredients, iName: el(ingredients, "name"), iOrganic: el(ingredients, "organic"), iAllergens: el(ingredients, "allergens") },
    ...{ reviews, rRating: el(reviews, "rating"), rComment: el(reviews, "comment") },
    ...{ rName: col(["roasters"], "name"), rLocation: col(["roasters"], "location"), rRating2: col(["roasters"], "sustainability_rating") },
  };
}
let layouts: { queue?: ReturnType<typeof queueLayout>; coffee?: ReturnType<typeof coffeeLayout> } = {};

async function baristaQueue(req: http.IncomingMessage) {
  const s = spec.BaristaQueue!;
  const L = (layouts.queue ??= queueLayout(s));
  const settings = settingsFor(req.headers.authorization);
  const rows = await withSettings(
    reader,
    settings,
    async (c) => (await c.query({ text: s.orders.text, values: s.orders.values, rowMode: "array", ...(s.orders.name ? { name: s.orders.name } : {}) })).rows,
  );
  const orders = rows.map((r: any[]) => ({
    id: at(r, L.id),
    status: at(r, L.status),
    timeOrdered: at(r, L.timeOrdered),
    notes: at(r, L.notes),
    total: num(at(r, L.total)),
    items: (arr(at(r, L.items)) ?? []).map((i: any[]) => ({ coffee: { name: at(i, L.coffeeName) }, quantity: int(at(i, L.quantity)), specialInstructions: at(i, L.special) })),
    customer: at(r, L.customer) === null ? null : { name: at(r, L.customer) },
    barista: at(r, L.barista) === null ? null : { name: at(r, L.barista) },
  }));
  return { data: { orders }, ...(s.extensions ? { extensions: s.extensions } : {}) };
}

async function coffeeDetail(req: http.IncomingMessage, body: any) {
  const s = spec.CoffeeDetail!;
  const L = (layouts.coffee ??= coffeeLayout(s.select.text));
  const values = [...s.select.values];
  values[s.idIndex] = body?.variables?.id;
  const settings = settingsFor(req.headers.authorization);
  const rows = await withSettings(reader, settings, async (c) => (await c.query({ text: s.select.text, values, rowMode: "array", ...(s.select.name ? { name: s.select.name } : {}) })).rows);
  const r = rows[0] as any[] | undefined;
  const coffee =
    !r || at(r, L.id) === null
      ? null
      : {
          id: at(r, L.id),
          name: at(r, L.name),
          price: num(at(r, L.price)),
          roast: at(r, L.roast),
          description: at(r, L.description),
          category: at(r, L.category),
          ingredients: (arr(at(r, L.ingredients)) ?? []).map((i: any[]) => ({
            name: at(i, L.iName),
            organic: bool(at(i, L.iOrganic)),
            allergens: arr(at(i, L.iAllergens)),
          })),
          roaster: at(r, L.rName) === null ? null : { name: at(r, L.rName), location: at(r, L.rLocation), sustainabilityRating: num(at(r, L.rRating2)) },
          reviews: (arr(at(r, L.reviews)) ?? []).map((i: any[]) => ({ rating: int(at(i, L.rRating)), comment: at(i, L.rComment) })),
        };
  return { data: { coffee }, ...(s.extensions ? { extensions: s.extensions } : {}) };
}

const CREATE_ORDER = `
select o.id, o.total::text, o.status::text,
       to_char(o.estimated_ready_time, 'YYYY-MM-DD"T"HH24:MI:SS.USTZH:TZM')
  from app_public.create_order($1::jsonb, $2::text) o`;
const ORDER_LINES = `
select c.name, i.quantity, i.special_instructions
  from app_public.order_items i join app_public.coffees c on c.id = i.coffee_id
 where i.order_id = $1 order by i.position`;

/**
 * The service's own SQL function, create_order(), then the lines the
 * document asks for, in ONE transaction as the customer (role and claims as
 * the service sets them): what a hand-written server pays for the same rules.
 */
async function placeOrder(req: http.IncomingMessage, body: any) {
  const settings = settingsFor(req.headers.authorization);
  const input = body?.variables?.input ?? {};
  const items = (input.items ?? []).map((i: any) => ({ coffee_id: i.coffeeId, quantity: i.quantity, special_instructions: i.specialInstructions ?? null }));
  const { order, lines } = await withSettings(reader, settings, async (c) => {
    const order = (await c.query({ name: "floor_create_order", text: CREATE_ORDER, values: [JSON.stringify(items), input.notes ?? null], rowMode: "array" })).rows[0];
    const lines = (await c.query({ name: "floor_order_lines", text: ORDER_LINES, values: [order[0]], rowMode: "array" })).rows;
    return { order, lines };
  });
  const createOrder = {
    id: order[0],
    total: num(order[1]),
    status: order[2],
    estimatedReadyTime: order[3],
    items: lines.map((l: any[]) => ({ coffee: { name: l[0] }, quantity: l[1], specialInstructions: l[2] })),
  };
  return { data: { createOrder }, ...(spec.PlaceOrder?.extensions ? { extensions: spec.PlaceOrder.extensions } : {}) };
}

function signatureOk(header: string | undefined, body: Buffer): boolean {
  const m = /^sha256=([0-9a-fA-F]{64})$/.exec(header?.trim() ?? "");
  if (!m) return false;
  return timingSafeEqual(Buffer.from(m[1]!, "hex"), createHmac("sha256", signingSecret).update(body).digest());
}

async function paymentCallback(req: http.IncomingMessage, raw: Buffer): Promise<[number, unknown]> {
  const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1] ?? "";
  const a = createHash("sha256").update(bearer).digest();
  const b = createHash("sha256").update(webhookToken).digest();
  if (!timingSafeEqual(a, b) || !signatureOk(req.headers["x-signature"] as string | undefined, raw)) return [401, { error: { code: "UNAUTHORIZED" } }];
  const body = JSON.parse(raw.toString("utf8"));
  const orderId: string = body.data?.order_id ?? body.order_id;
  const amount: string = String(body.data?.amount ?? body.amount);
  const key = body.idempotency_key ? `idem:${body.idempotency_key}` : body.event_id ? `event:${body.event_id}` : `sha256:${createHash("sha256").update(raw).digest("hex")}`;
  const bodyHash = createHash("sha256").update(raw).digest("hex");
  // The service's own function, in the service's transaction shape (as cafe_system).
  const r = await asSystem(owner, async (c) => {
    const { rows } = await c.query({
      name: "floor_payment_callback",
      text: "select (r).* from (select app_private.process_payment_callback($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) as r) x",
      values: [req.socket.remoteAddress ?? "unknown", key, bodyHash, "payment.completed", null, orderId, body.data?.customer ?? null, amount, null, null],
    });
    return rows[0];
  });
  if (r.code) return [r.http_status, { error: { code: r.code, message: r.message } }];
  return [200, { status: r.status, ...(r.order_id ? { orderId: r.order_id } : null) }];
}

function send(res: http.ServerResponse, status: number, body: unknown) {
  const payload = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(payload) });
  res.end(payload);
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", async () => {
    const raw = Buffer.concat(chunks);
    try {
      const url = req.url ?? "/";
      if (url === "/orders/payment-callback") {
        const [status, body] = await paymentCallback(req, raw);
        return send(res, status, body);
      }
      const body = raw.length ? JSON.parse(raw.toString("utf8")) : {};
      if (url === "/s2/BaristaQueue") return send(res, 200, await baristaQueue(req));
      if (url === "/s2/CoffeeDetail") return send(res, 200, await coffeeDetail(req, body));
      if (url === "/s3/PlaceOrder") return send(res, 200, await placeOrder(req, body));
      send(res, 404, { error: "no such route" });
    } catch (e) {
      send(res, 500, { errors: [{ message: (e as Error).message }] });
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, "127.0.0.1", () => process.send?.({ ready: true, port: (server.address() as { port: number }).port }));
stopOn(async () => {
  server.close();
  server.closeAllConnections();
  await Promise.allSettled([reader.end(), owner.end()]);
});
