import type { TaskList } from "graphile-worker";
import { notify_customer } from "./notify_customer.ts";
import { purge_failed_deliveries } from "./purge_failed_deliveries.ts";
import { start_preparation } from "./start_preparation.ts";
import { update_inventory } from "./update_inventory.ts";

// One file a task; each is idempotent, since graphile-worker runs a job at
// least once.
export const taskList: TaskList = { start_preparation, notify_customer, update_inventory, purge_failed_deliveries };

/** Recurring tasks (graphile-worker crontab): the retention of refused payment deliveries, hourly. */
export const crontab = "0 * * * * purge_failed_deliveries";
