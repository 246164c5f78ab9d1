--! Previous: sha1:ecf584dedcacce5dc1711214fbb747fb45fa6ebb
--! Hash: sha1:7784b0576ab239d9417d983ce0958d676ae93920
--! Message: faster reads and orders

-- 000013: faster reads and orders, found by the benchmarks (bench/README.md).
-- Same rules, same errors; what changes is how much they cost.
--
-- 1. random_page_cost 1.1 for this database. The default (4) models spinning
--    disks; with it the planner hash-joined all 200 coffees for every order of
--    the barista queue (13 ms at 10,000 orders) instead of looking each coffee
--    up by key (3 ms). A database setting, so a DBA can still change it; it
--    applies to sessions opened afterwards. Only the database's owner may set
--    it: when the migrations run as another role, say so and go on.
do $$
begin
  if exists (select 1 from pg_database where datname = current_database() and datdba = (select oid from pg_roles where rolname = current_user)) then
    execute format('alter database %I set random_page_cost = 1.1', current_database());
  else
    raise notice 'random_page_cost left as it is: % does not own database %', current_user, current_database();
  end if;
end
$$;

-- 2. The queue estimate: one join over the orders waiting to be made (a
--    partial index finds them), in PL/pgSQL: a SQL function that cannot be
--    inlined (SECURITY DEFINER, SET search_path) is planned again on every
--    call made from inside another function; PL/pgSQL keeps its plans for the
--    session.
create index if not exists orders_waiting_idx on app_public.orders (id) where status in ('PAID', 'PREPARING', 'BREWING');

create or replace function app_private.estimate_ready_time(p_items integer) returns timestamptz
language plpgsql stable security definer set search_path = pg_catalog as $$
begin
  return now() + make_interval(secs =>
    app_private.setting('prep_base_seconds')
    + (coalesce((select sum(oi.quantity)
                   from app_public.orders o join app_public.order_items oi on oi.order_id = o.id
                  where o.status in ('PAID', 'PREPARING', 'BREWING')), 0) + p_items)
      * app_private.setting('prep_seconds_per_item')
      / greatest(app_private.setting('prep_parallel_baristas'), 1));
end;
$$;

-- 3. What open orders hold of each ingredient, as a running total.
--
--    Until now every createOrder (and every Coffee.inventory) summed the
--    lines of every open order (not yet taken from stock, not completed or
--    cancelled): its cost grew with the number of open orders, so orders left
--    unpaid made every later order slower (bench S3: 6 ms at 22 open orders,
--    17 ms at 2,500), the stock lock was held that long, and the kiosk menu
--    (Coffee.inventory of 200 coffees) took 280 ms at 10,000 orders.
--
--    Now the lines of an open order write down what they need when they are
--    inserted (app_private.stock_reservations, by the recipes of that moment;
--    a trigger, so createOrder, a DBA's insert and data loads alike) and add
--    it to app_private.stock_reserved; when the order stops being open (taken
--    from stock, completed, cancelled, deleted) the same amounts come off
--    again. Available stock = current_stock - reserved. Changes to the totals
--    lock the stock rows concerned first, in ingredient order, then the
--    totals in the same order: no deadlocks. A load that bypasses triggers
--    (session_replication_role = replica) ends with
--    `select app_private.recount_reserved_stock()`.

drop table if exists app_private.stock_reservations cascade;
drop table if exists app_private.stock_reserved cascade;

create table app_private.stock_reservations (
  order_id uuid not null references app_public.orders on delete cascade,
  ingredient_id uuid not null references app_public.ingredients on delete cascade,
  amount numeric(14,3) not null check (amount >= 0),
  primary key (order_id, ingredient_id)
);
comment on table app_private.stock_reservations is 'What each open order needs of each ingredient, written when it was placed.';

create table app_private.stock_reserved (
  ingredient_id uuid primary key references app_public.ingredients on delete cascade,
  amount numeric(14,3) not null default 0
);
comment on table app_private.stock_reserved is 'Per ingredient: the sum of the open orders'' stock_reservations.';

-- An order's lines reserve what their recipes need (of now), when they are
-- inserted into an open order: by createOrder, by a DBA, by data loads. One
-- statement-level trigger, totals updated in ingredient order.
create or replace function app_private.tg_order_items__reserve_stock() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  with needs as (
    select ni.order_id, rl.ingredient_id, sum(ni.quantity * rl.quantity) as amount
    from new_items ni
    join app_public.orders o on o.id = ni.order_id
    join app_public.recipe_lines rl on rl.coffee_id = ni.coffee_id
    where o.inventory_taken_at is null and o.status not in ('COMPLETED', 'CANCELLED')
    group by ni.order_id, rl.ingredient_id
  ), written as (
    insert into app_private.stock_reservations (order_id, ingredient_id, amount)
    select n.order_id, n.ingredient_id, n.amount from needs n
    on conflict (order_id, ingredient_id) do update set amount = app_private.stock_reservations.amount + excluded.amount
  )
  insert into app_private.stock_reserved (ingredient_id, amount)
  select n.ingredient_id, sum(n.amount) from needs n group by n.ingredient_id order by n.ingredient_id
  on conflict (ingredient_id) do update set amount = app_private.stock_reserved.amount + excluded.amount;
  return null;
end;
$$;

drop trigger if exists _400_reserve_stock on app_public.order_items;
create trigger _400_reserve_stock after insert on app_public.order_items
  referencing new table as new_items
  for each statement execute function app_private.tg_order_items__reserve_stock();

-- Takes an order's needs off the totals, once.
create or replace function app_private.release_stock(p_order_id uuid) returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  perform 1 from app_public.stock_items s
   where s.ingredient_id in (select r.ingredient_id from app_private.stock_reservations r where r.order_id = p_order_id)
   order by s.ingredient_id for update;
  with gone as (
    delete from app_private.stock_reservations r where r.order_id = p_order_id returning r.ingredient_id, r.amount
  )
  insert into app_private.stock_reserved (ingredient_id, amount)
  select g.ingredient_id, -g.amount from gone g order by g.ingredient_id
  on conflict (ingredient_id) do update set amount = app_private.stock_reserved.amount + excluded.amount;
end;
$$;

create or replace function app_private.tg_orders__release_stock() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  perform app_private.release_stock(old.id);
  if tg_op = 'DELETE' then
    return old;
  end if;
  return null;
end;
$$;

drop trigger if exists _550_release_stock on app_public.orders;
create trigger _550_release_stock after update of status, inventory_taken_at on app_public.orders
  for each row
  when (old.inventory_taken_at is null and old.status not in ('COMPLETED', 'CANCELLED')
        and not (new.inventory_taken_at is null and new.status not in ('COMPLETED', 'CANCELLED')))
  execute function app_private.tg_orders__release_stock();
drop trigger if exists _550_release_stock_on_delete on app_public.orders;
create trigger _550_release_stock_on_delete before delete on app_public.orders
  for each row
  when (old.inventory_taken_at is null and old.status not in ('COMPLETED', 'CANCELLED'))
  execute function app_private.tg_orders__release_stock();

-- Rebuilds the totals from the open orders' lines (by the recipes of now):
-- for after a bulk load that ran without triggers
-- (session_replication_role = replica), and once here for the orders open
-- now.
create or replace function app_private.recount_reserved_stock() returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  perform 1 from app_public.stock_items s order by s.ingredient_id for update;
  perform 1 from app_private.stock_reserved r order by r.ingredient_id for update;
  delete from app_private.stock_reservations;
  insert into app_private.stock_reservations (order_id, ingredient_id, amount)
  select oi.order_id, rl.ingredient_id, sum(oi.quantity * rl.quantity)
  from app_public.order_items oi
  join app_public.orders o on o.id = oi.order_id
  join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id
  where o.inventory_taken_at is null and o.status not in ('COMPLETED', 'CANCELLED')
  group by oi.order_id, rl.ingredient_id;
  update app_private.stock_reserved set amount = 0;
  insert into app_private.stock_reserved (ingredient_id, amount)
  select r.ingredient_id, sum(r.amount) from app_private.stock_reservations r group by r.ingredient_id order by r.ingredient_id
  on conflict (ingredient_id) do update set amount = excluded.amount;
end;
$$;
select app_private.recount_reserved_stock();

create or replace function app_private.reserved_stock(p_ingredient_id uuid) returns numeric
language sql stable security definer set search_path = pg_catalog as $$
  select coalesce((select r.amount from app_private.stock_reserved r where r.ingredient_id = p_ingredient_id), 0);
$$;

create or replace function app_public.coffees_inventory(c app_public.coffees) returns integer
language plpgsql stable security definer set search_path = pg_catalog as $$
begin
  return (
    select case when count(*) = 0 then null
      else greatest(0, min(floor(coalesce(s.current_stock - coalesce(r.amount, 0), 1e9) / rl.quantity)))::integer
    end
    from app_public.recipe_lines rl
    left join app_public.stock_items s on s.ingredient_id = rl.ingredient_id
    left join app_private.stock_reserved r on r.ingredient_id = rl.ingredient_id
    where rl.coffee_id = c.id);
end;
$$;

-- 4. createOrder validates and estimates first, then locks the stock rows it
--    needs, inserts, and checks the totals: the lock is held from the check
--    to the commit only, and concurrent orders that share an ingredient
--    queue on it, so the less work after it, the more orders a second.
create or replace function app_public.create_order(
  p_items jsonb default null,
  p_input_notes text default null,
  p_coffee_id uuid default null,
  p_quantity integer default null,
  p_notes text default null,
  p_customer_id uuid default null
) returns app_public.orders
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  actor text := app_public.current_actor();
  v_customer_id uuid;
  v_lines jsonb;
  v_notes text;
  v_order app_public.orders;
  v_max_qty integer := app_private.setting('max_quantity_per_line');
  v_max_lines integer := app_private.setting('max_lines_per_order');
  line jsonb;
  v_coffee app_public.coffees;
  v_qty integer;
  v_pos integer := 0;
  v_total numeric(10,2) := 0;
  v_cups integer := 0;
  shortage record;
  v_items jsonb := '[]';
  v_ready timestamptz;
begin
  perform app_hidden.require_signed_in();

  -- Exactly one form: `input`, or coffeeId + quantity (+ notes).
  if p_items is not null then
    if p_coffee_id is not null or p_quantity is not null or p_notes is not null then
      raise exception 'Give either input or coffeeId/quantity/notes, not both.' using errcode = '22023';
    end if;
    v_lines := p_items;
    v_notes := p_input_notes;
  else
    if p_coffee_id is null or p_quantity is null then
      raise exception 'Give input, or coffeeId and quantity.' using errcode = '22023';
    end if;
    v_lines := jsonb_build_array(jsonb_build_object('coffee_id', p_coffee_id, 'quantity', p_quantity));
    v_notes := p_notes;
  end if;
  if jsonb_typeof(v_lines) <> 'array' or jsonb_array_length(v_lines) < 1 then
    raise exception 'An order needs at least one item.' using errcode = '22023';
  end if;
  if jsonb_array_length(v_lines) > v_max_lines then
    raise exception 'An order may have at most % items.', v_max_lines using errcode = '22023';
  end if;
  if length(v_notes) > 500 then
    raise exception 'Notes may have at most 500 characters.' using errcode = '22023';
  end if;

  -- Whose order: a customer's own; staff choose, else the walk-in customer.
  if actor = 'customer' then
    if p_customer_id is not null and p_customer_id <> app_public.current_user_id() then
      raise exception 'Customers order for themselves.' using errcode = '42501';
    end if;
    v_customer_id := app_public.current_user_id();
  elsif p_customer_id is not null then
    if not exists (select 1 from app_public.customers where id = p_customer_id) then
      raise exception 'No customer with id %.', p_customer_id using errcode = 'P0002';
    end if;
    v_customer_id := p_customer_id;
  else
    v_customer_id := app_private.walk_in_customer_id();
  end if;

  -- Validate every line against the menu, at today's prices.
  for line in select value from jsonb_array_elements(v_lines) loop
    v_pos := v_pos + 1;
    v_qty := (line ->> 'quantity')::integer;
    if v_qty is null or v_qty < 1 or v_qty > v_max_qty then
      raise exception 'Quantity must be between 1 and % (item %).', v_max_qty, v_pos using errcode = '22023';
    end if;
    if length(line ->> 'special_instructions') > 200 then
      raise exception 'Special instructions may have at most 200 characters (item %).', v_pos using errcode = '22023';
    end if;
    select * into v_coffee from app_public.coffees where id = (line ->> 'coffee_id')::uuid;
    if v_coffee.id is null then
      raise exception 'No coffee with id % (item %).', line ->> 'coffee_id', v_pos using errcode = 'P0002';
    end if;
    if not v_coffee.available then
      raise exception '% is not on sale.', v_coffee.name using errcode = 'CT003';
    end if;
    v_items := v_items || jsonb_build_object('position', v_pos, 'coffee_id', v_coffee.id, 'quantity', v_qty,
      'unit_price', v_coffee.price, 'special_instructions', nullif(line ->> 'special_instructions', ''));
    v_total := v_total + v_qty * v_coffee.price;
    v_cups := v_cups + v_qty;
  end loop;

  v_ready := app_private.estimate_ready_time(v_cups);

  -- Stock. Lock the stock rows this order needs (in a fixed order: no
  -- deadlocks; a concurrent order waits here until the other commits), then
  -- insert the order: its lines add what they need to what open orders hold
  -- (app_private.stock_reserved, by trigger), and refuse it when that is
  -- more than the shelf holds; the exception rolls everything back.
  perform 1 from app_public.stock_items s
   where s.ingredient_id in (
     select rl.ingredient_id from jsonb_array_elements(v_items) l
     join app_public.recipe_lines rl on rl.coffee_id = (l ->> 'coffee_id')::uuid)
   order by s.ingredient_id for update;
  insert into app_public.orders (customer_id, notes, total, estimated_ready_time, created_by)
  values (v_customer_id, nullif(v_notes, ''), v_total, v_ready, app_public.current_user_id())
  returning * into v_order;
  insert into app_public.order_items (order_id, position, coffee_id, quantity, unit_price, special_instructions)
  select v_order.id, (l ->> 'position')::integer, (l ->> 'coffee_id')::uuid, (l ->> 'quantity')::integer,
         (l ->> 'unit_price')::numeric, l ->> 'special_instructions'
  from jsonb_array_elements(v_items) l;
  select i.name as ingredient, c.name as coffee into shortage
  from app_private.stock_reservations n
  join app_public.stock_items s on s.ingredient_id = n.ingredient_id
  join app_private.stock_reserved r on r.ingredient_id = n.ingredient_id
  join app_public.ingredients i on i.id = n.ingredient_id
  join lateral (
    select min(c.name) as name from app_public.order_items oi
    join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id and rl.ingredient_id = n.ingredient_id
    join app_public.coffees c on c.id = oi.coffee_id
    where oi.order_id = v_order.id
  ) c on true
  where n.order_id = v_order.id and s.current_stock < r.amount
  order by n.ingredient_id
  limit 1;
  if shortage.ingredient is not null then
    raise exception 'Not enough % in stock for %.', shortage.ingredient, shortage.coffee using errcode = 'CT002';
  end if;
  return v_order;
end;
$$;
