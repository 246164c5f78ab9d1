import http from "node:http";
import { randomBytes } from "node:crypto";
import Stripe from "stripe";
import { request, type RawResponse } from "./client.ts";

// Stripe as the tests meet it, beside paymentProvider.ts (the contract's
// generic provider): a local HTTP server that speaks the few endpoints of
// Stripe's API the service uses, and Stripe's signed webhook events.
//
// The server (startStripeServer): POST /v1/payment_intents, GET
// /v1/payment_intents/:id, POST /v1/payment_intents/:id/cancel, POST
// /v1/refunds, form-encoded as Stripe's API is. It records every request
// (method, path, Idempotency-Key, traceparent, the parsed form body), can be told to
// answer 500 to the next N POSTs (failNext: a failure before the endpoint
// runs, which Stripe does not keep for the key, so a retry with the same
// key runs), and honours Idempotency-Key as Stripe does: the same key with
// the same parameters answers the first answer again (Idempotent-Replayed:
// true), with other parameters 400 idempotency_error.
//
// Events are signed with the stripe package's own
// webhooks.generateTestHeaderString, as Stripe signs them.

export const STRIPE_TEST_KEY = "sk_test_cafe0123456789";
/** Two secrets: the service accepts either (a rotation). */
export const STRIPE_WEBHOOK_SECRETS = ["whsec_cafeTestSecretOne0123456789", "whsec_cafeTestSecretTwo0123456789"];
export const STRIPE_WEBHOOK_PATH = "/payments/stripe/webhook";

/** The service's Stripe settings for a fake Stripe at `apiUrl`. */
export function stripeEnv(apiUrl: string): Record<string, string> {
  return { STRIPE_SECRET_KEY: STRIPE_TEST_KEY, STRIPE_WEBHOOK_SECRET: STRIPE_WEBHOOK_SECRETS.join(","), STRIPE_API_URL: apiUrl };
}

export interface RecordedRequest {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  authorization: string | undefined;
  /** The W3C traceparent sent (the service's tracing on). */
  traceparent: string | undefined;
  /** Trace headers the service must never forward. */
  tracestate: string | undefined;
  baggage: string | undefined;
  params: Record<string, any>;
  /** What was answered. */
  status: number;
  replayed: boolean;
}

export interface FakeIntent {
  id: string;
  object: "payment_intent";
  amount: number;
  amount_received: number;
  currency: string;
  status: string;
  client_secret: string;
  metadata: Record<string, string>;
  automatic_payment_methods: { enabled: boolean } | null;
}

export interface FakeRefund {
  id: string;
  object: "refund";
  amount: number;
  currency: string;
  payment_intent: string;
  status: string;
  metadata: Record<string, string>;
}

export interface StripeServer {
  url: string;
  requests: RecordedRequest[];
  intents: Map<string, FakeIntent>;
  refunds: Map<string, FakeRefund>;
  /** The next `n` POSTs are answered `status` (500) and not kept for their key. */
  failNext(n: number, status?: number): void;
  /** The intent paid (as the customer's app would make it). */
  succeed(intentId: string): FakeIntent;
  /** Requests to a path (a prefix), in order. */
  sent(method: string, pathPrefix: string): RecordedRequest[];
  close(): Promise<void>;
}

/** `a[b][c]=v` form fields into nested objects (Stripe's encoding). */
function parseForm(text: string): Record<string, any> {
  const out: Record<string, any> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const parts = key.split(/\[|\]\[|\]/).filter((p) => p !== "");
    let node = out;
    for (let i = 0; i < parts.length - 1; i++) node = node[parts[i]!] ??= {};
    node[parts[parts.length - 1]!] = value;
  }
  return out;
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;

export async function startStripeServer(): Promise<StripeServer> {
  const requests: RecordedRequest[] = [];
  const intents = new Map<string, FakeIntent>();
  const refunds = new Map<string, FakeRefund>();
  const kept = new Map<string, { fingerprint: string; status: number; body: unknown }>();
  let failures = 0;
  let failStatus = 500;

  const error = (status: number, type: string, message: string, code?: string) => [status, { error: { type, message, ...(code ? { code } : null) } }] as const;

  function answer(method: string, path: string, params: Record<string, any>): readonly [number, unknown] {
    let m: RegExpExecArray | null;
    if (method === "POST" && path === "/v1/payment_intents") {
      const amount = Number(params.amount);
      if (!Number.isSafeInteger(amount) || amount < 1) return error(400, "invalid_request_error", "Invalid amount", "parameter_invalid_integer");
      const intent: FakeIntent = {
        id: id("pi"),
        object: "payment_intent",
        amount,
        amount_received: 0,
        currency: String(params.currency),
        status: "requires_payment_method",
        client_secret: "",
        metadata: params.metadata ?? {},
        automatic_payment_methods: params.automatic_payment_methods ? { enabled: params.automatic_payment_methods.enabled === "true" } : null,
      };
      intent.client_secret = `${intent.id}_secret_${randomBytes(8).toString("hex")}`;
      intents.set(intent.id, intent);
      return [200, intent];
    }
    if ((m = /^\/v1\/payment_intents\/([^/]+)$/.exec(path)) && method === "GET") {
      const intent = intents.get(m[1]!);
      return intent ? [200, intent] : error(404, "invalid_request_error", `No such payment_intent: '${m[1]}'`, "resource_missing");
    }
    if ((m = /^\/v1\/payment_intents\/([^/]+)\/cancel$/.exec(path)) && method === "POST") {
      const intent = intents.get(m[1]!);
      if (!intent) return error(404, "invalid_request_error", `No such payment_intent: '${m[1]}'`, "resource_missing");
      if (intent.status === "succeeded" || intent.status === "canceled") {
        return error(400, "invalid_request_error", `You cannot cancel this PaymentIntent because it has a status of ${intent.status}.`, "payment_intent_unexpected_state");
      }
      intent.status = "canceled";
      return [200, intent];
    }
    if (method === "POST" && path === "/v1/refunds") {
      const intent = intents.get(String(params.payment_intent));
      if (!intent) return error(400, "invalid_request_error", `No such payment_intent: '${params.payment_intent}'`, "resource_missing");
      if (intent.status !== "succeeded") return error(400, "invalid_request_error", "This PaymentIntent has not succeeded.", "charge_not_refundable");
      const amount = params.amount === undefined ? intent.amount_received : Number(params.amount);
      const already = [...refunds.values()].filter((r) => r.payment_intent === intent.id).reduce((s, r) => s + r.amount, 0);
      if (already + amount > intent.amount_received) return error(400, "invalid_request_error", "Refund amount is greater than unrefunded amount.", "amount_too_large");
      const refund: FakeRefund = { id: id("re"), object: "refund", amount, currency: intent.currency, payment_intent: intent.id, status: "pending", metadata: params.metadata ?? {} };
      refunds.set(refund.id, refund);
      return [200, refund];
    }
    return error(404, "invalid_request_error", `Unrecognized request URL (${method}: ${path}).`);
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const method = req.method ?? "GET";
      const path = (req.url ?? "/").split("?")[0]!;
      const params = parseForm(method === "GET" ? ((req.url ?? "").split("?")[1] ?? "") : Buffer.concat(chunks).toString("utf8"));
      const idempotencyKey = req.headers["idempotency-key"] as string | undefined;
      const record = (status: number, replayed: boolean) =>
        requests.push({
          method,
          path,
          idempotencyKey,
          authorization: req.headers.authorization,
          traceparent: req.headers.traceparent as string | undefined,
          tracestate: req.headers.tracestate as string | undefined,
          baggage: req.headers.baggage as string | undefined,
          params,
          status,
          replayed,
        });
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { "content-type": "application/json", "request-id": id("req"), ...headers });
        res.end(JSON.stringify(body));
      };
      if (req.headers.authorization !== `Bearer ${STRIPE_TEST_KEY}`) {
        record(401, false);
        return send(401, { error: { type: "invalid_request_error", message: "Invalid API Key provided" } });
      }
      if (method === "POST" && failures > 0) {
        failures--;
        record(failStatus, false);
        return send(failStatus, { error: { type: "api_error", message: "An unexpected error occurred (injected by the test)." } });
      }
      if (method === "POST" && idempotencyKey) {
        const fingerprint = `${path} ${JSON.stringify(params)}`;
        const first = kept.get(idempotencyKey);
        if (first && first.fingerprint !== fingerprint) {
          record(400, false);
          return send(400, { error: { type: "idempotency_error", message: "Keys for idempotent requests can only be used with the same parameters they were first used with." } });
        }
        if (first) {
          record(first.status, true);
          return send(first.status, first.body, { "idempotent-replayed": "true" });
        }
        const [status, body] = answer(method, path, params);
        kept.set(idempotencyKey, { fingerprint, status, body: structuredClone(body) });
        record(status, false);
        return send(status, body, { "idempotency-key": idempotencyKey });
      }
      const [status, body] = answer(method, path, params);
      record(status, false);
      send(status, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    requests,
    intents,
    refunds,
    failNext(n, status = 500) {
      failures = n;
      failStatus = status;
    },
    succeed(intentId) {
      const intent = intents.get(intentId);
      if (!intent) throw new Error(`no intent ${intentId}`);
      intent.status = "succeeded";
      intent.amount_received = intent.amount;
      return intent;
    },
    sent: (method, pathPrefix) => requests.filter((r) => r.method === method && r.path.startsWith(pathPrefix)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------

export interface StripeEvent {
  id: string;
  object: "event";
  type: string;
  api_version: string;
  created: number;
  livemode: false;
  data: { object: Record<string, unknown> };
}

/** An event of `type` about `object`, with a fresh id. */
export function stripeEvent(type: string, object: Record<string, unknown>, eventId = id("evt")): StripeEvent {
  return { id: eventId, object: "event", type, api_version: Stripe.API_VERSION, created: Math.floor(Date.now() / 1000), livemode: false, data: { object } };
}

export const succeededEvent = (intent: Pick<FakeIntent, "id" | "amount" | "currency" | "metadata">, over: Record<string, unknown> = {}) =>
  stripeEvent("payment_intent.succeeded", { object: "payment_intent", status: "succeeded", amount_received: intent.amount, ...intent, ...over });

export const failedEvent = (intent: Pick<FakeIntent, "id" | "amount" | "currency" | "metadata">) =>
  stripeEvent("payment_intent.payment_failed", { ...intent, object: "payment_intent", status: "requires_payment_method", last_payment_error: { message: "Your card was declined." } });

export const chargeRefundedEvent = (intentId: string, amountRefunded: number, currency: string) =>
  stripeEvent("charge.refunded", { id: id("ch"), object: "charge", payment_intent: intentId, amount_refunded: amountRefunded, currency, refunded: true });

export const disputeEvent = (intentId: string, amount: number, currency: string) =>
  stripeEvent("charge.dispute.created", { id: id("dp"), object: "dispute", charge: id("ch"), payment_intent: intentId, amount, currency, reason: "fraudulent", status: "needs_response" });

export interface SignOptions {
  secret?: string;
  /** Unix seconds (default now). */
  timestamp?: number;
}

/** The Stripe-Signature header for these bytes (stripe's generateTestHeaderString). */
export function stripeSignature(payload: string, { secret = STRIPE_WEBHOOK_SECRETS[0]!, timestamp }: SignOptions = {}): string {
  return Stripe.webhooks.generateTestHeaderString({ payload, secret, ...(timestamp !== undefined ? { timestamp } : null) });
}

export interface WebhookOptions extends SignOptions {
  /** A Stripe-Signature value as is; null sends none. Default: a valid one for the bytes sent. */
  signature?: string | null;
  /** Sign these bytes instead of the ones sent. */
  signBytes?: string;
  headers?: Record<string, string>;
}

export interface WebhookAnswer extends RawResponse {
  body: any;
}

/** POSTs an event (or raw bytes) to the service's Stripe webhook, signed as Stripe signs it. */
export async function sendStripeEvent(serviceUrl: string, event: StripeEvent | string, options: WebhookOptions = {}): Promise<WebhookAnswer> {
  const payload = typeof event === "string" ? event : JSON.stringify(event, null, 2);
  const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8", "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)", ...options.headers };
  if (options.signature !== null) headers["stripe-signature"] = options.signature ?? stripeSignature(options.signBytes ?? payload, options);
  const r = await request(`${serviceUrl}${STRIPE_WEBHOOK_PATH}`, { method: "POST", headers, body: Buffer.from(payload, "utf8") });
  return { ...r, body: r.json };
}
