import { extendSchema } from "postgraphile/utils";
import { withPgClient } from "postgraphile/@dataplan/pg";
import { constant, lambda, object, type Step } from "postgraphile/grafast";
import { pageSizeOf, type PageSize } from "./PageSizePlugin.ts";

/** The most rows a sales report returns (31 days of HOUR buckets): a longer range is BAD_USER_INPUT. */
export const SALES_REPORT_PAGE_SIZE: PageSize = { default: 744, max: 744 };
/** The audit log's largest page (its default is DEFAULT_LIST_SIZE). */
export const AUDIT_LOG_MAX_PAGE = 500;

/**
 * The owner's reports, admins only: `salesReport` and `auditLog`. Each is
 * one SQL function (app_hidden.sales_report, app_hidden.audit_log, in the
 * baseline's sections 800 and 810) that decides who may call it, checks its input and does the
 * work; this plugin only gives them their GraphQL shapes. Both are lists,
 * priced like any list by the cost plugin (`first`, else DEFAULT_LIST_SIZE).
 */
export const ReportsPlugin = extendSchema((build) => {
  const executor = build.input.pgRegistry.pgExecutors.main!;

  /** Runs a report function as the caller (their role and claims) and returns its rows. */
  const rowsOf = (text: string, $args: Step) =>
    withPgClient(executor, $args, async (client, args) => {
      const values = Object.values(args as Record<string, unknown>).map((v) => v ?? null);
      const { rows } = await client.query({ text, values });
      return rows;
    });

  return {
    typeDefs: /* GraphQL */ `
      "How salesReport groups paid orders."
      enum SalesGroupBy {
        "Each hour of the café's time zone, e.g. 2026-11-23T14:00+01:00."
        HOUR
        "Each day of the café's time zone, e.g. 2026-11-23."
        DAY
        "Each coffee (by name), best-selling first."
        COFFEE
        "Each option (by name: Large, Oat, ...), most cups first."
        OPTION
      }
      "One bucket of sales."
      type SalesRow {
        "The hour, the day (café time zone), the coffee's or the option's name."
        bucket: String!
        "Paid orders in the bucket (COFFEE: orders with that coffee; OPTION: with that option)."
        orders: Int!
        "Cups in those orders (COFFEE: cups of that coffee; OPTION: cups with that option)."
        cups: Int!
        "Money taken (COFFEE: for that coffee's cups; OPTION: by its price deltas)."
        revenue: Float!
      }
      "One change of a rule: settings, order transitions, alert rules, coffees, staff accounts, schema (policies, grants, functions)."
      type AuditEntry {
        at: Datetime!
        "Who: an account's e-mail and role, the worker or payment callback, or a DBA's database user."
        actor: String!
        "INSERT, UPDATE, DELETE, or the DDL command (CREATE POLICY, GRANT, ...)."
        action: String!
        "The table and the row's key, e.g. app_private.settings prep_base_seconds."
        entity: String!
        "JSON text of the row (or its changed columns) before."
        before: String
        "JSON text of the row (or its changed columns) after."
        after: String
      }
      extend type Query {
        """
        Admins only: orders paid (provider or till) from \`from\` (included) to \`to\` (excluded),
        ISO 8601 dates or times (no offset: the time zone of the report); orders cancelled after payment are left out.
        \`storeId\`: that store, in its time zone (its admins); absent: every store the caller manages (the chain's admin: the whole chain), in the chain's time zone.
        """
        salesReport(from: String!, to: String!, groupBy: SalesGroupBy!, storeId: ID): [SalesRow!]!
        "Admins only (a store manager: the rows of their stores): every change of a rule, newest first. \`first\`: at most 500 (default: the server's DEFAULT_LIST_SIZE, 20)."
        auditLog(first: Int, offset: Int): [AuditEntry!]!
      }
    `,
    objects: {
      Query: {
        plans: {
          salesReport(_, { $from, $to, $groupBy, $storeId }, info) {
            return rowsOf(
              "select * from app_hidden.sales_report($1, $2, $3, $4, $5::uuid)",
              object({ from: $from!, to: $to!, groupBy: $groupBy!, maxRows: constant(pageSizeOf(info).max), storeId: $storeId! }),
            );
          },
          auditLog(_, { $first, $offset }, info) {
            // Without `first`, the page the cost plugin priced: DEFAULT_LIST_SIZE rows.
            const pageSize = pageSizeOf(info);
            const $page = lambda($first!, (first) => Math.min((first as number | null) ?? pageSize.default, pageSize.max));
            return rowsOf("select to_json(at) #>> '{}' as at, actor, action, entity, before, after from app_hidden.audit_log($1, $2)", object({ first: $page, offset: $offset! }));
          },
        },
      },
    },
  };
}, "ReportsPlugin");
