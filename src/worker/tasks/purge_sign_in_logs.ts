import type { Task } from "graphile-worker";
import { asSystemInJob } from "../job.ts";

/**
 * No payload. Deletes sign-in and registration attempts and expired or
 * revoked refresh tokens older than the setting sign_in_log_retention_days
 * (app_private.purge_sign_in_logs): the sign-in tables stay bounded.
 * Scheduled hourly by the worker's crontab (`crontab` in ./index.ts).
 */
export const purge_sign_in_logs: Task = async (_payload, helpers) => {
  const deleted = await asSystemInJob(helpers, async (client) => {
    const { rows } = await client.query<{ n: number }>("select app_private.purge_sign_in_logs() as n");
    return rows[0]!.n;
  });
  helpers.logger.info(`purged ${deleted} sign-in attempts and refresh tokens past their retention`);
};
