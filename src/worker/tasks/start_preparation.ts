import type { Task } from "graphile-worker";
import { asSystemInJob, orderIdOf } from "../job.ts";
import { callbackToPreparing } from "../../metrics.ts";

/** Payload: { orderId }. Moves a PAID order to PREPARING; a no-op when it has moved on. */
export const start_preparation: Task = async (payload, helpers) => {
  const orderId = orderIdOf(payload);
  const moved = await asSystemInJob(helpers, async (client) => {
    const { rows } = await client.query<{ moved: boolean }>("select app_private.start_preparation($1) as moved", [orderId]);
    return rows[0]!.moved;
  });
  // Queued in the payment's own transaction: from then to PREPARING.
  if (moved) callbackToPreparing.observe(Math.max(0, Date.now() - new Date(helpers.job.created_at).getTime()) / 1000);
  helpers.logger.info(moved ? `order ${orderId} is PREPARING` : `order ${orderId} was no longer PAID; nothing to do`);
};
