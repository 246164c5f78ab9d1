import { logger } from "../logger.ts";
import type { ReconnectingPgSubscriber } from "../subscriber.ts";

/**
 * Keeps state that lives in a table and its NOTIFY channel loaded in memory
 * (revoked sign-ins, role limits, the callback's block list). The caller
 * subscribes to the channel first; `load` then runs once the LISTEN
 * connection is up (nothing between the two is missed), and again after
 * every reconnection (notifications may have been missed), retried once a
 * second up to ten times while the database is unsteady.
 *
 * Returns `ready`, settled by the first load. When the state is `required`
 * (serving without it would be unsafe: revoked tokens accepted, no time
 * limits) a failed first load rejects it; otherwise it is a warning.
 */
export function loadAfterListen(subscriber: ReconnectingPgSubscriber, what: string, load: () => Promise<void>, { required }: { required: boolean }): Promise<void> {
  let first = true;
  let settle!: (err?: unknown) => void;
  const ready = new Promise<void>((resolve, reject) => (settle = (err) => (err ? reject(err) : resolve())));
  ready.catch(() => {});
  subscriber.onConnected(async () => {
    if (!first) return void reloadRetrying(what, load);
    first = false;
    await load().then(
      () => settle(),
      (err) => {
        if (required) return settle(err);
        logger.warn({ err: (err as Error).message }, `could not load ${what}`);
        settle();
      },
    );
  });
  return ready;
}

/** `load`, retried once a second up to ten times (each failure a warning naming `what`). */
export async function reloadRetrying(what: string, load: () => Promise<void>): Promise<void> {
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
