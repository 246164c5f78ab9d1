import type pg from "pg";
import { DEMO, type Api } from "./client.ts";
import { operationsOf } from "./contract.ts";
import type { Owned } from "./db.ts";

// Rows the tests arrange and check, as the database owner (who acts as
// 'dba' and may insert orders in any status): coffees (plain, or with
// ingredients of their own so stock arithmetic is exact whatever other
// suites did to the demo stock), orders in any status, accounts; what a
// payment must have caused; and removing what a test made.

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

export async function orderRow(t: Owned, id: string): Promise<OrderRow> {
  const { rows } = await t.db.query("select * from app_public.orders where id = $1", [id]);
  if (!rows[0]) throw new Error(`no order ${id}`);
  return rows[0];
}

export async function orderItems(t: Owned, id: string) {
  const { rows } = await t.db.query("select position, coffee_id, quantity, unit_price, special_instructions from app_public.order_items where order_id = $1 order by position", [id]);
  return rows as Array<{ position: number; coffee_id: string; quantity: number; unit_price: string; special_instructions: string | null }>;
}

export async function orderEvents(t: Owned, id: string) {
  const { rows } = await t.db.query("select from_status, to_status, actor_role, actor_id from app_public.order_events where order_id = $1 order by id", [id]);
  return rows as Array<{ from_status: Status | null; to_status: Status; actor_role: string; actor_id: string | null }>;
}

export async function orderCount(t: Owned): Promise<number> {
  const { rows } = await t.db.query("select count(*)::int as n from app_public.orders");
  return rows[0].n;
}

/** A coffee of this suite's own (no recipe, so no stock limits it), inserted by the owner. */
export async function makeCoffee(t: Owned, name: string, price: string, extra: { available?: boolean; category?: string } = {}): Promise<string> {
  let { rows: roasters } = await t.db.query("select id from app_public.roasters order by name limit 1");
  if (!roasters[0]) ({ rows: roasters } = await t.db.query("insert into app_public.roasters (name) values ('Test Roaster') returning id"));
  const { rows } = await t.db.query("insert into app_public.coffees (name, price, roaster_id, available, category) values ($1, $2, $3, $4, $5) returning id", [
    name,
    price,
    roasters[0].id,
    extra.available ?? true,
    extra.category ?? "ESPRESSO",
  ]);
  return rows[0].id;
}

/**
 * An order made by the owner through create_order (actor 'dba'), then moved
 * along the default rules to `status`, also as the owner.
 */
export async function orderIn(t: Owned, status: Status, coffeeId: string, opts: { quantity?: number; customerId?: string } = {}): Promise<string> {
  const { rows } = await t.db.query("select (app_public.create_order(p_coffee_id := $1, p_quantity := $2, p_customer_id := $3)).id", [coffeeId, opts.quantity ?? 1, opts.customerId ?? null]);
  const id: string = rows[0].id;
  await moveAsDba(t, id, status);
  return id;
}

/** Moves an order (PENDING now) along the default path to `status`, as the owner ('dba'). */
export async function moveAsDba(t: Owned, id: string, status: Status): Promise<void> {
  for (const s of PATH[status]) await t.db.query("update app_public.orders set status = $2 where id = $1", [id, s]);
}

/** The (from, to) moves the rules table grants a role. */
export async function allowedMoves(t: Owned, role: string): Promise<Set<string>> {
  const { rows } = await t.db.query("select from_status, to_status from app_public.order_status_transitions where role = $1", [role]);
  return new Set(rows.map((r) => `${r.from_status}->${r.to_status}`));
}

export const money = (n: number | string) => Number(n).toFixed(2);

export interface OwnIngredient {
  id: string;
  name: string;
  /** How much of it one cup takes. */
  perCup: number;
}

export interface OwnCoffee {
  id: string;
  name: string;
  price: string;
  ingredients: OwnIngredient[];
}

let serial = 0;
const tagOf = (label: string) => `${label} ${process.pid}-${Date.now().toString(36)}-${++serial}`;

/** A stocked ingredient of this suite's own (no coffee uses it unless given one), arranged by the owner. */
export async function ownIngredient(t: Owned, label: string, stock: number, alertLevel = 0): Promise<{ id: string; name: string }> {
  const name = `Ingredient ${tagOf(label)}`;
  const { rows } = await t.db.query("insert into app_public.ingredients (name) values ($1) returning id", [name]);
  await t.db.query("insert into app_public.stock_items (ingredient_id, current_stock, alert_level, unit) values ($1, $2, $3, 'g')", [rows[0].id, stock, alertLevel]);
  return { id: rows[0].id, name };
}

/** A coffee on sale whose recipe is made of ingredients of its own, each stocked with `stock`. Arranged by the owner. */
export async function ownCoffee(t: Owned, label: string, price: string, perCup: number[], stock = 100_000): Promise<OwnCoffee> {
  const name = `Coffee ${tagOf(label)}`;
  const client = await t.db.connect();
  try {
    await client.query("begin");
    const roaster = (await client.query("select id from app_public.roasters order by name limit 1")).rows[0].id;
    const id = (await client.query("insert into app_public.coffees (name, price, roaster_id) values ($1, $2, $3) returning id", [name, price, roaster])).rows[0].id;
    const ingredients: OwnIngredient[] = [];
    for (const [i, q] of perCup.entries()) {
      const ingredientName = `${name} part ${i + 1}`;
      const ingredientId = (await client.query("insert into app_public.ingredients (name) values ($1) returning id", [ingredientName])).rows[0].id;
      await client.query("insert into app_public.stock_items (ingredient_id, current_stock, alert_level, unit) values ($1, $2, 0, 'g')", [ingredientId, stock]);
      await client.query("insert into app_public.recipe_lines (coffee_id, ingredient_id, quantity) values ($1, $2, $3)", [id, ingredientId, q]);
      ingredients.push({ id: ingredientId, name: ingredientName, perCup: q });
    }
    await client.query("commit");
    return { id, name, price, ingredients };
  } catch (e) {
    await client.query("rollback");
    throw e;
  } finally {
    client.release();
  }
}

/** Removes ingredients this suite made (their stock rows and movements go with them); run after their coffees and orders are gone. */
export async function removeIngredients(t: Owned, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await t.db.query("delete from app_public.recipe_lines where ingredient_id = any($1::uuid[])", [ids]);
  await t.db.query("delete from app_public.ingredients where id = any($1::uuid[])", [ids]);
}

/** current_stock of each ingredient, as numbers, keyed by id. */
export async function stockOf(t: Owned, ids: string[]): Promise<Record<string, number>> {
  const { rows } = await t.db.query("select ingredient_id, current_stock::float8 as s from app_public.stock_items where ingredient_id = any($1::uuid[]) and store_id = app_hidden.default_store_id()", [
    ids,
  ]);
  return Object.fromEntries(rows.map((r) => [r.ingredient_id, r.s]));
}

export interface MovementRow {
  ingredient_id: string;
  delta: number;
  reason: string;
  order_id: string | null;
  actor_role: string;
  actor_id: string | null;
}

/** Stock movements of an order (optionally of one reason), oldest first. */
export async function movementsOfOrder(t: Owned, orderId: string, reason?: string): Promise<MovementRow[]> {
  const { rows } = await t.db.query(
    `select ingredient_id, delta::float8 as delta, reason, order_id, actor_role, actor_id from app_public.stock_movements
      where order_id = $1 and ($2::text is null or reason = $2) order by id`,
    [orderId, reason ?? null],
  );
  return rows;
}

/** The newest id of a table with a bigint identity (0 when empty): rows above it were made later. */
export async function maxId(t: Owned, table: string): Promise<number> {
  const { rows } = await t.db.query(`select coalesce(max(id), 0)::int8::text as n from ${table}`);
  return Number(rows[0].n);
}

/**
 * Removes the accounts a test made (e-mails matching `emailLike`), with their
 * staff or customer rows, and the sign-in attempts recorded since
 * `firstAttemptId` (see maxId).
 */
export async function forgetAccounts(t: Owned, emailLike: string, people: "app_public.baristas" | "app_public.customers", firstAttemptId: number): Promise<void> {
  await t.db.query("delete from app_private.login_attempts where id > $1", [firstAttemptId]);
  const { rows } = await t.db.query("select id from app_private.accounts where email::text like $1", [emailLike]);
  const ids = rows.map((r) => r.id);
  await t.db.query(`delete from ${people} where id = any($1::uuid[])`, [ids]);
  await t.db.query("delete from app_private.accounts where id = any($1::uuid[])", [ids]);
}

/** `names` sorted by the database's own collation (what `order by name` means there). */
export async function dbSorted(t: Owned, names: string[]): Promise<string[]> {
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
export async function allCoffees(t: Owned): Promise<CoffeeRow[]> {
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
export async function insertOrders(t: Owned, specs: OrderSpec[]): Promise<string[]> {
  const client = await t.db.connect();
  const ids: string[] = [];
  try {
    await client.query("begin");
    for (const spec of specs) {
      const { rows: prices } = await client.query<{ id: string; price: string }>("select id, price from app_public.coffees where id = any($1::uuid[])", [spec.lines.map((l) => l.coffeeId)]);
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
export async function deleteOrders(t: Owned, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await t.db.query("delete from app_public.refunds where order_id = any($1::uuid[])", [ids]);
  await t.db.query("delete from app_public.orders where id = any($1::uuid[])", [ids]);
}

export interface StockedCoffee {
  id: string;
  name: string;
  price: string;
  ingredientId: string;
  /** Recipe: this much of the ingredient per cup. */
  perCup: number;
}

/** A coffee on sale with a recipe of one ingredient of its own, stocked with `stock` (ownCoffee with one ingredient). */
export async function stockedCoffee(t: Owned, label: string, price: string, perCup: number, stock = 1_000_000): Promise<StockedCoffee> {
  const coffee = await ownCoffee(t, label, price, [perCup], stock);
  return { id: coffee.id, name: coffee.name, price, ingredientId: coffee.ingredients[0]!.id, perCup };
}

/** Removes a coffee of stockedCoffee's (its orders must be gone) and its ingredient. */
export async function removeStockedCoffee(t: Owned, c: StockedCoffee): Promise<void> {
  await t.db.query("delete from app_public.coffees where id = $1", [c.id]);
  await t.db.query("delete from app_public.ingredients where id = $1", [c.ingredientId]);
}

/** Places an order with the mobile app's PlaceOrder as the token's user; returns its id and total (text, 2 decimals). */
export async function placeOrder(t: Api, token: string, items: Array<{ coffeeId: string; quantity: number }>): Promise<{ id: string; total: string }> {
  const r = await t.gql(operationsOf("mobile"), { operationName: "PlaceOrder", variables: { input: { items } }, token });
  const order = r.body.data?.createOrder;
  if (!order || order.status !== "PENDING") throw new Error(`createOrder failed: ${JSON.stringify(r.body.errors)}`);
  return { id: order.id, total: Number(order.total).toFixed(2) };
}

export interface PendingOrder {
  id: string;
  customerId: string;
  email: string;
  total: string;
  lines: Array<{ coffeeId: string; name: string; quantity: number }>;
}

/** Coffees with a recipe whose ingredients are plentiful in the demo stock. */
export const PLENTIFUL_COFFEES = [
  "40000000-0000-4000-8000-000000000001", // House Espresso: beans
  "40000000-0000-4000-8000-000000000002", // Ristretto: beans
  "40000000-0000-4000-8000-000000000008", // Batch Brew: filter beans
  "40000000-0000-4000-8000-000000000003", // Caffè Latte: beans, milk
  "40000000-0000-4000-8000-000000000005", // Cappuccino: beans, milk
];

/** `n` PENDING orders made through create_order (as 'dba'), for alice and bob, one or two lines each. */
export async function createPendingOrders(db: pg.Pool, n: number, coffees: string[] = PLENTIFUL_COFFEES): Promise<PendingOrder[]> {
  const { rows: names } = await db.query<{ id: string; name: string }>("select id, name from app_public.coffees where id = any($1::uuid[])", [coffees]);
  const nameOf = new Map(names.map((r) => [r.id, r.name]));
  const { rows: emails } = await db.query<{ id: string; email: string }>("select id, email::text from app_private.accounts");
  const emailOf = new Map(emails.map((r) => [r.id, r.email]));
  const customers = [DEMO.alice.id, DEMO.bob.id];
  const orders: PendingOrder[] = [];
  for (let i = 0; i < n; i++) {
    const lineCount = 1 + (i % 2);
    const lines = Array.from({ length: lineCount }, (_, k) => ({ coffeeId: coffees[(i + k * 2) % coffees.length]!, quantity: 1 + ((i + k) % 2) }));
    const customerId = customers[i % customers.length]!;
    const { rows } = await db.query<{ id: string; total: string }>("select (o).id, (o).total::text from (select app_public.create_order(p_items := $1::jsonb, p_customer_id := $2) as o) x", [
      JSON.stringify(lines.map((l) => ({ coffee_id: l.coffeeId, quantity: l.quantity }))),
      customerId,
    ]);
    orders.push({
      id: rows[0]!.id,
      customerId,
      email: emailOf.get(customerId)!,
      total: rows[0]!.total,
      lines: lines.map((l) => ({ ...l, name: nameOf.get(l.coffeeId)! })),
    });
  }
  return orders;
}

export const PAID_OR_LATER = ["PAID", "PREPARING", "BREWING", "READY", "COMPLETED"];

export interface OrderEffects {
  id: string;
  status: string;
  paidTransitions: number;
  notifications: number;
  inventoryTaken: boolean;
  /** ingredient -> delta of its 'order paid' movements (a second movement for an ingredient shows as a count > 1). */
  movements: Array<{ ingredient: string; count: number; delta: number }>;
  expected: Array<{ ingredient: string; amount: number }>;
}

export async function orderEffects(db: pg.Pool, ids: string[]): Promise<Map<string, OrderEffects>> {
  const { rows } = await db.query(
    `select o.id, o.status::text as status, o.inventory_taken_at is not null as inventory_taken,
            (select count(*)::int from app_public.order_events e where e.order_id = o.id and e.to_status = 'PAID') as paid_transitions,
            (select count(*)::int from app_public.notifications n where n.order_id = o.id and n.kind = 'payment_received') as notifications,
            coalesce((select json_agg(json_build_object('ingredient', m.ingredient_id, 'count', m.n, 'delta', m.delta) order by m.ingredient_id)
                        from (select ingredient_id, count(*)::int as n, sum(delta)::float8 as delta from app_public.stock_movements
                               where order_id = o.id and reason = 'order paid' group by ingredient_id) m), '[]') as movements,
            coalesce((select json_agg(json_build_object('ingredient', x.ingredient_id, 'amount', x.amount) order by x.ingredient_id)
                        from (select rl.ingredient_id, sum(oi.quantity * rl.quantity)::float8 as amount
                                from app_public.order_items oi
                                join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id
                                join app_public.stock_items s on s.ingredient_id = rl.ingredient_id and s.store_id = o.store_id
                               where oi.order_id = o.id group by rl.ingredient_id) x), '[]') as expected
       from app_public.orders o where o.id = any($1::uuid[])`,
    [ids],
  );
  return new Map(
    rows.map((r) => [
      r.id,
      { id: r.id, status: r.status, paidTransitions: r.paid_transitions, notifications: r.notifications, inventoryTaken: r.inventory_taken, movements: r.movements, expected: r.expected },
    ]),
  );
}

/** What is wrong with a paid order's effects (empty: paid once, notified once, stock taken once). `settled`: jobs have run. */
export function effectProblems(e: OrderEffects | undefined, settled: boolean): string[] {
  if (!e) return ["order missing"];
  const p: string[] = [];
  if (!PAID_OR_LATER.includes(e.status)) p.push(`status ${e.status}`);
  if (e.paidTransitions !== 1) p.push(`${e.paidTransitions} PENDING->PAID transitions`);
  if (e.notifications > 1) p.push(`${e.notifications} notifications`);
  for (const m of e.movements) if (m.count !== 1) p.push(`ingredient ${m.ingredient} moved ${m.count} times`);
  if (settled) {
    if (e.status === "PAID") p.push("still PAID (not PREPARING)");
    if (e.notifications !== 1) p.push(`${e.notifications} notifications`);
    const got = e.movements.map((m) => `${m.ingredient}:${-m.delta}`).join(",");
    const want = e.expected.map((x) => `${x.ingredient}:${x.amount}`).join(",");
    if (got !== want) p.push(`stock movements ${got || "(none)"} instead of ${want}`);
  }
  return [...new Set(p)];
}
