import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isDatabaseBusy, isDatabaseUnavailable, type DatabaseHealth } from "../db/dbHealth.ts";
import { RETRY_AFTER_SECONDS } from "../../common/errorCatalogue.ts";
import type { Config } from "../config.ts";
import { RateLimiter } from "../http/rateLimiter.ts";

// What every provider's route (src/payments/generic.ts, stripe.ts) does the
// same way: read the exact bytes sent, at most MAX_DELIVERY_BYTES (the
// signature covers these bytes), and answer JSON.

/** The most bytes a provider's delivery may have. */
export const MAX_DELIVERY_BYTES = 64 * 1024;

/** A provider route's handler: the router (src/http/router.ts) calls it straight. */
export type DeliveryHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The payment routes' one per-source limit (CALLBACK_RATE_LIMIT a second),
 * shared by both routes so a source gets one budget, not one per route: the
 * both spend it only on deliveries that do not verify (the generic callback:
 * without the webhook token, or with it and a wrong signature), so the
 * provider's own deliveries never use up what the other route has.
 */
export const deliveryLimiter = (config: Pick<Config, "CALLBACK_RATE_LIMIT">) => new RateLimiter(config.CALLBACK_RATE_LIMIT, 1000);

/** A 429 of a payment route: when to retry, and the connection closes when the body was not read. */
export function tooManyHeaders(req: IncomingMessage, res: ServerResponse, retryAfterSeconds: number): void {
  res.setHeader("retry-after", String(retryAfterSeconds));
  if (!req.complete) res.setHeader("connection", "close");
}

export const sha256Hex = (data: Buffer | string) => createHash("sha256").update(data).digest("hex");

/** The exact bytes sent, at most `max` (null: too large; what was sent is drained, not kept). */
export function readBody(req: IncomingMessage, max = MAX_DELIVERY_BYTES): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > max) {
      req.resume();
      return resolve(null);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        req.removeAllListeners("data");
        req.resume();
        resolve(null);
      } else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** Answers `body` as JSON with `status`. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader("content-type", "application/json; charset=utf-8");
  res.setHeader("content-length", Buffer.byteLength(text));
  res.end(text);
}

/** A header's one value (the first, when sent twice). */
export function headerOf(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * A failed transaction the provider should retry, nothing recorded: the
 * pool stayed full (SERVICE_BUSY) or the database is gone
 * (SERVICE_UNAVAILABLE, and the health probe asked now); its Retry-After is
 * set. Null: another failure.
 */
export function retryLater(err: unknown, res: ServerResponse, health: DatabaseHealth): "SERVICE_BUSY" | "SERVICE_UNAVAILABLE" | null {
  const code = isDatabaseBusy(err) ? "SERVICE_BUSY" : isDatabaseUnavailable(err) ? "SERVICE_UNAVAILABLE" : null;
  if (code === "SERVICE_UNAVAILABLE") health.suspect();
  if (code) res.setHeader("retry-after", String(RETRY_AFTER_SECONDS[code]));
  return code;
}
