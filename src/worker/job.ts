import type { JobHelpers } from "graphile-worker";
import type pg from "pg";
import { inTransactionAsSystem } from "../db/asSystem.ts";

/** Runs `fn` in a transaction as cafe_system, the role the transition rules name for jobs. */
export function asSystemInJob<T>(helpers: JobHelpers, fn: (client: pg.ClientBase) => Promise<T>): Promise<T> {
  return helpers.withPgClient((client) => inTransactionAsSystem(client, fn));
}

/** Reads `{ orderId }` from a job's payload, refusing anything else. */
export function orderIdOf(payload: unknown): string {
  const orderId = (payload as { orderId?: unknown } | null)?.orderId;
  if (typeof orderId !== "string" || !/^[0-9a-f-]{36}$/i.test(orderId)) {
    throw new Error(`payload has no valid orderId: ${JSON.stringify(payload)}`);
  }
  return orderId;
}
