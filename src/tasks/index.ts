import type { TaskList } from "graphile-worker";
import { notify_customer } from "./notify_customer.ts";
import { start_preparation } from "./start_preparation.ts";
import { update_inventory } from "./update_inventory.ts";

// One file a task; each is idempotent, since graphile-worker runs a job at
// least once.
export const taskList: TaskList = { start_preparation, notify_customer, update_inventory };
