import type { TaskList } from "graphile-worker";
import { purge_failed_deliveries } from "./purge_failed_deliveries.ts";
import { purge_idempotency_keys } from "./purge_idempotency_keys.ts";
import { purge_sign_in_logs } from "./purge_sign_in_logs.ts";
import { start_preparation } from "./start_preparation.ts";
import { update_inventory } from "./update_inventory.ts";

// One file a task; each is idempotent, since graphile-worker runs a job at
// least once. notification__send_webhook, payment_intent__cancel and
// refund__pay need the configuration: the worker adds them (src/worker/worker.ts).
export const taskList: TaskList = { start_preparation, update_inventory, purge_failed_deliveries, purge_sign_in_logs, purge_idempotency_keys };

/** Recurring tasks (graphile-worker crontab), hourly: the retention of refused payment deliveries, of sign-in attempts and spent refresh tokens, and of idempotency keys. */
export const crontab = ["0 * * * * purge_failed_deliveries", "30 * * * * purge_sign_in_logs", "5 * * * * purge_idempotency_keys"].join("\n");
