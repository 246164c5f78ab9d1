import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import express, { type Request, type Response, type NextFunction } from "express";
import type pg from "pg";
import type { Config } from "../config.ts";
import { logger } from "../logger.ts";
import { parseDelivery } from "./schema.ts";
import { paymentCallbacks } from "../metrics.ts";
import { asSystem as asSystemOn } from "../asSystem.ts";
import type { DatabaseHealth } from "../dbHealth.ts";

// POST /orders/payment-callback. Checks, in order: source blocked (429) ->
// size while reading (413) -> token and signature over the raw bytes (401)
// -> content type (415) -> JSON and fields (400) -> duplicate key (200
// duplicate) -> the order's rules (422), the last two in one transaction in
// Postgres (app_private.process_payment_callback).

export const CALLBACK_PATH = "/orders/payment-callback";
export const MAX_CALLBACK_BYTES = 64 * 1024;

type ErrorCode =
  | "RATE_LIMITED"
  | "PAYLOAD_TOO_LARGE"
  | "UNAUTHORIZED"
  | "BAD_SIGNATURE"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "INVALID_JSON"
  | "VALIDATION_FAILED"
  | "SERVICE_UNAVAILABLE"
  | "INTERNAL_ERROR";

const sha256 = (data: Buffer | string) => createHash("sha256").update(data).digest();

function sameSecret(given: string, expected: string): boolean {
  // Hash both so the comparison is constant-time whatever the lengths.
  return timingSafeEqual(sha256(given), sha256(expected));
}

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
  const secrets = [config.SIGNING_SECRET, ...(config.SIGNING_SECRET_PREVIOUS ? [config.SIGNING_SECRET_PREVIOUS] : [])];

  const asSystem = <T>(fn: (client: pg.ClientBase) => Promise<T>) => asSystemOn(pool, fn);

  const log = (source: string, status: number, code: string, reason: string) =>
    asSystem((c) => c.query("select app_private.log_delivery($1, $2, 'rejected', $3, $4)", [source, status, code, reason])).catch((err) =>
      logger.error({ err }, "could not log a payment delivery"),
    );

  function fail(res: Response, status: number, code: ErrorCode, message: string, details?: Array<{ path: string; message: string }>) {
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
      return fail(res, 503, "SERVICE_UNAVAILABLE", "The service is unavailable; retry later.");
    }
    // The block list is read only when about to refuse: a validly signed
    // request is never blocked, so it costs those nothing.
    const isBlocked = () =>
      asSystem(async (c) => (await c.query("select app_private.is_source_blocked($1) as b", [source])).rows[0].b as boolean).catch((err) => {
        logger.error({ err: (err as Error).message }, "payment callback: database unavailable");
        health.markDown();
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
      if (await isBlocked().catch(() => false)) return fail(res, 429, "RATE_LIMITED", "Too many failed attempts from this source; retry later.");
      await log(source, 413, "PAYLOAD_TOO_LARGE", "body over 64 KiB");
      res.setHeader("connection", "close");
      return fail(res, 413, "PAYLOAD_TOO_LARGE", `The body may have at most ${MAX_CALLBACK_BYTES} bytes.`);
    }

    // Who is calling: the provider's token, then its signature over these bytes.
    const auth = req.headers.authorization ?? "";
    const bearer = /^Bearer\s+(\S+)$/i.exec(auth)?.[1];
    const tokenOk = bearer !== undefined && sameSecret(bearer, config.WEBHOOK_TOKEN);
    const signatureOk = tokenOk && signatureMatches(req.header("x-signature"), body, secrets);
    if (!tokenOk || !signatureOk) {
      const code = tokenOk ? "BAD_SIGNATURE" : "UNAUTHORIZED";
      const blocked = await isBlocked().catch(() => false);
      await log(source, blocked ? 429 : 401, code, tokenOk ? "signature does not match the body" : "missing or wrong bearer token");
      if (blocked) return fail(res, 429, "RATE_LIMITED", "Too many failed attempts from this source; retry later.");
      res.setHeader("www-authenticate", 'Bearer realm="payment-callback"');
      return tokenOk
        ? fail(res, 401, "BAD_SIGNATURE", "X-Signature must be sha256=<hex HMAC-SHA256 of the body>.")
        : fail(res, 401, "UNAUTHORIZED", "A valid Authorization: Bearer <webhook token> is required.");
    }

    const encoding = (req.headers["content-encoding"] ?? "identity").trim().toLowerCase();
    if (encoding !== "identity") {
      await log(source, 415, "UNSUPPORTED_MEDIA_TYPE", `content encoding ${encoding}`);
      return fail(res, 415, "UNSUPPORTED_MEDIA_TYPE", "Send the body uncompressed (no Content-Encoding).");
    }
    const contentType = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
    if (contentType !== "application/json") {
      await log(source, 415, "UNSUPPORTED_MEDIA_TYPE", `content type ${contentType || "(none)"}`);
      return fail(res, 415, "UNSUPPORTED_MEDIA_TYPE", "Send Content-Type: application/json.");
    }

    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      await log(source, 400, "INVALID_JSON", "body is not JSON");
      return fail(res, 400, "INVALID_JSON", "The body is not valid JSON.");
    }
    const result = parseDelivery(parsed);
    if (!result.ok) {
      await log(source, 400, "VALIDATION_FAILED", result.details.map((d) => `${d.path}: ${d.message}`).join("; "));
      return fail(res, 400, "VALIDATION_FAILED", "The body has invalid fields.", result.details);
    }
    const d = result.delivery;
    const bodyHash = sha256(body).toString("hex");
    const key = d.idempotencyKey ? `idem:${d.idempotencyKey}` : d.eventId ? `event:${d.eventId}` : `sha256:${bodyHash}`;

    try {
      const outcome = await asSystem(async (c) => {
        const { rows } = await c.query(
          "select (r).* from (select app_private.process_payment_callback($1, $2, $3, $4, $5, $6, $7, $8, $9) as r) x",
          [source, key, bodyHash, d.event, d.status, d.orderRef, d.customer, d.amount, d.items ? JSON.stringify(d.items) : null],
        );
        return rows[0] as { http_status: number; status: string | null; code: string | null; message: string; order_id: string | null };
      });
      logger.info({ source, key, outcome: outcome.status ?? outcome.code, order: outcome.order_id }, "payment callback");
      paymentCallbacks.inc({ outcome: outcome.status ?? outcome.code ?? "unknown" });
      if (outcome.code) {
        return res.status(outcome.http_status).json({ error: { code: outcome.code, message: outcome.message } });
      }
      return res.status(200).json({ status: outcome.status, ...(outcome.order_id ? { orderId: outcome.order_id } : null) });
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === "ECONNREFUSED" || code === "57P01" || code === "08006" || code === "57P03" || /timeout|terminated/i.test((err as Error).message)) {
        health.markDown();
        return fail(res, 503, "SERVICE_UNAVAILABLE", "The service is unavailable; retry later.");
      }
      logger.error({ err }, "payment callback failed");
      await log(source, 500, "INTERNAL_ERROR", "unexpected error");
      return fail(res, 500, "INTERNAL_ERROR", "The payment could not be processed; retry later.");
    }
  });

  router.all(CALLBACK_PATH, (_req: Request, res: Response) => {
    res.setHeader("allow", "POST");
    fail(res, 405 as number, "VALIDATION_FAILED", "Use POST.");
  });

  router.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    logger.error({ err }, "payment callback route error");
    fail(res, 500, "INTERNAL_ERROR", "Unexpected error.");
  });
  return router;
}
