import { parse, Kind, type OperationDefinitionNode } from "graphql";
import pg from "pg";
import { operationsOf, type DemoUser, type GraphQLResponse, type TestService } from "./harness.ts";

// Helpers for the query-side suites (queries, rls, auth, n-plus-one): who
// calls, what came back, and rows arranged by the database owner (who acts
// as 'dba' and may insert orders in any status).

export type Caller = "anonymous" | DemoUser;
export type ClientName = "kiosk" | "mobile" | "barista" | "admin" | "pos";

/** The role each client of the contract signs in as. */
export const CLIENT_CALLER: Record<ClientName, Caller> = {
  kiosk: "anonymous",
  mobile: "alice",
  barista: "barista",
  admin: "admin",
  pos: "barista",
};

export const CALLERS: Caller[] = ["anonymous", "alice", "bob", "barista", "admin"];

export async function tokenOf(t: TestService, who: Caller): Promise<string | null> {
  return who === "anonymous" ? null : t.token(who);
}

/** Sends a query as someone. */
export async function gqlAs<T = any>(t: TestService, who: Caller, query: string, variables?: Record<string, unknown>, operationName?: string) {
  return t.gql<T>(query, { token: await tokenOf(t, who), variables, operationName });
}

/** Sends a client's whole operations file with `operationName`, as that client's role (or `as`). */
export async function runOperation<T = any>(
  t: TestService,
  client: ClientName,
  operationName: string,
  variables?: Record<string, unknown>,
  as: Caller = CLIENT_CALLER[client],
): Promise<GraphQLResponse<T>> {
  return gqlAs<T>(t, as, operationsOf(client), variables, operationName);
}

/** The query operations (name, whether it declares variables) of a client's file. */
export function queryOperationsOf(client: ClientName): Array<{ name: string; variables: string[] }> {
  return parse(operationsOf(client))
    .definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION && d.operation === "query")
    .map((d) => ({ name: d.name!.value, variables: (d.variableDefinitions ?? []).map((v) => v.variable.name.value) }));
}

/** Asserts a 200 answer without errors and returns its data. */
export function ok<T = any>(r: GraphQLResponse<T>): T {
  expect({ status: r.status, errors: r.body.errors }).toEqual({ status: 200, errors: undefined });
  expect(r.body.data).toBeTruthy();
  return r.body.data as T;
}

/** The extensions.code of every error of an answer. */
export function codes(r: GraphQLResponse): string[] {
  return (r.body.errors ?? []).map((e) => e.extensions?.code);
}

/** A readable summary of an answer's errors (for expectations that should show what came back). */
export function errorSummary(r: GraphQLResponse): Array<{ code: unknown; message: string; path?: unknown }> {
  return (r.body.errors ?? []).map((e) => ({ code: e.extensions?.code, message: e.message, path: e.path }));
}

/** `names` sorted by the database's own collation (what `order by name` means there). */
export async function dbSorted(t: TestService, names: string[]): Promise<string[]> {
  const { rows } = await t.db.query<{ sorted: string[] | null }>("select array_agg(n order by n) as sorted from unnest($1::text[]) n", [names]);
  return rows[0]!.sorted ?? [];
}

export const CATEGORY_ORDER = ["FEATURED", "ESPRESSO", "MILK_BASED", "FILTER", "COLD", "SEASONAL"] as const;

export interface CoffeeRow {
  id: string;
  name: string;
  price: number;
  category: string;
  available: boolean;
  limited_time_offer: boolean;
  roaster_id: string;
  roast: string;
  description: string | null;
  image_url: string | null;
}

/** Every coffee, as the owner sees it. */
export async function allCoffees(t: TestService): Promise<CoffeeRow[]> {
  const { rows } = await t.db.query(
    "select id, name, price::float8 as price, category::text as category, available, limited_time_offer, roaster_id, roast::text as roast, description, image_url from app_public.coffees order by name",
  );
  return rows;
}

export interface OrderSpec {
  customerId: string;
  status: "PENDING" | "PAID" | "PREPARING" | "BREWING" | "READY" | "COMPLETED" | "CANCELLED";
  lines: Array<{ coffeeId: string; quantity: number; specialInstructions?: string | null }>;
  /** An SQL interval added to now(), e.g. '-3 minutes'. */
  timeOffset?: string;
  notes?: string | null;
  baristaId?: string | null;
}

/**
 * Inserts orders directly as the owner ('dba' may insert any status), with
 * lines at the coffees' current prices and the total as their sum. The
 * ingredients count as already taken (inventory_taken_at), so these rows
 * reserve no stock that other suites' orders need.
 */
export async function insertOrders(t: TestService, specs: OrderSpec[]): Promise<string[]> {
  const client = await t.db.connect();
  const ids: string[] = [];
  try {
    await client.query("begin");
    for (const spec of specs) {
      const { rows: prices } = await client.query<{ id: string; price: string }>("select id, price from app_public.coffees where id = any($1::uuid[])", [
        spec.lines.map((l) => l.coffeeId),
      ]);
      const priceOf = new Map(prices.map((p) => [p.id, p.price]));
      const { rows } = await client.query<{ id: string }>(
        `insert into app_public.orders (customer_id, status, notes, total, time_ordered, barista_id, inventory_taken_at, paid_at)
         values ($1, $2::app_public.order_status, $3, 0, now() + $4::interval, $5, now(),
                 case when $2::app_public.order_status in ('PENDING', 'CANCELLED') then null else now() end)
         returning id`,
        [spec.customerId, spec.status, spec.notes ?? null, spec.timeOffset ?? "0 seconds", spec.baristaId ?? null],
      );
      const id = rows[0]!.id;
      let position = 0;
      for (const line of spec.lines) {
        position += 1;
        await client.query(
          `insert into app_public.order_items (order_id, position, coffee_id, quantity, unit_price, special_instructions)
           values ($1, $2, $3, $4, $5, $6)`,
          [id, position, line.coffeeId, line.quantity, priceOf.get(line.coffeeId), line.specialInstructions ?? null],
        );
      }
      await client.query("update app_public.orders set total = (select sum(quantity * unit_price) from app_public.order_items where order_id = $1) where id = $1", [id]);
      ids.push(id);
    }
    await client.query("commit");
  } catch (e) {
    await client.query("rollback");
    throw e;
  } finally {
    client.release();
  }
  return ids;
}

/** Removes orders a test arranged (their lines, events and notifications go with them). */
export async function deleteOrders(t: TestService, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await t.db.query("delete from app_public.refunds where order_id = any($1::uuid[])", [ids]);
  await t.db.query("delete from app_public.orders where id = any($1::uuid[])", [ids]);
}

/**
 * A pool on the login role the API itself uses (cafe_authenticator), which
 * may SET ROLE to the request roles. The owner (t.db) may not: it is not a
 * member of them, by design.
 */
export function requestRolePool(t: TestService): pg.Pool {
  return new pg.Pool({ connectionString: t.urls.authenticator, max: 2 });
}

export type RequestRole = "cafe_anonymous" | "cafe_customer" | "cafe_barista" | "cafe_admin" | "cafe_system";

/**
 * Runs one statement as a request role with a user id claim, the way the API
 * does (SET LOCAL ROLE + jwt.claims.user_id), in a transaction that is
 * rolled back. Resolves with the rows, or with the Postgres error.
 */
export async function sqlAs(
  pool: pg.Pool,
  role: RequestRole,
  userId: string | null,
  text: string,
  values: unknown[] = [],
): Promise<{ rows: any[]; error?: undefined } | { rows?: undefined; error: { code: string; message: string } }> {
  const client = await pool.connect();
  try {
    await client.query("begin");
    await client.query(`set local role ${role}`);
    if (userId) await client.query("select set_config('jwt.claims.user_id', $1, true)", [userId]);
    try {
      const { rows } = await client.query(text, values);
      return { rows };
    } catch (e) {
      const err = e as { code: string; message: string };
      return { error: { code: err.code, message: err.message } };
    }
  } finally {
    await client.query("rollback").catch(() => {});
    client.release();
  }
}
