import { wrapPlans } from "postgraphile/utils";
import { TYPES, type PgSelectSingleStep } from "postgraphile/@dataplan/pg";
import { sql } from "postgraphile/pg-sql2";

/**
 * `Coffee.inventory(storeId)` is read from `app_public.coffee_inventory` (kept
 * current at COMMIT by triggers: migration 000005-live-reads.sql) as a
 * column of the coffees' own statement: one indexed lookup per row, no
 * function call, so the kiosk's whole menu is one cheap statement. The SQL
 * function `app_public.coffees_inventory` reads the same row, for SQL callers.
 */
export const InventoryPlugin = wrapPlans(
  {
    Coffee: {
      inventory(_plan, $coffee, fieldArgs) {
        const $row = $coffee as PgSelectSingleStep;
        // The store's (`storeId`; absent: the default store's).
        const store = $row.placeholder(fieldArgs.getRaw("storeId"), TYPES.uuid);
        return $row.select(
          sql`(select i.servings from app_public.coffee_inventory i where i.store_id = app_hidden.store_or_default(${store}) and i.coffee_id = ${$row.getClassStep().alias}.id)`,
          TYPES.int,
        );
      },
      // The price at the request's store (the nearest enclosing storeId, else
      // X-Store-Id, else the default store: app_hidden.store_or_default): its
      // own price there (store_coffee_prices, migration 000018), else the
      // chain's. One indexed lookup in the coffees' own statement.
      price(_plan, $coffee) {
        const $row = $coffee as PgSelectSingleStep;
        const alias = $row.getClassStep().alias;
        return $row.select(
          sql`coalesce((select p.price from app_public.store_coffee_prices p where p.store_id = app_hidden.store_or_default(null) and p.coffee_id = ${alias}.id), ${alias}.price)`,
          TYPES.numeric,
        );
      },
    },
  },
  { name: "InventoryPlugin" },
);
