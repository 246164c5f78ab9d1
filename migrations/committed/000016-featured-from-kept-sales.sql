--! Previous: sha1:385f0644fa5f5dffa39b565fecc8acabb490dd01
--! Hash: sha1:c2a1ec2710d79b2ef533b24d5fff94982e983103
--! Message: featured-from-kept-sales

--------------------------------------------------------------------------------
-- featuredCoffee ranked from kept sales counts, not from a week of orders
--
-- Every counted sale (an order entering PAID, or a paid order's lines
-- changing) re-ranked its store's featured coffee at COMMIT (000013), under
-- the store's public_read_state row lock, by reading every order line of
-- the store's last 7 days. That read grows with the week's sales, and every
-- paid order at the store waits for the one before it to finish ranking: at
-- the bench's rush (5 orders a second) after a day of sales the payment
-- callbacks queued for seconds behind it (bench S9 after S3).
-- Now each sale adds its quantities to app_private.coffee_sales, one row per
-- store, hour and coffee, as it happens (and takes them back when it stops
-- counting); the ranking sums the buckets of the last 7 days: at most one
-- row per coffee and hour, whatever the number of orders.
-- The window is now whole hours: the sales of the hour that began at most
-- 7 days ago, and of every hour since (7 days, and less than one hour more).
--------------------------------------------------------------------------------

drop table if exists app_private.coffee_sales cascade;
drop function if exists app_private.add_sales(uuid[], timestamptz[], uuid[], bigint[]);
create table app_private.coffee_sales (
  store_id uuid not null,
  hour timestamptz not null,
  coffee_id uuid not null,
  sold bigint not null,
  primary key (store_id, hour, coffee_id)
);
comment on table app_private.coffee_sales is 'Quantities sold (orders PAID or later: sale_counts()) per store, hour ordered and coffee, kept by triggers on orders and order_items; rank_featured_coffee() sums the last 7 days. Rows older than 8 days are pruned as sales are counted; recount_reserved_stock() rebuilds them.';
revoke all on table app_private.coffee_sales from public;

-- The hour a sale is counted in (UTC hours, whatever the session's zone).
create or replace function app_private.sales_hour(p_at timestamptz) returns timestamptz
language sql immutable parallel safe set search_path = pg_catalog as $$
  select date_bin('1 hour', p_at, timestamptz '2000-01-01 00:00:00+00');
$$;

-- Adds (or takes back) what the changed rows sold, set-based, per statement.
-- An order inserted counts nothing itself: its lines are inserted after it,
-- and count then (order_items' trigger). An order deleted takes its lines
-- back before they go (tg__uncount_deleted_order: a cascade deletes the
-- lines after the order, when there is no order left to ask).
create or replace function app_private.tg__count_sales() returns trigger
language plpgsql security definer set search_path = pg_catalog as $$
declare
  v_stores uuid[];
  v_hours timestamptz[];
  v_coffees uuid[];
  v_sold bigint[];
begin
  if tg_op = 'TRUNCATE' then
    delete from app_private.coffee_sales;
    return null;
  end if;
  if tg_table_name = 'orders' then
    -- (UPDATE only: an order's own columns decide whether and where it counts.)
    select array_agg(d.store_id), array_agg(d.hour), array_agg(d.coffee_id), array_agg(d.q)
      into v_stores, v_hours, v_coffees, v_sold
      from (
        select n.store_id, app_private.sales_hour(n.time_ordered) as hour, i.coffee_id, i.quantity::bigint as q
          from new_rows n join old_rows o on o.id = n.id
          join app_public.order_items i on i.order_id = n.id
         where app_private.sale_counts(n.status)
           and (not app_private.sale_counts(o.status) or n.store_id <> o.store_id or n.time_ordered <> o.time_ordered)
        union all
        select o.store_id, app_private.sales_hour(o.time_ordered), i.coffee_id, -i.quantity
          from new_rows n join old_rows o on o.id = n.id
          join app_public.order_items i on i.order_id = o.id
         where app_private.sale_counts(o.status)
           and (not app_private.sale_counts(n.status) or n.store_id <> o.store_id or n.time_ordered <> o.time_ordered)
      ) d;
  elsif tg_op = 'INSERT' then
    select array_agg(o.store_id), array_agg(app_private.sales_hour(o.time_ordered)), array_agg(n.coffee_id), array_agg(n.quantity::bigint)
      into v_stores, v_hours, v_coffees, v_sold
      from new_rows n join app_public.orders o on o.id = n.order_id
     where app_private.sale_counts(o.status);
  elsif tg_op = 'DELETE' then
    select array_agg(o.store_id), array_agg(app_private.sales_hour(o.time_ordered)), array_agg(r.coffee_id), array_agg(-r.quantity::bigint)
      into v_stores, v_hours, v_coffees, v_sold
      from old_rows r join app_public.orders o on o.id = r.order_id
     where app_private.sale_counts(o.status);
  else
    select array_agg(d.store_id), array_agg(d.hour), array_agg(d.coffee_id), array_agg(d.q)
      into v_stores, v_hours, v_coffees, v_sold
      from (
        select o.store_id, app_private.sales_hour(o.time_ordered) as hour, n.coffee_id, n.quantity::bigint as q
          from new_rows n join app_public.orders o on o.id = n.order_id
         where app_private.sale_counts(o.status)
        union all
        select o.store_id, app_private.sales_hour(o.time_ordered), r.coffee_id, -r.quantity
          from old_rows r join app_public.orders o on o.id = r.order_id
         where app_private.sale_counts(o.status)
      ) d;
  end if;
  perform app_private.add_sales(v_stores, v_hours, v_coffees, v_sold);
  return null;
end;
$$;
comment on function app_private.tg__count_sales() is 'Keeps app_private.coffee_sales: what the statement''s orders and order lines add to or take from the counted sales.';
revoke all on function app_private.tg__count_sales() from public;

create or replace function app_private.tg__uncount_deleted_order() returns trigger
language plpgsql security definer set search_path = pg_catalog as $$
declare
  v_coffees uuid[];
  v_sold bigint[];
begin
  select array_agg(i.coffee_id), array_agg(-i.quantity::bigint) into v_coffees, v_sold
    from app_public.order_items i where i.order_id = old.id;
  perform app_private.add_sales(array_fill(old.store_id, array[cardinality(v_coffees)]),
    array_fill(app_private.sales_hour(old.time_ordered), array[cardinality(v_coffees)]), v_coffees, v_sold);
  return old;
end;
$$;
comment on function app_private.tg__uncount_deleted_order() is 'Takes a counted order''s lines back from app_private.coffee_sales before it is deleted (its lines go after it, by cascade).';
revoke all on function app_private.tg__uncount_deleted_order() from public;

-- Adds the sales (parallel arrays: store, hour, coffee, quantity; negative:
-- taken back) to the buckets, in key order so that two sales never wait on
-- each other's rows crosswise, and drops those stores' buckets older than 8
-- days (an index range that is empty but once an hour).
create or replace function app_private.add_sales(p_stores uuid[], p_hours timestamptz[], p_coffees uuid[], p_sold bigint[]) returns void
language plpgsql security definer set search_path = pg_catalog as $$
declare
  v_stores uuid[];
begin
  if p_stores is null then
    return;
  end if;
  with summed as (
    select d.store_id, d.hour, d.coffee_id, sum(d.q) as q
      from unnest(p_stores, p_hours, p_coffees, p_sold) as d(store_id, hour, coffee_id, q)
     where d.hour >= now() - interval '8 days'
     group by d.store_id, d.hour, d.coffee_id
    having sum(d.q) <> 0
  ), applied as (
    insert into app_private.coffee_sales as s (store_id, hour, coffee_id, sold)
    select x.store_id, x.hour, x.coffee_id, x.q from summed x order by x.store_id, x.hour, x.coffee_id
    on conflict (store_id, hour, coffee_id) do update set sold = s.sold + excluded.sold
    returning s.store_id
  )
  select array_agg(distinct a.store_id) into v_stores from applied a;
  if v_stores is not null then
    delete from app_private.coffee_sales s
     where s.store_id = any(v_stores) and s.hour < now() - interval '8 days';
  end if;
end;
$$;
comment on function app_private.add_sales(uuid[], timestamptz[], uuid[], bigint[]) is 'Adds sales (parallel arrays; a negative quantity takes one back) to app_private.coffee_sales, and prunes those stores'' buckets older than 8 days.';
revoke all on function app_private.add_sales(uuid[], timestamptz[], uuid[], bigint[]) from public;

drop trigger if exists _890_sales_update on app_public.orders;
drop trigger if exists _890_sales_truncate on app_public.orders;
drop trigger if exists _890_sales_delete on app_public.orders;
drop trigger if exists _890_sales_insert on app_public.order_items;
drop trigger if exists _890_sales_update on app_public.order_items;
drop trigger if exists _890_sales_delete on app_public.order_items;
create trigger _890_sales_update after update on app_public.orders
  referencing old table as old_rows new table as new_rows
  for each statement execute function app_private.tg__count_sales();
create trigger _890_sales_truncate after truncate on app_public.orders
  for each statement execute function app_private.tg__count_sales();
create trigger _890_sales_delete before delete on app_public.orders
  for each row when (app_private.sale_counts(old.status))
  execute function app_private.tg__uncount_deleted_order();
create trigger _890_sales_insert after insert on app_public.order_items
  referencing new table as new_rows
  for each statement execute function app_private.tg__count_sales();
create trigger _890_sales_update after update on app_public.order_items
  referencing old table as old_rows new table as new_rows
  for each statement execute function app_private.tg__count_sales();
create trigger _890_sales_delete after delete on app_public.order_items
  referencing old table as old_rows
  for each statement execute function app_private.tg__count_sales();

-- The counts of every order of the last 8 days: by the migration now, and by
-- the bulk recount after a load with triggers off.
create or replace function app_private.recount_sales() returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  lock table app_private.coffee_sales in exclusive mode;
  delete from app_private.coffee_sales;
  insert into app_private.coffee_sales (store_id, hour, coffee_id, sold)
  select o.store_id, app_private.sales_hour(o.time_ordered), i.coffee_id, sum(i.quantity)
    from app_public.orders o join app_public.order_items i on i.order_id = o.id
   where app_private.sale_counts(o.status) and o.time_ordered >= now() - interval '8 days'
   group by 1, 2, 3;
end;
$$;
comment on function app_private.recount_sales() is 'Rebuilds app_private.coffee_sales from the orders of the last 8 days (after a load with triggers off; recount_reserved_stock() calls it).';
revoke all on function app_private.recount_sales() from public;

select app_private.recount_sales();

-- The ranking (000013's), from the kept counts.
create or replace function app_private.rank_featured_coffee(p_store_id uuid) returns uuid
language sql stable security definer set search_path = pg_catalog as $$
  with st as materialized (select app_hidden.store_or_default(p_store_id) as id),
  sold as (
    select s.coffee_id, sum(s.sold) as sold
    from st join app_private.coffee_sales s on s.store_id = st.id
    where s.hour >= app_private.sales_hour(now() - interval '7 days')
    group by s.coffee_id
  )
  select c.id from app_public.coffees c
  cross join st
  left join sold s on s.coffee_id = c.id
  where c.category = 'FEATURED' and c.available
    and not exists (select 1 from app_public.store_coffees sc where sc.store_id = st.id and sc.coffee_id = c.id and not sc.available)
  order by coalesce(s.sold, 0) desc, c.name
  limit 1;
$$;
comment on function app_private.rank_featured_coffee(uuid) is 'The FEATURED coffee on sale at the store that sold most there in the last 7 days, counted by the hour (app_private.coffee_sales; ties: by name), ranked now: featured_coffee() reads it as last kept.';

-- 000013's bulk recount, rebuilding the sales counts before it ranks.
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
  perform app_private.recount_sales();
  insert into app_private.public_read_state (store_id, featured_coffee_id)
  select st.id, app_private.rank_featured_coffee(st.id) from app_public.stores st order by st.id
  on conflict (store_id) do update set featured_coffee_id = excluded.featured_coffee_id;
  perform pg_notify('public_reads_changed', 'all');
end;
$$;
