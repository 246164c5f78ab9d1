import { createHash, createHmac } from "node:crypto";
import type { TestService } from "./harness.ts";
import { waitUntil as pollUntil } from "./realtime.ts";

// Helpers for the till and accounts suites (till.test.ts, accounts.test.ts):
// polling for what the real worker does, a payment provider that signs its
// callbacks as the README says, and coffees with ingredients of their own so
// stock arithmetic is exact whatever other suites did to the demo stock.

export { sleep } from "./realtime.ts";

/** Polls `check` until it returns a truthy value (returned) or the time runs out (throws naming `what`). */
export const waitUntil = <T>(what: string, check: () => Promise<T> | T, timeoutMs = 10_000, everyMs = 100): Promise<T> =>
  pollUntil(what, check, timeoutMs, everyMs);

export const sha256Hex = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

export interface CallbackAnswer {
  status: number;
  body: any;
  text: string;
}

/**
 * POSTs a payment callback as the provider: `Authorization: Bearer
 * WEBHOOK_TOKEN`, `X-Signature: sha256=<hex HMAC-SHA256 of the exact bytes
 * sent, keyed with SIGNING_SECRET>`, `Content-Type: application/json`.
 * A string body is sent byte for byte (so a retry can send the same bytes).
 */
export async function sendSignedCallback(t: TestService, body: unknown): Promise<CallbackAnswer> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const bytes = Buffer.from(text, "utf8");
  const signature = createHmac("sha256", t.config.SIGNING_SECRET).update(bytes).digest("hex");
  const res = await fetch(`${t.url}/orders/payment-callback`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${t.config.WEBHOOK_TOKEN}`,
      "x-signature": `sha256=${signature}`,
    },
    body: bytes,
  });
  const answer = await res.text();
  let parsed: any;
  try {
    parsed = JSON.parse(answer);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text: answer };
}

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
export async function ownIngredient(t: TestService, label: string, stock: number, alertLevel = 0): Promise<{ id: string; name: string }> {
  const name = `Ingredient ${tagOf(label)}`;
  const { rows } = await t.db.query("insert into app_public.ingredients (name) values ($1) returning id", [name]);
  await t.db.query("insert into app_public.stock_items (ingredient_id, current_stock, alert_level, unit) values ($1, $2, $3, 'g')", [rows[0].id, stock, alertLevel]);
  return { id: rows[0].id, name };
}

/** A coffee on sale whose recipe is made of ingredients of its own, each stocked with `stock`. Arranged by the owner. */
export async function ownCoffee(t: TestService, label: string, price: string, perCup: number[], stock = 100_000): Promise<OwnCoffee> {
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
export async function removeIngredients(t: TestService, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await t.db.query("delete from app_public.recipe_lines where ingredient_id = any($1::uuid[])", [ids]);
  await t.db.query("delete from app_public.ingredients where id = any($1::uuid[])", [ids]);
}

/** current_stock of each ingredient, as numbers, keyed by id. */
export async function stockOf(t: TestService, ids: string[]): Promise<Record<string, number>> {
  const { rows } = await t.db.query("select ingredient_id, current_stock::float8 as s from app_public.stock_items where ingredient_id = any($1::uuid[])", [ids]);
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
export async function movementsOfOrder(t: TestService, orderId: string, reason?: string): Promise<MovementRow[]> {
  const { rows } = await t.db.query(
    `select ingredient_id, delta::float8 as delta, reason, order_id, actor_role, actor_id from app_public.stock_movements
      where order_id = $1 and ($2::text is null or reason = $2) order by id`,
    [orderId, reason ?? null],
  );
  return rows;
}

/** The newest id of a table with a bigint identity (0 when empty): rows above it were made later. */
export async function maxId(t: TestService, table: string): Promise<number> {
  const { rows } = await t.db.query(`select coalesce(max(id), 0)::int8::text as n from ${table}`);
  return Number(rows[0].n);
}

/**
 * Removes the accounts a test made (e-mails matching `emailLike`), with their
 * staff or customer rows, and the sign-in attempts recorded since
 * `firstAttemptId` (see maxId).
 */
export async function forgetAccounts(t: TestService, emailLike: string, people: "app_public.baristas" | "app_public.customers", firstAttemptId: number): Promise<void> {
  await t.db.query("delete from app_private.login_attempts where id > $1", [firstAttemptId]);
  const { rows } = await t.db.query("select id from app_private.accounts where email::text like $1", [emailLike]);
  const ids = rows.map((r) => r.id);
  await t.db.query(`delete from ${people} where id = any($1::uuid[])`, [ids]);
  await t.db.query("delete from app_private.accounts where id = any($1::uuid[])", [ids]);
}
