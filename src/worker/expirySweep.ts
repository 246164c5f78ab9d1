import type pg from "pg";
import { logger } from "../logger.ts";
import { asSystem } from "../db/asSystem.ts";

const EXPIRY_SWEEP_MS = 1_000;
/** At stop, how long to wait for a sweep under way. */
const SWEEP_STOP_WAIT_MS = 5_000;

/**
 * Each process sweeps unpaid orders past their deadline every second
 * (app_private.expire_pending_orders, as cafe_system). A sweep rather than a
 * delayed job per order: no job row for each of a flood of unpaid orders, a
 * DBA's change of an order's expires_at is honoured as it stands, orders
 * whose deadline passed while no worker ran go at the first sweep, and it
 * costs one index scan a second (orders_expiry_idx). A payment that arrives
 * between the deadline and the sweep expires the order itself.
 * Returns what stops it (waiting for a sweep under way).
 */
export function startExpirySweep(pool: pg.Pool): () => Promise<void> {
  let sweeping = false;
  const sweep = async () => {
    if (sweeping) return; // one sweep at a time in this process
    sweeping = true;
    try {
      const n = await asSystem(pool, async (c) => (await c.query<{ n: number }>("select app_private.expire_pending_orders() as n")).rows[0]!.n);
      if (n) logger.info({ expired: n }, "cancelled unpaid orders past their deadline");
    } catch (err) {
      logger.warn({ err: (err as Error).message }, "expiry sweep failed");
    } finally {
      sweeping = false;
    }
  };
  const sweeper = setInterval(sweep, EXPIRY_SWEEP_MS);
  sweeper.unref();
  return async () => {
    clearInterval(sweeper);
    for (const giveUpAt = Date.now() + SWEEP_STOP_WAIT_MS; sweeping && Date.now() < giveUpAt;) await new Promise((r) => setTimeout(r, 20));
  };
}
