import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import express, { type Request, type Response, type NextFunction } from "express";
import type pg from "pg";
import type { Config } from "../config.ts";
import { logger } from "../logger.ts";
import { PAYMENT_EVENT, parseDelivery } from "../payments/schema.ts";
import { paymentCallbacks } from "../metrics.ts";
import { asSystem } from "../db/asSystem.ts";
import { isDatabaseBusy, isDatabaseUnavailable, type DatabaseHealth } from "../db/dbHealth.ts";
import { bearerToken, sameSecret } from "./bearer.ts";
import { ERROR_STATUS, RETRY_AFTER_SECONDS } from "../../plugins/errorCodes.ts";

// POST /orders/payment-callback. Checks, in order: source blocked (429) ->
// size while reading (413) -> token and signature over the raw bytes (401)
// -> content type (415) -> JSON and fields (400) -> duplicate key (200
// duplicate) -> the order's rules (422), the last two in one transaction in
// Postgres (app_private.process_payment_callback).

export const CALLBACK_PATH = "/orders/payment-callback";
export const MAX_CALLBACK_BYTES = 64 * 1024;

/** This route's refusals (the payment provider's contract, not GraphQL's) and their statuses; those shared with /graphql keep its status. */
const REFUSAL_STATUS = {
  RATE_LIMITED: ERROR_STATUS.RATE_LIMITED,
  PAYLOAD_TOO_LARGE: ERROR_STATUS.PAYLOAD_TOO_LARGE,
  UNAUTHORIZED: 401,
  BAD_SIGNATURE: 401,
  UNSUPPORTED_MEDIA_TYPE: ERROR_STATUS.UNSUPPORTED_MEDIA_TYPE,
  INVALID_JSON: 400,
  VALIDATION_FAILED: 400,
  SERVICE_UNAVAILABLE: ERROR_STATUS.SERVICE_UNAVAILABLE,
  SERVICE_BUSY: ERROR_STATUS.SERVICE_BUSY,
  INTERNAL_ERROR: 500,
} as const;
type ErrorCode = keyof typeof REFUSAL_STATUS;

/** Every outcome a delivery may have (the metrics count each from 0): ours, then app_private.process_payment_callback's. */
export const CALLBACK_OUTCOMES: readonly string[] = [
  "processed",
  "duplicate",
  "ignored",
  ...Object.keys(REFUSAL_STATUS),
  "ORDER_NOT_FOUND",
  "AMOUNT_MISMATCH",
  "ITEMS_MISMATCH",
  "ORDER_NOT_PAYABLE",
  "AMBIGUOUS_ORDER",
  "CURRENCY_MISMATCH",
];

const sha256 = (data: Buffer | string) => createHash("sha256").update(data).digest();

function signatureMatches(header: string | undefined, body: Buffer, secrets: string[]): boolean {
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(header?.trim() ?? "");
  if (!match) return false;
  const given = Buffer.from(match[1]!, "hex");
  let ok = false;
  for (const secret of secrets) {
    // Check every secret (no early exit): the time does not tell which one matched.
    ok = timingSafeEqual(given, createHmac("sha256", secret).update(body).digest()) || ok;
  }
  return ok;
}

export function paymentCallbackRouter(config: Config, pool: pg.Pool, health: DatabaseHealth): express.Router {
  const router = express.Router();
  for (const outcome of CALLBACK_OUTCOMES) paymentCallbacks.inc({ outcome }, 0);
  const secrets = [config.SIGNING_SECRET, ...(config.SIGNING_SECRET_PREVIOUS ? [config.SIGNING_SECRET_PREVIOUS] : [])];

  // A blocked source's refusals write nothing: they are counted here, in
  // memory (per process; the number of sources kept is bounded), and in the
  // cafe_payment_callbacks_total{outcome="RATE_LIMITED"} metric, with one log
  // line per source per minute.
  const refusedWhileBlocked = new Map<string, { count: number; loggedAt: number }>();
  const MAX_SOURCES_KEPT = 10_000;
  const refuseBlocked = (res: Response, source: string) => {
    const now = Date.now();
    let entry = refusedWhileBlocked.get(source);
    if (!entry) {
      if (refusedWhileBlocked.size >= MAX_SOURCES_KEPT) refusedWhileBlocked.delete(refusedWhileBlocked.keys().next().value!);
      entry = { count: 0, loggedAt: 0 };
      refusedWhileBlocked.set(source, entry);
    }
    entry.count++;
    if (now - entry.loggedAt >= 60_000) {
      logger.warn({ source, refusedWhileBlocked: entry.count }, "payment callback: blocked source still sending (not written to the delivery log)");
      entry.loggedAt = now;
    }
    return fail(res, "RATE_LIMITED", "Too many failed attempts from this source; retry later.");
  };

  const log = (source: string, code: ErrorCode, reason: string) =>
    asSystem(pool, (c) => c.query("select app_private.log_delivery($1, $2, 'rejected', $3, $4)", [source, REFUSAL_STATUS[code], code, reason])).catch((err) =>
      logger.error({ err }, "could not log a payment delivery"),
    );

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
    const source = req.ip ?? req.socket.remoteAddress ?? "unknown";
    if (!health.up) {
      // The provider retries; nothing was recorded.
      res.setHeader("retry-after", "5");
      return fail(res, "SERVICE_UNAVAILABLE", "The service is unavailable; retry later.");
    }
    // The block list is read only when about to refuse: a validly signed
    // request is never blocked, so it costs those nothing.
    const isBlocked = () =>
      asSystem(pool, async (c) => (await c.query("select app_private.is_source_blocked($1) as b", [source])).rows[0].b as boolean).catch((err) => {
        // Only the health probe says "down" (a full pool is busy, not down).
        if (isDatabaseUnavailable(err)) health.suspect();
        throw err;
      });

    // Read the body, at most 64 KiB.
    let body: Buffer | null;
    try {
      body = await readBody(req);
    } catch {
      return; // the client went away
    }
    if (body === null) {
      // Never read, so nothing to record but the count (the metric) and the
      // access log's line: a stranger's oversized bodies write no row and
      // do not count towards a block, so each one is answered 413.
      if (await isBlocked().catch(() => false)) return refuseBlocked(res, source);
      res.setHeader("connection", "close");
      return fail(res, "PAYLOAD_TOO_LARGE", `The body may have at most ${MAX_CALLBACK_BYTES} bytes.`);
    }

    // Who is calling: the provider's token, then its signature over these bytes.
    const bearer = bearerToken(req.headers.authorization);
    const tokenOk = bearer !== undefined && sameSecret(bearer, config.WEBHOOK_TOKEN);
    const signatureOk = tokenOk && signatureMatches(req.header("x-signature"), body, secrets);
    if (!tokenOk || !signatureOk) {
      const code = tokenOk ? "BAD_SIGNATURE" : "UNAUTHORIZED";
      if (await isBlocked().catch(() => false)) return refuseBlocked(res, source);
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
    const result = parseDelivery(parsed);
    if (!result.ok) {
      await log(source, "VALIDATION_FAILED", result.details.map((d) => `${d.path}: ${d.message}`).join("; "));
      return fail(res, "VALIDATION_FAILED", "The body has invalid fields.", result.details);
    }
    const d = result.delivery;
    const bodyHash = sha256(body).toString("hex");
    const key = d.idempotencyKey ? `idem:${d.idempotencyKey}` : d.eventId ? `event:${d.eventId}` : `sha256:${bodyHash}`;

    try {
      const outcome = await asSystem(pool, async (c) => {
        const { rows } = await c.query(
          "select (r).* from (select app_private.process_payment_callback($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) as r) x",
          // Whether this is a payment was decided once, in parseDelivery; the database reads it from p_event.
          [source, key, bodyHash, d.payment ? PAYMENT_EVENT : d.event, d.status, d.orderRef, d.customer, d.amount, d.items ? JSON.stringify(d.items) : null, d.currency],
        );
        return rows[0] as { http_status: number; status: string | null; code: string | null; message: string; order_id: string | null };
      });
      logger.info({ source, key, outcome: outcome.status ?? outcome.code, order: outcome.order_id }, "payment callback");
      paymentCallbacks.inc({ outcome: outcome.status ?? outcome.code ?? "unknown" });
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
    fail(res, "VALIDATION_FAILED", "Use POST.", undefined, 405);
  });

  router.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    logger.error({ err }, "payment callback route error");
    fail(res, "INTERNAL_ERROR", "Unexpected error.");
  });
  return router;
}
