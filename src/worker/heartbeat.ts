import os from "node:os";
import type pg from "pg";
import { logger } from "../logger.ts";

/** Well under app_private.settings worker_dead_after_seconds (5): a live worker misses two beats before it could be taken for dead. */
const HEARTBEAT_MS = 2_000;

/**
 * Each process beats a heartbeat for its live workers; a beat also releases
 * jobs held by workers that died (SIGKILL, crash), so a paid order is
 * prepared within seconds of a restart instead of after the four-hour lock
 * timeout. Beats once, then every HEARTBEAT_MS; returns what stops it.
 */
export async function startHeartbeat(pool: pg.Pool, liveWorkerIds: ReadonlySet<string>): Promise<() => void> {
  const processName = `${os.hostname()}:${process.pid}`;
  const beat = async () => {
    try {
      const { rows } = await pool.query<{ released: string[] }>("select app_private.worker_heartbeat($1, $2) as released", [processName, [...liveWorkerIds]]);
      const released = rows[0]?.released ?? [];
      if (released.length) logger.warn({ workers: released }, "released the jobs of dead workers");
    } catch (err) {
      logger.warn({ err: (err as Error).message }, "worker heartbeat failed");
    }
  };
  await beat();
  const timer = setInterval(beat, HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}
