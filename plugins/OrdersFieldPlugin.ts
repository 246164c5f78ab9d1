import { extendSchema } from "postgraphile/utils";
import { listOfCodec, type PgCodec, type PgSelectStep } from "postgraphile/@dataplan/pg";
import { lambda } from "postgraphile/grafast";
import { sql } from "postgraphile/pg-sql2";
import { pageArgument, pageSizeOf, type PageSize } from "./PageSizePlugin.ts";

/** The whole barista queue by default; read by the query cost (plugins/PageSizePlugin.ts). */
export const ORDERS_PAGE_SIZE: PageSize = { default: 500, max: 500 };

/**
 * `orders(status: [OrderStatus!]): [Order!]!`: the contract wants a list of
 * non-null statuses, which a SQL array argument cannot express, so this field
 * is planned here. Which orders a caller sees is RLS's business (staff: all;
 * customers: their own; anonymous: none). Oldest first: the barista queue.
 */
export const OrdersFieldPlugin = extendSchema((build) => {
  const orders = build.input.pgRegistry.pgResources.orders;
  const statusCodec = orders.codec.attributes.status.codec;
  return {
    typeDefs: /* GraphQL */ `
      extend type Query {
        "Orders you may see (staff: their stores'; a customer: their own, at every store; anonymous: none), oldest first; \`status\` and \`storeId\` narrow them."
        orders(status: [OrderStatus!], "At most 500." first: Int, offset: Int, "One store's orders only (absent: every store you may see)." storeId: ID): [Order!]!
      }
    `,
    objects: {
      Query: {
        plans: {
          orders(_, { $status, $first, $offset, $storeId }, info) {
            const $orders = orders.find() as PgSelectStep;
            const statuses = $orders.placeholder($status, listOfCodec(statusCodec as PgCodec<string, undefined, any, any, undefined, any, any>));
            // One condition an index can serve whatever $1 is: with the
            // statuses known (a custom plan) PostgreSQL folds the coalesce and
            // uses the queue index (orders_queue_idx); a generic plan (after
            // five runs of the prepared statement) can still use
            // orders_status_idx, where `$1 is null or status = any($1)` left it
            // only a sequential scan (figures: docs/performance.md). No status:
            // every status.
            $orders.where(sql`${$orders.alias}.status = any(coalesce(${statuses}, enum_range(null::${statusCodec.sqlType})))`);
            const store = $orders.placeholder($storeId, build.input.pgRegistry.pgCodecs.uuid);
            $orders.where(sql`(${store}::uuid is null or ${$orders.alias}.store_id = ${store}::uuid)`);
            $orders.orderBy({ fragment: sql`${$orders.alias}.time_ordered`, codec: build.input.pgRegistry.pgCodecs.timestamptz, direction: "ASC" });
            $orders.orderBy({ fragment: sql`${$orders.alias}.id`, codec: build.input.pgRegistry.pgCodecs.uuid, direction: "ASC" });
            // Paging for long histories, capped.
            const pageSize = pageSizeOf(info);
            $orders.setFirst(lambda($first, (n: unknown) => Math.min(pageArgument("first", n) ?? pageSize.default, pageSize.max)));
            $orders.setOffset(lambda($offset, (n: unknown) => pageArgument("offset", n) ?? 0));
            return $orders;
          },
        },
      },
    },
  };
}, "OrdersFieldPlugin");
