import { extendSchema } from "postgraphile/utils";
import { withPgClient } from "postgraphile/@dataplan/pg";
import { jsonParse } from "postgraphile/@dataplan/json";
import { context, lambda, listen, type Step } from "postgraphile/grafast";

/**
 * The contract's subscriptions over LISTEN/NOTIFY. Triggers publish ids on
 * `order:<id>`, `order_status:<id>` and `coffee:new`; each event is read
 * again from Postgres under the subscriber's own role, so RLS decides what
 * they see. Following an order is checked when subscribing
 * (app_hidden.assert_can_follow_order): someone else's order is NOT_FOUND.
 */
export const SubscriptionsPlugin = extendSchema((build) => {
  const { pgResources, pgExecutors } = build.input.pgRegistry;
  const orders = pgResources.orders!;
  const coffees = pgResources.coffees!;
  const baristas = pgResources.baristas!;
  const executor = pgExecutors.main!;

  /** A step that fails (NOT_FOUND, UNAUTHENTICATED) unless the caller may follow the order. */
  const followable = ($id: Step) =>
    withPgClient(executor, $id, async (client, id) => {
      await client.query({ text: "select app_hidden.assert_can_follow_order($1::uuid)", values: [id] });
      return id as string;
    });

  return {
    typeDefs: /* GraphQL */ `
      type OrderStatusChange {
        orderId: ID!
        status: OrderStatus!
        "Human text for the new status: Brewing, Ready for pickup, Completed, ..."
        message: String!
        barista: Barista
      }
      extend type Subscription {
        "The order, each time it or its lines change (your own orders; staff: any)."
        orderUpdated(id: ID!): Order!
        "Each coffee added to the menu."
        newCoffee: Coffee!
        "Each status the order takes (your own orders; staff: any)."
        orderStatusChanged(orderId: ID!): OrderStatusChange!
      }
    `,
    plans: {
      Subscription: {
        orderUpdated: {
          subscribePlan(_, { $id }) {
            const $topic = lambda(followable($id), (id) => `order:${id}`);
            return listen(context().get("pgSubscriber") as any, $topic, (e) => e);
          },
          plan(_$event, { $id }) {
            return orders.get({ id: $id });
          },
        },
        orderStatusChanged: {
          subscribePlan(_, { $orderId }) {
            const $topic = lambda(followable($orderId), (id) => `order_status:${id}`);
            return listen(context().get("pgSubscriber") as any, $topic, (e) => jsonParse(e as any));
          },
          plan($event) {
            return $event;
          },
        },
        newCoffee: {
          subscribePlan() {
            return listen(context().get("pgSubscriber") as any, "coffee:new", (e) => jsonParse(e as any));
          },
          plan($event: any) {
            return coffees.get({ id: $event.get("id") });
          },
        },
      },
      OrderStatusChange: {
        orderId($e: any) {
          return $e.get("id");
        },
        status($e: any) {
          return $e.get("status");
        },
        message($e: any) {
          return $e.get("message");
        },
        barista($e: any) {
          return baristas.get({ id: $e.get("barista_id") });
        },
      },
    },
  };
});
