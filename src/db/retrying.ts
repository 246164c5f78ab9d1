import { logger } from "../logger.ts";

/**
 * Runs `load` again after a failure, once a second, up to ten times (the
 * database may be coming back after a gap in LISTEN), logging each failure
 * as a warning that names `what`. Used by the caches that reload on
 * reconnect (src/db/revocations.ts, src/db/roleLimits.ts).
 */
export async function retrying(what: string, load: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await load();
    } catch (err) {
      logger.warn({ err: (err as Error).message, attempt }, `reloading ${what} failed; retrying`);
      if (attempt >= 10) return;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}
