--! Previous: sha1:3f89eb7173a77a579e9eb74de61b294f4db6b99f
--! Hash: sha1:9f08f8de27813f947e7e6f4ca67f7eb0f7fcd85d
--! Message: options

--------------------------------------------------------------------------------
-- Options: sizes, milks and extra shots, priced, with their own stock, and
-- the coffee's price per store
--
-- A coffee serves option groups (coffee_option_groups: one "Milk" group on
-- every milk drink); a group holds options and the number a line may choose
-- (min_selections..max_selections). An option has a price delta and changes
-- the recipe one way:
--   - recipe_factor: every recipe amount times the factor (sizes);
--   - ingredient_id with ingredient_amount: that amount added (a shot);
--   - ingredient_id alone: it takes the place, at the same amount, of the
--     ingredient of its group's default option (Oat for Whole: the recipe's
--     whole milk becomes oat milk). A swap, not "minus milk plus oat": the
--     recipe keeps one line per ingredient, so a Large oat latte is 330 ml of
--     oat milk and no milk, whatever the recipe's milk amount, and no negative
--     amount ever reaches the stock.
-- Added amounts are not scaled by a size (a shot is a shot).
-- app_private.line_usage() is the one place that turns a coffee and its
-- options into what one serving takes; reservations, stock taken and
-- returned, Coffee.inventory, the fair shares and Option.inventory read it.
-- Per store: store_coffee_prices (a coffee's price there, else the chain's)
-- and store_options (an option off at a store). Each is one row a DBA may
-- insert; setStorePrice and setOptionAvailable write them through the API.
-- Sections as in 000002-stores.sql: 040 the menu per store, 400 orders.
--------------------------------------------------------------------------------

--------------------------------------------------------------------------------
-- 040 option groups, options, and per store prices and availability
--------------------------------------------------------------------------------

create table app_public.option_groups (
  id uuid primary key default gen_random_uuid(),
  name text not null check (btrim(name) <> '' and length(name) <= 100),
  min_selections integer not null default 0 check (min_selections >= 0),
  max_selections integer not null default 1 check (max_selections between 1 and 20),
  check (min_selections <= max_selections)
);
comment on table app_public.option_groups is 'A choice a coffee offers (Size, Milk, Extra shot): between min_selections and max_selections of its options per order line.';
alter table app_public.option_groups enable row level security;
create policy select_all on app_public.option_groups for select using (true);
grant select on app_public.option_groups to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;
create trigger _950_audit after insert or update or delete on app_public.option_groups
  for each row execute function app_private.tg_audit('id', '*');

create table app_public.coffee_option_groups (
  coffee_id uuid not null references app_public.coffees on delete cascade,
  group_id uuid not null references app_public.option_groups on delete cascade,
  position integer not null default 0,
  primary key (coffee_id, group_id)
);
create index coffee_option_groups_group_id_idx on app_public.coffee_option_groups (group_id);
comment on table app_public.coffee_option_groups is E'@behavior -*\nWhich option groups a coffee offers (Coffee.optionGroups), in position order.';
alter table app_public.coffee_option_groups enable row level security;
create policy select_all on app_public.coffee_option_groups for select using (true);
grant select on app_public.coffee_option_groups to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;
create trigger _950_audit after insert or update or delete on app_public.coffee_option_groups
  for each row execute function app_private.tg_audit('coffee_id,group_id', '*');

create table app_public.options (
  id uuid primary key default gen_random_uuid(),
  group_id uuid not null references app_public.option_groups on delete cascade,
  name text not null check (btrim(name) <> '' and length(name) <= 100),
  price_delta numeric(10,2) not null default 0 check (abs(price_delta) <= 1000),
  is_default boolean not null default false,
  ingredient_id uuid references app_public.ingredients on delete restrict,
  ingredient_amount numeric(10,3) check (ingredient_amount > 0),
  recipe_factor numeric(6,3) check (recipe_factor > 0 and recipe_factor <= 10),
  position integer not null default 0,
  unique (group_id, name),
  check (ingredient_amount is null or ingredient_id is not null)
);
create index options_ingredient_id_idx on app_public.options (ingredient_id);
comment on table app_public.options is 'One choice of an option group, with its price delta and its effect on the recipe (section 040 of 000018-options.sql).';
comment on column app_public.options.ingredient_id is 'With ingredient_amount: that amount of it is added to a serving. Alone: it takes the place of the ingredient of the group''s default option, at the recipe''s amount (Oat for Whole).';
comment on column app_public.options.recipe_factor is 'Every recipe amount of a serving times this (sizes).';
comment on constraint options_group_id_fkey on app_public.options is E'@fieldName group\n@notNull\n@foreignFieldName optionList';
comment on constraint options_ingredient_id_fkey on app_public.options is E'@fieldName ingredient\n@foreignFieldName optionList';
alter table app_public.options enable row level security;
create policy select_all on app_public.options for select using (true);
grant select on app_public.options to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;
create trigger _950_audit after insert or update or delete on app_public.options
  for each row execute function app_private.tg_audit('id', '*');

create table app_public.store_coffee_prices (
  store_id uuid not null references app_public.stores on delete cascade,
  coffee_id uuid not null references app_public.coffees on delete cascade,
  price numeric(10,2) not null check (price > 0),
  primary key (store_id, coffee_id)
);
create index store_coffee_prices_coffee_id_idx on app_public.store_coffee_prices (coffee_id);
comment on table app_public.store_coffee_prices is E'@behavior -*\nA coffee''s own price at a store (without a row: the chain''s, coffees.price).';
alter table app_public.store_coffee_prices enable row level security;
create policy select_all on app_public.store_coffee_prices for select using (true);
grant select on app_public.store_coffee_prices to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;
create trigger _950_audit after insert or update or delete on app_public.store_coffee_prices
  for each row execute function app_private.tg_audit('store_id,coffee_id', '*');

create table app_public.store_options (
  store_id uuid not null references app_public.stores on delete cascade,
  option_id uuid not null references app_public.options on delete cascade,
  available boolean not null,
  primary key (store_id, option_id)
);
create index store_options_option_id_idx on app_public.store_options (option_id);
comment on table app_public.store_options is E'@behavior -*\nAn option''s availability at a store (without a row: available). false: the store ran out ("no oat milk today").';
alter table app_public.store_options enable row level security;
create policy select_all on app_public.store_options for select using (true);
grant select on app_public.store_options to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;
create trigger _950_audit after insert or update or delete on app_public.store_options
  for each row execute function app_private.tg_audit('store_id,option_id', '*');

-- Menu tables the cached public reads may come to show: announced as the
-- others are (000005-live-reads.sql).
do $$
declare
  t text;
begin
  foreach t in array array['app_public.option_groups', 'app_public.coffee_option_groups', 'app_public.options',
                           'app_public.store_coffee_prices', 'app_public.store_options'] loop
    execute format('create trigger _900_live_cache_insert after insert on %s referencing new table as new_rows for each statement execute function app_private.tg__announce_public_reads()', t);
    execute format('create trigger _900_live_cache_update after update on %s referencing new table as new_rows old table as old_rows for each statement execute function app_private.tg__announce_public_reads()', t);
    execute format('create trigger _900_live_cache_delete after delete on %s referencing old table as old_rows for each statement execute function app_private.tg__announce_public_reads()', t);
    execute format('create trigger _900_live_cache_truncate after truncate on %s for each statement execute function app_private.tg__announce_public_reads()', t);
  end loop;
end;
$$;

-- The coffee's price at a store: its own row there, else the chain's.
create function app_private.coffee_price_at(p_coffee_id uuid, p_store_id uuid) returns numeric
language sql stable security definer set search_path = pg_catalog as $$
  select coalesce((select p.price from app_public.store_coffee_prices p where p.store_id = p_store_id and p.coffee_id = p_coffee_id),
                  (select c.price from app_public.coffees c where c.id = p_coffee_id));
$$;

create function app_public.coffees_store_price(c app_public.coffees, store_id uuid default null) returns numeric
language sql stable security definer set search_path = pg_catalog as $$
  select app_private.coffee_price_at(c.id, app_hidden.store_or_default(coffees_store_price.store_id));
$$;
comment on function app_public.coffees_store_price(app_public.coffees, uuid) is E'@notNull\nThe price at that store (absent: the default store): its own price there, else the chain''s (price).';
grant execute on function app_public.coffees_store_price(app_public.coffees, uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

create function app_private.option_available_at(p_option_id uuid, p_store_id uuid) returns boolean
language sql stable security definer set search_path = pg_catalog as $$
  select coalesce((select so.available from app_public.store_options so where so.store_id = p_store_id and so.option_id = p_option_id), true);
$$;

create function app_public.coffees_option_groups(c app_public.coffees) returns setof app_public.option_groups
language sql stable as $$
  select g.* from app_public.coffee_option_groups cg
  join app_public.option_groups g on g.id = cg.group_id
  where cg.coffee_id = c.id
  order by cg.position, g.name;
$$;
comment on function app_public.coffees_option_groups(app_public.coffees) is E'@behavior -connection +list\n@notNull\nThe choices the coffee offers (Size, Milk, ...).';
grant execute on function app_public.coffees_option_groups(app_public.coffees) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

create function app_public.option_groups_options(g app_public.option_groups) returns setof app_public.options
language sql stable as $$
  select o.* from app_public.options o where o.group_id = g.id order by o.position, o.name;
$$;
comment on function app_public.option_groups_options(app_public.option_groups) is E'@behavior -connection +list\n@notNull\nThe group''s options, in position order.';
grant execute on function app_public.option_groups_options(app_public.option_groups) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

create function app_public.options_available(o app_public.options, store_id uuid default null) returns boolean
language sql stable security definer set search_path = pg_catalog as $$
  select app_private.option_available_at(o.id, app_hidden.store_or_default(options_available.store_id));
$$;
comment on function app_public.options_available(app_public.options, uuid) is E'@notNull\nOn offer at that store (absent: the default store): not switched off there (setOptionAvailable).';
grant execute on function app_public.options_available(app_public.options, uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

-- The default options of a coffee's groups: what a line without optionIds
-- takes.
create function app_private.default_options(p_coffee_id uuid) returns uuid[]
language sql stable security definer set search_path = pg_catalog as $$
  select coalesce(array_agg(o.id order by o.id), '{}')
  from app_public.coffee_option_groups cg
  join app_public.options o on o.group_id = cg.group_id and o.is_default
  where cg.coffee_id = p_coffee_id;
$$;

-- What one serving of a coffee with these options takes, per ingredient
-- (the rules at the top of this file). Without options: its recipe.
create function app_private.line_usage(p_coffee_id uuid, p_option_ids uuid[]) returns table (ingredient_id uuid, amount numeric)
language sql stable security definer set search_path = pg_catalog as $$
  with chosen as (
    select o.* from app_public.options o where o.id = any (p_option_ids)
  ), factor as (
    select coalesce((select round(exp(sum(ln(c.recipe_factor))), 6) from chosen c where c.recipe_factor is not null), 1) as f
  ), swaps as (
    select d.ingredient_id as from_id, min(c.ingredient_id::text)::uuid as to_id
    from chosen c
    join app_public.options d on d.group_id = c.group_id and d.is_default and d.ingredient_id is not null and d.ingredient_amount is null
    where c.ingredient_id is not null and c.ingredient_amount is null and d.ingredient_id <> c.ingredient_id
    group by d.ingredient_id
  )
  select u.ingredient_id, sum(u.amount)
  from (
    select coalesce(s.to_id, rl.ingredient_id) as ingredient_id, rl.quantity * f.f as amount
    from app_public.recipe_lines rl
    cross join factor f
    left join swaps s on s.from_id = rl.ingredient_id
    where rl.coffee_id = p_coffee_id
    union all
    select c.ingredient_id, c.ingredient_amount from chosen c where c.ingredient_amount is not null
  ) u
  group by u.ingredient_id;
$$;

create function app_public.options_inventory(o app_public.options, store_id uuid default null) returns integer
language sql stable security definer set search_path = pg_catalog as $$
  select case when o.ingredient_id is null or p.amount is null then null
              else greatest(0, floor((s.current_stock - coalesce(r.amount, 0)) / p.amount))::integer end
  from (select app_hidden.store_or_default(options_inventory.store_id) as id) st
  cross join (
    select coalesce(o.ingredient_amount,
      (select max(rl.quantity) from app_public.options d
         join app_public.coffee_option_groups cg on cg.group_id = d.group_id
         join app_public.recipe_lines rl on rl.coffee_id = cg.coffee_id and rl.ingredient_id = d.ingredient_id
        where d.group_id = o.group_id and d.is_default and d.ingredient_id is not null and d.ingredient_amount is null)) as amount
  ) p
  left join app_public.stock_items s on s.store_id = st.id and s.ingredient_id = o.ingredient_id
  left join app_private.stock_reserved r on r.store_id = st.id and r.ingredient_id = o.ingredient_id;
$$;
comment on function app_public.options_inventory(app_public.options, uuid) is 'Servings of this option the store''s (absent: the default store''s) stock can still make, less what open orders hold: its ingredient over what one serving takes (a swap: the most any of the group''s coffees'' recipes takes). Null when it uses no counted ingredient.';
grant execute on function app_public.options_inventory(app_public.options, uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 400 orders: the options of each line
--------------------------------------------------------------------------------

-- The options chosen for each order line, as they were when ordered (name and
-- price delta kept). Written by create_order before the line itself (the
-- foreign key is checked at COMMIT), so the line's stock reservation, made by
-- the line's trigger, counts them.
create table app_private.order_item_options (
  order_id uuid not null,
  position integer not null,
  option_id uuid not null references app_public.options on delete restrict,
  name text not null,
  price_delta numeric(10,2) not null,
  primary key (order_id, position, option_id),
  foreign key (order_id, position) references app_public.order_items (order_id, position) on delete cascade deferrable initially deferred
);
create index order_item_options_option_id_idx on app_private.order_item_options (option_id);
comment on table app_private.order_item_options is 'The options of each order line as ordered (OrderItem.options); app_private.order_line_usage() reads them.';

create type app_public.order_item_option as (
  name text,
  price_delta numeric(10,2)
);
comment on type app_public.order_item_option is 'An option of an order line, as it was ordered.';
comment on column app_public.order_item_option.name is E'@notNull';
comment on column app_public.order_item_option.price_delta is E'@notNull';

create function app_public.order_items_options(oi app_public.order_items) returns setof app_public.order_item_option
language sql stable security definer set search_path = pg_catalog as $$
  select row(x.name, x.price_delta)::app_public.order_item_option
  from app_private.order_item_options x
  join app_public.options o on o.id = x.option_id
  join app_public.option_groups g on g.id = o.group_id
  where x.order_id = oi.order_id and x.position = oi.position
  order by g.name, o.position, x.name;
$$;
comment on function app_public.order_items_options(app_public.order_items) is E'@behavior -connection +list\n@notNull\nThe options chosen for the line (each group''s defaults when none were given).';
grant execute on function app_public.order_items_options(app_public.order_items) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

create function app_public.order_items_line_total(oi app_public.order_items) returns numeric
language sql stable as $$
  select oi.unit_price * oi.quantity;
$$;
comment on function app_public.order_items_line_total(app_public.order_items) is E'@notNull\nunitPrice (the store''s price plus the options'' deltas) times quantity.';
grant execute on function app_public.order_items_line_total(app_public.order_items) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

-- What each line of an order takes per serving, with its options.
create function app_private.order_line_usage(p_order_id uuid) returns table (line integer, coffee_id uuid, quantity integer, ingredient_id uuid, amount numeric)
language sql stable security definer set search_path = pg_catalog as $$
  select oi.position, oi.coffee_id, oi.quantity, u.ingredient_id, u.amount
  from app_public.order_items oi
  cross join lateral app_private.line_usage(oi.coffee_id, array(
    select x.option_id from app_private.order_item_options x where x.order_id = oi.order_id and x.position = oi.position)) u
  where oi.order_id = p_order_id;
$$;

-- The options of one line of createOrder's input: each group's defaults when
-- the line names none (p_option_ids absent or null); else exactly those
-- named, refused (22023, BAD_USER_INPUT, naming the option or group) when
-- one is not an option of the coffee's groups, is named twice, is off at the
-- store, or a group gets fewer than its min or more than its max.
create function app_private.order_line_options(p_coffee app_public.coffees, p_store app_public.stores, p_option_ids jsonb, p_pos integer) returns uuid[]
language plpgsql stable security definer set search_path = pg_catalog as $$
declare
  v_ids uuid[] := '{}';
  v_text text;
  bad record;
begin
  if p_option_ids is null or jsonb_typeof(p_option_ids) = 'null' then
    v_ids := app_private.default_options(p_coffee.id);
  else
    if jsonb_typeof(p_option_ids) <> 'array' then
      raise exception 'optionIds must be a list (item %).', p_pos using errcode = '22023';
    end if;
    if jsonb_array_length(p_option_ids) > 20 then
      raise exception 'An item may have at most 20 options (item %).', p_pos using errcode = '22023';
    end if;
    for v_text in select jsonb_array_elements_text(p_option_ids) loop
      if v_text !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
        raise exception 'No option with id % (item %).', v_text, p_pos using errcode = '22023';
      end if;
      if v_text::uuid = any (v_ids) then
        raise exception 'The option % is chosen twice (item %); each option may be chosen once.',
          coalesce((select '"' || o.name || '"' from app_public.options o where o.id = v_text::uuid), v_text), p_pos using errcode = '22023';
      end if;
      v_ids := v_ids || v_text::uuid;
    end loop;
    select x.id, o.name into bad
    from unnest(v_ids) with ordinality x(id, n)
    left join app_public.options o on o.id = x.id
    where not exists (select 1 from app_public.coffee_option_groups cg where cg.coffee_id = p_coffee.id and cg.group_id = o.group_id)
    order by x.n
    limit 1;
    if found then
      raise exception 'The option % is not offered for % (item %).', coalesce('"' || bad.name || '"', bad.id::text), p_coffee.name, p_pos
        using errcode = '22023';
    end if;
  end if;
  select g.name, g.min_selections, g.max_selections, count(o.id) as n into bad
  from app_public.coffee_option_groups cg
  join app_public.option_groups g on g.id = cg.group_id
  left join app_public.options o on o.group_id = g.id and o.id = any (v_ids)
  where cg.coffee_id = p_coffee.id
  group by g.id, g.name, g.min_selections, g.max_selections, cg.position
  having count(o.id) < g.min_selections or count(o.id) > g.max_selections
  order by cg.position, g.name
  limit 1;
  if found then
    if bad.n < bad.min_selections then
      raise exception 'Choose at least % from "%" for % (item %).', bad.min_selections, bad.name, p_coffee.name, p_pos using errcode = '22023';
    end if;
    raise exception 'Choose at most % from "%" for % (item %).', bad.max_selections, bad.name, p_coffee.name, p_pos using errcode = '22023';
  end if;
  select o.name into bad
  from app_public.options o
  where o.id = any (v_ids) and not app_private.option_available_at(o.id, p_store.id)
  order by o.name
  limit 1;
  if found then
    raise exception '"%" is not available at % (item %).', bad.name, p_store.name, p_pos using errcode = '22023';
  end if;
  return v_ids;
end;
$$;

-- An order's lines reserve what their recipes, with their options, need at
-- the order's store.
create or replace function app_private.tg_order_items__reserve_stock() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  with needs as (
    select ni.order_id, o.store_id, u.ingredient_id, sum(ni.quantity * u.amount) as amount
    from new_items ni
    join app_public.orders o on o.id = ni.order_id
    cross join lateral app_private.line_usage(ni.coffee_id, array(
      select x.option_id from app_private.order_item_options x where x.order_id = ni.order_id and x.position = ni.position)) u
    where o.inventory_taken_at is null and o.status not in ('COMPLETED', 'CANCELLED')
    group by ni.order_id, o.store_id, u.ingredient_id
  ), written as (
    insert into app_private.stock_reservations (order_id, store_id, ingredient_id, amount)
    select n.order_id, n.store_id, n.ingredient_id, n.amount from needs n
    on conflict (order_id, ingredient_id) do update set amount = app_private.stock_reservations.amount + excluded.amount
  )
  insert into app_private.stock_reserved (store_id, ingredient_id, amount)
  select n.store_id, n.ingredient_id, sum(n.amount) from needs n group by n.store_id, n.ingredient_id order by n.store_id, n.ingredient_id
  on conflict (store_id, ingredient_id) do update set amount = app_private.stock_reserved.amount + excluded.amount;
  return null;
end;
$$;

-- 000016's bulk recount, counting the lines' options.
create or replace function app_private.recount_reserved_stock() returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  perform 1 from app_public.stock_items s order by s.store_id, s.ingredient_id for update;
  perform 1 from app_private.stock_reserved r order by r.store_id, r.ingredient_id for update;
  delete from app_private.stock_reservations;
  insert into app_private.stock_reservations (order_id, store_id, ingredient_id, amount)
  select o.id, o.store_id, u.ingredient_id, sum(u.quantity * u.amount)
  from app_public.orders o
  cross join lateral app_private.order_line_usage(o.id) u
  where o.inventory_taken_at is null and o.status not in ('COMPLETED', 'CANCELLED')
  group by o.id, o.store_id, u.ingredient_id;
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

create or replace function app_private.take_inventory(p_order_id uuid) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_store uuid;
  line record;
begin
  update app_public.orders set inventory_taken_at = now()
   where id = p_order_id and inventory_taken_at is null and status <> 'CANCELLED'
  returning store_id into v_store;
  if not found then
    return false;
  end if;
  for line in
    select u.ingredient_id, sum(u.quantity * u.amount) as amount
    from app_private.order_line_usage(p_order_id) u
    join app_public.stock_items s on s.store_id = v_store and s.ingredient_id = u.ingredient_id
    group by u.ingredient_id
    order by u.ingredient_id
  loop
    update app_public.stock_items set current_stock = greatest(current_stock - line.amount, 0)
     where store_id = v_store and ingredient_id = line.ingredient_id;
    insert into app_public.stock_movements (store_id, ingredient_id, delta, reason, order_id, actor_role, actor_id)
    values (v_store, line.ingredient_id, -line.amount, 'order paid', p_order_id, app_public.current_actor(), null);
  end loop;
  return true;
end;
$$;

create or replace function app_private.return_inventory(p_order_id uuid, p_reason text) returns void
language plpgsql security definer set search_path = pg_catalog as $$
declare
  v_store uuid;
  line record;
begin
  update app_public.orders set inventory_returned_at = now()
   where id = p_order_id and inventory_taken_at is not null and inventory_returned_at is null
  returning store_id into v_store;
  if not found then
    return;
  end if;
  for line in
    select u.ingredient_id, sum(u.quantity * u.amount) as amount
    from app_private.order_line_usage(p_order_id) u
    join app_public.stock_items s on s.store_id = v_store and s.ingredient_id = u.ingredient_id
    group by u.ingredient_id
  loop
    update app_public.stock_items set current_stock = current_stock + line.amount
     where store_id = v_store and ingredient_id = line.ingredient_id;
    insert into app_public.stock_movements (store_id, ingredient_id, delta, reason, order_id, actor_role, actor_id)
    values (v_store, line.ingredient_id, line.amount, p_reason, p_order_id, app_public.current_actor(), app_public.current_user_id());
  end loop;
end;
$$;

-- Coffee.inventory: servings of the coffee with its default options.
create or replace function app_private.inventory_of(p_coffees uuid[]) returns table (store_id uuid, coffee_id uuid, servings integer)
language sql stable security definer set search_path = pg_catalog as $$
  select st.id, c.id,
         case when count(u.ingredient_id) = 0 then null
           else greatest(0, min(floor(coalesce(s.current_stock - coalesce(r.amount, 0), 1e9) / u.amount)))::integer
         end
  from app_public.stores st
  cross join unnest(p_coffees) c(id)
  left join lateral app_private.line_usage(c.id, app_private.default_options(c.id)) u on true
  left join app_public.stock_items s on s.store_id = st.id and s.ingredient_id = u.ingredient_id
  left join app_private.stock_reserved r on r.store_id = st.id and r.ingredient_id = u.ingredient_id
  group by st.id, c.id;
$$;

-- createOrder: each line's options, priced at the store, reserving what they take.
create or replace function app_public.create_order(
  p_items jsonb default null,
  p_input_notes text default null,
  p_coffee_id uuid default null,
  p_quantity integer default null,
  p_notes text default null,
  p_customer_id uuid default null,
  p_store_id uuid default null
) returns app_public.orders
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  actor text := app_public.current_actor();
  v_store app_public.stores;
  v_customer_id uuid;
  v_lines jsonb;
  v_notes text;
  v_order app_public.orders;
  v_max_qty integer := app_private.setting('max_quantity_per_line');
  v_max_lines integer := app_private.setting('max_lines_per_order');
  v_max_open integer;
  v_max_open_cups integer;
  v_expiry numeric;
  v_share numeric;
  v_cooldown numeric;
  v_open integer;
  v_open_cups integer;
  line jsonb;
  v_coffee app_public.coffees;
  v_qty integer;
  v_pos integer := 0;
  v_total numeric(10,2) := 0;
  v_cups integer := 0;
  v_options uuid[];
  v_unit numeric(10,2);
  shortage record;
  hog record;
  v_items jsonb := '[]';
  v_ready timestamptz;
  v_source text := app_private.request_source();
  v_source_share numeric := app_private.setting('max_stock_share_percent_per_source') * app_private.source_limit_factor();
  v_new_account_seconds integer := app_private.setting('new_account_scarce_stock_seconds');
  v_registered_at timestamptz;
  v_wait integer;
  scarce record;
begin
  perform app_hidden.require_signed_in();

  -- Which store: the one named, else the default one; open; staff sell at
  -- their own stores' tills only.
  select * into v_store from app_public.stores where id = app_hidden.store_or_default(p_store_id);
  if not v_store.is_open then
    raise exception 'The store % is closed.', v_store.name using errcode = 'CT003';
  end if;
  if actor in ('barista', 'admin') then
    perform app_hidden.require_store_staff(v_store.id);
  end if;
  v_max_open := app_private.store_setting(v_store.id, 'max_open_orders_per_customer');
  v_max_open_cups := app_private.store_setting(v_store.id, 'max_open_cups_per_customer');
  v_expiry := app_private.store_setting(v_store.id, 'pending_order_expiry_seconds');
  v_share := app_private.store_setting(v_store.id, 'max_stock_share_percent');
  v_cooldown := app_private.store_setting(v_store.id, 'stock_share_cooldown_seconds');

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

  -- Validate every line against the store's menu, at today's prices.
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
    if not app_hidden.on_sale_at(v_coffee, v_store.id) then
      raise exception '% is not on sale.', v_coffee.name using errcode = 'CT003';
    end if;
    -- The line's options (each group's defaults when it names none), and
    -- its price: the coffee's at this store plus the options' deltas.
    v_options := app_private.order_line_options(v_coffee, v_store, line -> 'option_ids', v_pos);
    v_unit := app_private.coffee_price_at(v_coffee.id, v_store.id)
              + coalesce((select sum(o.price_delta) from app_public.options o where o.id = any (v_options)), 0);
    if v_unit <= 0 then
      raise exception 'The options bring the price of % to % (item %).', v_coffee.name, v_unit, v_pos using errcode = '22023';
    end if;
    v_items := v_items || jsonb_build_object('position', v_pos, 'coffee_id', v_coffee.id, 'quantity', v_qty,
      'unit_price', v_unit, 'option_ids', to_jsonb(v_options), 'special_instructions', nullif(line ->> 'special_instructions', ''));
    v_total := v_total + v_qty * v_unit;
    v_cups := v_cups + v_qty;
  end loop;

  -- A customer's own unpaid orders at this store are capped, in number and
  -- in cups (the new order included), by the store's caps. Only orders they
  -- made themselves count: orders staff make at the till are supervised.
  -- One customer's orders are checked one at a time.
  if actor = 'customer' then
    perform pg_advisory_xact_lock(hashtextextended('open-orders:' || v_customer_id::text, 0));
    select count(distinct o.id), coalesce(sum(oi.quantity), 0)
      into v_open, v_open_cups
      from app_public.orders o
      left join app_public.order_items oi on oi.order_id = o.id
     where o.customer_id = v_customer_id and o.status = 'PENDING' and o.created_by = v_customer_id and o.store_id = v_store.id;
    if v_open + 1 > v_max_open then
      raise exception 'You have % unpaid orders; pay or cancel one first (at most %).', v_open, v_max_open
        using errcode = 'CT011', detail = json_build_object('open_orders', v_open, 'max_open_orders', v_max_open)::text;
    end if;
    if v_open_cups + v_cups > v_max_open_cups then
      raise exception 'Your unpaid orders would hold % cups; at most % (pay or cancel one first).', v_open_cups + v_cups, v_max_open_cups
        using errcode = 'CT011', detail = json_build_object('open_cups', v_open_cups, 'max_open_cups', v_max_open_cups)::text;
    end if;
  end if;

  v_ready := app_private.estimate_ready_time(v_cups, v_store.id);

  -- Stock, at this store. Lock the stock rows this order needs (in a fixed
  -- order: no deadlocks), then insert the order: its lines add what they
  -- need to what open orders hold there (app_private.stock_reserved, by
  -- trigger), and refuse it when that is more than the shelf holds.
  perform 1 from app_public.stock_items s
   where s.store_id = v_store.id and s.ingredient_id in (
     select u.ingredient_id from jsonb_array_elements(v_items) l
     cross join lateral app_private.line_usage((l ->> 'coffee_id')::uuid,
       array(select jsonb_array_elements_text(l -> 'option_ids')::uuid)) u)
   order by s.ingredient_id for update;
  insert into app_public.orders (customer_id, notes, total, estimated_ready_time, created_by, expires_at, store_id)
  values (v_customer_id, nullif(v_notes, ''), v_total, v_ready, app_public.current_user_id(),
          now() + make_interval(secs => v_expiry), v_store.id)
  returning * into v_order;
  -- Which source placed it (the per-source share below counts by it).
  if v_source is not null then
    insert into app_private.order_sources (order_id, source) values (v_order.id, v_source);
  end if;
  -- The lines' options first: the lines' trigger reserves what they take.
  insert into app_private.order_item_options (order_id, position, option_id, name, price_delta)
  select v_order.id, (l ->> 'position')::integer, o.id, o.name, o.price_delta
  from jsonb_array_elements(v_items) l
  join app_public.options o on o.id in (select jsonb_array_elements_text(l -> 'option_ids')::uuid);
  insert into app_public.order_items (order_id, position, coffee_id, quantity, unit_price, special_instructions)
  select v_order.id, (l ->> 'position')::integer, (l ->> 'coffee_id')::uuid, (l ->> 'quantity')::integer,
         (l ->> 'unit_price')::numeric, l ->> 'special_instructions'
  from jsonb_array_elements(v_items) l;
  select i.name as ingredient, c.name as coffee into shortage
  from app_private.stock_reservations n
  join app_public.stock_items s on s.store_id = n.store_id and s.ingredient_id = n.ingredient_id
  join app_private.stock_reserved r on r.store_id = n.store_id and r.ingredient_id = n.ingredient_id
  join app_public.ingredients i on i.id = n.ingredient_id
  join lateral (
    select min(c.name) as name from app_private.order_line_usage(v_order.id) u
    join app_public.coffees c on c.id = u.coffee_id
    where u.ingredient_id = n.ingredient_id
  ) c on true
  where n.order_id = v_order.id and s.current_stock < r.amount
  order by n.ingredient_id
  limit 1;
  if shortage.ingredient is not null then
    raise exception 'Not enough % in stock for %.', shortage.ingredient, shortage.coffee using errcode = 'CT002';
  end if;

  -- A new account (registered less than new_account_scarce_stock_seconds
  -- ago) reserves no scarce stock: an ingredient this order would leave at
  -- or below its alert level unreserved at this store (shelf less what open
  -- orders hold, this one included: low stock, or the last units when the
  -- level is 0). RATE_LIMITED, with the seconds until the account may.
  if actor = 'customer' and v_new_account_seconds > 0 then
    select a.created_at into v_registered_at from app_private.accounts a where a.id = v_customer_id;
    if v_registered_at > now() - make_interval(secs => v_new_account_seconds) then
      select i.name as ingredient into scarce
      from app_private.stock_reservations n
      join app_public.stock_items s on s.store_id = n.store_id and s.ingredient_id = n.ingredient_id
      join app_private.stock_reserved r on r.store_id = n.store_id and r.ingredient_id = n.ingredient_id
      join app_public.ingredients i on i.id = n.ingredient_id
      where n.order_id = v_order.id and s.current_stock - r.amount <= s.alert_level
      order by n.ingredient_id
      limit 1;
      if scarce.ingredient is not null then
        v_wait := greatest(ceil(extract(epoch from v_registered_at + make_interval(secs => v_new_account_seconds) - now())), 1);
        raise exception 'Your account is new: % is scarce, so you may order it in % minutes (or at the counter).', scarce.ingredient, ceil(v_wait / 60.0)
          using errcode = 'CT004', detail = json_build_object('retry_after_seconds', v_wait, 'ingredient', scarce.ingredient,
            'new_account_scarce_stock_seconds', v_new_account_seconds)::text;
      end if;
    end if;
  end if;

  -- Fair share of this store's stock (its max_stock_share_percent and
  -- stock_share_cooldown_seconds): as in the baseline, counted at this store.
  if actor = 'customer' then
    select i.name as ingredient, s.unit, h.held, a.allowed into hog
    from (select n.ingredient_id from app_private.stock_reservations n where n.order_id = v_order.id) mine
    join app_public.stock_items s on s.store_id = v_store.id and s.ingredient_id = mine.ingredient_id
    join app_public.ingredients i on i.id = mine.ingredient_id
    cross join lateral (
      select coalesce((select sum(r.amount) from app_private.stock_reservations r
                        join app_public.orders o on o.id = r.order_id
                       where r.store_id = v_store.id and r.ingredient_id = mine.ingredient_id and o.customer_id = v_customer_id and o.created_by = v_customer_id), 0)
           + coalesce((select sum(u.quantity * u.amount) from app_public.orders o
                        cross join lateral app_private.order_line_usage(o.id) u
                       where u.ingredient_id = mine.ingredient_id and o.customer_id = v_customer_id and o.created_by = v_customer_id and o.store_id = v_store.id
                         and o.status = 'CANCELLED' and o.paid_at is null and o.inventory_taken_at is null
                         and o.updated_at > now() - make_interval(secs => v_cooldown)), 0) as held
    ) h
    cross join lateral (
      select greatest(s.current_stock * v_share / 100,
                      (select max(u.amount) from app_private.order_line_usage(v_order.id) u
                       where u.ingredient_id = mine.ingredient_id)) as allowed
    ) a
    where h.held > a.allowed
    order by mine.ingredient_id
    limit 1;
    if hog.ingredient is not null then
      raise exception 'Your orders would hold % % of %; one customer may hold at most % (% percent of the stock; cancelled orders count for % minutes).',
        trim_scale(hog.held), hog.unit, hog.ingredient, trim_scale(round(hog.allowed, 3)), trim_scale(v_share),
        ceil(v_cooldown / 60)
        using errcode = 'CT011', detail = json_build_object('ingredient', hog.ingredient, 'held', hog.held, 'max_held', round(hog.allowed, 3),
          'max_stock_share_percent', v_share)::text;
    end if;
  end if;

  -- Fair share per source: what customers' own orders placed from this
  -- order's source (an address, an IPv6 /64), across all their accounts,
  -- hold of an ingredient at this store is bounded as one customer's is,
  -- by max_stock_share_percent_per_source (times TRUSTED_NETWORK_FACTOR
  -- inside TRUSTED_NETWORKS: 100% or more is no bound), counting the same
  -- orders (open, and unpaid ones cancelled within the cool-down). The
  -- stock rows locked above count concurrent orders one after the other.
  if actor = 'customer' and v_source is not null and v_source_share < 100 then
    select i.name as ingredient, s.unit, h.held, a.allowed into hog
    from (select n.ingredient_id from app_private.stock_reservations n where n.order_id = v_order.id) mine
    join app_public.stock_items s on s.store_id = v_store.id and s.ingredient_id = mine.ingredient_id
    join app_public.ingredients i on i.id = mine.ingredient_id
    cross join lateral (
      select coalesce((select sum(r.amount) from app_private.stock_reservations r
                        join app_private.order_sources os on os.order_id = r.order_id
                        join app_public.orders o on o.id = r.order_id
                       where r.store_id = v_store.id and r.ingredient_id = mine.ingredient_id
                         and os.source = v_source and o.created_by = o.customer_id), 0)
           + coalesce((select sum(u.quantity * u.amount) from app_private.order_sources os
                        join app_public.orders o on o.id = os.order_id
                        cross join lateral app_private.order_line_usage(o.id) u
                       where u.ingredient_id = mine.ingredient_id and os.source = v_source and o.created_by = o.customer_id and o.store_id = v_store.id
                         and o.status = 'CANCELLED' and o.paid_at is null and o.inventory_taken_at is null
                         and o.updated_at > now() - make_interval(secs => v_cooldown)), 0) as held
    ) h
    cross join lateral (
      select greatest(s.current_stock * v_source_share / 100,
                      (select max(u.amount) from app_private.order_line_usage(v_order.id) u
                       where u.ingredient_id = mine.ingredient_id)) as allowed
    ) a
    where h.held > a.allowed
    order by mine.ingredient_id
    limit 1;
    if hog.ingredient is not null then
      raise exception 'Orders from your address would hold % % of %; one address may hold at most % (% percent of the stock; cancelled orders count for % minutes).',
        trim_scale(hog.held), hog.unit, hog.ingredient, trim_scale(round(hog.allowed, 3)), trim_scale(v_source_share),
        ceil(v_cooldown / 60)
        using errcode = 'CT011', detail = json_build_object('ingredient', hog.ingredient, 'held_by_source', hog.held, 'max_held_by_source', round(hog.allowed, 3),
          'max_stock_share_percent_per_source', v_source_share)::text;
    end if;
  end if;
  return v_order;
end;
$$;



--------------------------------------------------------------------------------
-- 800 per store prices and availability; option groups and options
--
-- A store's admins (its manager, the chain's admin) set its prices; its staff
-- (baristas too) switch an option off there ("no oat milk today"); the
-- chain's admin adds groups and options. Every change is in the audit log
-- (the tables' _950_audit triggers).
--------------------------------------------------------------------------------

create function app_public.set_store_price(p_store_id uuid, p_coffee_id uuid, p_price numeric default null) returns app_public.coffees
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_store uuid := app_hidden.store_or_default(p_store_id);
  v_coffee app_public.coffees;
begin
  perform app_hidden.require_store_admin(v_store);
  select * into v_coffee from app_public.coffees where id = p_coffee_id;
  if v_coffee.id is null then
    raise exception 'No coffee with id %.', p_coffee_id using errcode = 'P0002';
  end if;
  if p_price is null then
    delete from app_public.store_coffee_prices where store_id = v_store and coffee_id = p_coffee_id;
  elsif p_price <= 0 or p_price > 1000 then
    raise exception 'A price must be more than 0 and at most 1000.' using errcode = '22023';
  else
    insert into app_public.store_coffee_prices (store_id, coffee_id, price) values (v_store, p_coffee_id, p_price)
    on conflict (store_id, coffee_id) do update set price = excluded.price;
  end if;
  return v_coffee;
end;
$$;
comment on function app_public.set_store_price(uuid, uuid, numeric) is E'@behavior -queryField -mutationField -typeField';
grant execute on function app_public.set_store_price(uuid, uuid, numeric) to cafe_admin;

create function app_public.set_option_available(p_store_id uuid, p_option_id uuid, p_available boolean) returns app_public.options
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_store uuid := app_hidden.store_or_default(p_store_id);
  v_option app_public.options;
begin
  if app_public.current_actor() <> 'dba' then
    perform app_hidden.require_store_staff(v_store);
  end if;
  select * into v_option from app_public.options where id = p_option_id;
  if v_option.id is null then
    raise exception 'No option with id %.', p_option_id using errcode = 'P0002';
  end if;
  if p_available is null then
    raise exception 'available must be true or false.' using errcode = '22023';
  end if;
  insert into app_public.store_options (store_id, option_id, available) values (v_store, p_option_id, p_available)
  on conflict (store_id, option_id) do update set available = excluded.available;
  return v_option;
end;
$$;
comment on function app_public.set_option_available(uuid, uuid, boolean) is E'@behavior -queryField -mutationField -typeField';
grant execute on function app_public.set_option_available(uuid, uuid, boolean) to cafe_barista, cafe_admin;

create function app_public.add_option_group(p_name text, p_min_selections integer, p_max_selections integer, p_coffee_ids uuid[]) returns app_public.option_groups
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_group app_public.option_groups;
  v_missing uuid;
begin
  perform app_hidden.require_admin();
  if p_name is null or btrim(p_name) = '' or length(p_name) > 100 then
    raise exception 'A group needs a name of at most 100 characters.' using errcode = '22023';
  end if;
  if p_min_selections is null or p_max_selections is null or p_min_selections < 0 or p_max_selections < 1
     or p_max_selections > 20 or p_min_selections > p_max_selections then
    raise exception 'minSelections and maxSelections: 0 <= min <= max, 1 <= max <= 20.' using errcode = '22023';
  end if;
  if cardinality(p_coffee_ids) > 1000 then
    raise exception 'At most 1000 coffees.' using errcode = '22023';
  end if;
  select x.id into v_missing from unnest(p_coffee_ids) x(id)
   where not exists (select 1 from app_public.coffees c where c.id = x.id) limit 1;
  if found then
    raise exception 'No coffee with id %.', v_missing using errcode = 'P0002';
  end if;
  insert into app_public.option_groups (name, min_selections, max_selections)
  values (btrim(p_name), p_min_selections, p_max_selections) returning * into v_group;
  insert into app_public.coffee_option_groups (coffee_id, group_id, position)
  select distinct x.id, v_group.id,
         coalesce((select max(cg.position) + 1 from app_public.coffee_option_groups cg where cg.coffee_id = x.id), 0)
  from unnest(p_coffee_ids) x(id);
  return v_group;
end;
$$;
comment on function app_public.add_option_group(text, integer, integer, uuid[]) is E'@behavior -queryField -mutationField -typeField';
grant execute on function app_public.add_option_group(text, integer, integer, uuid[]) to cafe_admin;

create function app_public.add_option(
  p_group_id uuid,
  p_name text,
  p_price_delta numeric,
  p_is_default boolean default null,
  p_ingredient_id uuid default null,
  p_ingredient_amount numeric default null,
  p_recipe_factor numeric default null
) returns app_public.options
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_group app_public.option_groups;
  v_option app_public.options;
begin
  perform app_hidden.require_admin();
  select * into v_group from app_public.option_groups where id = p_group_id for update;
  if v_group.id is null then
    raise exception 'No option group with id %.', p_group_id using errcode = 'P0002';
  end if;
  if p_name is null or btrim(p_name) = '' or length(p_name) > 100 then
    raise exception 'An option needs a name of at most 100 characters.' using errcode = '22023';
  end if;
  if exists (select 1 from app_public.options o where o.group_id = p_group_id and o.name = btrim(p_name)) then
    raise exception '"%" already has an option "%".', v_group.name, btrim(p_name) using errcode = '22023';
  end if;
  if p_price_delta is null or abs(p_price_delta) > 1000 then
    raise exception 'priceDelta must be between -1000 and 1000.' using errcode = '22023';
  end if;
  if p_ingredient_id is not null and not exists (select 1 from app_public.ingredients i where i.id = p_ingredient_id) then
    raise exception 'No ingredient with id %.', p_ingredient_id using errcode = 'P0002';
  end if;
  if p_ingredient_amount is not null and (p_ingredient_id is null or p_ingredient_amount <= 0 or p_ingredient_amount > 100000) then
    raise exception 'ingredientAmount needs an ingredientId and must be more than 0.' using errcode = '22023';
  end if;
  if p_recipe_factor is not null and (p_recipe_factor <= 0 or p_recipe_factor > 10) then
    raise exception 'recipeFactor must be more than 0 and at most 10.' using errcode = '22023';
  end if;
  if coalesce(p_is_default, false)
     and (select count(*) from app_public.options o where o.group_id = p_group_id and o.is_default) >= v_group.max_selections then
    raise exception '"%" already has % default options (its maxSelections).', v_group.name, v_group.max_selections using errcode = '22023';
  end if;
  insert into app_public.options (group_id, name, price_delta, is_default, ingredient_id, ingredient_amount, recipe_factor, position)
  values (p_group_id, btrim(p_name), p_price_delta, coalesce(p_is_default, false), p_ingredient_id, p_ingredient_amount, p_recipe_factor,
          coalesce((select max(o.position) + 1 from app_public.options o where o.group_id = p_group_id), 0))
  returning * into v_option;
  return v_option;
end;
$$;
comment on function app_public.add_option(uuid, text, numeric, boolean, uuid, numeric, numeric) is E'@behavior -queryField -mutationField -typeField';
grant execute on function app_public.add_option(uuid, text, numeric, boolean, uuid, numeric, numeric) to cafe_admin;
