import pg from "pg";
import { DEMO, type GraphQLResponse, type TestService } from "./harness.ts";

// Helpers for the mutation and lifecycle suites: arranging rows as the
// database owner (who acts as 'dba'), checking refusals, and putting the
// shared test database back as it was when a file started (test files run
// one after another on one database).

export type Status = "PENDING" | "PAID" | "PREPARING" | "BREWING" | "READY" | "COMPLETED" | "CANCELLED";
export const STATUSES: Status[] = ["PENDING", "PAID", "PREPARING", "BREWING", "READY", "COMPLETED", "CANCELLED"];

/** How the owner (actor 'dba') walks an order from PENDING to each status, along the default rules. */
const PATH: Record<Status, Status[]> = {
  PENDING: [],
  PAID: ["PAID"],
  PREPARING: ["PAID", "PREPARING"],
  BREWING: ["PAID", "PREPARING", "BREWING"],
  READY: ["PAID", "PREPARING", "BREWING", "READY"],
  COMPLETED: ["PAID", "PREPARING", "BREWING", "READY", "COMPLETED"],
  CANCELLED: ["CANCELLED"],
};

/** The one error of a refused operation, with its code; data carries nothing. */
export function expectRefused(r: GraphQLResponse, code: string): Record<string, any> {
  const summary = { code: r.body.errors?.[0]?.extensions?.code, errors: r.body.errors?.length ?? 0, data: r.body.data };
  const expected: Record<string, unknown> = { code, errors: 1 };
  // A non-null mutation field that failed nulls the whole data (or leaves it out).
  expect({ code: summary.code, errors: summary.errors }).toEqual(expected);
  const data = r.body.data;
  if (data) for (const v of Object.values(data)) expect(v).toBeNull();
  return r.body.errors![0]!;
}

/** A successful answer: no errors, the data. */
export function ok<T = any>(r: GraphQLResponse<T>): T {
  expect(r.body.errors).toBeUndefined();
  expect(r.body.data).toBeTruthy();
  return r.body.data as T;
}

export interface OrderRow {
  id: string;
  customer_id: string;
  barista_id: string | null;
  status: Status;
  notes: string | null;
  total: string;
  time_ordered: Date;
  estimated_ready_time: Date | null;
  paid_at: Date | null;
  updated_at: Date;
}

export async function orderRow(t: TestService, id: string): Promise<OrderRow> {
  const { rows } = await t.db.query("select * from app_public.orders where id = $1", [id]);
  if (!rows[0]) throw new Error(`no order ${id}`);
  return rows[0];
}

export async function orderItems(t: TestService, id: string) {
  const { rows } = await t.db.query(
    "select position, coffee_id, quantity, unit_price, special_instructions from app_public.order_items where order_id = $1 order by position",
    [id],
  );
  return rows as Array<{ position: number; coffee_id: string; quantity: number; unit_price: string; special_instructions: string | null }>;
}

export async function orderEvents(t: TestService, id: string) {
  const { rows } = await t.db.query(
    "select from_status, to_status, actor_role, actor_id from app_public.order_events where order_id = $1 order by id",
    [id],
  );
  return rows as Array<{ from_status: Status | null; to_status: Status; actor_role: string; actor_id: string | null }>;
}

export async function orderCount(t: TestService): Promise<number> {
  const { rows } = await t.db.query("select count(*)::int as n from app_public.orders");
  return rows[0].n;
}

/** A coffee of this suite's own (no recipe, so no stock limits it), inserted by the owner. */
export async function makeCoffee(t: TestService, name: string, price: string, extra: { available?: boolean; category?: string } = {}): Promise<string> {
  let { rows: roasters } = await t.db.query("select id from app_public.roasters order by name limit 1");
  if (!roasters[0]) ({ rows: roasters } = await t.db.query("insert into app_public.roasters (name) values ('Test Roaster') returning id"));
  const { rows } = await t.db.query(
    "insert into app_public.coffees (name, price, roaster_id, available, category) values ($1, $2, $3, $4, $5) returning id",
    [name, price, roasters[0].id, extra.available ?? true, extra.category ?? "ESPRESSO"],
  );
  return rows[0].id;
}

/**
 * An order made by the owner through create_order (actor 'dba'), then moved
 * along the default rules to `status`, also as the owner.
 */
export async function orderIn(t: TestService, status: Status, coffeeId: string, opts: { quantity?: number; customerId?: string } = {}): Promise<string> {
  const { rows } = await t.db.query("select (app_public.create_order(p_coffee_id := $1, p_quantity := $2, p_customer_id := $3)).id", [
    coffeeId,
    opts.quantity ?? 1,
    opts.customerId ?? null,
  ]);
  const id: string = rows[0].id;
  await moveAsDba(t, id, status);
  return id;
}

/** Moves an order (PENDING now) along the default path to `status`, as the owner ('dba'). */
export async function moveAsDba(t: TestService, id: string, status: Status): Promise<void> {
  for (const s of PATH[status]) await t.db.query("update app_public.orders set status = $2 where id = $1", [id, s]);
}

/** The (from, to) moves the rules table grants a role. */
export async function allowedMoves(t: TestService, role: string): Promise<Set<string>> {
  const { rows } = await t.db.query("select from_status, to_status from app_public.order_status_transitions where role = $1", [role]);
  return new Set(rows.map((r) => `${r.from_status}->${r.to_status}`));
}

/** A client connected as the server's login role, which may SET ROLE to each request role. */
export async function requestRoleClient(t: TestService): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: t.urls.authenticator });
  await client.connect();
  return client;
}

/** Runs `fn` as the owner in a transaction that is always rolled back; returns the SQL error it raised, if any. */
export async function tryInRollback(t: TestService, fn: (c: pg.PoolClient) => Promise<unknown>): Promise<{ code?: string; message?: string } | null> {
  const c = await t.db.connect();
  try {
    await c.query("begin");
    try {
      await fn(c);
      return null;
    } catch (e: any) {
      return { code: e.code, message: e.message };
    }
  } finally {
    await c.query("rollback").catch(() => undefined);
    c.release();
  }
}

/**
 * Remembers what this file may change in the shared test database and puts
 * it back: orders and coffees made here are deleted, demo customers'
 * names, points and profiles and any stock rows touched are restored.
 */
export async function sandbox(t: TestService) {
  const { rows: orders } = await t.db.query("select id from app_public.orders");
  const { rows: coffees } = await t.db.query("select id from app_public.coffees");
  const { rows: customers } = await t.db.query(
    `select c.id, c.name, c.points, p.customer_id is not null as has_profile, p.username::text, p.avatar
       from app_public.customers c left join app_public.profiles p on p.customer_id = c.id where c.id = any($1)`,
    [[DEMO.alice.id, DEMO.bob.id]],
  );
  const { rows: stock } = await t.db.query("select ingredient_id, current_stock, alert_level from app_public.stock_items");
  const orderIds = orders.map((r) => r.id);
  const coffeeIds = coffees.map((r) => r.id);
  return {
    async restore() {
      await t.db.query("delete from app_public.orders where not (id = any($1::uuid[]))", [orderIds]);
      await t.db.query("delete from app_public.coffees where not (id = any($1::uuid[]))", [coffeeIds]);
      for (const c of customers) {
        await t.db.query("update app_public.customers set name = $2, points = $3 where id = $1", [c.id, c.name, c.points]);
        if (c.has_profile)
          await t.db.query(
            "insert into app_public.profiles (customer_id, username, avatar) values ($1, $2, $3) on conflict (customer_id) do update set username = excluded.username, avatar = excluded.avatar",
            [c.id, c.username, c.avatar],
          );
        else await t.db.query("delete from app_public.profiles where customer_id = $1", [c.id]);
      }
      for (const s of stock) {
        await t.db.query("update app_public.stock_items set current_stock = $2, alert_level = $3 where ingredient_id = $1 and (current_stock, alert_level) is distinct from ($2::numeric, $3::numeric)", [
          s.ingredient_id,
          s.current_stock,
          s.alert_level,
        ]);
      }
    },
  };
}

export const money = (n: number | string) => Number(n).toFixed(2);
