// The LISTEN/NOTIFY channels subscriptions use: the one place the
// TypeScript side names them. The triggers that publish on them are in the
// migrations (app_private.tg_orders__notify, tg_order_items__notify,
// tg_coffees__notify_new, app_private.raise_alert).

/** Every change of an order or its lines: `{"id"}`. */
export const orderTopic = (id: string) => `order:${id}`;
/** Each status an order takes: `{"id","status","barista_id","message"}` as it was then. */
export const orderStatusTopic = (id: string) => `order_status:${id}`;
/** Orders entering, moving through or leaving the barista queue: the whole row as it was then. */
export const ORDER_QUEUE_TOPIC = "order_queue";
/** Each new coffee: `{"id"}`. */
export const NEW_COFFEE_TOPIC = "coffee:new";
/** Payment alerts, logged as warnings. */
export const PAYMENT_ALERT_TOPIC = "payment_alert";

/** The order id of an order or order_status topic, else null. */
export function orderIdOfTopic(topic: string): string | null {
  const m = /^order(?:_status)?:([0-9a-f-]{36})$/i.exec(topic);
  return m ? m[1]!.toLowerCase() : null;
}
