import type { Task } from "graphile-worker";
import type Stripe from "stripe";
import { logger } from "../../logger.ts";
import { isPermanentStripeError, stripeErrorText } from "../../payments/stripeClient.ts";
import { asSystemInJob } from "../job.ts";

// Pays a refund back through Stripe's Refunds API (queued by
// app_private.tg_refunds__queue_payout for a refund of an order paid
// through Stripe; payload { id }, job_key per refund). The Idempotency-Key
// is the refund's id: however often this runs (a retry, a crash after
// Stripe answered), Stripe makes one refund. Taken: SENT with Stripe's
// refund id, until the webhook settles it. Refused for good (a 4xx): FAILED
// and an alert. Any other failure: app_private.refund_failed queues the next
// attempt with back-off (refund_backoff_* settings) and raises an alert when
// the refund is still failing after a day.

interface Payout {
  id: string;
  orderId: string;
  paymentIntent: string;
  amount: number;
  currency: string;
}

function idOf(payload: unknown): string {
  const id = (payload as { id?: unknown } | null)?.id;
  if (typeof id !== "string" || !/^[0-9a-f-]{36}$/i.test(id)) throw new Error(`payload has no valid id: ${JSON.stringify(payload)}`);
  return id;
}

export function refund__pay(stripe: Stripe | null): Task {
  return async (payload, helpers) => {
    const id = idOf(payload);
    const payout = await asSystemInJob(helpers, async (c) => (await c.query<{ p: Payout | null }>("select app_private.refund_payout($1) as p", [id])).rows[0]!.p);
    if (!payout) return; // taken, settled, refused, or gone
    let refund: Stripe.Refund;
    try {
      if (!stripe) throw new Error("STRIPE_SECRET_KEY is not set");
      refund = await stripe.refunds.create(
        { payment_intent: payout.paymentIntent, amount: payout.amount, metadata: { refund_id: payout.id, order_id: payout.orderId } },
        // Our own back-off retries (app_private.refund_failed), not the client's.
        { idempotencyKey: payout.id, maxNetworkRetries: 0 },
      );
    } catch (err) {
      const permanent = isPermanentStripeError(err);
      const message = stripeErrorText(err);
      const next = await asSystemInJob(helpers, async (c) => (await c.query<{ next: Date | null }>("select app_private.refund_failed($1, $2, $3) as next", [id, message, permanent])).rows[0]!.next);
      if (next) logger.warn({ refund: id, err: message, retryAt: next }, "refund through Stripe failed; will retry");
      else logger.error({ refund: id, err: message }, "Stripe refused the refund; settle it by hand");
      return;
    }
    await asSystemInJob(helpers, (c) => c.query("select app_private.refund_sent($1, $2)", [id, refund.id]));
    logger.info({ refund: id, stripeRefund: refund.id, order: payout.orderId }, "refund sent through Stripe");
  };
}
