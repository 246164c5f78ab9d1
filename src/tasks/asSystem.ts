import type { JobHelpers } from "graphile-worker";
import type { PoolClient } from "pg";

/** Runs `fn` in a transaction as cafe_system, the role the transition rules name for jobs. */
export function asSystem<T>(helpers: JobHelpers, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  return helpers.withPgClient(async (client) => {
    await client.query("begin");
    try {
      await client.query("set local role cafe_system");
      const result = await fn(client);
      await client.query("commit");
      return result;
    } catch (e) {
      await client.query("rollback");
      throw e;
    }
  });
}

/** Reads `{ orderId }` from a job's payload, refusing anything else. */
export function orderIdOf(payload: unknown): string {
  const orderId = (payload as { orderId?: unknown } | null)?.orderId;
  if (typeof orderId !== "string" || !/^[0-9a-f-]{36}$/i.test(orderId)) {
    throw new Error(`payload has no valid orderId: ${JSON.stringify(payload)}`);
  }
  return orderId;
}
