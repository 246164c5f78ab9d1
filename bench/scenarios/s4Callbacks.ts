// S4 callback ingest: signed payment callbacks, each for a distinct PENDING
// order. Floor: the service's own app_private.process_payment_callback() as
// cafe_system, through pg behind node:http, after the same token and
// signature checks. Afterwards, for every variant: every accepted callback's
// order is PAID or later, has exactly one processed key and its three jobs
// (nothing lost or duplicated).
// The service runs API-only here (the worker runs apart, as when scaled out),
// so the jobs wait for S5. Callbacks (README "Payment callbacks"): shape A
// with the order's id, the customer's e-mail and the exact total, a distinct
// event_id per order, the bearer token and the HMAC-SHA256 signature.
// The `extra` row is the same service's Stripe webhook
// (/payments/stripe/webhook): a payment_intent.succeeded per order, signed
// with the stripe package's generateTestHeaderString at sending time, for
// its own distinct PENDING orders, at the same fixed rate in the latency run.
import { createHmac } from "node:crypto";
import Stripe from "stripe";
import { base, type Ctx, type Row, type ScenarioResult, type Secrets } from "../lib/context.ts";
import { peakThenLatency } from "../lib/measureVariants.ts";
import { captureSql, countSql } from "../lib/proc.ts";
import { makePendingOrders } from "../lib/db.ts";
import type { RequestSpec } from "../lib/load.ts";

export interface PendingOrder {
  id: string;
  total: string;
  email: string;
}

export function signedCallback(secrets: Secrets, o: PendingOrder): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ event: "payment.completed", event_id: `bench-${o.id}`, data: { amount: o.total, customer: o.email, order_id: o.id } });
  const signature = `sha256=${createHmac("sha256", secrets.SIGNING_SECRET).update(body).digest("hex")}`;
  return { body, headers: { authorization: `Bearer ${secrets.WEBHOOK_TOKEN}`, "x-signature": signature, "content-type": "application/json" } };
}

/** A Stripe payment_intent.succeeded for the order, signed now as Stripe signs it. */
export function signedStripeEvent(secrets: Secrets, o: PendingOrder): { body: string; headers: Record<string, string> } {
  const minor = Math.round(Number(o.total) * 100);
  const body = JSON.stringify({
    id: `evt_bench_${o.id}`,
    object: "event",
    type: "payment_intent.succeeded",
    data: {
      object: { id: `pi_bench_${o.id.replaceAll("-", "")}`, object: "payment_intent", amount: minor, amount_received: minor, currency: "eur", status: "succeeded", metadata: { order_id: o.id } },
    },
  });
  const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: secrets.STRIPE_WEBHOOK_SECRET });
  return { body, headers: { "stripe-signature": signature, "content-type": "application/json" } };
}

/**
 * A request spec that pays the next order of `orders` with each request and
 * records which orders were sent and which the server accepted ({status:
 * "processed"}), with when (performance.now()) the answer arrived.
 */
export function callbackStream(secrets: Secrets, orders: PendingOrder[], stripe = false) {
  let next = 0;
  const sent: string[] = [];
  const accepted = new Map<string, number>();
  const refused: string[] = [];
  const spec: RequestSpec = {
    path: stripe ? "/payments/stripe/webhook" : "/orders/payment-callback",
    setup: () => {
      // Past the end the last order repeats: its duplicates answer "duplicate" and count as bad.
      const o = orders[Math.min(next++, orders.length - 1)]!;
      sent.push(o.id);
      return stripe ? signedStripeEvent(secrets, o) : signedCallback(secrets, o);
    },
    check: (status, body) => {
      const parsed = status === 200 && body.startsWith("{") ? JSON.parse(body) : null;
      if (parsed?.status === "processed" && parsed.orderId) {
        accepted.set(parsed.orderId, performance.now());
        return true;
      }
      refused.push(`${status} ${body.slice(0, 120)}`);
      return false;
    },
  };
  return { spec, sent, accepted, refused, used: () => Math.min(next, orders.length) };
}

export async function checkIntegrity(ctx: Ctx, sent: string[], accepted: string[]) {
  const { rows } = await ctx.root.query(
    `select o.id::text, o.status::text,
            (select count(*)::int from app_private.processed_payment_keys k where k.order_id = o.id) as keys,
            (select count(*)::int from graphile_worker._private_jobs j
              where j.key in ('start_preparation:' || o.id, 'update_inventory:' || o.id)
                 or j.key in (select 'notification__send_webhook:' || n.id from app_public.notifications n
                               where n.order_id = o.id and n.kind = 'payment_received')) as jobs
     from app_public.orders o where o.id = any($1::uuid[])`,
    [[...new Set(sent)]],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const acc = accepted.map((id) => byId.get(id));
  const notPaid = acc.filter((r) => !r || r.status === "PENDING" || r.status === "CANCELLED").length;
  const notOneKey = acc.filter((r) => !r || r.keys !== 1).length;
  const severalKeys = rows.filter((r) => r.keys > 1).length;
  const noJobs = acc.filter((r) => !r || r.jobs !== 3).length;
  return {
    sent: new Set(sent).size,
    accepted: accepted.length,
    acceptedNotPaid: notPaid,
    acceptedWithoutOneKey: notOneKey,
    sentWithSeveralKeys: severalKeys,
    acceptedWithoutThreeJobs: noJobs,
    lost: notPaid + noJobs,
    duplicated: Math.max(notOneKey - notPaid, 0) + severalKeys,
  };
}

export async function s4(ctx: Ctx): Promise<ScenarioResult> {
  const n = ctx.opts.s4Orders;
  const all = await makePendingOrders(ctx.root, n * 3 + 3, "bench s4");
  const svcOrders: PendingOrder[] = all.slice(0, n);
  const floorOrders: PendingOrder[] = all.slice(n, 2 * n);
  const stripeOrders: PendingOrder[] = all.slice(2 * n, 3 * n);
  const probe = all.slice(3 * n);
  const svc = base(ctx.service.port);
  const floor = base(ctx.floorSql.port);

  // One callback each with SQL capture.
  const post = (url: string, o: PendingOrder) => {
    const { body, headers } = signedCallback(ctx.secrets, o);
    return fetch(url + "/orders/payment-callback", { method: "POST", body, headers }).then(async (r) => ({ status: r.status, text: await r.text() }));
  };
  const cap = await captureSql(ctx.service, () => post(svc, probe[0]!));
  if (cap.result.status !== 200 || !cap.result.text.includes("processed")) throw new Error(`service callback failed: ${cap.result.status} ${cap.result.text.slice(0, 300)}`);
  const fcap = await captureSql(ctx.floorSql, () => post(floor, probe[1]!));
  if (fcap.result.status !== 200 || !fcap.result.text.includes("processed")) throw new Error(`floor callback failed: ${fcap.result.status} ${fcap.result.text.slice(0, 300)}`);

  const stripePost = (o: PendingOrder) => {
    const { body, headers } = signedStripeEvent(ctx.secrets, o);
    return fetch(svc + "/payments/stripe/webhook", { method: "POST", body, headers }).then(async (r) => ({ status: r.status, text: await r.text() }));
  };
  const scap = await captureSql(ctx.service, () => stripePost(probe[2]!));
  if (scap.result.status !== 200 || !scap.result.text.includes("processed")) throw new Error(`stripe webhook failed: ${scap.result.status} ${scap.result.text.slice(0, 300)}`);

  const svcStream = callbackStream(ctx.secrets, svcOrders);
  const floorStream = callbackStream(ctx.secrets, floorOrders);
  const stripeStream = callbackStream(ctx.secrets, stripeOrders, true);
  const rows: Row[] = await peakThenLatency(
    ctx,
    "S4",
    "signed payment callback, distinct PENDING orders",
    [
      {
        variant: "service",
        label: "cafe-api POST /orders/payment-callback",
        baseUrl: svc,
        pid: ctx.service.proc.pid,
        request: svcStream.spec,
        sql: countSql(cap.queries),
      },
      {
        variant: "floor",
        label: "node:http + pg: the service's process_payment_callback() in one transaction",
        baseUrl: floor,
        pid: ctx.floorSql.proc.pid,
        request: floorStream.spec,
        sql: countSql(fcap.queries),
      },
      {
        variant: "extra",
        label: "cafe-api POST /payments/stripe/webhook (Stripe-signed payment_intent.succeeded)",
        baseUrl: svc,
        pid: ctx.service.proc.pid,
        request: stripeStream.spec,
        sql: countSql(scap.queries),
      },
    ],
    "callbacks/s",
  );
  const integrity = {
    service: await checkIntegrity(ctx, svcStream.sent, [...svcStream.accepted.keys()]),
    floor: await checkIntegrity(ctx, floorStream.sent, [...floorStream.accepted.keys()]),
    stripe: await checkIntegrity(ctx, stripeStream.sent, [...stripeStream.accepted.keys()]),
  };
  const streams = { service: svcStream, floor: floorStream, extra: stripeStream };
  const orderLists = { service: svcOrders, floor: floorOrders, extra: stripeOrders };
  for (const r of rows) {
    const variant = r.variant as "service" | "floor" | "extra";
    const i = integrity[variant === "extra" ? "stripe" : variant];
    r.notes = [...(r.notes ?? []), `sent ${i.sent}, accepted ${i.accepted}, lost ${i.lost}, duplicated ${i.duplicated}`];
    if (streams[variant].used() >= orderLists[variant].length) r.notes.push("ran out of distinct orders: raise s4Orders in bench/lib/options.ts");
    const refused = streams[variant].refused;
    if (refused.length) r.notes.push(`${refused.length} refused, e.g. ${refused.slice(0, 2).join(" | ")}`);
  }
  const { rows: deliveries } = await ctx.root.query("select count(*)::int as n from app_private.payment_deliveries where received_at > now() - interval '60 seconds'");
  ctx.shared.s4 = {
    serviceAccepted: [...svcStream.accepted.keys()],
    floorAccepted: [...floorStream.accepted.keys()],
    leftover: svcOrders.slice(svcStream.used()),
  };
  return {
    id: "S4",
    title: "callback ingest",
    rows,
    integrity,
    notes: [
      `integrity: service ${JSON.stringify(integrity.service)}; floor ${JSON.stringify(integrity.floor)}; stripe ${JSON.stringify(integrity.stripe)}`,
      `payment_deliveries rows in the last 60 s at the end: ${deliveries[0].n} (the burst rule counts them on every delivery)`,
      "the service answers only after its transaction commits, so an accepted callback is durable",
    ],
  };
}
