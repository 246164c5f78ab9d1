import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import express, { type Request, type Response, type NextFunction } from "express";
import type pg from "pg";
import type { Config } from "../config.ts";
import { logger } from "../logger.ts";
import { PAYMENT_EVENT, parseDelivery } from "../payments/schema.ts";
import type { BlockedSources } from "../payments/blockList.ts";
import { paymentCallbacks } from "../metrics.ts";
import { asSystem, statementAsSystem } from "../db/asSystem.ts";
import { isDatabaseBusy, isDatabaseUnavailable, type DatabaseHealth } from "../db/dbHealth.ts";
import { bearerToken, sameSecret } from "./bearer.ts";
import { CALLBACK_ERRORS, RETRY_AFTER_SECONDS, type CallbackErrorCode } from "../../common/errorCatalogue.ts";
import { signatureMatches } from "../payments/signature.ts";
import type { Source } from "./clientAddress.ts";
import { RateLimiter } from "./rateLimiter.ts";
import { annotateSpan, inSpan } from "../tracing.ts";

// POST /orders/payment-callback. Checks, in order: source blocked or over
// CALLBACK_RATE_LIMIT (429, from memory) -> size while reading (413) ->
// token and signature over the raw bytes (401) -> content type (415) ->
// JSON and fields (400) -> duplicate key (200 duplicate) -> the order's
// rules (422), the last two in one transaction in Postgres
// (app_private.process_payment_callback).
//
// What a stranger costs: the first two checks are answered from memory
// (the block list is kept in memory, src/payments/blockList.ts), before
// the body is read and before any transaction; those refusals are counted
// in memory and in the metric, with one log line per source a minute. A
// delivery that carries the webhook token is still read and its signature
// checked, and a validly signed one always goes on: the provider is never
// starved by its own source's limit, nor blocked. What passes reaches the
// database over the route's own small pool (CALLBACK_POOL_SIZE), so a flood
// of callbacks cannot take the API's connections. A failure before
// authentication from a source not blocked is written to the delivery log:
// those rows are what blocks the source (alert_rules 'auth_failures'), so
// each source writes at most threshold + 1 of them a block period.
//
// While tracing is on (src/tracing.ts) each step is a span under the
// request's: reading the body, checking token and signature, parsing, and
// the transaction (whose jobs carry the trace).

export const CALLBACK_PATH = "/orders/payment-callback";
export const MAX_CALLBACK_BYTES = 64 * 1024;

/** This route's own refusals and their statuses (common/errorCatalogue.ts CALLBACK_ERRORS: the provider's contract, not GraphQL's). */
const REFUSAL_STATUS = Object.fromEntries(
  Object.entries(CALLBACK_ERRORS)
    .filter(([, e]) => e.by === "route")
    .map(([code, e]) => [code, e.status]),
) as Record<{ [K in CallbackErrorCode]: (typeof CALLBACK_ERRORS)[K]["by"] extends "route" ? K : never }[CallbackErrorCode], number>;
type ErrorCode = keyof typeof REFUSAL_STATUS;

/** Every outcome a delivery may have (the metrics count each from 0): ours, then app_private.process_payment_callback's. */
export const CALLBACK_OUTCOMES: readonly string[] = ["processed", "duplicate", "ignored", ...Object.keys(CALLBACK_ERRORS)];

const sha256 = (data: Buffer | string) => createHash("sha256").update(data).digest();

export interface PaymentCallbackOptions {
  config: Config;
  /** The route's own pool (CALLBACK_POOL_SIZE connections). */
  pool: pg.Pool;
  health: DatabaseHealth;
  blocked: BlockedSources;
  sourceOf(req: IncomingMessage): Source;
}

/** Deliveries waiting for one of the route's connections beyond which it answers 503 at once (the provider retries). */
const MAX_WAITING_PER_CONNECTION = 100;

export function paymentCallbackRouter({ config, pool, health, blocked, sourceOf }: PaymentCallbackOptions): express.Router {
  const router = express.Router();
  const limiter = new RateLimiter(config.CALLBACK_RATE_LIMIT, 1000);
  for (const outcome of CALLBACK_OUTCOMES) paymentCallbacks.inc({ outcome }, 0);
  const secrets = [config.SIGNING_SECRET, ...(config.SIGNING_SECRET_PREVIOUS ? [config.SIGNING_SECRET_PREVIOUS] : [])];

  // A blocked or over-the-limit source's refusals write nothing: they are
  // counted here, in memory (per process; the number of sources kept is
  // bounded), and in the cafe_payment_callbacks_total{outcome="RATE_LIMITED"}
  // metric, with one log line per source per minute.
  const refusedInMemory = new Map<string, { blocked: number; overLimit: number; loggedAt: number }>();
  const MAX_SOURCES_KEPT = 10_000;
  const refuse429 = (req: Request, res: Response, source: string, why: "blocked" | "overLimit") => {
    const now = Date.now();
    let entry = refusedInMemory.get(source);
    if (!entry) {
      if (refusedInMemory.size >= MAX_SOURCES_KEPT) refusedInMemory.delete(refusedInMemory.keys().next().value!);
      entry = { blocked: 0, overLimit: 0, loggedAt: 0 };
      refusedInMemory.set(source, entry);
    }
    entry[why]++;
    if (now - entry.loggedAt >= 60_000) {
      logger.warn({ source, refusedWhileBlocked: entry.blocked, refusedOverLimit: entry.overLimit }, "payment callback: source refused from memory (not written to the delivery log)");
      entry.loggedAt = now;
    }
    res.setHeader("retry-after", why === "blocked" ? "60" : "1");
    // The body is not read: the connection closes after the answer.
    if (!req.complete) res.setHeader("connection", "close");
    return why === "blocked" ? fail(res, "RATE_LIMITED", "Too many failed attempts from this source; retry later.") : fail(res, "RATE_LIMITED", "Too many deliveries from this source; slow down.");
  };

  /** Writes a refused delivery; for a failure before authentication, learns at once whether its source is now blocked. */
  const log = (source: string, code: ErrorCode, reason: string) =>
    asSystem(pool, async (c) => {
      const { rows } = await c.query("select app_private.log_delivery($1, $2, 'rejected', $3, $4) as blocked_until", [source, REFUSAL_STATUS[code], code, reason]);
      if (rows[0]?.blocked_until) blocked.set(source, rows[0].blocked_until);
    }).catch((err) => logger.error({ err }, "could not log a payment delivery"));

  function fail(res: Response, code: ErrorCode, message: string, details?: Array<{ path: string; message: string }>, status: number = REFUSAL_STATUS[code]) {
    paymentCallbacks.inc({ outcome: code });
    res.status(status).json({ error: { code, message, ...(details ? { details } : null) } });
  }

  /** The exact bytes sent, at most MAX_CALLBACK_BYTES (null: too large). Encoded or not: the signature covers these bytes. */
  function readBody(req: Request): Promise<Buffer | null> {
    return new Promise((resolve, reject) => {
      const declared = Number(req.headers["content-length"]);
      if (Number.isFinite(declared) && declared > MAX_CALLBACK_BYTES) {
        req.resume();
        return resolve(null);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      req.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_CALLBACK_BYTES) {
          req.removeAllListeners("data");
          req.resume();
          resolve(null);
        } else chunks.push(chunk);
      });
      req.on("end", () => resolve(Buffer.concat(chunks)));
      req.on("error", reject);
    });
  }

  router.post(CALLBACK_PATH, async (req: Request, res: Response) => {
    const source = sourceOf(req).key;
    // From memory, before anything is read: the token (a header) tells the
    // provider's deliveries, which are never refused here (their signature
    // is checked below).
    const bearer = bearerToken(req.headers.authorization);
    const tokenOk = bearer !== undefined && sameSecret(bearer, config.WEBHOOK_TOKEN);
    const overLimit = !limiter.take(source);
    const isBlocked = blocked.isBlocked(source);
    if (!tokenOk && (isBlocked || overLimit)) return refuse429(req, res, source, isBlocked ? "blocked" : "overLimit");
    if (!health.up || pool.waitingCount >= MAX_WAITING_PER_CONNECTION * config.CALLBACK_POOL_SIZE) {
      // The provider retries; nothing was recorded.
      res.setHeader("retry-after", "5");
      return fail(res, "SERVICE_UNAVAILABLE", "The service is unavailable; retry later.");
    }

    // Read the body, at most 64 KiB.
    let body: Buffer | null;
    try {
      body = await inSpan("payment_callback read_body", {}, () => readBody(req));
    } catch {
      return; // the client went away
    }
    if (body === null) {
      // Never read, so nothing to record but the count (the metric) and the
      // access log's line: a stranger's oversized bodies write no row and
      // do not count towards a block, so each one is answered 413.
      if (isBlocked || overLimit) return refuse429(req, res, source, isBlocked ? "blocked" : "overLimit");
      res.setHeader("connection", "close");
      return fail(res, "PAYLOAD_TOO_LARGE", `The body may have at most ${MAX_CALLBACK_BYTES} bytes.`);
    }

    // Who is calling: the provider's token, then its signature over these bytes.
    const signed = body;
    const signatureOk = tokenOk && inSpan("payment_callback verify_signature", {}, () => signatureMatches(req.header("x-signature"), signed, secrets));
    if (!tokenOk || !signatureOk) {
      if (isBlocked || overLimit) return refuse429(req, res, source, isBlocked ? "blocked" : "overLimit");
      const code = tokenOk ? "BAD_SIGNATURE" : "UNAUTHORIZED";
      await log(source, code, tokenOk ? "signature does not match the body" : "missing or wrong bearer token");
      res.setHeader("www-authenticate", 'Bearer realm="payment-callback"');
      return tokenOk
        ? fail(res, "BAD_SIGNATURE", "X-Signature must be sha256=<hex HMAC-SHA256 of the body>.")
        : fail(res, "UNAUTHORIZED", "A valid Authorization: Bearer <webhook token> is required.");
    }

    const encoding = (req.headers["content-encoding"] ?? "identity").trim().toLowerCase();
    if (encoding !== "identity") {
      await log(source, "UNSUPPORTED_MEDIA_TYPE", `content encoding ${encoding}`);
      return fail(res, "UNSUPPORTED_MEDIA_TYPE", "Send the body uncompressed (no Content-Encoding).");
    }
    const contentType = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
    if (contentType !== "application/json") {
      await log(source, "UNSUPPORTED_MEDIA_TYPE", `content type ${contentType || "(none)"}`);
      return fail(res, "UNSUPPORTED_MEDIA_TYPE", "Send Content-Type: application/json.");
    }

    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      await log(source, "INVALID_JSON", "body is not JSON");
      return fail(res, "INVALID_JSON", "The body is not valid JSON.");
    }
    const result = inSpan("payment_callback parse", {}, () => parseDelivery(parsed));
    if (!result.ok) {
      await log(source, "VALIDATION_FAILED", result.details.map((d) => `${d.path}: ${d.message}`).join("; "));
      return fail(res, "VALIDATION_FAILED", "The body has invalid fields.", result.details);
    }
    const d = result.delivery;
    const bodyHash = sha256(body).toString("hex");
    const key = d.idempotencyKey ? `idem:${d.idempotencyKey}` : d.eventId ? `event:${d.eventId}` : `sha256:${bodyHash}`;

    try {
      const { rows } = await inSpan("payment_callback process", { "cafe.payment.payment": d.payment }, () =>
        statementAsSystem(pool, {
          name: "process_payment_callback", // prepared once per connection: its plan is kept
          text: "select (r).* from (select app_private.process_payment_callback($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) as r) x",
          // Whether this is a payment was decided once, in parseDelivery; the database reads it from p_event.
          values: [source, key, bodyHash, d.payment ? PAYMENT_EVENT : d.event, d.status, d.orderRef, d.customer, d.amount, d.items ? JSON.stringify(d.items) : null, d.currency],
        }),
      );
      const outcome = rows[0] as { http_status: number; status: string | null; code: string | null; message: string; order_id: string | null };
      logger.info({ source, key, outcome: outcome.status ?? outcome.code, order: outcome.order_id }, "payment callback");
      paymentCallbacks.inc({ outcome: outcome.status ?? outcome.code ?? "unknown" });
      annotateSpan({ "cafe.payment.outcome": outcome.status ?? outcome.code ?? "unknown", "cafe.order.id": outcome.order_id ?? undefined });
      if (outcome.code) {
        const details = outcome.code === "VALIDATION_FAILED" ? { details: [{ path: "(body)", message: outcome.message }] } : null;
        return res.status(outcome.http_status).json({ error: { code: outcome.code, message: outcome.message, ...details } });
      }
      return res.status(200).json({ status: outcome.status, ...(outcome.order_id ? { orderId: outcome.order_id } : null) });
    } catch (err) {
      if (isDatabaseBusy(err)) {
        // Nothing was recorded; the provider retries.
        res.setHeader("retry-after", String(RETRY_AFTER_SECONDS.SERVICE_BUSY));
        return fail(res, "SERVICE_BUSY", "The service is busy; retry shortly.");
      }
      if (isDatabaseUnavailable(err)) {
        health.suspect();
        res.setHeader("retry-after", String(RETRY_AFTER_SECONDS.SERVICE_UNAVAILABLE));
        return fail(res, "SERVICE_UNAVAILABLE", "The service is unavailable; retry later.");
      }
      logger.error({ err }, "payment callback failed");
      await log(source, "INTERNAL_ERROR", "unexpected error");
      return fail(res, "INTERNAL_ERROR", "The payment could not be processed; retry later.");
    }
  });

  router.all(CALLBACK_PATH, (_req: Request, res: Response) => {
    res.setHeader("allow", "POST");
    fail(res, "METHOD_NOT_ALLOWED", "Use POST.");
  });

  router.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    logger.error({ err }, "payment callback route error");
    fail(res, "INTERNAL_ERROR", "Unexpected error.");
  });
  return router;
}
