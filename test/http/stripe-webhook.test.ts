import { codes, DEMO } from "../support/client.ts";
import { documentsOf } from "../support/contract.ts";
import { sandbox } from "../support/db.ts";
import { placeOrder, stockedCoffee, stockOf, type StockedCoffee } from "../support/fixtures.ts";
import { startTestService, type TestService } from "../support/service.ts";
import {
  chargeRefundedEvent,
  disputeEvent,
  failedEvent,
  sendStripeEvent,
  startStripeServer,
  stripeEnv,
  stripeEvent,
  stripeSignature,
  STRIPE_WEBHOOK_SECRETS,
  succeededEvent,
  type StripeServer,
} from "../support/stripe.ts";
import { sleep, waitUntil } from "../support/wait.ts";

// Stripe end to end, against a local server that speaks Stripe's
// API and records what it was sent, with events signed by the stripe
// package's own generateTestHeaderString, the real service and the real
// graphile-worker: startPayment, Stripe's webhooks (signature, dedupe,
// order), business refusals answered 2xx with alerts and refunds, refunds
// paid back through the Refunds API exactly once, intents cancelled with
// their orders, and the per-source limits a verified delivery never meets.

let stripe: StripeServer;
let t: TestService;
let box: Awaited<ReturnType<typeof sandbox>>;
let tokens: Record<"alice" | "bob" | "barista" | "admin", string>;
let latte: StockedCoffee;

beforeAll(async () => {
  stripe = await startStripeServer();
  // The per-source limit as in production: a verified delivery must never meet it. Behind
  // the loopback proxy, so a test may send from a source of its own (X-Forwarded-For).
  t = await startTestService({ worker: true, env: { ...stripeEnv(stripe.url), CALLBACK_RATE_LIMIT: "5", TRUST_PROXY: "loopback" } });
  box = await sandbox(t);
  tokens = await t.tokens();
  latte = await stockedCoffee(t, "Stripe latte", "3.80", 10);
  // Retries within the test's time.
  await t.db.query("update app_private.settings set value = 0.2 where key = 'refund_backoff_base_seconds'");
});

afterAll(async () => {
  await t?.db.query("update app_private.settings set value = 30 where key = 'refund_backoff_base_seconds'");
  await t?.db.query("update app_private.settings set text_value = 'EUR' where key = 'currency'");
  await t?.db.query(
    "delete from app_public.payment_alerts where kind in ('unknown_order', 'payment_dispute', 'refund_failed', 'refund_failing', 'amount_mismatch', 'currency_mismatch', 'refund_needed', 'multiple_payments', 'stripe_event_incomplete')",
  );
  await box?.restore();
  await t?.stop();
  await stripe?.close();
});

const startPayment = (orderId: string, token: string | null = tokens.alice) => t.gql(documentsOf("mobile"), { operationName: "StartPayment", variables: { orderId }, token });

const order = (token = tokens.alice, quantity = 2) => placeOrder(t, token, [{ coffeeId: latte.id, quantity }]);

async function statusOf(id: string): Promise<string> {
  return (await t.db.query("select status::text from app_public.orders where id = $1", [id])).rows[0].status;
}

async function alerts(orderId: string | null, kind: string) {
  const { rows } = await t.db.query("select kind, message from app_public.payment_alerts where kind = $1 and order_id is not distinct from $2", [kind, orderId]);
  return rows;
}

async function refundsOf(orderId: string) {
  const { rows } = await t.db.query(
    "select id, status::text, amount::text, amount_minor::int, currency, provider, provider_payment_id, provider_refund_id, attempts, settled_at is not null as settled from app_public.refunds where order_id = $1 order by created_at",
    [orderId],
  );
  return rows;
}

/** startPayment, then Stripe says the intent succeeded: the event as Stripe would send it. */
async function paidIntent(orderId: string) {
  const r = await startPayment(orderId);
  expect(r.body.errors).toBeUndefined();
  return stripe.succeed(r.body.data.startPayment.paymentIntentId);
}

describe("startPayment", () => {
  test("creates a PaymentIntent through Stripe's API: the total in minor units, the café's currency, metadata.order_id, automatic payment methods, an Idempotency-Key of the order and its total; again: the same intent", async () => {
    const o = await order();
    const before = stripe.sent("POST", "/v1/payment_intents").length;
    const r = await startPayment(o.id);
    expect(r.body.errors).toBeUndefined();
    const p = r.body.data.startPayment;
    expect(p).toMatchObject({ amount: 760, currency: "EUR" });
    expect(p.paymentIntentId).toMatch(/^pi_/);
    expect(p.clientSecret).toBe(stripe.intents.get(p.paymentIntentId)!.client_secret);
    const sent = stripe.sent("POST", "/v1/payment_intents").slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.params).toEqual({ amount: "760", currency: "eur", metadata: { order_id: o.id }, automatic_payment_methods: { enabled: "true" } });
    expect(sent[0]!.idempotencyKey).toBe(`order:${o.id}:760:EUR`);

    // Again (the app retried, or the customer came back): the same intent, no new one.
    const again = await startPayment(o.id);
    expect(again.body.data.startPayment).toEqual(p);
    expect(stripe.sent("POST", "/v1/payment_intents").slice(before)).toHaveLength(1);
    const { rows } = await t.db.query("select intent_id, amount_minor::int, currency from app_private.payment_intents where order_id = $1", [o.id]);
    expect(rows).toEqual([{ intent_id: p.paymentIntentId, amount_minor: 760, currency: "EUR" }]);
  });

  test("only the order's own customer or staff at the till, only for a PENDING order", async () => {
    const o = await order();
    expect(codes(await startPayment(o.id, tokens.bob))).toEqual(["NOT_FOUND"]);
    expect(codes(await startPayment(o.id, null))).toEqual(["UNAUTHENTICATED"]);
    expect(codes(await startPayment("not-a-uuid"))).toEqual(["BAD_USER_INPUT"]);
    const till = await startPayment(o.id, tokens.barista);
    expect(till.body.errors).toBeUndefined();
    expect(till.body.data.startPayment.amount).toBe(760);
    await t.gql("mutation($id: ID!) { cancelOrder(id: $id) }", { variables: { id: o.id }, token: tokens.alice });
    const before = stripe.requests.length;
    const cancelled = await startPayment(o.id);
    expect(codes(cancelled)).toEqual(["INVALID_TRANSITION"]);
    expect(cancelled.body.data).toBeNull();
    // Refused in SQL before Stripe is asked anything (the cancel job may talk to it meanwhile).
    expect(stripe.requests.slice(before).filter((r) => r.path === "/v1/payment_intents")).toEqual([]);
  });

  test("Stripe failing (500 on every try): PAYMENT_PROVIDER_ERROR, nothing recorded; the next call makes the payment", async () => {
    const o = await order();
    stripe.failNext(1000);
    try {
      const r = await startPayment(o.id);
      expect(codes(r)).toEqual(["PAYMENT_PROVIDER_ERROR"]);
      expect(r.body.data).toBeNull();
    } finally {
      stripe.failNext(0);
    }
    const { rows } = await t.db.query("select count(*)::int as n from app_private.payment_intents where order_id = $1", [o.id]);
    expect(rows[0].n).toBe(0);
    const again = await startPayment(o.id);
    expect(again.body.errors).toBeUndefined();
    expect(again.body.data.startPayment.amount).toBe(760);
  });

  test("a zero-decimal currency (JPY): the amount is the total in yen", async () => {
    await t.db.query("update app_private.settings set text_value = 'JPY' where key = 'currency'");
    try {
      const yen = await stockedCoffee(t, "Stripe matcha", "500.00", 1);
      const o = await placeOrder(t, tokens.alice, [{ coffeeId: yen.id, quantity: 3 }]);
      const r = await startPayment(o.id);
      expect(r.body.errors).toBeUndefined();
      expect(r.body.data.startPayment).toMatchObject({ amount: 1500, currency: "JPY" });
      expect(stripe.sent("POST", "/v1/payment_intents").at(-1)!.params).toMatchObject({ amount: "1500", currency: "jpy" });
    } finally {
      await t.db.query("update app_private.settings set text_value = 'EUR' where key = 'currency'");
    }
  });

  test("cancelling the order cancels its intent at Stripe, through a job", async () => {
    const o = await order();
    const { paymentIntentId } = (await startPayment(o.id)).body.data.startPayment;
    await t.gql("mutation($id: ID!) { cancelOrder(id: $id) }", { variables: { id: o.id }, token: tokens.alice });
    await waitUntil("the intent cancelled at Stripe", () => stripe.intents.get(paymentIntentId)!.status === "canceled", 15_000);
    expect(stripe.sent("POST", `/v1/payment_intents/${paymentIntentId}/cancel`)).toHaveLength(1);
    await waitUntil("recorded", async () => (await t.db.query("select canceled_at from app_private.payment_intents where intent_id = $1", [paymentIntentId])).rows[0].canceled_at !== null);
  });

  test("an expired order's intent is cancelled too", async () => {
    const o = await order();
    const { paymentIntentId } = (await startPayment(o.id)).body.data.startPayment;
    await t.db.query("update app_public.orders set expires_at = now() - interval '1 second' where id = $1", [o.id]);
    await waitUntil("expired", async () => (await statusOf(o.id)) === "CANCELLED", 15_000);
    await waitUntil("the intent cancelled at Stripe", () => stripe.intents.get(paymentIntentId)!.status === "canceled", 15_000);
  });
});

describe("POST /payments/stripe/webhook", () => {
  test("an order paid end to end: startPayment, payment_intent.succeeded, PREPARING; stock taken once for a copy and for events out of order", async () => {
    const o = await order();
    const stockBefore = (await stockOf(t, [latte.ingredientId]))[latte.ingredientId]!;
    const intent = await paidIntent(o.id);
    const event = succeededEvent(intent);
    // Out of order: a failed attempt's event arrives after the success; an event type the service does not act on.
    const r = await sendStripeEvent(t.url, event);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: "processed", orderId: o.id });
    await waitUntil("PREPARING", async () => (await statusOf(o.id)) === "PREPARING", 15_000);

    const copy = await sendStripeEvent(t.url, event);
    expect(copy.status).toBe(200);
    expect(copy.body.status).toBe("duplicate");
    // The same payment in another event (Stripe resent it as a new event): still once.
    const resent = await sendStripeEvent(t.url, succeededEvent(intent));
    expect(resent.body.status).toBe("duplicate");
    const late = await sendStripeEvent(t.url, failedEvent(intent));
    expect(late.status).toBe(200);
    expect(late.body.status).toBe("ignored");
    const other = await sendStripeEvent(t.url, stripeEvent("payment_intent.created", { id: intent.id, object: "payment_intent" }));
    expect(other.body.status).toBe("ignored");

    await waitUntil("stock taken", async () => (await stockOf(t, [latte.ingredientId]))[latte.ingredientId]! < stockBefore, 15_000);
    await sleep(300);
    expect((await stockOf(t, [latte.ingredientId]))[latte.ingredientId]).toBe(stockBefore - 2 * latte.perCup);
    const { rows } = await t.db.query("select count(*)::int as n from app_public.order_events where order_id = $1 and to_status = 'PAID'", [o.id]);
    expect(rows[0].n).toBe(1);
    const { rows: notified } = await t.db.query("select kind from app_public.notifications where order_id = $1 order by kind", [o.id]);
    expect(notified.map((n) => n.kind)).toEqual(["payment_received"]);
  });

  test("two payment_intent.succeeded events for one intent at the same moment, with different event ids: one payment, no refund (10 rounds, intents from startPayment and made elsewhere)", async () => {
    const rounds: Array<{ answers: string[]; paid: number; refunds: number }> = [];
    for (let i = 0; i < 10; i++) {
      const o = await order();
      // Even rounds: the intent startPayment made; odd: one Stripe made elsewhere, named only by the events.
      const intent = i % 2 === 0 ? await paidIntent(o.id) : { id: `pi_elsewhere${i}${Date.now()}`, amount: 760, currency: "eur", metadata: { order_id: o.id } };
      const answers = await Promise.all([sendStripeEvent(t.url, succeededEvent(intent)), sendStripeEvent(t.url, succeededEvent(intent))]);
      const { rows } = await t.db.query("select count(*)::int as n from app_public.order_events where order_id = $1 and to_status = 'PAID'", [o.id]);
      rounds.push({ answers: answers.map((r) => `${r.status} ${r.body.status}`).sort(), paid: rows[0].n, refunds: (await refundsOf(o.id)).length });
    }
    const doubled = rounds.filter((r) => r.refunds > 0).length;
    expect({ doubled, rounds }).toEqual({ doubled: 0, rounds: Array(10).fill({ answers: ["200 duplicate", "200 processed"], paid: 1, refunds: 0 }) });
  });

  test("payment_intent.payment_failed tells the customer (a notification of its own kind); the order stays PENDING", async () => {
    const o = await order();
    const { paymentIntentId } = (await startPayment(o.id)).body.data.startPayment;
    const r = await sendStripeEvent(t.url, failedEvent(stripe.intents.get(paymentIntentId)!));
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("processed");
    const { rows } = await t.db.query("select kind, customer_id from app_public.notifications where order_id = $1", [o.id]);
    expect(rows).toEqual([{ kind: "payment_failed", customer_id: DEMO.alice.id }]);
    expect(await statusOf(o.id)).toBe("PENDING");
  });

  test("400 for a bad signature, a missing one, a stale timestamp and a body changed after signing; nothing is processed", async () => {
    const o = await order();
    const intent = await paidIntent(o.id);
    const event = succeededEvent(intent);
    const payload = JSON.stringify(event);
    const refusals = [
      await sendStripeEvent(t.url, event, { secret: "whsec_notTheEndpointsSecret000000" }),
      await sendStripeEvent(t.url, event, { signature: null }),
      await sendStripeEvent(t.url, event, { signature: "t=1,v1=deadbeef" }),
      await sendStripeEvent(t.url, event, { timestamp: Math.floor(Date.now() / 1000) - 301 }),
      await sendStripeEvent(t.url, payload.replace(`"amount_received":${intent.amount}`, `"amount_received":1`), { signBytes: payload }),
    ];
    for (const r of refusals) {
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("BAD_SIGNATURE");
    }
    expect(await statusOf(o.id)).toBe("PENDING");
    const { rows } = await t.db.query("select count(*)::int as n from app_private.processed_payment_keys where key = $1", [`stripe:${event.id}`]);
    expect(rows[0].n).toBe(0);
    // The rotation's other secret verifies.
    const second = await sendStripeEvent(t.url, event, { secret: STRIPE_WEBHOOK_SECRETS[1] });
    expect(second.status).toBe(200);
    expect(second.body.status).toBe("processed");
  });

  test("unverified deliveries from one source: 400 up to CALLBACK_RATE_LIMIT (5) a second, then 429 with Retry-After; a verified delivery from that source and from another still 2xx, never counted, never blocked", async () => {
    const o = await order();
    const event = succeededEvent(await paidIntent(o.id));
    const flood = { "x-forwarded-for": "198.51.100.141" };
    const forged = stripeSignature(JSON.stringify(event, null, 2), { secret: "whsec_forged000000000000000000" });
    // Half with a forged signature, half with none (never read past the limit).
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => sendStripeEvent(t.url, event, { signature: i % 2 ? null : forged, headers: flood })));
    // The limit's windows are 1 s each: at most 5 answered 400 in each window the flood spanned.
    const windows = Math.ceil((Date.now() - started) / 1000) + 1;
    const statuses = answers.map((r) => r.status);
    expect(statuses.every((s) => s === 400 || s === 429)).toBe(true);
    expect(statuses.filter((s) => s === 400).length).toBeLessThanOrEqual(5 * windows);
    const refused = answers.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(40 - 5 * windows);
    expect(refused[0]!.body.error.code).toBe("RATE_LIMITED");
    expect(refused[0]!.headers["retry-after"]).toBe("1");

    // Still over its limit: the verified delivery from that source is not refused.
    const good = await sendStripeEvent(t.url, event, { headers: flood });
    expect(good.status).toBe(200);
    expect(good.body).toEqual({ status: "processed", orderId: o.id });
    // From another source at once, and over CALLBACK_RATE_LIMIT: verified deliveries do not take from it.
    const more = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        sendStripeEvent(t.url, stripeEvent("customer.created", { id: "cus_1", object: "customer" }), { headers: i % 2 ? flood : { "x-forwarded-for": "198.51.100.142" } }),
      ),
    );
    expect(more.map((r) => r.status)).toEqual(Array(10).fill(200));
    const { rows } = await t.db.query("select count(*)::int as n from app_private.blocked_sources");
    expect(rows[0].n).toBe(0);
  });

  test("a verified event without a field its action needs (a payment without currency, or amount_received; a charge.refunded without its amount): 2xx refused, an alert, recorded; nothing paid, refunded or settled", async () => {
    const o = await order();
    const intent = await paidIntent(o.id);
    const { currency: _c, ...noCurrency } = succeededEvent(intent).data.object;
    const { amount_received: _a, ...noAmount } = succeededEvent(intent).data.object;
    for (const [object, missing] of [
      [noCurrency, "data.object.currency"],
      [{ ...noAmount, amount_received: "760" }, "data.object.amount_received"],
    ] as const) {
      const event = stripeEvent("payment_intent.succeeded", object);
      const r = await sendStripeEvent(t.url, event);
      expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { status: "refused", code: "VALIDATION_FAILED", message: `The event lacks ${missing}.`, orderId: o.id } });
      // Recorded: a copy is a duplicate, and changes nothing.
      expect((await sendStripeEvent(t.url, event)).body.status).toBe("duplicate");
    }
    const raised = await alerts(o.id, "stripe_event_incomplete");
    expect(raised.map((a) => a.message)).toEqual([expect.stringContaining("data.object.currency"), expect.stringContaining("data.object.amount_received")]);
    expect(await statusOf(o.id)).toBe("PENDING");
    expect(await refundsOf(o.id)).toEqual([]);

    // Then the whole event pays; a charge.refunded without its amount settles no refund.
    expect((await sendStripeEvent(t.url, succeededEvent(intent))).body.status).toBe("processed");
    await t.gql("mutation($id: ID!, $s: OrderStatus!) { updateOrderStatus(id: $id, status: $s) { id } }", { variables: { id: o.id, s: "CANCELLED" }, token: tokens.barista });
    await waitUntil("the refund SENT", async () => (await refundsOf(o.id))[0]?.status === "SENT", 15_000);
    const { amount_refunded: _r, ...noRefunded } = chargeRefundedEvent(intent.id, 760, "eur").data.object;
    const unsettled = await sendStripeEvent(t.url, stripeEvent("charge.refunded", noRefunded));
    expect(unsettled.body).toMatchObject({ status: "refused", code: "VALIDATION_FAILED" });
    expect(await refundsOf(o.id)).toEqual([expect.objectContaining({ status: "SENT", settled: false })]);
  });

  test("2xx and an alert, and a refund owed, for a mismatched amount or currency; 2xx and an alert for an unknown order", async () => {
    const o = await order();
    const intent = await paidIntent(o.id);
    const wrongAmount = await sendStripeEvent(t.url, succeededEvent(intent, { amount_received: 700, amount: 700 }));
    expect(wrongAmount.status).toBe(200);
    expect(wrongAmount.body).toMatchObject({ status: "refused", code: "AMOUNT_MISMATCH", orderId: o.id });
    expect(await alerts(o.id, "amount_mismatch")).toHaveLength(1);
    expect(await statusOf(o.id)).toBe("PENDING");
    await waitUntil("the refund sent", async () => (await refundsOf(o.id))[0]?.status === "SENT", 15_000);
    expect(await refundsOf(o.id)).toEqual([expect.objectContaining({ amount: "7.00", amount_minor: 700, currency: "EUR", provider: "stripe", provider_payment_id: intent.id, status: "SENT" })]);

    const o2 = await order();
    const intent2 = await paidIntent(o2.id);
    const usd = succeededEvent({ ...intent2, currency: "usd" });
    const wrongCurrency = await sendStripeEvent(t.url, usd);
    expect(wrongCurrency.status).toBe(200);
    expect(wrongCurrency.body).toMatchObject({ status: "refused", code: "CURRENCY_MISMATCH" });
    expect(await alerts(o2.id, "currency_mismatch")).toHaveLength(1);
    expect(await refundsOf(o2.id)).toEqual([expect.objectContaining({ amount_minor: 760, currency: "USD", provider: "stripe" })]);
    // A copy changes nothing more.
    const copy = await sendStripeEvent(t.url, usd);
    expect(copy.status).toBe(200);
    expect(copy.body.status).toBe("duplicate");
    expect(await alerts(o2.id, "currency_mismatch")).toHaveLength(1);
    expect(await refundsOf(o2.id)).toHaveLength(1);

    const unknown = await sendStripeEvent(t.url, succeededEvent({ id: "pi_unknownOrder0001", amount: 500, currency: "eur", metadata: { order_id: "00000000-0000-4000-8000-00000000dead" } }));
    expect(unknown.status).toBe(200);
    expect(unknown.body).toMatchObject({ status: "refused", code: "ORDER_NOT_FOUND" });
    const unknownAlerts = await alerts(null, "unknown_order");
    expect(unknownAlerts.some((a) => a.message.includes("pi_unknownOrder0001"))).toBe(true);
  });

  test("a cancelled paid order is refunded exactly once while Stripe answers 500 twice, then settled by charge.refunded", async () => {
    const o = await order();
    const intent = await paidIntent(o.id);
    expect((await sendStripeEvent(t.url, succeededEvent(intent))).body.status).toBe("processed");
    await waitUntil("PREPARING", async () => (await statusOf(o.id)) === "PREPARING", 15_000);
    const refundsBefore = stripe.sent("POST", "/v1/refunds").length;
    stripe.failNext(2);
    await t.gql("mutation($id: ID!, $s: OrderStatus!) { updateOrderStatus(id: $id, status: $s) { id } }", { variables: { id: o.id, s: "CANCELLED" }, token: tokens.barista });
    await waitUntil("the refund SENT", async () => (await refundsOf(o.id))[0]?.status === "SENT", 20_000);
    const sent = stripe.sent("POST", "/v1/refunds").slice(refundsBefore);
    expect(sent.map((r) => r.status)).toEqual([500, 500, 200]);
    const [refund] = await refundsOf(o.id);
    // Every attempt with the refund's id as its key: Stripe makes one refund.
    expect(new Set(sent.map((r) => r.idempotencyKey))).toEqual(new Set([refund.id]));
    expect(sent[2]!.params).toMatchObject({ payment_intent: intent.id, amount: "760", metadata: { refund_id: refund.id } });
    const atStripe = [...stripe.refunds.values()].filter((r) => r.payment_intent === intent.id);
    expect(atStripe).toHaveLength(1);
    expect(refund).toMatchObject({ status: "SENT", provider_refund_id: atStripe[0]!.id, attempts: 3, settled: false });

    const settled = await sendStripeEvent(t.url, chargeRefundedEvent(intent.id, 760, "eur"));
    expect(settled.status).toBe(200);
    expect(settled.body.status).toBe("processed");
    expect(await refundsOf(o.id)).toEqual([expect.objectContaining({ status: "SUCCEEDED", settled: true })]);
    // The job ran once more in the meantime? Never a second refund.
    await sleep(500);
    expect([...stripe.refunds.values()].filter((r) => r.payment_intent === intent.id)).toHaveLength(1);
  });

  test("a refund Stripe refuses is FAILED with an alert; one still failing after a day raises an alert; refunds of till orders are settled by hand", async () => {
    // Refused for good: the intent never succeeded at Stripe (a 400).
    const o = await order();
    const { paymentIntentId } = (await startPayment(o.id)).body.data.startPayment;
    const intent = stripe.intents.get(paymentIntentId)!;
    expect((await sendStripeEvent(t.url, succeededEvent(intent, { amount_received: intent.amount }))).body.status).toBe("processed");
    await t.gql("mutation($id: ID!, $s: OrderStatus!) { updateOrderStatus(id: $id, status: $s) { id } }", { variables: { id: o.id, s: "CANCELLED" }, token: tokens.barista });
    await waitUntil("FAILED", async () => (await refundsOf(o.id))[0]?.status === "FAILED", 15_000);
    expect(await alerts(o.id, "refund_failed")).toHaveLength(1);

    // Owed for a day and failing: one alert.
    const o2 = await order();
    const intent2 = await paidIntent(o2.id);
    expect((await sendStripeEvent(t.url, succeededEvent(intent2))).body.status).toBe("processed");
    stripe.failNext(1000);
    await t.gql("mutation($id: ID!, $s: OrderStatus!) { updateOrderStatus(id: $id, status: $s) { id } }", { variables: { id: o2.id, s: "CANCELLED" }, token: tokens.barista });
    await waitUntil("a failed attempt", async () => (await refundsOf(o2.id))[0]?.attempts >= 1, 15_000);
    expect(await alerts(o2.id, "refund_failing")).toHaveLength(0);
    await t.db.query("update app_public.refunds set created_at = now() - interval '25 hours' where order_id = $1", [o2.id]);
    await waitUntil("the alert", async () => (await alerts(o2.id, "refund_failing")).length === 1, 15_000);
    const attempts = (await refundsOf(o2.id))[0].attempts;
    await waitUntil("another attempt", async () => (await refundsOf(o2.id))[0].attempts > attempts + 1, 15_000);
    expect(await alerts(o2.id, "refund_failing")).toHaveLength(1);
    stripe.failNext(0);
    await waitUntil("then SENT", async () => (await refundsOf(o2.id))[0].status === "SENT", 20_000);

    // Paid at the till, then cancelled: owed, settled by hand, no job.
    const o3 = await order();
    await t.gql("mutation($id: ID!) { markOrderPaid(id: $id, method: CASH) { id } }", { variables: { id: o3.id }, token: tokens.barista });
    await t.gql("mutation($id: ID!, $s: OrderStatus!) { updateOrderStatus(id: $id, status: $s) { id } }", { variables: { id: o3.id, s: "CANCELLED" }, token: tokens.barista });
    expect(await refundsOf(o3.id)).toEqual([expect.objectContaining({ status: "PENDING", provider: null })]);
    const { rows } = await t.db.query("select count(*)::int as n from graphile_worker._private_jobs where key = $1", [`refund__pay:${(await refundsOf(o3.id))[0].id}`]);
    expect(rows[0].n).toBe(0);
  });

  test("charge.dispute.created raises a payment alert for admins", async () => {
    const o = await order();
    const intent = await paidIntent(o.id);
    expect((await sendStripeEvent(t.url, succeededEvent(intent))).body.status).toBe("processed");
    const r = await sendStripeEvent(t.url, disputeEvent(intent.id, 760, "eur"));
    expect(r.status).toBe(200);
    const [alert] = await alerts(o.id, "payment_dispute");
    expect(alert.message).toContain(intent.id);
    const seen = await t.gql("{ paymentAlerts { kind orderId } }", { token: tokens.admin });
    expect(seen.body.data.paymentAlerts).toContainEqual({ kind: "payment_dispute", orderId: o.id });
  });
});
