import { cpSync, mkdirSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { loadConfig } from "../../src/config.ts";
import { dropDatabase, MIGRATIONS_DIR, prepareDatabase, resolveDatabaseUrls, type DatabaseUrls } from "../../src/db/database.ts";
import { tempDir } from "./tempDirs.ts";

// A database as a café that ran the baseline release has it: migrated to
// 000001 only, holding orders in every status (with their lines, events,
// reservations, stock movements, refunds, notifications and payment
// deliveries), for the migrations after it to be applied on top
// (test/sql/stores.migration.test.ts; bench/migration-locks.ts with 200,000
// orders). Filled by the superuser with session_replication_role = replica (no
// triggers), then the reservations recounted, as a DBA's bulk load would.

/** A copy of migrations/ holding the baseline only. */
export function baselineOnlyMigrations(): string {
  const dir = tempDir("baseline");
  mkdirSync(path.join(dir, "committed"));
  cpSync(path.join(MIGRATIONS_DIR, "committed", "000001-baseline.sql"), path.join(dir, "committed", "000001-baseline.sql"));
  return dir;
}

/** Drops and makes database `url` (a superuser's URL) at the baseline, with `orders` orders. */
export async function baselineDatabase(url: string, orders: number): Promise<DatabaseUrls> {
  const config = loadConfig({ NODE_ENV: "development" });
  const urls = await resolveDatabaseUrls(config, url);
  if (!urls.root) throw new Error(`${url} is not a superuser's URL`);
  await dropDatabase(urls.root, new URL(url).pathname.slice(1));
  await prepareDatabase(urls, config, { demoData: false, migrationsFolder: baselineOnlyMigrations() });
  // As the superuser: session_replication_role needs one.
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    await db.query("begin");
    await db.query("set local session_replication_role = replica");
    await db.query(`
      insert into app_public.roasters (id, name, location) values ('10000000-0000-4000-8000-0000000000b1', 'Baseline Roastery', 'Here');
      insert into app_public.ingredients (id, name) values
        ('30000000-0000-4000-8000-0000000000b1', 'Baseline beans'), ('30000000-0000-4000-8000-0000000000b2', 'Baseline milk');
      insert into app_public.stock_items (ingredient_id, current_stock, alert_level, unit) values
        ('30000000-0000-4000-8000-0000000000b1', 1000000, 100, 'g'), ('30000000-0000-4000-8000-0000000000b2', 1000000, 100, 'ml');
      insert into app_public.coffees (id, name, price, roaster_id) values
        ('40000000-0000-4000-8000-0000000000b1', 'Baseline Espresso', 2.50, '10000000-0000-4000-8000-0000000000b1'),
        ('40000000-0000-4000-8000-0000000000b2', 'Baseline Latte', 3.50, '10000000-0000-4000-8000-0000000000b1');
      insert into app_public.recipe_lines (coffee_id, ingredient_id, quantity) values
        ('40000000-0000-4000-8000-0000000000b1', '30000000-0000-4000-8000-0000000000b1', 18),
        ('40000000-0000-4000-8000-0000000000b2', '30000000-0000-4000-8000-0000000000b1', 18),
        ('40000000-0000-4000-8000-0000000000b2', '30000000-0000-4000-8000-0000000000b2', 200);
      insert into app_private.accounts (id, email, password_hash, role) values
        ('00000000-0000-4000-8000-0000000000c1', 'baseline.customer@example.com', 'x', 'customer'),
        ('00000000-0000-4000-8000-0000000000c2', 'baseline.barista@example.com', 'x', 'barista'),
        ('00000000-0000-4000-8000-0000000000c3', 'baseline.admin@example.com', 'x', 'admin');
      insert into app_public.customers (id, name) values ('00000000-0000-4000-8000-0000000000c1', 'Baseline Customer');
      insert into app_public.baristas (id, name, is_admin) values
        ('00000000-0000-4000-8000-0000000000c2', 'Baseline Barista', false), ('00000000-0000-4000-8000-0000000000c3', 'Baseline Admin', true);
    `);
    // Orders: most completed, some in every other status; paid ones have taken stock.
    await db.query(
      `insert into app_public.orders (id, customer_id, status, total, time_ordered, paid_at, payment_method, inventory_taken_at, expires_at)
       select ('b0000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, '00000000-0000-4000-8000-0000000000c1',
              s.status, 6.00, now() - make_interval(mins => g % 50000),
              case when s.status not in ('PENDING') then now() - make_interval(mins => g % 50000) end,
              case when s.status not in ('PENDING') then 'provider' end,
              case when s.status not in ('PENDING', 'CANCELLED') then now() - make_interval(mins => g % 50000) end,
              case when s.status = 'PENDING' then now() + interval '1 day' end
         from generate_series(1, $1::int) g
         cross join lateral (select (case when g % 100 = 0 then 'PENDING' when g % 100 = 1 then 'CANCELLED' when g % 100 = 2 then 'PREPARING' else 'COMPLETED' end)::app_public.order_status as status) s`,
      [orders],
    );
    await db.query(`
      insert into app_public.order_items (order_id, position, coffee_id, quantity, unit_price)
      select o.id, 1, '40000000-0000-4000-8000-0000000000b2', 1, 3.50 from app_public.orders o;
      insert into app_public.order_items (order_id, position, coffee_id, quantity, unit_price)
      select o.id, 2, '40000000-0000-4000-8000-0000000000b1', 1, 2.50 from app_public.orders o;
      insert into app_public.order_events (order_id, from_status, to_status, actor_role, created_at)
      select o.id, null, 'PENDING', 'customer', o.time_ordered from app_public.orders o;
      insert into app_public.order_events (order_id, from_status, to_status, actor_role, created_at)
      select o.id, 'PENDING', o.status, 'system', o.time_ordered from app_public.orders o where o.status <> 'PENDING';
      insert into app_public.stock_movements (ingredient_id, delta, reason, order_id, actor_role)
      select '30000000-0000-4000-8000-0000000000b1', -36, 'order paid', o.id, 'system' from app_public.orders o where o.inventory_taken_at is not null;
      insert into app_public.notifications (customer_id, order_id, kind, message, created_at)
      select o.customer_id, o.id, 'payment_received', 'Thanks!', o.paid_at from app_public.orders o where o.paid_at is not null;
      insert into app_public.refunds (order_id, amount, reason) select o.id, o.total, 'cancelled after payment' from app_public.orders o where o.status = 'CANCELLED';
      insert into app_private.payment_deliveries (source, http_status, outcome, order_id, event)
      select '127.0.0.1', 200, 'processed', o.id, 'payment.completed' from app_public.orders o where o.paid_at is not null;
    `);
    await db.query("commit");
    await db.query("select app_private.recount_reserved_stock()");
    await db.query("analyze");
  } finally {
    await db.end();
  }
  return urls;
}

/** Applies the project's migrations (those after the baseline) to a database. */
export async function migrateToCurrent(urls: DatabaseUrls): Promise<void> {
  await prepareDatabase(urls, loadConfig({ NODE_ENV: "development" }), { demoData: false });
}
