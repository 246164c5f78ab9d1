import { wrapPlans } from "postgraphile/utils";
import type { PgSelectStep } from "postgraphile/@dataplan/pg";

/**
 * `Order.items` is the order_items relation (so nested fields such as
 * `coffee { name }` join in the same SQL statement), always in the order
 * the lines were given.
 */
export const OrderItemsOrderPlugin = wrapPlans(
  {
    Order: {
      items(plan) {
        const $items = plan() as PgSelectStep;
        $items.orderBy({ attribute: "position", direction: "ASC" });
        return $items;
      },
    },
  },
  { name: "OrderItemsOrderPlugin" },
);
