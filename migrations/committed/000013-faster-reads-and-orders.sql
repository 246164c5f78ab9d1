--! Previous: sha1:ecf584dedcacce5dc1711214fbb747fb45fa6ebb
--! Hash: sha1:a0d496371e19d0b122aac67673ef849a61f56c7b
--! Message: faster reads and orders

-- 000013: faster reads and orders, found by the benchmarks (bench/README.md).
--
-- 1. random_page_cost 1.1 for this database. The default (4) models spinning
--    disks; with it the planner hash-joins all 200 coffees for every order of
--    the barista queue (13 ms at 10,000 orders) instead of looking each coffee
--    up by key (4 ms). A database setting, so a DBA can still change it; it
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
--    partial index finds them), instead of a sub-select per order.
create index if not exists orders_waiting_idx on app_public.orders (id) where status in ('PAID', 'PREPARING', 'BREWING');

create or replace function app_private.estimate_ready_time(p_items integer) returns timestamptz
language sql stable security definer set search_path = pg_catalog as $$
  select now() + make_interval(secs =>
    app_private.setting('prep_base_seconds')
    + (coalesce((select sum(oi.quantity)
                   from app_public.orders o join app_public.order_items oi on oi.order_id = o.id
                  where o.status in ('PAID', 'PREPARING', 'BREWING')), 0) + p_items)
      * app_private.setting('prep_seconds_per_item')
      / greatest(app_private.setting('prep_parallel_baristas'), 1));
$$;

-- 3. What open orders hold, from the open orders. Joined the other way, the
--    planner (which expects ~10% of all orders to be open, not the few that
--    are) read every order line ever sold of the coffees concerned: 5 ms a
--    call at 10,000 orders, growing with history, and once per recipe line
--    of every coffee for Coffee.inventory (the kiosk menu). The ids of the
--    open orders come first (orders_open_idx, once: an init plan), then their
--    lines by key.
create or replace function app_private.reserved_stock(p_ingredient_id uuid) returns numeric
language sql stable security definer set search_path = pg_catalog as $$
  select coalesce(sum(oi.quantity * rl.quantity), 0)
  from app_public.order_items oi
  join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id and rl.ingredient_id = p_ingredient_id
  where oi.order_id = any (array(select o.id from app_public.orders o
                              where o.inventory_taken_at is null and o.status not in ('COMPLETED', 'CANCELLED')));
$$;

-- 4. createOrder checks stock after inserting the order, not before: the
--    stock rows stay locked from the check to the commit, and concurrent
--    orders that share an ingredient queue on that lock, so the less work
--    after it, the more orders a second. Same rules, same errors, same
--    order of checks (input, customer, lines, then stock).
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

  insert into app_public.orders (customer_id, notes, total, estimated_ready_time, created_by)
  values (v_customer_id, nullif(v_notes, ''), v_total, app_private.estimate_ready_time(v_cups), app_public.current_user_id())
  returning * into v_order;
  insert into app_public.order_items (order_id, position, coffee_id, quantity, unit_price, special_instructions)
  select v_order.id, (l ->> 'position')::integer, (l ->> 'coffee_id')::uuid, (l ->> 'quantity')::integer,
         (l ->> 'unit_price')::numeric, l ->> 'special_instructions'
  from jsonb_array_elements(v_items) l;
  -- Stock, checked last so that the lock is held as briefly as possible: the
  -- order and its lines are in (uncommitted), so this order is one of the
  -- open orders. Lock the stock rows it needs (in a fixed order: no
  -- deadlocks; a concurrent order waits here until the other commits and
  -- then sees it), and refuse it when the open orders would need more than
  -- the shelf holds; the exception rolls the inserts back.
  perform 1 from app_public.stock_items s
   where s.ingredient_id in (
     select rl.ingredient_id from jsonb_array_elements(v_items) l
     join app_public.recipe_lines rl on rl.coffee_id = (l ->> 'coffee_id')::uuid)
   order by s.ingredient_id for update;
  with need as (
    select rl.ingredient_id, min(l ->> 'coffee_id')::uuid as coffee_id
    from jsonb_array_elements(v_items) l join app_public.recipe_lines rl on rl.coffee_id = (l ->> 'coffee_id')::uuid
    group by rl.ingredient_id
  ), held as (
    select rl.ingredient_id, sum(oi.quantity * rl.quantity) as amount
    from app_public.order_items oi
    join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id
    where oi.order_id = any (array(select o.id from app_public.orders o
                              where o.inventory_taken_at is null and o.status not in ('COMPLETED', 'CANCELLED')))
      and rl.ingredient_id in (select ingredient_id from need)
    group by rl.ingredient_id
  )
  select i.name as ingredient, c.name as coffee into shortage
  from need n
  join app_public.stock_items s on s.ingredient_id = n.ingredient_id
  join held h on h.ingredient_id = n.ingredient_id
  join app_public.ingredients i on i.id = n.ingredient_id
  join app_public.coffees c on c.id = n.coffee_id
  where s.current_stock < h.amount
  order by n.ingredient_id
  limit 1;
  if shortage.ingredient is not null then
    raise exception 'Not enough % in stock for %.', shortage.ingredient, shortage.coffee using errcode = 'CT002';
  end if;
  return v_order;
end;
$$;
