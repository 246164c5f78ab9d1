import { extendSchema } from "postgraphile/utils";
import { SafeError, sideEffect, type FieldArgs } from "postgraphile/grafast";
import type { CafeServices, PaymentIntentView } from "../common/services.ts";

interface PaymentStartRow {
  order_id: string;
  amount_minor: string;
  currency: string;
  intent_id: string | null;
}

/**
 * startPayment: the PaymentIntent a customer's app pays an order with
 * (docs/payments.md). Postgres decides who may and what it costs
 * (app_hidden.payment_start: the order's own customer or staff at the till,
 * a PENDING order, its total in minor units); the provider (the preset's
 * `schema.cafe.paymentIntents`, Stripe) makes the intent, with an
 * Idempotency-Key derived from the order and its total, so a retry finds
 * the same one; app_hidden.record_payment_intent keeps it (the rule again),
 * so a second call returns it, and cancelling the order cancels it.
 *
 * The rule's transaction commits before the provider is called: no
 * connection is held while Stripe answers.
 */
export const PaymentsPlugin = extendSchema((build) => {
  const executor = build.input.pgRegistry.pgExecutors.main!;
  const services: CafeServices | undefined = build.options.cafe;
  return {
    typeDefs: /* GraphQL */ `
      "A payment to confirm in the customer's app (Stripe's Payment Sheet) with its client secret."
      type PaymentStart {
        "Hand it to the Payment Sheet; only the order's customer (or the till) should see it."
        clientSecret: String!
        "Stripe's PaymentIntent id (pi_…)."
        paymentIntentId: String!
        "The order's total in the currency's minor units (cents; yen for JPY)."
        amount: Int!
        "ISO 4217, upper case: the café's currency."
        currency: String!
      }
      extend type Mutation {
        "Starts paying a PENDING order by card: the order's own customer, or staff at the till. Calling it again for the same order returns the same payment. The order becomes PAID when Stripe says so (its webhook). PAYMENTS_NOT_CONFIGURED without Stripe."
        startPayment(orderId: ID!): PaymentStart!
      }
    `,
    objects: {
      Mutation: {
        plans: {
          startPayment(_: unknown, fieldArgs: FieldArgs) {
            return sideEffect({ pg: executor.context(), orderId: fieldArgs.getRaw("orderId") }, async ({ pg, orderId }) => {
              // The rule, in its own transaction, committed before the provider is called
              // (and asked first: who may pay which order does not depend on Stripe's set-up).
              const start = await pg.withPgClient(pg.pgSettings, (client) =>
                client.withTransaction(async (tx) => (await tx.query<PaymentStartRow>({ text: "select (s).* from (select app_hidden.payment_start($1::uuid) as s) x", values: [orderId] })).rows[0]!),
              );
              const intents = services?.paymentIntents;
              if (!intents) throw new SafeError("This café takes no card payments in the app: pay at the till.", { code: "PAYMENTS_NOT_CONFIGURED" });
              await pg.withPgClient(pg.pgSettings, async () => undefined);
              const amount = Number(start.amount_minor);
              let intent: PaymentIntentView;
              try {
                const known = start.intent_id ? await intents.retrieve(start.intent_id) : null;
                intent =
                  known && known.status !== "canceled" && known.amount === amount
                    ? known
                    : await intents.create({ orderId: start.order_id, amount, currency: start.currency }, `order:${start.order_id}:${amount}:${start.currency}`);
              } catch (err) {
                services.logError({ err, order: start.order_id }, "startPayment: the payment provider failed");
                throw new SafeError("The payment could not be started; try again.", { code: "PAYMENT_PROVIDER_ERROR" });
              }
              if (intent.id !== start.intent_id) {
                await pg.withPgClient(pg.pgSettings, (client) =>
                  client.withTransaction((tx) =>
                    tx.query({ text: "select app_hidden.record_payment_intent($1::uuid, $2, $3, $4)", values: [start.order_id, intent.id, intent.amount, intent.currency] }),
                  ),
                );
              }
              return { clientSecret: intent.clientSecret, paymentIntentId: intent.id, amount: intent.amount, currency: intent.currency };
            });
          },
        },
      },
    },
  };
}, "PaymentsPlugin");
