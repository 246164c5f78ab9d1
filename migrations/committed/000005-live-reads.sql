--! Previous: sha1:34747be257cb0ee4a82ffa2bfc260dcc19837063
--! Hash: sha1:cb4cb621c0d217bb971754d13f50d79325170d91

--------------------------------------------------------------------------------
-- 905 live reads: what changed, as precisely as a public read can see it
--
-- The live cache (src/http/liveCache.ts) drops a public read when a row it was
-- made of changed in a way its answer can see, and only that read. The
-- announcements on `public_reads_changed` (common/topics.ts) name what
-- changed, space-separated:
--   `app_public.<table>`   a row of a table public reads show as it is
--                          (coffees, roasters, ingredients, recipe lines,
--                          reviews) changed: sent only when a row did;
--   `inventory:<coffee>`   that coffee's Coffee.inventory changed (at any
--                          store: an answer shows one store's, and is
--                          dropped when any store's changed);
--   `featured`             featuredCoffee is another coffee (at any store);
--   `all`                  anything (after a bulk load: recount_reserved_stock()).
-- Orders and stock are not announced as tables: what a public read sees of
-- them (a coffee's inventory, the featured coffee) is worked out once, at
-- COMMIT, and announced only when it differs from what it was. An order's
-- later steps (PREPARING ... COMPLETED) and a payment (stock taken = stock no
-- longer reserved) change neither, so they announce nothing.
--------------------------------------------------------------------------------

-- Coffee.inventory, kept current: the servings a store's stock on the shelf
-- (less what its open orders hold) can still make, per store and coffee;
-- null when the coffee has no recipe. A plain row read
-- (plugins/InventoryPlugin.ts selects it in the coffees' own statement), the
-- same for every caller. Stores: 000002-stores.sql.
create table app_public.coffee_inventory (
  store_id uuid not null references app_public.stores on delete cascade,
  coffee_id uuid not null references app_public.coffees on delete cascade,
  servings integer,
  primary key (store_id, coffee_id)
);
create index coffee_inventory_coffee_id_idx on app_public.coffee_inventory (coffee_id);
comment on table app_public.coffee_inventory is E'@behavior -*\nCoffee.inventory kept current at COMMIT by the live reads triggers (section 905 of 000005-live-reads.sql).';
alter table app_public.coffee_inventory enable row level security;
create policy select_all on app_public.coffee_inventory for select using (true);
grant select on app_public.coffee_inventory to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

-- The servings of each coffee in p_coffees at every store, by the stock and
-- reservations of now.
create function app_private.inventory_of(p_coffees uuid[]) returns table (store_id uuid, coffee_id uuid, servings integer)
language sql stable security definer set search_path = pg_catalog as $$
  select st.id, c.id,
         case when count(rl.ingredient_id) = 0 then null
           else greatest(0, min(floor(coalesce(s.current_stock - coalesce(r.amount, 0), 1e9) / rl.quantity)))::integer
         end
  from app_public.stores st
  cross join unnest(p_coffees) c(id)
  left join app_public.recipe_lines rl on rl.coffee_id = c.id
  left join app_public.stock_items s on s.store_id = st.id and s.ingredient_id = rl.ingredient_id
  left join app_private.stock_reserved r on r.store_id = st.id and r.ingredient_id = rl.ingredient_id
  group by st.id, c.id;
$$;

-- The computed column stays for SQL callers; the API reads the table.
create or replace function app_public.coffees_inventory(c app_public.coffees, store_id uuid default null) returns integer
language sql stable as $$
  select i.servings from app_public.coffee_inventory i
   where i.store_id = app_hidden.store_or_default(coffees_inventory.store_id) and i.coffee_id = c.id;
$$;

-- featuredCoffee in one pass over the store's last 7 days' orders (not one
-- per FEATURED coffee): the kiosk's menu asks for it on every uncached read.
-- Per store (000002-stores.sql): the store's sales, the store's menu.
create or replace function app_public.featured_coffee(store_id uuid default null) returns app_public.coffees
language sql stable security definer set search_path = pg_catalog as $$
  select c.* from app_public.coffees c
  cross join (select app_hidden.store_or_default(featured_coffee.store_id) as id) st
  left join (
    select oi.coffee_id, sum(oi.quantity) as sold
    from app_public.orders o join app_public.order_items oi on oi.order_id = o.id
    where o.store_id = app_hidden.store_or_default(featured_coffee.store_id)
      and o.time_ordered >= now() - interval '7 days'
      and o.status in ('PAID', 'PREPARING', 'BREWING', 'READY', 'COMPLETED')
    group by oi.coffee_id
  ) s on s.coffee_id = c.id
  where c.category = 'FEATURED' and c.available
    and not exists (select 1 from app_public.store_coffees sc where sc.store_id = st.id and sc.coffee_id = c.id and not sc.available)
  order by coalesce(s.sold, 0) desc, c.name
  limit 1;
$$;

-- What each store's featured coffee was when last announced.
create table app_private.public_read_state (
  store_id uuid primary key references app_public.stores on delete cascade,
  featured_coffee_id uuid
);
comment on table app_private.public_read_state is 'Each store''s featured coffee as last announced (featuredCoffee moves: announce it).';

-- What a transaction changed that public reads may see, worked out at its
-- COMMIT: `what` is a coffee id (its inventory, at every store),
-- 'featured:<store id>' (that store's featured coffee) or 'featured' (every
-- store's). Rows live only
-- inside their transaction (the deferred trigger below deletes them).
create unlogged table app_private.public_read_changes (
  txid xid8 not null default pg_current_xact_id(),
  what text not null,
  primary key (txid, what)
);
comment on table app_private.public_read_changes is 'What the current transaction may have changed of the public reads; emptied at its COMMIT.';

-- At COMMIT (deferred; the first row of a transaction does all of it):
-- recompute the inventory of the coffees queued, in coffee order under row
-- locks (taken before the fresh snapshot that computes them, so concurrent
-- transactions never write a stale figure, and one ordered round per
-- transaction cannot deadlock), and announce those that changed; then
-- announce the featured coffee if it is another one.
create function app_private.tg_public_read_changes__announce() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_coffees uuid[];
  v_featured text[];
  v_changed uuid[];
  v_moved boolean;
begin
  with mine as (
    delete from app_private.public_read_changes c where c.txid = pg_current_xact_id() returning c.what
  )
  select array_agg(m.what::uuid order by m.what) filter (where m.what not like 'featured%'),
         array_agg(m.what order by m.what) filter (where m.what like 'featured%')
    into v_coffees, v_featured from mine m;
  if v_coffees is not null then
    insert into app_public.coffee_inventory (store_id, coffee_id)
    select st.id, c.id from app_public.stores st cross join app_public.coffees c where c.id = any(v_coffees) order by st.id, c.id
    on conflict do nothing;
    perform 1 from app_public.coffee_inventory i where i.coffee_id = any(v_coffees) order by i.store_id, i.coffee_id for update;
    with fresh as (select * from app_private.inventory_of(v_coffees)),
    changed as (
      update app_public.coffee_inventory i set servings = f.servings
        from fresh f
       where i.store_id = f.store_id and i.coffee_id = f.coffee_id and i.servings is distinct from f.servings
      returning i.coffee_id
    )
    select array_agg(distinct c.coffee_id order by c.coffee_id) into v_changed from changed c;
    -- Under 8000 bytes a NOTIFY: 100 coffees each.
    perform pg_notify('public_reads_changed', string_agg('inventory:' || x.id, ' ' order by x.id))
      from (select u.id, (u.n - 1) / 100 as chunk from unnest(v_changed) with ordinality u(id, n)) x
     group by x.chunk;
  end if;
  if v_featured is not null then
    -- The stores queued ('featured': every store), in store order under row locks.
    insert into app_private.public_read_state (store_id)
    select st.id from app_public.stores st order by st.id on conflict do nothing;
    perform 1 from app_private.public_read_state s
     where 'featured' = any(v_featured) or 'featured:' || s.store_id = any(v_featured)
     order by s.store_id for update;
    with moved as (
      update app_private.public_read_state s set featured_coffee_id = f.id
        from (select st.id as store_id, (select x.id from app_public.featured_coffee(st.id) x) as id
                from app_public.stores st
               where 'featured' = any(v_featured) or 'featured:' || st.id = any(v_featured)) f
       where s.store_id = f.store_id and s.featured_coffee_id is distinct from f.id
      returning 1
    )
    select exists (select 1 from moved) into v_moved;
    if v_moved then
      perform pg_notify('public_reads_changed', 'featured');
    end if;
  end if;
  return null;
end;
$$;

create constraint trigger _900_announce after insert on app_private.public_read_changes
  deferrable initially deferred
  for each row execute function app_private.tg_public_read_changes__announce();

-- Queues the coffees whose inventory a statement on stock_items (tg_argv[0]
-- 'current_stock'), stock_reserved ('amount') or recipe_lines may have
-- changed: those using an ingredient whose figure changed, or whose recipe
-- did. A statement that changed no such figure queues nothing.
create function app_private.tg__queue_inventory() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  if tg_op = 'TRUNCATE' then
    insert into app_private.public_read_changes (what) select c.id::text from app_public.coffees c on conflict do nothing;
  elsif tg_table_name = 'recipe_lines' and tg_op = 'INSERT' then
    insert into app_private.public_read_changes (what) select distinct n.coffee_id::text from new_rows n on conflict do nothing;
  elsif tg_table_name = 'recipe_lines' then
    insert into app_private.public_read_changes (what) select distinct o.coffee_id::text from old_rows o on conflict do nothing;
  elsif tg_op = 'INSERT' then
    insert into app_private.public_read_changes (what)
    select distinct rl.coffee_id::text from new_rows n join app_public.recipe_lines rl on rl.ingredient_id = (to_jsonb(n) ->> 'ingredient_id')::uuid
    on conflict do nothing;
  else
    insert into app_private.public_read_changes (what)
    select distinct rl.coffee_id::text from old_rows o join app_public.recipe_lines rl on rl.ingredient_id = (to_jsonb(o) ->> 'ingredient_id')::uuid
    on conflict do nothing;
  end if;
  return null;
end;
$$;

-- The UPDATE half: only rows whose figure (or key) changed.
create function app_private.tg__queue_inventory_update() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  if tg_table_name = 'recipe_lines' then
    insert into app_private.public_read_changes (what)
    select distinct ch.coffee_id::text from (
      (select n.coffee_id, n.ingredient_id, n.quantity from new_rows n except select o.coffee_id, o.ingredient_id, o.quantity from old_rows o)
      union all
      (select o.coffee_id, o.ingredient_id, o.quantity from old_rows o except select n.coffee_id, n.ingredient_id, n.quantity from new_rows n)
    ) ch
    on conflict do nothing;
  else
    insert into app_private.public_read_changes (what)
    select distinct rl.coffee_id::text from (
      (select to_jsonb(n) ->> 'ingredient_id' as ingredient_id, to_jsonb(n) ->> tg_argv[0] as figure from new_rows n
       except select to_jsonb(o) ->> 'ingredient_id', to_jsonb(o) ->> tg_argv[0] from old_rows o)
      union all
      (select to_jsonb(o) ->> 'ingredient_id', to_jsonb(o) ->> tg_argv[0] from old_rows o
       except select to_jsonb(n) ->> 'ingredient_id', to_jsonb(n) ->> tg_argv[0] from new_rows n)
    ) ch
    join app_public.recipe_lines rl on rl.ingredient_id = ch.ingredient_id::uuid
    on conflict do nothing;
  end if;
  return null;
end;
$$;

-- A new store: every coffee's inventory there (an empty shelf).
create function app_private.tg_stores__queue_inventory() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  insert into app_private.public_read_changes (what) select c.id::text from app_public.coffees c on conflict do nothing;
  return null;
end;
$$;

-- A new coffee gets its inventory row (and the featured coffee may change).
create function app_private.tg_coffees__queue_public_reads() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  insert into app_private.public_read_changes (what)
  select n.id::text from new_rows n
  union select 'featured' where exists (select 1 from new_rows n where n.category = 'FEATURED')
  on conflict do nothing;
  return null;
end;
$$;

-- featuredCoffee counts the lines of orders in these statuses.
create function app_private.sale_counts(p_status app_public.order_status) returns boolean
language sql immutable set search_path = pg_catalog as $$
  select p_status in ('PAID', 'PREPARING', 'BREWING', 'READY', 'COMPLETED');
$$;

-- Queues a look at the featured coffee of the stores whose ranking a
-- statement changed: an order entering or leaving the counted statuses, a
-- counted order's time or lines (its store's); a coffee's category or
-- availability (every store's); a store's own availability (that store's).
create function app_private.tg__queue_featured() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_stores uuid[];
  v_all boolean := false;
begin
  if tg_op = 'TRUNCATE' then
    v_all := true;
  elsif tg_table_name = 'orders' and tg_op = 'UPDATE' then
    v_stores := array(
      select distinct n.store_id from new_rows n join old_rows o on o.id = n.id
       where app_private.sale_counts(n.status) <> app_private.sale_counts(o.status)
          or (app_private.sale_counts(n.status) and n.time_ordered <> o.time_ordered));
  elsif tg_table_name = 'orders' and tg_op = 'INSERT' then
    v_stores := array(select distinct n.store_id from new_rows n where app_private.sale_counts(n.status));
  elsif tg_table_name = 'orders' then
    v_stores := array(select distinct o.store_id from old_rows o where app_private.sale_counts(o.status));
  elsif tg_table_name = 'order_items' and tg_op = 'UPDATE' then
    v_stores := array(
      select distinct o.store_id from (
        (select n.order_id, n.coffee_id, n.quantity from new_rows n except select o.order_id, o.coffee_id, o.quantity from old_rows o)
        union all
        (select o.order_id, o.coffee_id, o.quantity from old_rows o except select n.order_id, n.coffee_id, n.quantity from new_rows n)
      ) ch join app_public.orders o on o.id = ch.order_id
      where app_private.sale_counts(o.status));
  elsif tg_table_name = 'order_items' and tg_op = 'INSERT' then
    v_stores := array(select distinct o.store_id from new_rows n join app_public.orders o on o.id = n.order_id where app_private.sale_counts(o.status));
  elsif tg_table_name = 'order_items' then
    v_stores := array(select distinct o.store_id from old_rows r join app_public.orders o on o.id = r.order_id where app_private.sale_counts(o.status));
  elsif tg_table_name = 'coffees' then
    v_all := exists (
      select 1 from new_rows n join old_rows o on o.id = n.id
       where n.category <> o.category or n.available <> o.available or n.name <> o.name);
  elsif tg_table_name = 'store_coffees' and tg_op = 'DELETE' then
    v_stores := array(select distinct o.store_id from old_rows o);
  elsif tg_table_name = 'store_coffees' then
    v_stores := array(select distinct n.store_id from new_rows n);
  end if;
  if v_all then
    insert into app_private.public_read_changes (what) values ('featured') on conflict do nothing;
  elsif cardinality(v_stores) > 0 then
    insert into app_private.public_read_changes (what) select 'featured:' || u.id from unnest(v_stores) u(id) on conflict do nothing;
  end if;
  return null;
end;
$$;

-- The tables public reads show as they are: announced by name, only when a
-- statement changed a row (an UPDATE that wrote the same values changed none).
create or replace function app_private.tg__announce_public_reads() returns trigger
language plpgsql as $$
declare
  v_changed boolean;
begin
  if tg_op = 'TRUNCATE' then
    v_changed := true;
  elsif tg_op = 'INSERT' then
    v_changed := exists (select 1 from new_rows);
  elsif tg_op = 'DELETE' then
    v_changed := exists (select 1 from old_rows);
  else
    v_changed := exists (select to_jsonb(n) from new_rows n except select to_jsonb(o) from old_rows o);
  end if;
  if v_changed then
    perform pg_notify('public_reads_changed', tg_table_schema || '.' || tg_table_name);
  end if;
  return null;
end;
$$;

-- Orders and stock: no longer announced as tables (above: what they change).
drop trigger _900_live_cache on app_public.stock_items;
drop trigger _900_live_cache on app_private.stock_reserved;
drop trigger _900_live_cache on app_public.orders;
drop trigger _900_live_cache on app_public.order_items;

-- The announcing triggers: one per event (a trigger with transition tables
-- has one event), named _900_live_cache_<event>.
do $$
declare
  t text;
begin
  foreach t in array array['app_public.coffees', 'app_public.roasters', 'app_public.ingredients', 'app_public.recipe_lines', 'app_public.reviews',
                           'app_public.store_coffees', 'app_public.stores'] loop
    execute format('drop trigger _900_live_cache on %s', t);
    execute format('create trigger _900_live_cache_insert after insert on %s referencing new table as new_rows for each statement execute function app_private.tg__announce_public_reads()', t);
    execute format('create trigger _900_live_cache_update after update on %s referencing new table as new_rows old table as old_rows for each statement execute function app_private.tg__announce_public_reads()', t);
    execute format('create trigger _900_live_cache_delete after delete on %s referencing old table as old_rows for each statement execute function app_private.tg__announce_public_reads()', t);
    execute format('create trigger _900_live_cache_truncate after truncate on %s for each statement execute function app_private.tg__announce_public_reads()', t);
  end loop;
end;
$$;

-- Inventory: stock on the shelf (its figure: current_stock), what open
-- orders hold (amount), recipes (no figure: any change of a line).
do $$
declare
  t text[];
begin
  foreach t slice 1 in array array[array['app_public.stock_items', '''current_stock'''], array['app_private.stock_reserved', '''amount'''], array['app_public.recipe_lines', '']] loop
    execute format('create trigger _900_inventory_insert after insert on %s referencing new table as new_rows for each statement execute function app_private.tg__queue_inventory(%s)', t[1], t[2]);
    execute format('create trigger _900_inventory_update after update on %s referencing new table as new_rows old table as old_rows for each statement execute function app_private.tg__queue_inventory_update(%s)', t[1], t[2]);
    execute format('create trigger _900_inventory_delete after delete on %s referencing old table as old_rows for each statement execute function app_private.tg__queue_inventory(%s)', t[1], t[2]);
    execute format('create trigger _900_inventory_truncate after truncate on %s for each statement execute function app_private.tg__queue_inventory(%s)', t[1], t[2]);
  end loop;
end;
$$;
create trigger _900_public_reads_insert after insert on app_public.coffees
  referencing new table as new_rows for each statement execute function app_private.tg_coffees__queue_public_reads();
create trigger _900_inventory_insert after insert on app_public.stores
  for each statement execute function app_private.tg_stores__queue_inventory();

-- The featured coffee: orders, their lines, coffees.
create trigger _900_featured_insert after insert on app_public.orders
  referencing new table as new_rows for each statement execute function app_private.tg__queue_featured();
create trigger _900_featured_update after update on app_public.orders
  referencing new table as new_rows old table as old_rows for each statement execute function app_private.tg__queue_featured();
create trigger _900_featured_delete after delete on app_public.orders
  referencing old table as old_rows for each statement execute function app_private.tg__queue_featured();
create trigger _900_featured_truncate after truncate on app_public.orders
  for each statement execute function app_private.tg__queue_featured();
create trigger _900_featured_insert after insert on app_public.order_items
  referencing new table as new_rows for each statement execute function app_private.tg__queue_featured();
create trigger _900_featured_update after update on app_public.order_items
  referencing new table as new_rows old table as old_rows for each statement execute function app_private.tg__queue_featured();
create trigger _900_featured_delete after delete on app_public.order_items
  referencing old table as old_rows for each statement execute function app_private.tg__queue_featured();
create trigger _900_featured_update after update on app_public.coffees
  referencing new table as new_rows old table as old_rows for each statement execute function app_private.tg__queue_featured();
-- (A store's own availability: one trigger a statement event, as above.)
create trigger _900_featured_insert after insert on app_public.store_coffees
  referencing new table as new_rows for each statement execute function app_private.tg__queue_featured();
create trigger _900_featured_update after update on app_public.store_coffees
  referencing new table as new_rows old table as old_rows for each statement execute function app_private.tg__queue_featured();
create trigger _900_featured_delete after delete on app_public.store_coffees
  referencing old table as old_rows for each statement execute function app_private.tg__queue_featured();

-- Today's figures.
insert into app_public.coffee_inventory (store_id, coffee_id, servings)
select i.store_id, i.coffee_id, i.servings from app_private.inventory_of(array(select c.id from app_public.coffees c)) i;
insert into app_private.public_read_state (store_id, featured_coffee_id)
select st.id, (select f.id from app_public.featured_coffee(st.id) f) from app_public.stores st;

-- After a bulk load without triggers (session_replication_role = replica):
-- the reservations, then every coffee's inventory, from scratch.
-- (Per store, as in 000002-stores.sql.)
create or replace function app_private.recount_reserved_stock() returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  perform 1 from app_public.stock_items s order by s.store_id, s.ingredient_id for update;
  perform 1 from app_private.stock_reserved r order by r.store_id, r.ingredient_id for update;
  delete from app_private.stock_reservations;
  insert into app_private.stock_reservations (order_id, store_id, ingredient_id, amount)
  select oi.order_id, o.store_id, rl.ingredient_id, sum(oi.quantity * rl.quantity)
  from app_public.order_items oi
  join app_public.orders o on o.id = oi.order_id
  join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id
  where o.inventory_taken_at is null and o.status not in ('COMPLETED', 'CANCELLED')
  group by oi.order_id, o.store_id, rl.ingredient_id;
  update app_private.stock_reserved set amount = 0;
  insert into app_private.stock_reserved (store_id, ingredient_id, amount)
  select r.store_id, r.ingredient_id, sum(r.amount) from app_private.stock_reservations r group by r.store_id, r.ingredient_id order by r.store_id, r.ingredient_id
  on conflict (store_id, ingredient_id) do update set amount = excluded.amount;
  insert into app_public.coffee_inventory (store_id, coffee_id, servings)
  select i.store_id, i.coffee_id, i.servings from app_private.inventory_of(array(select c.id from app_public.coffees c order by c.id)) i
  order by i.store_id, i.coffee_id
  on conflict (store_id, coffee_id) do update set servings = excluded.servings;
  insert into app_private.public_read_state (store_id, featured_coffee_id)
  select st.id, (select f.id from app_public.featured_coffee(st.id) f) from app_public.stores st order by st.id
  on conflict (store_id) do update set featured_coffee_id = excluded.featured_coffee_id;
  perform pg_notify('public_reads_changed', 'all');
end;
$$;
