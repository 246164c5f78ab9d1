import type { Task } from "graphile-worker";
import { logger } from "../../logger.ts";
import { asSystemInJob, orderIdOf } from "../job.ts";

/**
 * Payload: { orderId, kind }. Records a notification once, then logs it.
 * The status change itself now writes the notifications (trigger
 * app_private.tg_orders__notify_customer) and their webhooks go out through
 * notification__send_webhook; nothing queues this task any more. It stays
 * for jobs queued before that change: it finds the row recorded and does
 * nothing.
 */
export interface NotifyCustomerPayload {
  orderId: string;
  kind?: string;
}

export interface Notification {
  id: string;
  customer_id: string;
  order_id: string;
  kind: string;
  message: string;
}

/** Delivers a notification (push, e-mail, SMS...): for now, a line in the log. */
async function send(n: Notification): Promise<void> {
  logger.info({ notification: { id: n.id, customer: n.customer_id, order: n.order_id, kind: n.kind } }, `notify customer: ${n.message}`);
}

export const notify_customer: Task = async (payload, helpers) => {
  const orderId = orderIdOf(payload);
  const kind = (payload as NotifyCustomerPayload).kind ?? "payment_received";
  const notification = await asSystemInJob(helpers, async (client) => {
    const { rows } = await client.query<Notification>("select n.* from app_private.notify_customer($1, $2) n where n.id is not null", [orderId, kind]);
    return rows[0] ?? null;
  });
  // Recorded once (unique per order and kind); a retry after a failed send
  // finds it recorded and does not send again: at most one message.
  if (notification) await send(notification);
};
