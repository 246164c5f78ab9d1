import { z } from "zod";

// The two body shapes the provider sends (DESIGN.md "Payment callback").
// Unknown fields are ignored: providers add fields.

const MAX_AMOUNT = 99_999_999.99;

/** A positive amount with at most two decimals, as a number or a numeric string; kept as exact text. */
export const amount = z
  .union([z.number(), z.string().regex(/^\d{1,8}(\.\d{1,2})?$/, "must be a number with at most two decimals")])
  .transform((v, ctx) => {
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
  ...common,
});

export const shapeBOther = z.object({ order_id: text(100), status: text(50), ...common });

export type Delivery =
  | { shape: "A"; event: string; orderRef: string | null; customer: string | null; amount: string | null; items: null; status: null; eventId?: string; idempotencyKey?: string }
  | { shape: "B"; event: "payment.completed"; orderRef: string; customer: null; amount: string | null; items: Array<{ product: string; quantity: number }> | null; status: string; eventId?: string; idempotencyKey?: string };

export interface FieldProblem {
  path: string;
  message: string;
}

/** Validates a parsed body: a Delivery, or the list of what is wrong with it. */
export function parseDelivery(body: unknown): { ok: true; delivery: Delivery } | { ok: false; details: FieldProblem[] } {
  const problems = (error: z.ZodError): FieldProblem[] =>
    error.issues.map((i) => ({ path: i.path.join(".") || "(body)", message: i.message }));
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { ok: false, details: [{ path: "(body)", message: "must be a JSON object" }] };
  }
  if ("event" in body) {
    const event = (body as { event?: unknown }).event;
    if (event !== "payment.completed") {
      const r = shapeAOther.safeParse(body);
      if (!r.success) return { ok: false, details: problems(r.error) };
      return { ok: true, delivery: { shape: "A", event: r.data.event, orderRef: null, customer: null, amount: null, items: null, status: null, eventId: r.data.event_id, idempotencyKey: r.data.idempotency_key } };
    }
    const r = shapeA.safeParse(body);
    if (!r.success) return { ok: false, details: problems(r.error) };
    const d = r.data;
    return { ok: true, delivery: { shape: "A", event: d.event, orderRef: d.data.order_id ?? null, customer: d.data.customer, amount: d.data.amount, items: null, status: null, eventId: d.event_id, idempotencyKey: d.idempotency_key } };
  }
  if ("order_id" in body) {
    const status = (body as { status?: unknown }).status;
    if (typeof status === "string" && status.toLowerCase() !== "paid") {
      const r = shapeBOther.safeParse(body);
      if (!r.success) return { ok: false, details: problems(r.error) };
      return { ok: true, delivery: { shape: "B", event: "payment.completed", orderRef: r.data.order_id, customer: null, amount: null, items: null, status: r.data.status, eventId: r.data.event_id, idempotencyKey: r.data.idempotency_key } };
    }
    const r = shapeB.safeParse(body);
    if (!r.success) return { ok: false, details: problems(r.error) };
    const d = r.data;
    return { ok: true, delivery: { shape: "B", event: "payment.completed", orderRef: d.order_id, customer: null, amount: d.amount, items: d.items, status: d.status, eventId: d.event_id, idempotencyKey: d.idempotency_key } };
  }
  return { ok: false, details: [{ path: "(body)", message: "must carry `event` (shape A) or `order_id` (shape B)" }] };
}
