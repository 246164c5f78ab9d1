import type { Task } from "graphile-worker";
import { asSystemInJob, orderIdOf } from "../job.ts";

/** Payload: { orderId }. Takes the order's ingredients from stock, once. */
export const update_inventory: Task = async (payload, helpers) => {
  const orderId = orderIdOf(payload);
  const taken = await asSystemInJob(helpers, async (client) => {
    const { rows } = await client.query<{ taken: boolean }>("select app_private.take_inventory($1) as taken", [orderId]);
    return rows[0]!.taken;
  });
  helpers.logger.info(taken ? `took stock for order ${orderId}` : `stock for order ${orderId} was already taken (or the order was cancelled)`);
};
