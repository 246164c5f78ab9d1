import type { Task } from "graphile-worker";
import type Stripe from "stripe";
import { logger } from "../../logger.ts";
import { isPermanentStripeError, stripeErrorText } from "../../payments/stripeClient.ts";
import { asSystemInJob } from "../job.ts";

// Cancels an order's PaymentIntent at Stripe once the order is cancelled or
// expired (queued by app_private.tg_orders__cancel_payment_intents, payload
// { intentId }, job_key per intent), so the customer can no longer pay it.
// An intent already paid is left alone: its webhook finds the order
// cancelled and a refund owed. Stripe refusing (a 4xx: paid or cancelled
// meanwhile) ends it; any other failure is retried by graphile-worker.

function intentIdOf(payload: unknown): string {
  const id = (payload as { intentId?: unknown } | null)?.intentId;
  if (typeof id !== "string" || !/^pi_[A-Za-z0-9_]+$/.test(id)) throw new Error(`payload has no valid intentId: ${JSON.stringify(payload)}`);
  return id;
}

export function payment_intent__cancel(stripe: Stripe | null): Task {
  return async (payload, helpers) => {
    const intentId = intentIdOf(payload);
    const due = await asSystemInJob(helpers, async (c) => (await c.query<{ id: string | null }>("select app_private.payment_intent_to_cancel($1) as id", [intentId])).rows[0]!.id);
    if (!due) return; // paid, cancelled already, or gone
    if (!stripe) throw new Error("STRIPE_SECRET_KEY is not set: cannot cancel the payment intent (the job is retried)");
    try {
      await stripe.paymentIntents.cancel(intentId, {}, { idempotencyKey: `cancel:${intentId}` });
    } catch (err) {
      if (!isPermanentStripeError(err)) throw err;
      logger.warn({ intent: intentId, err: stripeErrorText(err) }, "Stripe would not cancel the payment intent (paid or cancelled meanwhile)");
    }
    await asSystemInJob(helpers, (c) => c.query("select app_private.payment_intent_canceled($1)", [intentId]));
    logger.info({ intent: intentId }, "payment intent cancelled");
  };
}
