import type { IncomingMessage, ServerResponse } from "node:http";
import type pg from "pg";
import type { Config } from "../config.ts";
import { logger } from "../logger.ts";
import { refusedFor } from "../requestScope.ts";
import { PAYMENT_EVENT, parseDelivery, type Delivery } from "./schema.ts";
import type { BlockedSources } from "./blockList.ts";
import { paymentCallbacks } from "../metrics.ts";
import { asSystem, statementAsSystem } from "../db/asSystem.ts";
import type { DatabaseHealth } from "../db/dbHealth.ts";
import { bearerToken, sameSecret } from "../bearer.ts";
import { CALLBACK_ERRORS, type CallbackErrorCode } from "../../common/errorCatalogue.ts";
import { signatureMatches } from "./signature.ts";
import type { Source } from "../http/clientAddress.ts";
import type { RateLimiter } from "../http/rateLimiter.ts";
import { annotateSpan, inSpan } from "../tracing.ts";
import { headerOf, MAX_DELIVERY_BYTES, readBody, retryLater, sendJson, sha256Hex, tooManyHeaders, type DeliveryHandler } from "./delivery.ts";

// The generic provider (the contract's): POST /orders/payment-callback,
// docs/payments.md. Its steps, in order:
//   1. admit   from memory, before anything is read: a blocked source or
//              one over CALLBACK_RATE_LIMIT is refused 429 unless it carries
//              the webhook token; the route's pool full or the database down
//              is 503;
//   2. read    the exact bytes, at most 64 KiB (413);
//   3. verify  the bearer token, then X-Signature over those bytes (401);
//   4. parse   content type (415), JSON (400), fields (400: schema.ts);
//   5. map     the dedupe key (idempotency_key, else event_id, else the
//              body's SHA-256) and the arguments of the SQL;
//   6. process app_private.process_payment_callback: duplicate, the order's
//              rules (422), PAID and its jobs, in one transaction.
//
// What a stranger costs: the first step is answered from memory (the block
// list is kept in memory, src/payments/blockList.ts), before the body is
// read and before any transaction; those refusals are counted in the metric
// and in the refusal log (src/http/refusalLog.ts: one line per source and
// reason a minute, as every refusal). A delivery that
// carries the webhook token is still read and its signature checked, and a
// validly signed one always goes on: the provider is never starved by its
// own source's limit, nor blocked. What passes reaches the database over the
// route's own small pool (CALLBACK_POOL_SIZE), so a flood of callbacks
// cannot take the API's connections. A failure before authentication from a
// source not blocked is written to the delivery log: those rows are what
// blocks the source (alert_rules 'auth_failures'), so each source writes at
// most threshold + 1 of them a block period.
//
// While tracing is on (src/tracing.ts) each step is a span under the
// request's: reading the body, checking token and signature, parsing, and
// the transaction (whose jobs carry the trace).

export const CALLBACK_PATH = "/orders/payment-callback";
export const MAX_CALLBACK_BYTES = MAX_DELIVERY_BYTES;

/** This route's own refusals and their statuses (common/errorCatalogue.ts CALLBACK_ERRORS: the provider's contract, not GraphQL's). */
const REFUSAL_STATUS = Object.fromEntries(
  Object.entries(CALLBACK_ERRORS)
    .filter(([, e]) => e.by === "route")
    .map(([code, e]) => [code, e.status]),
) as Record<{ [K in CallbackErrorCode]: (typeof CALLBACK_ERRORS)[K]["by"] extends "route" ? K : never }[CallbackErrorCode], number>;
type ErrorCode = keyof typeof REFUSAL_STATUS;

/** Every outcome a delivery may have (the metrics count each from 0): ours, then app_private.process_payment_callback's. */
export const CALLBACK_OUTCOMES: readonly string[] = ["processed", "duplicate", "ignored", ...Object.keys(CALLBACK_ERRORS)];

export interface PaymentCallbackOptions {
  config: Config;
  /** The route's own pool (CALLBACK_POOL_SIZE connections). */
  pool: pg.Pool;
  health: DatabaseHealth;
  blocked: BlockedSources;
  /** The payment routes' per-source limit (delivery.ts deliveryLimiter). */
  limiter: RateLimiter;
  sourceOf(req: IncomingMessage): Source;
}

/** Deliveries waiting for one of the route's connections beyond which it answers 503 at once (the provider retries). */
const MAX_WAITING_PER_CONNECTION = 100;

export function genericProvider({ config, pool, health, blocked, limiter, sourceOf }: PaymentCallbackOptions): DeliveryHandler {
  for (const outcome of CALLBACK_OUTCOMES) paymentCallbacks.inc({ outcome }, 0);
  const secrets = [config.SIGNING_SECRET, ...(config.SIGNING_SECRET_PREVIOUS ? [config.SIGNING_SECRET_PREVIOUS] : [])];

  // A blocked or over-the-limit source's refusals write nothing to the
  // database: they are counted in the cafe_payment_callbacks_total{outcome="RATE_LIMITED"}
  // metric and in the refusal log, by source and why (the access log's).
  const refuse429 = (req: IncomingMessage, res: ServerResponse, source: string, why: "blocked" | "overLimit") => {
    refusedFor(why === "blocked" ? "SOURCE_BLOCKED" : "RATE_LIMITED");
    // The body is not read: the connection closes after the answer.
    tooManyHeaders(req, res, why === "blocked" ? 60 : 1);
    return why === "blocked" ? fail(res, "RATE_LIMITED", "Too many failed attempts from this source; retry later.") : fail(res, "RATE_LIMITED", "Too many deliveries from this source; slow down.");
  };

  /** Writes a refused delivery; for a failure before authentication, learns at once whether its source is now blocked. */
  const log = (source: string, code: ErrorCode, reason: string) =>
    asSystem(pool, async (c) => {
      const { rows } = await c.query("select app_private.log_delivery($1, $2, 'rejected', $3, $4) as blocked_until", [source, REFUSAL_STATUS[code], code, reason]);
      if (rows[0]?.blocked_until) blocked.set(source, rows[0].blocked_until);
    }).catch((err) => logger.error({ err }, "could not log a payment delivery"));

  function fail(res: ServerResponse, code: ErrorCode, message: string, details?: Array<{ path: string; message: string }>, status: number = REFUSAL_STATUS[code]) {
    refusedFor(code);
    paymentCallbacks.inc({ outcome: code });
    sendJson(res, status, { error: { code, message, ...(details ? { details } : null) } });
  }

  /**
   * 1. admit: from memory, before anything is read. The token (a header)
   * tells the provider's deliveries, never refused here (their signature is
   * checked in 3). Only deliveries that do not verify spend the payment
   * routes' shared limit (as on the Stripe route): one without the token
   * here, one whose signature fails in 3.
   */
  function admit(req: IncomingMessage, res: ServerResponse, source: string) {
    const bearer = bearerToken(headerOf(req, "authorization"));
    const tokenOk = bearer !== undefined && sameSecret(bearer, config.WEBHOOK_TOKEN);
    const overLimit = !tokenOk && !limiter.take(source);
    const isBlocked = blocked.isBlocked(source);
    const refused = isBlocked ? ("blocked" as const) : overLimit ? ("overLimit" as const) : null;
    if (!tokenOk && refused) {
      refuse429(req, res, source, refused);
      return null;
    }
    if (!health.up || pool.waitingCount >= MAX_WAITING_PER_CONNECTION * config.CALLBACK_POOL_SIZE) {
      // The provider retries; nothing was recorded.
      res.setHeader("retry-after", "5");
      fail(res, "SERVICE_UNAVAILABLE", "The service is unavailable; retry later.");
      return null;
    }
    return { tokenOk, refused };
  }

  /** 3. verify: the provider's token, then its signature over these bytes. */
  async function verify(req: IncomingMessage, res: ServerResponse, source: string, body: Buffer, tokenOk: boolean, refused: "blocked" | "overLimit" | null): Promise<boolean> {
    const signatureOk = tokenOk && inSpan("payment_callback verify_signature", {}, () => signatureMatches(headerOf(req, "x-signature"), body, secrets));
    if (tokenOk && signatureOk) return true;
    // The token without its signature spends the limit now (without the token it did in 1).
    const why = refused ?? (tokenOk && !limiter.take(source) ? ("overLimit" as const) : null);
    if (why) {
      refuse429(req, res, source, why);
      return false;
    }
    const code = tokenOk ? "BAD_SIGNATURE" : "UNAUTHORIZED";
    await log(source, code, tokenOk ? "signature does not match the body" : "missing or wrong bearer token");
    res.setHeader("www-authenticate", 'Bearer realm="payment-callback"');
    if (tokenOk) fail(res, "BAD_SIGNATURE", "X-Signature must be sha256=<hex HMAC-SHA256 of the body>.");
    else fail(res, "UNAUTHORIZED", "A valid Authorization: Bearer <webhook token> is required.");
    return false;
  }

  /** 4. parse: content type, JSON, fields. */
  async function parse(req: IncomingMessage, res: ServerResponse, source: string, body: Buffer): Promise<Delivery | null> {
    const encoding = (headerOf(req, "content-encoding") ?? "identity").trim().toLowerCase();
    if (encoding !== "identity") {
      await log(source, "UNSUPPORTED_MEDIA_TYPE", `content encoding ${encoding}`);
      fail(res, "UNSUPPORTED_MEDIA_TYPE", "Send the body uncompressed (no Content-Encoding).");
      return null;
    }
    const contentType = (headerOf(req, "content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (contentType !== "application/json") {
      await log(source, "UNSUPPORTED_MEDIA_TYPE", `content type ${contentType || "(none)"}`);
      fail(res, "UNSUPPORTED_MEDIA_TYPE", "Send Content-Type: application/json.");
      return null;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      await log(source, "INVALID_JSON", "body is not JSON");
      fail(res, "INVALID_JSON", "The body is not valid JSON.");
      return null;
    }
    const result = inSpan("payment_callback parse", {}, () => parseDelivery(parsed));
    if (!result.ok) {
      await log(source, "VALIDATION_FAILED", result.details.map((d) => `${d.path}: ${d.message}`).join("; "));
      fail(res, "VALIDATION_FAILED", "The body has invalid fields.", result.details);
      return null;
    }
    return result.delivery;
  }

  /** 5. map: the dedupe key and the SQL's arguments. Whether this is a payment was decided once, in parseDelivery; the database reads it from p_event. */
  function map(source: string, body: Buffer, d: Delivery) {
    const bodyHash = sha256Hex(body);
    const key = d.idempotencyKey ? `idem:${d.idempotencyKey}` : d.eventId ? `event:${d.eventId}` : `sha256:${bodyHash}`;
    return {
      key,
      payment: d.payment,
      values: [source, key, bodyHash, d.payment ? PAYMENT_EVENT : d.event, d.status, d.orderRef, d.customer, d.amount, d.items ? JSON.stringify(d.items) : null, d.currency],
    };
  }

  /** 6. process: in one transaction in Postgres. */
  async function process(res: ServerResponse, source: string, { key, values, payment }: ReturnType<typeof map>) {
    try {
      const { rows } = await inSpan("payment_callback process", { "cafe.payment.payment": payment }, () =>
        statementAsSystem(pool, {
          name: "process_payment_callback", // prepared once per connection: its plan is kept
          text: "select (r).* from (select app_private.process_payment_callback($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) as r) x",
          values,
        }),
      );
      const outcome = rows[0] as { http_status: number; status: string | null; code: string | null; message: string; order_id: string | null };
      logger.info({ source, key, outcome: outcome.status ?? outcome.code, order: outcome.order_id }, "payment callback");
      paymentCallbacks.inc({ outcome: outcome.status ?? outcome.code ?? "unknown" });
      annotateSpan({ "cafe.payment.outcome": outcome.status ?? outcome.code ?? "unknown", "cafe.order.id": outcome.order_id ?? undefined });
      if (outcome.code) {
        const details = outcome.code === "VALIDATION_FAILED" ? { details: [{ path: "(body)", message: outcome.message }] } : null;
        return sendJson(res, outcome.http_status, { error: { code: outcome.code, message: outcome.message, ...details } });
      }
      return sendJson(res, 200, { status: outcome.status, ...(outcome.order_id ? { orderId: outcome.order_id } : null) });
    } catch (err) {
      // Nothing was recorded; the provider retries.
      const later = retryLater(err, res, health);
      if (later) return fail(res, later, later === "SERVICE_BUSY" ? "The service is busy; retry shortly." : "The service is unavailable; retry later.");
      logger.error({ err }, "payment callback failed");
      await log(source, "INTERNAL_ERROR", "unexpected error");
      return fail(res, "INTERNAL_ERROR", "The payment could not be processed; retry later.");
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    if (req.method !== "POST") {
      res.setHeader("allow", "POST");
      return fail(res, "METHOD_NOT_ALLOWED", "Use POST.");
    }
    const source = sourceOf(req).key;
    const admitted = admit(req, res, source);
    if (!admitted) return;

    // 2. read, at most 64 KiB.
    let body: Buffer | null;
    try {
      body = await inSpan("payment_callback read_body", {}, () => readBody(req, MAX_CALLBACK_BYTES));
    } catch {
      return; // the client went away
    }
    if (body === null) {
      // Never read, so nothing to record but the count (the metric) and the
      // access log's line: a stranger's oversized bodies write no row and
      // do not count towards a block, so each one is answered 413.
      if (admitted.refused) return refuse429(req, res, source, admitted.refused);
      res.setHeader("connection", "close");
      return fail(res, "PAYLOAD_TOO_LARGE", `The body may have at most ${MAX_CALLBACK_BYTES} bytes.`);
    }

    if (!(await verify(req, res, source, body, admitted.tokenOk, admitted.refused))) return;
    const delivery = await parse(req, res, source, body);
    if (!delivery) return;
    await process(res, source, map(source, body, delivery));
  }

  return (req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.error({ err }, "payment callback route error");
      if (!res.headersSent) fail(res, "INTERNAL_ERROR", "Unexpected error.");
      else res.destroy();
    });
  };
}
