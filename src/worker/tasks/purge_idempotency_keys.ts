import type { Task } from "graphile-worker";
import { asSystemInJob } from "../job.ts";

/**
 * No payload. Deletes Idempotency-Keys (and their stored answers) past the
 * setting idempotency_key_retention_hours (app_private.purge_idempotency_keys).
 * Scheduled hourly by the worker's crontab (`crontab` in ./index.ts); a
 * key past its expiry already counts as unused before it is purged.
 */
export const purge_idempotency_keys: Task = async (_payload, helpers) => {
  const deleted = await asSystemInJob(helpers, async (client) => {
    const { rows } = await client.query<{ n: number }>("select app_private.purge_idempotency_keys() as n");
    return rows[0]!.n;
  });
  helpers.logger.info(`purged ${deleted} expired idempotency keys`);
};
