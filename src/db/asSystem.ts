import type pg from "pg";
import { traceparentSql } from "../tracing.ts";

/**
 * Runs `fn` in a transaction as cafe_system: the role that the transition
 * rules, grants and policies name for the payment route, the worker's tasks
 * and the metrics. The one place that opens such a transaction. Its time
 * limits are cafe_system's row of app_private.role_limits (the DBA's).
 */
export function inTransactionAsSystem<T>(client: pg.ClientBase, fn: (client: pg.ClientBase) => Promise<T>): Promise<T> {
  return inTransaction(client, AS_SYSTEM + traceparentSql(), fn);
}

// While tracing is on, traceparentSql() adds the trace the jobs queued in
// the transaction carry (migration 000009-ops.sql), in the same round trip.
const AS_SYSTEM = "set local role cafe_system; select app_private.apply_role_limits()";

/** Runs `fn` in a transaction on `client` after `prelude` (a role, settings): committed, or rolled back when it throws. */
export async function inTransaction<T>(client: pg.ClientBase, prelude: string | pg.QueryConfig | null, fn: (client: pg.ClientBase) => Promise<T>): Promise<T> {
  await client.query("begin");
  try {
    if (prelude) await client.query(prelude);
    const result = await fn(client);
    await client.query("commit");
    return result;
  } catch (e) {
    await client.query("rollback").catch(() => {});
    throw e;
  }
}

/** The same, on a connection borrowed from `pool` for the duration. */
export async function asSystem<T>(pool: pg.Pool, fn: (client: pg.ClientBase) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    return await inTransactionAsSystem(client, fn);
  } finally {
    client.release();
  }
}

/**
 * One statement in a transaction as cafe_system, like `asSystem`, in three
 * round trips instead of four: the BEGIN goes with the role, as one
 * simple-protocol query. Saved only when the COMMIT says COMMIT.
 */
export async function statementAsSystem(pool: pg.Pool, statement: pg.QueryConfig): Promise<pg.QueryResult> {
  const client = await pool.connect();
  try {
    await client.query(`begin; ${AS_SYSTEM}${traceparentSql()}`);
    const result = await client.query(statement);
    const commit = await client.query("commit");
    if (commit.command !== "COMMIT") throw new Error("The transaction was rolled back.");
    return result;
  } catch (e) {
    await client.query("rollback").catch(() => {});
    throw e;
  } finally {
    client.release();
  }
}
