import type { Task } from "graphile-worker";
import { asSystemInJob } from "../job.ts";

/**
 * No payload. Deletes refused payment deliveries older than the setting
 * failed_delivery_retention_days (app_private.purge_failed_deliveries).
 * Scheduled hourly by the worker's crontab (`crontab` in ./index.ts).
 */
export const purge_failed_deliveries: Task = async (_payload, helpers) => {
  const deleted = await asSystemInJob(helpers, async (client) => {
    const { rows } = await client.query<{ n: number }>("select app_private.purge_failed_deliveries() as n");
    return rows[0]!.n;
  });
  helpers.logger.info(`purged ${deleted} failed payment deliveries past their retention`);
};
