import { z } from "zod";

// The two body shapes the provider sends (docs/payments.md).
// Unknown fields are ignored: providers add fields.

const MAX_AMOUNT = 99_999_999.99;

/** A positive amount with at most two decimals, as a number or a numeric string; kept as exact text. */
export const amount = z.union([z.number(), z.string().regex(/^\d{1,8}(\.\d{1,2})?$/, "must be a number with at most two decimals")]).transform((v, ctx) => {
  const n = typeof v === "number" ? v : Number(v);
  if (!Number.isFinite(n) || n <= 0 || n > MAX_AMOUNT) {
    ctx.addIssue({ code: "custom", message: "must be a positive amount" });
    return z.NEVER;
  }
  if (Math.abs(n * 100 - Math.round(n * 100)) > 1e-6) {
    ctx.addIssue({ code: "custom", message: "must have at most two decimals" });
    return z.NEVER;
  }
  return n.toFixed(2);
});

/** Text Postgres can store: no NUL characters. */
const text = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((v) => !v.includes("\u0000"), "must not contain NUL characters");

const key = text(200);

/**
 * An ISO 4217 code, e.g. "EUR" or "eur" (ASCII letters only; upper-cased).
 * Whether it is the café's is a rule of the database (settings.currency).
 */
const currency = z
  .string()
  .regex(/^[A-Za-z]{3}$/, "must be a three-letter ISO 4217 currency code")
  .transform((v) => v.toUpperCase());

/** The one status that means a payment, compared exactly (no case folding, no Unicode normalisation). */
export const PAID_STATUS = "paid";
/** The one event that means a payment (shape A), compared exactly. */
export const PAYMENT_EVENT = "payment.completed";

/**
 * What a shape-B status means. The one place "paid" is decided: exactly
 * "paid". A status that is not printable ASCII (full-width letters,
 * zero-width or combining characters, dotted capital I, Cyrillic look-alikes,
 * ...) or that is "paid" in another case is refused, so that a look-alike
 * is never mistaken for a payment and a provider that means one hears so;
 * any other status is a status other than paid (ignored).
 */
export function statusKind(status: string): "paid" | "other" | "refused" {
  if (status === PAID_STATUS) return "paid";
  if (!/^[\x21-\x7e]+$/.test(status)) return "refused";
  if (status.toLowerCase() === PAID_STATUS) return "refused";
  return "other";
}

const common = {
  event_id: key.optional(),
  idempotency_key: key.optional(),
};

export const shapeA = z.object({
  event: text(100),
  data: z.object({
    amount,
    customer: z.email("must be an e-mail address").max(254),
    order_id: text(100).optional(),
    currency: currency.optional(),
  }),
  ...common,
});

/** Other event kinds: recorded and acknowledged, whatever their data. */
export const shapeAOther = z.object({ event: text(100), ...common });

export const shapeB = z.object({
  order_id: text(100),
  status: text(50),
  amount,
  items: z
    .array(z.object({ product: text(200), quantity: z.number().int().min(1).max(1000) }))
    .min(1, "must list at least one item")
    .max(100),
  currency: currency.optional(),
  ...common,
});

export const shapeBOther = z.object({ order_id: text(100), status: text(50), ...common });

/**
 * `payment` is the route's decision (and the only one): true exactly when the
 * body is shape A with event "payment.completed" or shape B with status
 * "paid"; then amount (and, for shape B, items) are present and valid.
 */
export type Delivery =
  | {
      shape: "A";
      payment: boolean;
      event: string;
      orderRef: string | null;
      customer: string | null;
      amount: string | null;
      items: null;
      status: null;
      currency: string | null;
      eventId?: string;
      idempotencyKey?: string;
    }
  | {
      shape: "B";
      payment: boolean;
      event: null;
      orderRef: string;
      customer: null;
      amount: string | null;
      items: Array<{ product: string; quantity: number }> | null;
      status: string;
      currency: string | null;
      eventId?: string;
      idempotencyKey?: string;
    };

export interface FieldProblem {
  path: string;
  message: string;
}

/** Validates a parsed body: a Delivery, or the list of what is wrong with it. */
export function parseDelivery(body: unknown): { ok: true; delivery: Delivery } | { ok: false; details: FieldProblem[] } {
  const problems = (error: z.ZodError): FieldProblem[] => error.issues.map((i) => ({ path: i.path.join(".") || "(body)", message: i.message }));
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { ok: false, details: [{ path: "(body)", message: "must be a JSON object" }] };
  }
  if ("event" in body) {
    const event = (body as { event?: unknown }).event;
    if (event !== PAYMENT_EVENT) {
      const r = shapeAOther.safeParse(body);
      if (!r.success) return { ok: false, details: problems(r.error) };
      return {
        ok: true,
        delivery: {
          shape: "A",
          payment: false,
          event: r.data.event,
          orderRef: null,
          customer: null,
          amount: null,
          items: null,
          status: null,
          currency: null,
          eventId: r.data.event_id,
          idempotencyKey: r.data.idempotency_key,
        },
      };
    }
    const r = shapeA.safeParse(body);
    if (!r.success) return { ok: false, details: problems(r.error) };
    const d = r.data;
    return {
      ok: true,
      delivery: {
        shape: "A",
        payment: true,
        event: d.event,
        orderRef: d.data.order_id ?? null,
        customer: d.data.customer,
        amount: d.data.amount,
        items: null,
        status: null,
        currency: d.data.currency ?? null,
        eventId: d.event_id,
        idempotencyKey: d.idempotency_key,
      },
    };
  }
  if ("order_id" in body) {
    const status = (body as { status?: unknown }).status;
    const kind = typeof status === "string" ? statusKind(status) : "paid"; // not a string: shape B names the problem
    if (kind === "refused") {
      return { ok: false, details: [{ path: "status", message: `must be printable ASCII; a payment is exactly "${PAID_STATUS}"` }] };
    }
    if (kind === "other") {
      const r = shapeBOther.safeParse(body);
      if (!r.success) return { ok: false, details: problems(r.error) };
      return {
        ok: true,
        delivery: {
          shape: "B",
          payment: false,
          event: null,
          orderRef: r.data.order_id,
          customer: null,
          amount: null,
          items: null,
          status: r.data.status,
          currency: null,
          eventId: r.data.event_id,
          idempotencyKey: r.data.idempotency_key,
        },
      };
    }
    const r = shapeB.safeParse(body);
    if (!r.success) return { ok: false, details: problems(r.error) };
    const d = r.data;
    return {
      ok: true,
      delivery: {
        shape: "B",
        payment: true,
        event: null,
        orderRef: d.order_id,
        customer: null,
        amount: d.amount,
        items: d.items,
        status: d.status,
        currency: d.currency ?? null,
        eventId: d.event_id,
        idempotencyKey: d.idempotency_key,
      },
    };
  }
  return { ok: false, details: [{ path: "(body)", message: "must carry `event` (shape A) or `order_id` (shape B)" }] };
}
