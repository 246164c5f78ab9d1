import { codes } from "../support/client.ts";
import { documentsOf } from "../support/contract.ts";
import { placeOrder, stockedCoffee } from "../support/fixtures.ts";
import { useTestService, type TestService } from "../support/service.ts";
import { sendStripeEvent, stripeEvent } from "../support/stripe.ts";

// startPayment and the Stripe webhook where Stripe is not configured
// (test/http/stripe-webhook.test.ts covers them with Stripe).

const t = useTestService({ sandbox: true });

const startPayment = (s: TestService, orderId: string, token: string) => s.gql(documentsOf("mobile"), { operationName: "StartPayment", variables: { orderId }, token });

test("without STRIPE_SECRET_KEY: startPayment answers PAYMENTS_NOT_CONFIGURED, the webhook route 404", async () => {
  const coffee = await stockedCoffee(t, "No-Stripe latte", "3.80", 1);
  const o = await placeOrder(t, await t.token("alice"), [{ coffeeId: coffee.id, quantity: 1 }]);
  const r = await startPayment(t, o.id, await t.token("alice"));
  expect(codes(r)).toEqual(["PAYMENTS_NOT_CONFIGURED"]);
  expect(r.body.data).toBeNull();
  const hook = await sendStripeEvent(t.url, stripeEvent("payment_intent.succeeded", { id: "pi_1", object: "payment_intent" }));
  expect(hook.status).toBe(404);
  expect(hook.body.error.code).toBe("NOT_FOUND");
});
