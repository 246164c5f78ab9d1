// The bench database: which server (the machine's PostgreSQL on
// 127.0.0.1:5432 when it answers, else the embedded one), created fresh with
// the service's own preparation (roles, migrations, demo data), then the
// generated data set on top. Generation runs as the superuser with
// session_replication_role = replica (no triggers: no per-row NOTIFY and no
// order_events for a million historical orders), then ANALYZE.
import pg from "pg";
import { loadConfig } from "../../src/config.ts";
import { dropDatabase, prepareDatabase, resolveDatabaseUrls, startEmbeddedPostgres, type DatabaseUrls } from "../../src/db/database.ts";
import { liftOpenOrderCaps } from "../../test/support/db.ts";
import type { Options } from "./options.ts";

const DEV_ROLE_PASSWORD = loadConfig({ NODE_ENV: "development" }).DATABASE_ROLE_PASSWORD;

export interface BenchDatabase {
  /** Superuser URL of the bench database. */
  url: string;
  urls: DatabaseUrls & { root: string };
  name: string;
  server: "system" | "embedded" | "given";
  stopServer(): Promise<void>;
}

export async function openBenchDatabase(given: string | undefined, defaultName: string): Promise<BenchDatabase> {
  let url = given;
  let server: BenchDatabase["server"] = "given";
  let stopServer = async () => {};
  if (!url) {
    const probe = new pg.Client({ connectionString: "postgres://postgres@127.0.0.1:5432/postgres", connectionTimeoutMillis: 1500 });
    const answers = await probe.connect().then(
      () => probe.end().then(() => true),
      () => false,
    );
    if (answers) [url, server] = [`postgres://postgres@127.0.0.1:5432/${defaultName}`, "system"];
    else {
      const embedded = await startEmbeddedPostgres({ EMBEDDED_PG_DIR: ".data/bench-pg", EMBEDDED_PG_PORT: 54359 });
      [url, server, stopServer] = [embedded.url.replace(/\/postgres$/, `/${defaultName}`), "embedded", embedded.stop];
    }
  }
  const urls = await resolveDatabaseUrls(loadConfig({ NODE_ENV: "development", DATABASE_ROLE_PASSWORD: DEV_ROLE_PASSWORD }), url);
  if (!urls.root) throw new Error(`the bench needs a superuser URL (it creates and drops its database): ${redact(url)}`);
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  if (!/^[a-z0-9_]+$/i.test(name) || /^(postgres|template[01])$/.test(name)) throw new Error(`refusing to use database "${name}" for the bench`);
  return { url, urls: urls as BenchDatabase["urls"], name, server, stopServer };
}

export async function recreateDatabase(db: BenchDatabase): Promise<void> {
  await dropDatabase(db.urls.root, db.name);
  // Keeps the cluster-wide role passwords as they are (other databases on the
  // same server use them).
  await prepareDatabase(db.urls, { DATABASE_ROLE_PASSWORD: DEV_ROLE_PASSWORD, DATABASE_ROLE_PREFIX: "" }, { demoData: true });
  // S3 places hundreds of unpaid orders per customer: the caps still run (and cost what they cost), raised.
  await liftOpenOrderCaps(db.url);
}

export function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@");
}

type DataSize = Pick<Options, "coffees" | "customers" | "orders" | "queue" | "pending" | "reviewsPerCoffee">;

/** Deterministic ids: md5 of a label, cast to uuid. */
const id = (label: string, n: string) => `md5('${label}-' || ${n})::uuid`;

/**
 * Ends a change made with session_replication_role = replica: triggers are
 * back on, and the stock that open orders hold (a total the triggers keep)
 * is recounted, since the change bypassed them.
 */
export async function endTriggerlessLoad(root: pg.Client): Promise<void> {
  await root.query("set session_replication_role = origin; select app_private.recount_reserved_stock()");
}

/** Menu, people, reviews and orders 1..size.orders. Run once on a fresh database (with the demo data). */
export async function generateBaseData(root: pg.Client, size: DataSize): Promise<void> {
  const extraCoffees = Math.max(0, size.coffees - 17);
  await root.query("set session_replication_role = replica");
  await root.query(`
    insert into app_public.roasters (id, name, location, sustainability_rating)
    select ${id("bench-roaster", "g")}, 'Bench Roaster ' || g, 'City ' || g, 5 + (g % 5)
    from generate_series(1, 10) g;

    insert into app_public.ingredients (id, name, organic, allergens)
    select ${id("bench-ingredient", "g")}, 'Bench ingredient ' || lpad(g::text, 3, '0'), g % 2 = 0,
           case when g % 4 = 0 then '{milk}'::app_public.allergen[] when g % 7 = 0 then '{nuts,soy}'::app_public.allergen[] else '{}' end
    from generate_series(1, 33) g;
    insert into app_public.stock_items (ingredient_id, current_stock, alert_level, unit)
    select id, 99999999, 10, 'g' from app_public.ingredients where name like 'Bench ingredient %';

    insert into app_public.coffees (id, name, price, roast, category, description, image_url, limited_time_offer, available, roaster_id)
    select ${id("bench-coffee", "g")}, 'Bench Blend ' || lpad(g::text, 4, '0'),
           2 + ((g * 37) % 400) / 100.0,
           (enum_range(null::app_public.roast_level))[1 + g % 4],
           (enum_range(null::app_public.coffee_category))[1 + g % 6],
           'A generated coffee for benchmarks, number ' || g || '.',
           'https://images.example.com/bench/' || g || '.jpg', g % 17 = 0, true,
           (select r.id from app_public.roasters r order by r.name offset (g % 15) limit 1)
    from generate_series(1, ${extraCoffees}) g;
    insert into app_private.coffee_costs (coffee_id, cost)
    select c.id, round(c.price * 0.3, 2) from app_public.coffees c
    where not exists (select 1 from app_private.coffee_costs cc where cc.coffee_id = c.id);

    with ing as (select array_agg(id order by name) ids, count(*)::int n from app_public.ingredients)
    insert into app_public.recipe_lines (coffee_id, ingredient_id, quantity, seasonal)
    select ${id("bench-coffee", "g")}, ing.ids[1 + ((g * 7 + k * 11) % ing.n)], 5 + (g + k) % 20, k = 3 and g % 5 = 0
    from generate_series(1, ${extraCoffees}) g, generate_series(1, 3) k, ing
    where k <= 2 + g % 2;
  `);
  await root.query(`
    create temp table bench_hash as select public.crypt('coffee', public.gen_salt('bf', 8)) as hash;
    insert into app_private.accounts (id, email, password_hash, role)
    select ${id("bench-customer", "g")}, 'customer' || g || '@bench.example', h.hash, 'customer'
    from generate_series(1, ${size.customers}) g, bench_hash h;
    insert into app_public.customers (id, name, points)
    select ${id("bench-customer", "g")}, 'Bench Customer ' || g, g % 50 from generate_series(1, ${size.customers}) g;
    insert into app_public.profiles (customer_id, username)
    select ${id("bench-customer", "g")}, 'bench_' || g from generate_series(1, ${size.customers}) g where g % 2 = 0;
    insert into app_public.baristas (id, name) select ${id("bench-barista", "g")}, 'Bench Barista ' || g from generate_series(1, 10) g;
    drop table bench_hash;

    with c as (select array_agg(id order by id) ids, count(*)::int n from app_public.coffees),
         cu as (select array_agg(id order by id) ids, count(*)::int n from app_public.customers where not is_walk_in)
    insert into app_public.reviews (coffee_id, customer_id, rating, comment, created_at)
    select c.ids[1 + (g % c.n)], cu.ids[1 + ((g * 7919) % cu.n)], 1 + (g * 13) % 5,
           case when g % 3 = 0 then null else 'Generated review ' || g end,
           now() - make_interval(mins => (g * 7919) % 525600)
    from generate_series(1, ${size.reviewsPerCoffee * size.coffees}) g, c, cu;
  `);
  await generateOrders(root, size, 1, size.orders);
  await endTriggerlessLoad(root);
}

/**
 * Orders n = from..to (deterministic): 1..queue are the barista queue
 * (PREPARING/BREWING, the last half hour), then `pending` PENDING orders,
 * then history (COMPLETED, every 13th CANCELLED) spread over a year. Each has
 * 1 to 3 lines. Growing the data set adds history only, so the queue and the
 * open orders stay the same at every scale.
 */
export async function generateOrders(root: pg.Client, size: DataSize, from: number, to: number): Promise<void> {
  if (to < from) return;
  await root.query("set session_replication_role = replica");
  const q = size.queue;
  const p = size.queue + size.pending;
  await root.query(`
    create temp table if not exists bench_arrays as
      select (select array_agg(id order by id) from app_public.coffees where available) as coffee_ids,
             (select array_agg(price order by id) from app_public.coffees where available) as prices,
             (select count(*)::int from app_public.coffees where available) as nc,
             (select array_agg(id order by id) from app_public.customers where not is_walk_in) as customer_ids,
             (select count(*)::int from app_public.customers where not is_walk_in) as ncu,
             (select array_agg(id order by id) from app_public.baristas) as barista_ids,
             (select count(*)::int from app_public.baristas) as nb;

    insert into app_public.orders (id, customer_id, barista_id, status, notes, total, time_ordered, estimated_ready_time,
                                   paid_at, payment_method, inventory_taken_at, updated_at)
    select o.id, o.customer_id,
           case when o.status in ('BREWING', 'COMPLETED') then a.barista_ids[1 + (o.g % a.nb)::int] end,
           o.status, case when o.g % 10 = 0 then 'Note ' || o.g end,
           (select sum((1 + (o.g + k) % 2) * a.prices[1 + ((o.g * 31 + k * 17) % a.nc)::int]) from generate_series(1, 1 + (o.g % 3)::int) k),
           o.t, o.t + interval '6 minutes',
           case when o.status not in ('PENDING', 'CANCELLED') then o.t + interval '1 minute' end,
           case when o.status not in ('PENDING', 'CANCELLED') then 'provider' end,
           case when o.status not in ('PENDING', 'CANCELLED') then o.t + interval '1 minute' end,
           o.t
    from bench_arrays a,
    lateral (
      select g, ${id("bench-order", "g")} as id,
             a.customer_ids[1 + ((g * 7919) % a.ncu)::int] as customer_id,
             (case when g <= ${q} then (case when g % 2 = 0 then 'PREPARING' else 'BREWING' end)
                   when g <= ${p} then 'PENDING'
                   when g % 13 = 0 then 'CANCELLED'
                   else 'COMPLETED' end)::app_public.order_status as status,
             case when g <= ${p} then now() - make_interval(secs => (${p} - g + 1) * 15)
                  else now() - interval '1 hour' - make_interval(mins => ((g * 7919) % 525600)::int) end as t
      from generate_series(${from}::bigint, ${to}::bigint) g
    ) o;

    insert into app_public.order_items (order_id, position, coffee_id, quantity, unit_price, special_instructions)
    select ${id("bench-order", "g")}, k, a.coffee_ids[1 + ((g * 31 + k * 17) % a.nc)::int], 1 + ((g + k) % 2)::int,
           a.prices[1 + ((g * 31 + k * 17) % a.nc)::int], case when (g + k) % 5 = 0 then 'extra hot' end
    from bench_arrays a, generate_series(${from}::bigint, ${to}::bigint) g, generate_series(1, 1 + (g % 3)::int) k;
  `);
  await endTriggerlessLoad(root);
}

/**
 * `count` new PENDING orders (tagged with `tag` in notes) for customers with
 * accounts, 1 to 3 lines each; returns what a payment callback needs.
 */
export async function makePendingOrders(root: pg.Client, count: number, tag: string): Promise<Array<{ id: string; total: string; email: string }>> {
  await root.query("set session_replication_role = replica");
  const { rows } = await root.query(
    `
    with a as (
      select (select array_agg(id order by id) from app_public.coffees where available) as coffee_ids,
             (select array_agg(price order by id) from app_public.coffees where available) as prices,
             (select count(*)::int from app_public.coffees where available) as nc,
             (select array_agg(c.id order by c.id) from app_public.customers c join app_private.accounts ac on ac.id = c.id) as customer_ids,
             (select count(*)::int from app_public.customers c join app_private.accounts ac on ac.id = c.id) as ncu
    ), o as (
      select g, gen_random_uuid() as id, a.customer_ids[1 + ((g * 7919) % a.ncu)] as customer_id, a.*
      from a, generate_series(1, $1::int) g
    ), items as (
      insert into app_public.order_items (order_id, position, coffee_id, quantity, unit_price)
      select o.id, k, o.coffee_ids[1 + ((o.g * 31 + k * 17) % o.nc)], 1 + (o.g + k) % 2, o.prices[1 + ((o.g * 31 + k * 17) % o.nc)]
      from o, generate_series(1, 1 + o.g % 3) k
      returning order_id, quantity * unit_price as amount
    ), ins as (
      insert into app_public.orders (id, customer_id, status, notes, total, time_ordered)
      select o.id, o.customer_id, 'PENDING', $2,
             (select sum((1 + (o.g + k) % 2) * o.prices[1 + ((o.g * 31 + k * 17) % o.nc)]) from generate_series(1, 1 + o.g % 3) k),
             now()
      from o
      returning id, customer_id, total
    )
    select ins.id, ins.total::text as total, ac.email::text as email from ins join app_private.accounts ac on ac.id = ins.customer_id
    `,
    [count, tag],
  );
  await endTriggerlessLoad(root);
  return rows;
}

/** Ends bench-made open orders (so later scenarios see the base data's open orders only). */
export async function closeBenchOrders(root: pg.Client): Promise<number> {
  await root.query("set session_replication_role = replica");
  const { rowCount } = await root.query(`
    update app_public.orders set status = 'COMPLETED', inventory_taken_at = coalesce(inventory_taken_at, now())
    where notes like 'bench %' and status <> 'COMPLETED'`);
  await root.query("delete from graphile_worker._private_jobs");
  await endTriggerlessLoad(root);
  return rowCount ?? 0;
}

export async function analyze(root: pg.Client): Promise<void> {
  await root.query(
    "vacuum analyze app_public.orders, app_public.order_items, app_public.customers, app_public.coffees, app_public.reviews, app_public.recipe_lines, app_public.ingredients, app_public.baristas, app_public.roasters",
  );
}

export async function tableCounts(root: pg.Client): Promise<Record<string, number>> {
  const { rows } = await root.query(`
    select 'coffees' as t, count(*)::int n from app_public.coffees union all
    select 'customers', count(*)::int from app_public.customers union all
    select 'orders', count(*)::int from app_public.orders union all
    select 'order_items', count(*)::int from app_public.order_items union all
    select 'reviews', count(*)::int from app_public.reviews union all
    select 'queue (PREPARING/BREWING)', count(*)::int from app_public.orders where status in ('PREPARING', 'BREWING') union all
    select 'open orders (stock-reserving)', count(*)::int from app_public.orders where inventory_taken_at is null and status not in ('COMPLETED', 'CANCELLED')`);
  return Object.fromEntries(rows.map((r) => [r.t, r.n]));
}
