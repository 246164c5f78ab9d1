import { extendSchema } from "postgraphile/utils";
import { pgSelectSingleFromRecord, withPgClient } from "postgraphile/@dataplan/pg";
import { jsonParse } from "postgraphile/@dataplan/json";
import { constant, context, isPromiseLike, lambda, listen, type Step } from "postgraphile/grafast";
import type { WithPgClient } from "postgraphile/@dataplan/pg";
import { Kind } from "postgraphile/graphql";
import { operationOf } from "../common/mutationTransaction.ts";
import { sharingWithPgClient } from "../common/sharedReads.ts";
import { NEW_COFFEE_TOPIC, notificationTopic, orderQueueTopic, orderStatusTopic, orderTopic, type DeliveryScope, type SharingSubscriber } from "../common/topics.ts";

/**
 * The contract's subscriptions over LISTEN/NOTIFY (topics: common/topics.ts).
 * Triggers publish ids on `order:<id>`, `order_status:<id>` and
 * `coffee:new`; each event is read again from Postgres under the
 * subscriber's own role, so RLS decides what they see. Following an order
 * is checked when subscribing (app_hidden.assert_can_follow_order):
 * someone else's order is NOT_FOUND. `notificationAdded` follows the
 * caller's own `notification:<customer id>` (app_hidden.notification_recipient).
 *
 * `orderQueueChanged(storeId)` (staff of that store only:
 * app_hidden.assert_can_follow_queue; topic `order_queue:<store id>`) gets
 * the order row as it was at each queue step from the trigger, so quick
 * steps (PAID then PREPARING by the worker) each show their own status, in
 * order; its lines, customer and barista are read under the subscriber's role.
 *
 * Subscribers who would see the same thing share one re-read per event
 * (common/sharedReads.ts): each operation over a WebSocket gets its own
 * `pgSubscriber` and `withPgClient` in its context, tied by the delivery
 * being answered.
 *
 * `orderUpdated` answers a notice by reading the order as it is now, so
 * two notices can read the same thing: a PAID notice read after the
 * worker's PREPARING, then PREPARING's own; or a write to the order that
 * changes nothing the subscriber selected. Such a repeat is dropped
 * (onlyChanges): a subscriber never gets the same order twice in a row.
 */
const SubscriptionsSchemaPlugin = extendSchema((build) => {
  const { pgResources, pgExecutors } = build.input.pgRegistry;
  const orders = pgResources.orders!;
  const coffees = pgResources.coffees!;
  const baristas = pgResources.baristas!;
  const notifications = pgResources.notifications!;
  const executor = pgExecutors.main!;

  /**
   * The store's queue topic (absent: the default store's), or a failure
   * (FORBIDDEN, UNAUTHENTICATED, NOT_FOUND) unless the caller works there.
   */
  const queueFollowable = ($storeId: Step) =>
    withPgClient(executor, $storeId, async (client, storeId) => {
      const { rows } = await client.query<{ id: string }>({ text: "select app_hidden.assert_can_follow_queue($1::uuid)::text as id", values: [storeId ?? null] });
      return orderQueueTopic(rows[0]!.id);
    });

  /**
   * The order's id in its canonical form (lower-case UUID, as the triggers
   * publish it: an id is an id however it is written), or a failure
   * (NOT_FOUND, UNAUTHENTICATED) unless the caller may follow the order.
   */
  const followable = ($id: Step) =>
    withPgClient(executor, $id, async (client, id) => {
      const { rows } = await client.query<{ id: string }>({
        text: "select app_hidden.assert_can_follow_order($1::uuid), $1::uuid::text as id",
        values: [id],
      });
      return rows[0]!.id;
    });

  /** The caller's own notification topic, or a failure: UNAUTHENTICATED (anonymous), FORBIDDEN (staff). */
  const ownNotifications = () =>
    withPgClient(executor, constant(null), async (client) => {
      const { rows } = await client.query<{ id: string }>({ text: "select app_hidden.notification_recipient()::text as id" });
      return notificationTopic(rows[0]!.id);
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
        "Staff of the store only (absent: the default store): each of its orders as it enters the queue (PAID), moves through it (PREPARING, BREWING, READY) or leaves it (COMPLETED, or CANCELLED after payment), as it was at that step."
        orderQueueChanged(storeId: ID): Order!
        "Customers only: each notification the café sends you (order paid, ready for pickup, cancelled with a refund owed), as it is recorded."
        notificationAdded: Notification!
      }
    `,
    objects: {
      Subscription: {
        plans: {
          orderUpdated: {
            subscribePlan(_, { $id }) {
              const $topic = lambda(followable($id), (id) => orderTopic(id as string));
              return listen(context().get("pgSubscriber") as any, $topic, (e) => e);
            },
            plan(_$event, { $id }) {
              return orders.get({ id: $id });
            },
          },
          orderStatusChanged: {
            subscribePlan(_, { $orderId }) {
              const $topic = lambda(followable($orderId), (id) => orderStatusTopic(id as string));
              return listen(context().get("pgSubscriber") as any, $topic, (e) => jsonParse(e as any));
            },
            plan($event) {
              return $event;
            },
          },
          orderQueueChanged: {
            subscribePlan(_, { $storeId }) {
              return listen(context().get("pgSubscriber") as any, queueFollowable($storeId), (e) => jsonParse(e as any));
            },
            plan($row: any) {
              return pgSelectSingleFromRecord(orders, $row);
            },
          },
          notificationAdded: {
            subscribePlan() {
              return listen(context().get("pgSubscriber") as any, ownNotifications(), (e) => jsonParse(e as any));
            },
            plan($event: any) {
              // Read again under the subscriber's role: RLS shows their own only.
              return notifications.get({ id: $event.get("id") });
            },
          },
          newCoffee: {
            subscribePlan() {
              return listen(context().get("pgSubscriber") as any, NEW_COFFEE_TOPIC, (e) => jsonParse(e as any));
            },
            plan($event: any) {
              return coffees.get({ id: $event.get("id") });
            },
          },
        },
      },
      OrderStatusChange: {
        plans: {
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
    },
  };
}, "SubscriptionsPlugin");

/**
 * Ties an operation's `pgSubscriber` to its `withPgClient` (see
 * sharedReads.ts). A subscription reads on `subscriptionWithPgClient` when
 * the server gives one (connections of their own, whose statements stay
 * prepared: src/db/pool.ts openSubscriptionPool), else on the API's pool.
 */
function shareReReads(args: Grafast.ExecutionArgs): Grafast.ExecutionArgs {
  const ctx = args.contextValue as { pgSubscriber?: SharingSubscriber; withPgClient?: WithPgClient; subscriptionWithPgClient?: WithPgClient } | undefined;
  const subscriber = ctx?.pgSubscriber;
  if (!args.requestContext?.ws || !subscriber || !ctx.withPgClient) return args;
  const scope: DeliveryScope = { delivery: null };
  ctx.pgSubscriber = { subscribe: (topic: string) => subscriber.subscribe(topic, scope) };
  const own = ctx.subscriptionWithPgClient && operationOf(args.document, args.operationName)?.operation === "subscription" ? ctx.subscriptionWithPgClient : ctx.withPgClient;
  ctx.withPgClient = sharingWithPgClient(own, scope);
  return args;
}

/** Subscriptions that answer a notice by reading the state again: a repeat of the last answer tells nothing. */
const STATE_FIELDS = new Set(["orderUpdated"]);

/** Whether the operation's one root field is a state subscription (STATE_FIELDS). */
function followsState(args: Pick<Grafast.ExecutionArgs, "document" | "operationName">): boolean {
  const op = operationOf(args.document, args.operationName);
  const only = op?.operation === "subscription" && op.selectionSet.selections.length === 1 ? op.selectionSet.selections[0] : undefined;
  return only?.kind === Kind.FIELD && STATE_FIELDS.has(only.name.value);
}

type Stream = AsyncGenerator<unknown, void, void>;

/**
 * The stream without a payload equal to the one delivered just before it
 * (errors always pass). Ending it ends the source at once, even while a
 * read of the source is waiting for the next notice.
 */
export function onlyChanges(source: Stream): Stream {
  let last: string | undefined;
  const stream = {
    async next() {
      for (;;) {
        const step = await source.next();
        if (step.done) return step;
        const value = step.value as { errors?: unknown } | undefined;
        const key = value && !value.errors ? JSON.stringify(value) : undefined;
        if (key !== undefined && key === last) continue;
        last = key;
        return step;
      }
    },
    return: () => source.return(),
    throw: (error: unknown) => source.throw(error),
    [Symbol.asyncIterator]() {
      return stream;
    },
  };
  return stream as unknown as Stream;
}

const withOnlyChanges = (result: unknown) => (result && typeof result === "object" && Symbol.asyncIterator in result ? onlyChanges(result as Stream) : result);

export const SubscriptionsPlugin: GraphileConfig.Plugin = {
  ...SubscriptionsSchemaPlugin,
  grafast: {
    middleware: {
      prepareArgs(next) {
        const result = next();
        return isPromiseLike(result) ? result.then(shareReReads) : shareReReads(result);
      },
      subscribe(next, event) {
        if (!followsState(event.args)) return next();
        const result = next();
        return (isPromiseLike(result) ? result.then(withOnlyChanges) : withOnlyChanges(result)) as typeof result;
      },
    },
  },
};
