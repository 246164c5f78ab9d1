// The LISTEN/NOTIFY channels subscriptions use, and what each carries: the
// one place the TypeScript side names them (plugins/SubscriptionsPlugin.ts reads
// them, src/subscriber.ts LISTENs). The triggers that publish on them are in
// the migrations (app_private.tg_orders__notify, tg_order_items__notify,
// tg_coffees__notify_new, tg_notifications__publish, app_private.raise_alert);
// test/graphql/subscriptions.test.ts checks that the payloads below are the
// triggers' own.

/** Every change of an order or its lines: `{"id"}`. */
export const orderTopic = (id: string) => `order:${id}`;
/** Each status an order takes: `{"id","status","barista_id","message"}` as it was then. */
export const orderStatusTopic = (id: string) => `order_status:${id}`;
/** Orders entering, moving through or leaving a store's barista queue: the whole row as it was then. */
export const orderQueueTopic = (storeId: string) => `order_queue:${storeId}`;
/** Each new coffee: `{"id"}`. */
export const NEW_COFFEE_TOPIC = "coffee:new";
/** Each notification of a customer (app_private.tg_notifications__publish): `{"id"}`. */
export const notificationTopic = (customerId: string) => `notification:${customerId}`;
/** Payment alerts, logged as warnings. */
export const PAYMENT_ALERT_TOPIC = "payment_alert";
/** A process's own probe of its LISTEN connection (src/subscriber.ts): payload `<instance>:<send time in ms>`, every LISTEN_PROBE_INTERVAL_MS. */
export const LISTEN_PROBE_TOPIC = "cafe_listen_probe";
export const LISTEN_PROBE_INTERVAL_MS = 5000;
/** Each change of the payment callback's block list: `{"source","blocked_until"}` (null: unblocked) (app_private.tg_blocked_sources__notify). */
export const PAYMENT_SOURCE_BLOCKED_TOPIC = "payment_source_blocked";
/** Each revoked sign-in: `{"sid","at"}` (app_private.announce_revoked_sign_in). */
export const SIGN_IN_REVOKED_TOPIC = "sign_in_revoked";
/** Each change of app_private.role_limits (app_private.tg_role_limits__announce). */
export const ROLE_LIMITS_TOPIC = "role_limits_changed";
/**
 * What changed that public reads can see (src/http/liveCache.ts), as
 * space-separated tokens (migration 000005-live-reads.sql): a table's name
 * (`app_public.roasters`: a row of it changed), `inventory:<coffee id>`,
 * `featured`, `all`. A statement that changed nothing sends nothing.
 */
export const PUBLIC_READS_TOPIC = "public_reads_changed";
/** The token of one coffee's `Coffee.inventory` changing. */
export const inventoryChange = (coffeeId: string) => `inventory:${coffeeId}`;
/** The token of `featuredCoffee` naming another coffee. */
export const FEATURED_CHANGE = "featured";
/** The token of anything having changed (after a bulk load). */
export const ALL_CHANGED = "all";
/** The tokens of one PUBLIC_READS_TOPIC payload. */
export const publicReadChanges = (payload: string): string[] => payload.split(" ").filter(Boolean);

/** The store id of an order_queue topic, else null. */
export function storeIdOfQueueTopic(topic: string): string | null {
  const m = /^order_queue:([0-9a-f-]{36})$/i.exec(topic);
  return m ? m[1]!.toLowerCase() : null;
}

/** The order id of an order or order_status topic, else null. */
export function orderIdOfTopic(topic: string): string | null {
  const m = /^order(?:_status)?:([0-9a-f-]{36})$/i.exec(topic);
  return m ? m[1]!.toLowerCase() : null;
}

/**
 * The payloads of an order's topics as SQL over a row `o` of
 * app_public.orders, the same expressions as tg_orders__notify: what
 * src/subscriber.ts sends after a reconnection (the current state, as if
 * the triggers had just fired).
 */
export const ORDER_PAYLOADS_SQL = {
  order: "json_build_object('id', o.id)::text",
  orderStatus: "json_build_object('id', o.id, 'status', o.status, 'barista_id', o.barista_id, 'message', app_public.order_status_message(o.status))::text",
  /** (The trigger drops `notes` from a row too long for a NOTIFY; delivered in-process, nothing is too long.) */
  orderQueue: "row_to_json(o)::text",
} as const;

/**
 * One NOTIFY as every subscription of its topic gets it. `shared` lives as
 * long as someone holds the delivery: subscribers who would see the same
 * thing share one re-read of it there (plugins/SubscriptionsPlugin.ts).
 */
export interface Delivery {
  readonly payload: string;
  readonly shared: Map<string, Promise<unknown>>;
}

/** Where a subscription's stream records the delivery it handed out last. */
export interface DeliveryScope {
  delivery: Delivery | null;
}

/** What plugins/SubscriptionsPlugin.ts needs of the LISTEN side (src/subscriber.ts). */
export interface SharingSubscriber {
  subscribe(topic: string, scope?: DeliveryScope): AsyncIterableIterator<string>;
}
