import type { IncomingMessage, ServerResponse } from "node:http";
import type pg from "pg";
import Stripe from "stripe";
import type { Config } from "../config.ts";
import { logger } from "../logger.ts";
import { refusedFor } from "../requestScope.ts";
import { stripeWebhooks } from "../metrics.ts";
import { statementAsSystem } from "../db/asSystem.ts";
import type { DatabaseHealth } from "../db/dbHealth.ts";
import { RETRY_AFTER_SECONDS, STRIPE_WEBHOOK_ERRORS, type StripeWebhookErrorCode } from "../../common/errorCatalogue.ts";
import type { Source } from "../http/clientAddress.ts";
import type { RateLimiter } from "../http/rateLimiter.ts";
import { annotateSpan, inSpan } from "../tracing.ts";
import { headerOf, MAX_DELIVERY_BYTES, readBody, retryLater, sendJson, sha256Hex, tooManyHeaders, type DeliveryHandler } from "./delivery.ts";

// Stripe's own webhooks: POST /payments/stripe/webhook (docs/payments.md).
// Its steps, in order:
//   1. read    the exact bytes, at most 64 KiB (413);
//   2. verify  `Stripe-Signature` with the official package
//              (webhooks.constructEvent, Stripe's 300 s tolerance) under each
//              of STRIPE_WEBHOOK_SECRET's secrets; missing, bad or stale: 400
//              (the one answer that makes Stripe retry), or 429 past the
//              source's limit of unverified deliveries;
//   3. parse   the event: its id, type and object;
//   4. map     the type onto what the service does (`action`) and the
//              fields it needs (one missing: `incomplete`, refused 2xx with
//              an alert);
//   5. process app_private.process_stripe_event, one transaction: deduped
//              by the event id; a payment takes the generic callback's SQL
//              path; a business refusal is 2xx with an alert (and a refund
//              owed when money was taken).
//
// No bearer token, no block list: a verified delivery is never refused and
// never counts toward a limit. An unverified one costs reading at most
// 64 KiB and an HMAC per secret, in memory: it writes nothing (counted in
// the metric, one log line per source a minute), so a stranger cannot make
// the database work, nor block Stripe's own address. It spends its source's
// share of the payment routes' one per-source limit (CALLBACK_RATE_LIMIT a
// second, delivery.ts deliveryLimiter); past it the answer is 429 and the
// connection closes, and a delivery without Stripe-Signature (which can
// never verify) is refused before its body is read.
// While tracing is on, each step is a span (`stripe_webhook <step>`).

export const STRIPE_WEBHOOK_PATH = "/payments/stripe/webhook";

/**
 * What an event asks the database to do (app_private.process_stripe_event's
 * p_action); `incomplete`: a verified event without a field its action
 * needs, refused 2xx with an alert (`fields.missing` names them).
 */
export type StripeAction = "payment" | "payment_failed" | "refund_settled" | "refund_failed" | "dispute" | "ignored" | "incomplete";

export interface MappedEvent {
  action: StripeAction;
  fields: {
    intentId?: string | null;
    orderRef?: string | null;
    amount?: number | null;
    currency?: string | null;
    refundRef?: string | null;
    providerRefundId?: string | null;
    reason?: string | null;
    /** `incomplete`: the event's fields that are missing or invalid, as Stripe names them. */
    missing?: string | null;
  };
}

/** Every outcome counted (from 0): the database's, then the route's refusals. */
export const STRIPE_OUTCOMES: readonly string[] = ["processed", "duplicate", "ignored", "refused", ...Object.keys(STRIPE_WEBHOOK_ERRORS)];

export interface StripeWebhookOptions {
  config: Pick<Config, "STRIPE_WEBHOOK_SECRET">;
  /** The payment routes' own pool (CALLBACK_POOL_SIZE connections). */
  pool: pg.Pool;
  health: DatabaseHealth;
  /** The payment routes' per-source limit (delivery.ts deliveryLimiter): spent by unverified deliveries only. */
  limiter: RateLimiter;
  sourceOf(req: IncomingMessage): Source;
}

type Obj = Record<string, unknown>;
const str = (v: unknown): string | null => (typeof v === "string" && v.length > 0 && v.length <= 255 ? v : null);
const int = (v: unknown): number | null => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : null);
/** An id field that may be expanded into its object. */
const idOf = (v: unknown): string | null => str(v) ?? str((v as Obj | null)?.id);
const metadataOf = (o: Obj): Obj => (o.metadata && typeof o.metadata === "object" ? (o.metadata as Obj) : {});

type Fields = MappedEvent["fields"];

/**
 * The fields an event's action cannot go without, by Stripe's name in
 * data.object, and the mapped fields that hold it (one of them is enough):
 * a payment needs its intent, amount and currency; a settlement by charge,
 * the intent and the amount refunded; a refund's update, the refund. An
 * event lacking one is `incomplete`.
 */
const NEEDED: Record<string, Array<[string, Array<keyof Fields>]>> = {
  "payment_intent.succeeded": [
    ["id", ["intentId"]],
    ["amount_received", ["amount"]],
    ["currency", ["currency"]],
  ],
  "payment_intent.payment_failed": [["id", ["intentId"]]],
  "charge.refunded": [
    ["payment_intent", ["intentId"]],
    ["amount_refunded", ["amount"]],
  ],
  "refund.updated": [["id", ["refundRef", "providerRefundId"]]],
  "refund.failed": [["id", ["refundRef", "providerRefundId"]]],
};

/** 4. map: an event's type onto an action and its fields (any other type: ignored; a needed field missing: incomplete). */
export function mapEvent(type: string, o: Obj): MappedEvent {
  const mapped = mapType(type, o);
  if (mapped.action === "ignored") return mapped;
  const missing = (NEEDED[type] ?? []).filter(([, keys]) => keys.every((k) => mapped.fields[k] == null)).map(([name]) => `data.object.${name}`);
  if (missing.length === 0) return mapped;
  return { action: "incomplete", fields: { intentId: mapped.fields.intentId ?? null, orderRef: mapped.fields.orderRef ?? null, missing: missing.join(", ") } };
}

function mapType(type: string, o: Obj): MappedEvent {
  switch (type) {
    case "payment_intent.succeeded":
      return {
        action: "payment",
        fields: { intentId: str(o.id), orderRef: str(metadataOf(o).order_id), amount: int(o.amount_received), currency: str(o.currency) },
      };
    case "payment_intent.payment_failed":
      return {
        action: "payment_failed",
        fields: { intentId: str(o.id), orderRef: str(metadataOf(o).order_id), reason: str((o.last_payment_error as Obj | null)?.message) },
      };
    case "charge.refunded":
      return { action: "refund_settled", fields: { intentId: idOf(o.payment_intent), amount: int(o.amount_refunded), currency: str(o.currency) } };
    case "refund.updated":
    case "refund.failed": {
      const status = o.status;
      const fields = { intentId: idOf(o.payment_intent), refundRef: str(metadataOf(o).refund_id), providerRefundId: str(o.id), reason: str(o.failure_reason) };
      if (status === "succeeded") return { action: "refund_settled", fields };
      if (status === "failed" || status === "canceled") return { action: "refund_failed", fields };
      return { action: "ignored", fields: {} };
    }
    case "charge.dispute.created":
      return {
        action: "dispute",
        fields: { intentId: idOf(o.payment_intent), amount: int(o.amount), currency: str(o.currency), reason: str(o.reason) },
      };
    default:
      return { action: "ignored", fields: {} };
  }
}

export function stripeProvider({ config, pool, health, limiter, sourceOf }: StripeWebhookOptions): DeliveryHandler {
  const secrets = (config.STRIPE_WEBHOOK_SECRET ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const outcome of STRIPE_OUTCOMES) stripeWebhooks.inc({ outcome }, 0);

  function fail(res: ServerResponse, code: StripeWebhookErrorCode, message: string) {
    refusedFor(code);
    stripeWebhooks.inc({ outcome: code });
    sendJson(res, STRIPE_WEBHOOK_ERRORS[code].status, { error: { code, message } });
  }

  function tooMany(req: IncomingMessage, res: ServerResponse) {
    tooManyHeaders(req, res, 1);
    return fail(res, "RATE_LIMITED", "Too many unverified deliveries from this source; slow down.");
  }

  // Unverified deliveries are written nowhere: counted by source and code
  // in the refusal log (src/http/refusalLog.ts), one line a minute.

  /** 2. verify: under each secret (a rotation overlaps); the event, or why not. */
  function verify(body: Buffer, header: string | undefined): { event: Stripe.Event } | { error: "signature" | "json" } {
    if (!header) return { error: "signature" };
    for (const secret of secrets) {
      try {
        return { event: Stripe.webhooks.constructEvent(body, header, secret) };
      } catch (err) {
        if (!(err instanceof Stripe.errors.StripeSignatureVerificationError)) return { error: "json" };
      }
    }
    return { error: "signature" };
  }

  /** 3. parse: the event's id, type and object. */
  function parse(event: Stripe.Event): { id: string; type: string; object: Obj } | null {
    const e = event as unknown as Obj;
    const object = (e.data as Obj | null)?.object;
    if (typeof e.id !== "string" || e.id.length > 255 || typeof e.type !== "string" || e.type.length > 100 || !object || typeof object !== "object") return null;
    return { id: e.id, type: e.type, object: object as Obj };
  }

  /** 5. process: one transaction in Postgres. */
  async function process(res: ServerResponse, source: string, bodyHash: string, event: { id: string; type: string }, mapped: MappedEvent) {
    try {
      const { rows } = await inSpan("stripe_webhook process", { "cafe.payment.action": mapped.action }, () =>
        statementAsSystem(pool, {
          name: "process_stripe_event",
          text: "select (r).* from (select app_private.process_stripe_event($1, $2, $3, $4, $5, $6) as r) x",
          values: [source, event.id, bodyHash, event.type, mapped.action, JSON.stringify(mapped.fields)],
        }),
      );
      const outcome = rows[0] as { http_status: number; status: string; code: string | null; message: string; order_id: string | null };
      logger.info({ source, event: event.id, type: event.type, outcome: outcome.status, code: outcome.code ?? undefined, order: outcome.order_id }, "stripe webhook");
      stripeWebhooks.inc({ outcome: outcome.status });
      annotateSpan({ "cafe.payment.outcome": outcome.status, "cafe.order.id": outcome.order_id ?? undefined });
      return sendJson(res, outcome.http_status, {
        status: outcome.status,
        ...(outcome.code ? { code: outcome.code, message: outcome.message } : null),
        ...(outcome.order_id ? { orderId: outcome.order_id } : null),
      });
    } catch (err) {
      // Nothing was recorded; Stripe retries.
      const later = retryLater(err, res, health);
      if (later) return fail(res, later, later === "SERVICE_BUSY" ? "The service is busy; Stripe retries." : "The service is unavailable; Stripe retries.");
      logger.error({ err, event: event.id }, "stripe webhook failed");
      return fail(res, "INTERNAL_ERROR", "The event could not be processed; Stripe retries.");
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    if (req.method !== "POST") {
      res.setHeader("allow", "POST");
      return fail(res, "METHOD_NOT_ALLOWED", "Use POST.");
    }
    const source = sourceOf(req).key;
    if (!health.up) {
      res.setHeader("retry-after", String(RETRY_AFTER_SECONDS.SERVICE_UNAVAILABLE));
      return fail(res, "SERVICE_UNAVAILABLE", "The service is unavailable; Stripe retries.");
    }
    // A delivery without a signature can never verify: it spends the
    // source's limit now, and past it is refused before it is read.
    const signature = headerOf(req, "stripe-signature");
    if (!signature && !limiter.take(source)) return tooMany(req, res);
    // 1. read
    let body: Buffer | null;
    try {
      body = await inSpan("stripe_webhook read_body", {}, () => readBody(req, MAX_DELIVERY_BYTES));
    } catch {
      return; // the client went away
    }
    if (body === null) {
      res.setHeader("connection", "close");
      return fail(res, "PAYLOAD_TOO_LARGE", `The body may have at most ${MAX_DELIVERY_BYTES} bytes.`);
    }
    // 2. verify
    const signed = body;
    const verified = inSpan("stripe_webhook verify_signature", {}, () => verify(signed, signature));
    if ("error" in verified) {
      if (verified.error === "json") return fail(res, "INVALID_JSON", "The signed body is not valid JSON.");
      // Unverified: it spends the source's limit (one without a signature did already).
      if (signature && !limiter.take(source)) return tooMany(req, res);
      return fail(res, "BAD_SIGNATURE", "Stripe-Signature is missing, does not match the body under the webhook's secret, or is older than 300 s.");
    }
    // 3. parse
    const event = parse(verified.event);
    if (!event) return fail(res, "VALIDATION_FAILED", "The event has no id, type or data.object.");
    // 4. map, 5. process
    await process(res, source, sha256Hex(body), event, mapEvent(event.type, event.object));
  }

  return (req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.error({ err }, "stripe webhook route error");
      if (!res.headersSent) fail(res, "INTERNAL_ERROR", "Unexpected error.");
      else res.destroy();
    });
  };
}
