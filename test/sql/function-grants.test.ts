import pg from "pg";
import { codes, DEMO, gqlAs } from "../support/client.ts";
import { type RequestRole, requestRolePool, sqlAs } from "../support/db.ts";
import { useTestService } from "../support/service.ts";

// Who may execute which function (migration "exact function grants"):
// nothing in app_public, app_hidden or app_private is executable by PUBLIC,
// and each role holds exactly the grants listed in that migration. Checked
// in the catalog and by calling as the roles, the way the API does.

const t = useTestService({
  async cleanup() {
    await pool?.end();
  },
});
let pool: pg.Pool;

beforeAll(async () => {
  pool = requestRolePool(t);
});
const SCHEMAS = ["app_public", "app_hidden", "app_private"];
const ROLES: RequestRole[] = ["cafe_anonymous", "cafe_customer", "cafe_barista", "cafe_admin", "cafe_system"];

test("no function of app_public, app_hidden or app_private is executable by PUBLIC", async () => {
  const { rows } = await t.db.query<{ fn: string }>(
    `select p.oid::regprocedure::text as fn
       from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = any($1)
        and (p.proacl is null -- the default: PUBLIC may execute
             or exists (select 1 from aclexplode(p.proacl) a where a.grantee = 0 and a.privilege_type = 'EXECUTE'))
      order by 1`,
    [SCHEMAS],
  );
  expect(rows.map((r) => r.fn)).toEqual([]);
  const { rows: all } = await t.db.query("select count(*)::int as n from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = any($1)", [SCHEMAS]);
  expect(all[0].n).toBeGreaterThan(60);
});

/** The sensitive ones: [function, roles that may execute it]. */
const EXPECTED: Array<[string, RequestRole[]]> = [
  ["app_private.issue_refresh_token(uuid, uuid)", []],
  ["app_private.mark_paid(uuid, text)", []],
  ["app_private.raise_alert(text, text, text, uuid)", []],
  ["app_private.assert_login_allowed(text, text)", []],
  ["app_private.check_password_strength(text, text)", []],
  ["app_private.setting(text)", []],
  ["app_private.recount_reserved_stock()", []],
  ["app_private.process_payment_callback(text, text, text, text, text, text, text, numeric, jsonb, text)", ["cafe_system"]],
  ["app_hidden.sales_report(text, text, text, integer, uuid)", ["cafe_anonymous", "cafe_customer", "cafe_barista", "cafe_admin"]],
  ["app_private.start_preparation(uuid)", ["cafe_system"]],
  ["app_private.notify_customer(uuid, text)", ["cafe_system"]],
  ["app_private.notification_webhook(uuid)", ["cafe_system"]],
  ["app_private.notification_webhook_delivered(uuid)", ["cafe_system"]],
  ["app_private.notification_webhook_failed(uuid, text)", ["cafe_system"]],
  ["app_private.tg_orders__notify_customer()", []],
  ["app_private.tg_notifications__publish()", []],
  ["app_private.take_inventory(uuid)", ["cafe_system"]],
  ["app_private.job_counts()", ["cafe_system"]],
  ["app_private.ops_counts()", ["cafe_system"]],
  ["app_private.tg_jobs__trace_context()", []],
  ["app_hidden.authenticate(text, text, text)", ["cafe_anonymous", "cafe_customer", "cafe_barista", "cafe_admin"]],
  ["app_hidden.refresh_session(text)", ["cafe_anonymous", "cafe_customer", "cafe_barista", "cafe_admin"]],
  ["app_hidden.assert_can_follow_order(uuid)", ["cafe_anonymous", "cafe_customer", "cafe_barista", "cafe_admin"]],
  ["app_public.mark_order_paid(uuid, app_public.payment_method)", ["cafe_barista", "cafe_admin"]],
  ["app_public.update_order_status(uuid, app_public.order_status)", ["cafe_barista", "cafe_admin"]],
  ["app_public.customer_by_email(text)", ["cafe_barista", "cafe_admin"]],
  ["app_public.search_customers(text)", ["cafe_barista", "cafe_admin"]],
  ["app_public.user_by_id(uuid)", ["cafe_barista", "cafe_admin"]],
  ["app_public.low_stock_items(uuid)", ["cafe_barista", "cafe_admin"]],
  ["app_public.create_coffee(text, numeric, app_public.roast_level, app_public.coffee_category, uuid, text, text, boolean, boolean)", ["cafe_admin"]],
  ["app_public.update_coffee_price(uuid, numeric)", ["cafe_admin"]],
  ["app_public.settle_refund(uuid)", ["cafe_admin"]],
  ["app_public.open_refunds()", ["cafe_admin"]],
  ["app_public.set_coffee_available(uuid, boolean, uuid)", ["cafe_admin"]],
  ["app_public.restock_ingredient(uuid, numeric, text, uuid)", ["cafe_admin"]],
  ["app_public.set_stock_alert_level(uuid, numeric, uuid)", ["cafe_admin"]],
  ["app_public.payment_alert_list(integer)", ["cafe_admin"]],
  ["app_public.add_store(text, text, text)", ["cafe_admin"]],
  ["app_public.assign_staff(uuid, uuid)", ["cafe_admin"]],
  ["app_public.update_store(uuid, jsonb)", ["cafe_admin"]],
  ["app_private.store_setting(uuid, text)", []],
  ["app_public.menu_items(uuid)", ["cafe_anonymous", "cafe_customer", "cafe_barista", "cafe_admin"]],
  ["app_public.current_actor()", ROLES],
];

test.each(EXPECTED)("%s: executable by exactly %j", async (fn, allowed) => {
  const { rows } = await t.db.query<{ role: string; may: boolean }>("select r as role, has_function_privilege(r, $1::regprocedure, 'EXECUTE') as may from unnest($2::text[]) r", [fn, ROLES]);
  expect(rows.filter((r) => r.may).map((r) => r.role)).toEqual(allowed);
});

test("cafe_system cannot mint a refresh token for the admin (the finding), nor mark an order paid around the rules", async () => {
  const mint = await sqlAs(pool, "cafe_system", null, "select app_private.issue_refresh_token($1::uuid, null)", [DEMO.admin.id]);
  expect(mint.error?.code).toBe("42501");
  const paid = await sqlAs(pool, "cafe_system", null, "select app_private.mark_paid($1::uuid, 'test')", [DEMO.alicePendingOrder]);
  expect(paid.error?.code).toBe("42501");
  // What it is for still works: its own entry points.
  const jobs = await sqlAs(pool, "cafe_system", null, "select * from app_private.job_counts()");
  expect(jobs.error).toBeUndefined();
});

test("a customer cannot call staff or admin functions in SQL; over GraphQL the refusal is FORBIDDEN (anonymous: UNAUTHENTICATED) and nothing changes", async () => {
  const direct = await sqlAs(pool, "cafe_customer", DEMO.alice.id, "select app_public.mark_order_paid($1::uuid, 'CASH')", [DEMO.alicePendingOrder]);
  expect(direct.error?.code).toBe("42501");
  const before = await t.db.query("select status from app_public.orders where id = $1", [DEMO.alicePendingOrder]);
  const pay = `mutation($id: ID!) { markOrderPaid(id: $id, method: CASH) { id status } }`;
  expect(codes(await gqlAs(t, "alice", pay, { id: DEMO.alicePendingOrder }))).toEqual(["FORBIDDEN"]);
  expect(codes(await gqlAs(t, "anonymous", pay, { id: DEMO.alicePendingOrder }))).toEqual(["UNAUTHENTICATED"]);
  expect(codes(await gqlAs(t, "anonymous", `{ lowStockItems { currentStock } }`))).toEqual(["UNAUTHENTICATED"]);
  const after = await t.db.query("select status from app_public.orders where id = $1", [DEMO.alicePendingOrder]);
  expect(after.rows).toEqual(before.rows);
});
