import type { ReconnectingPgSubscriber } from "../subscriber.ts";
import { PAYMENT_ALERT_TOPIC } from "../../common/topics.ts";
import { logger } from "../logger.ts";
import { paymentAlerts } from "../metrics.ts";

/** Payment alerts are rows for admins and warnings in the log: logs each one announced; returns what stops listening. */
export function installPaymentAlerts(subscriber: ReconnectingPgSubscriber): () => Promise<void> {
  const alerts = subscriber.subscribe(PAYMENT_ALERT_TOPIC);
  void (async () => {
    for await (const payload of alerts) {
      paymentAlerts.inc();
      try {
        logger.warn({ alert: JSON.parse(payload) }, "payment alert");
      } catch {
        logger.warn({ alert: payload }, "payment alert");
      }
    }
  })();
  return async () => {
    await alerts.return?.();
  };
}
