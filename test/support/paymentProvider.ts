import http from "node:http";
import { loadConfig } from "../../src/config.ts";
import { signatureHeader } from "../../src/payments/signature.ts";
import { readResponse, request, type RawResponse } from "./client.ts";

// The payment provider as docs/payments.md describes it: it signs
// the exact bytes it sends (`X-Signature: sha256=<hex HMAC-SHA256 keyed
// with SIGNING_SECRET>`), sends `Authorization: Bearer WEBHOOK_TOKEN`, and
// posts to /orders/payment-callback; and the bodies it sends.

export const CALLBACK_PATH = "/orders/payment-callback";

const CONFIG = loadConfig({ ...process.env, NODE_ENV: "test" });
/** The secrets a service started by the tests has (the test configuration's). */
export const SECRETS = {
  webhookToken: CONFIG.WEBHOOK_TOKEN,
  signingSecret: CONFIG.SIGNING_SECRET,
} as const;

/** `sha256=<hex HMAC-SHA256 of the bytes>`. */
export function signature(body: string | Buffer, secret: string = SECRETS.signingSecret): string {
  return signatureHeader(body, secret);
}

/** The headers the provider sends with a body. */
export function callbackHeaders(body: string | Buffer, extra: Record<string, string> = {}): Record<string, string> {
  return {
    "content-type": "application/json",
    authorization: `Bearer ${SECRETS.webhookToken}`,
    "x-signature": signature(body),
    ...extra,
  };
}

/** Where callbacks go: a service's URL and the secrets it was configured with (a bare URL: the test secrets). */
export type CallbackTarget = string | { url: string; config: { WEBHOOK_TOKEN: string; SIGNING_SECRET: string } };

function targetOf(t: CallbackTarget) {
  return typeof t === "string" ? { url: t, config: { WEBHOOK_TOKEN: SECRETS.webhookToken, SIGNING_SECRET: SECRETS.signingSecret } } : t;
}

/** An answer to a delivery: `body` is its JSON (undefined when not JSON), `headers` as fetch gives them. */
export interface Delivery extends Omit<RawResponse, "headers"> {
  body: any;
  headers: Headers;
}

function delivery(r: RawResponse): Delivery {
  const headers = new Headers();
  for (const [k, v] of Object.entries(r.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
  return { ...r, body: r.json, headers };
}

export interface SendOptions {
  /** The bearer token; null sends no Authorization header. Default: the webhook token. */
  token?: string | null;
  /** A whole Authorization header value (overrides token). */
  authorization?: string;
  /** The secret to sign with; default the service's SIGNING_SECRET. */
  secret?: string;
  /** An X-Signature value as is; null sends none. Default: a valid signature of the bytes sent. */
  signature?: string | null;
  /** Sign these bytes instead of the ones sent. */
  signBytes?: Buffer | string;
  contentType?: string | null;
  headers?: Record<string, string>;
  /** Rejects with code TIMEOUT when no answer came by then (default 15 s). */
  timeoutMs?: number;
}

/**
 * POSTs a callback as the provider would, on a fresh connection: the exact
 * bytes sent are the bytes signed (a string is sent byte for byte, so a
 * retry can send the same bytes). Rejects with the socket's error code
 * (ECONNRESET, ECONNREFUSED, TIMEOUT) when no answer comes.
 */
export async function sendCallback(target: CallbackTarget, body: unknown, options: SendOptions = {}): Promise<Delivery> {
  const t = targetOf(target);
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === "string" ? body : JSON.stringify(body), "utf8");
  const headers: Record<string, string> = { ...options.headers };
  const contentType = options.contentType === undefined ? "application/json" : options.contentType;
  if (contentType !== null) headers["content-type"] = contentType;
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  else {
    const token = options.token === undefined ? t.config.WEBHOOK_TOKEN : options.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
  }
  if (options.signature !== null) headers["x-signature"] = options.signature ?? signature(options.signBytes ?? bytes, options.secret ?? t.config.SIGNING_SECRET);
  return delivery(await request(`${t.url}${CALLBACK_PATH}`, { method: "POST", headers, body: bytes, timeoutMs: options.timeoutMs }));
}

/** Sends a body in chunks with no Content-Length (chunked transfer), signed over all of it. */
export function sendChunked(target: CallbackTarget, chunks: Buffer[], options: { secret?: string } = {}): Promise<Delivery> {
  const t = targetOf(target);
  const whole = Buffer.concat(chunks);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.request(`${t.url}${CALLBACK_PATH}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${t.config.WEBHOOK_TOKEN}`,
        "x-signature": signature(whole, options.secret ?? t.config.SIGNING_SECRET),
        "transfer-encoding": "chunked",
      },
    });
    // The server may answer (413) and close before every chunk is written:
    // a write error then is expected; only no answer at all is a failure.
    let answered = false;
    req.on("response", (res) => {
      answered = true;
      readResponse(res, started).then((r) => resolve(delivery(r)), reject);
    });
    req.on("error", (err) => setTimeout(() => answered || reject(err), 1000));
    let i = 0;
    const writeNext = () => {
      if (i >= chunks.length) return void req.end();
      const ok = req.write(chunks[i++]);
      if (ok) setImmediate(writeNext);
      else req.once("drain", writeNext);
    };
    writeNext();
  });
}

// ---------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------

/** What a payment body needs to know of an order (fixtures.ts's createPendingOrders makes these). */
export interface PayableOrder {
  id: string;
  email: string;
  total: string;
  lines: Array<{ coffeeId: string; name: string; quantity: number }>;
}

export type KeyKind = "event" | "idem" | "none";

/** A valid payment body for an order: shape A (event/data) or B (order_id/status/items). */
export function paymentBody(order: PayableOrder, shape: "A" | "B", key: KeyKind, keyValue = `${key}-${order.id}`, extra: Record<string, unknown> = {}): string {
  const keyField = key === "event" ? { event_id: keyValue } : key === "idem" ? { idempotency_key: keyValue } : {};
  if (shape === "A") {
    return JSON.stringify({ event: "payment.completed", data: { amount: Number(order.total), customer: order.email, order_id: order.id }, ...keyField, ...extra });
  }
  return JSON.stringify({
    order_id: order.id,
    status: "paid",
    amount: order.total,
    // products by id or by name (any case), in any order
    items: order.lines.map((l, i) => ({ product: i % 2 ? l.name.toUpperCase() : l.coffeeId, quantity: l.quantity })).reverse(),
    ...keyField,
    ...extra,
  });
}
