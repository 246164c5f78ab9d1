import { wrapPlans } from "postgraphile/utils";
import { TYPES, type PgSelectSingleStep } from "postgraphile/@dataplan/pg";
import { sql } from "postgraphile/pg-sql2";

/**
 * `Coffee.inventory` is read from `app_public.coffee_inventory` (kept
 * current at COMMIT by triggers: migration 000005-live-reads.sql) as a
 * column of the coffees' own statement: one indexed lookup per row, no
 * function call, so the kiosk's whole menu is one cheap statement. The SQL
 * function `app_public.coffees_inventory` reads the same row, for SQL callers.
 */
export const InventoryPlugin = wrapPlans(
  {
    Coffee: {
      inventory(_plan, $coffee) {
        const $row = $coffee as PgSelectSingleStep;
        return $row.select(sql`(select i.servings from app_public.coffee_inventory i where i.coffee_id = ${$row.getClassStep().alias}.id)`, TYPES.int);
      },
    },
  },
  { name: "InventoryPlugin" },
);
