--! Previous: -
--! Hash: sha1:270f0bf40217e3d6ed6968d450e283d9c044882d
--! Message: cafe schema

-- 000001: the café's schema, its rules and who may see what.
--
-- Schemas: app_public is what PostGraphile exposes; app_hidden holds the
-- functions the API's plugins call (callable by the API roles, never
-- introspected); app_private holds credentials, logs and internals.
--
-- Roles (created by the bootstrap, src/database.ts, because roles are
-- cluster-wide): cafe_anonymous, cafe_customer, cafe_barista, cafe_admin for
-- requests; cafe_system for the payment route and the worker; a DBA's own
-- session (no SET ROLE) acts as "dba".

create extension if not exists pgcrypto;
create extension if not exists citext;
create extension if not exists pg_trgm;

drop schema if exists app_public cascade;
drop schema if exists app_hidden cascade;
drop schema if exists app_private cascade;
create schema app_public;
create schema app_hidden;
create schema app_private;

grant usage on schema app_public to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;
grant usage on schema app_hidden to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

-- Nothing is executable by PUBLIC unless granted below.
alter default privileges in schema app_public revoke execute on functions from public;
alter default privileges in schema app_hidden revoke execute on functions from public;
alter default privileges in schema app_private revoke execute on functions from public;

--------------------------------------------------------------------------------
-- Who is asking
--------------------------------------------------------------------------------

-- The acting role, as the transition rules name it. `current_setting('role')`
-- keeps the role PostGraphile set even inside SECURITY DEFINER functions
-- (where current_user is the owner), so rules see the real caller.
create function app_public.current_actor() returns text
language sql stable as $$
  select case current_setting('role', true)
    when 'cafe_anonymous' then 'anonymous'
    when 'cafe_customer' then 'customer'
    when 'cafe_barista' then 'barista'
    when 'cafe_admin' then 'admin'
    when 'cafe_system' then 'system'
    else 'dba'
  end;
$$;
comment on function app_public.current_actor() is E'@behavior -queryField -mutationField -typeField\nThe acting role: anonymous, customer, barista, admin, system (payments and jobs) or dba (a session that set no role).';

create function app_public.current_user_id() returns uuid
language sql stable as $$
  select nullif(current_setting('jwt.claims.user_id', true), '')::uuid;
$$;
comment on function app_public.current_user_id() is E'@behavior -queryField -mutationField -typeField\nThe signed-in user''s id (customer or staff), from the verified JWT.';

create function app_public.is_staff() returns boolean
language sql stable as $$
  select app_public.current_actor() in ('barista', 'admin');
$$;
comment on function app_public.is_staff() is E'@behavior -queryField -mutationField -typeField';

create function app_public.is_admin() returns boolean
language sql stable as $$
  select app_public.current_actor() = 'admin';
$$;
comment on function app_public.is_admin() is E'@behavior -queryField -mutationField -typeField';

grant execute on function app_public.current_actor(), app_public.current_user_id(), app_public.is_staff(), app_public.is_admin()
  to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

-- Refusals share these SQLSTATEs; src/errors.ts maps them to extensions.code.
--   28000 UNAUTHENTICATED   42501 FORBIDDEN      22023 BAD_USER_INPUT
--   P0002 NOT_FOUND         CT001 INVALID_TRANSITION
--   CT002 OUT_OF_STOCK      CT003 NOT_AVAILABLE  23505 CONFLICT
create function app_hidden.require_signed_in() returns void
language plpgsql stable as $$
begin
  if app_public.current_actor() = 'anonymous' then
    raise exception 'You must sign in to do this.' using errcode = '28000';
  end if;
end;
$$;

create function app_hidden.require_staff() returns void
language plpgsql stable as $$
begin
  perform app_hidden.require_signed_in();
  if not app_public.is_staff() and app_public.current_actor() not in ('system', 'dba') then
    raise exception 'Only staff may do this.' using errcode = '42501';
  end if;
end;
$$;

create function app_hidden.require_admin() returns void
language plpgsql stable as $$
begin
  perform app_hidden.require_signed_in();
  if app_public.current_actor() not in ('admin', 'dba') then
    raise exception 'Only an admin may do this.' using errcode = '42501';
  end if;
end;
$$;
grant execute on function app_hidden.require_signed_in(), app_hidden.require_staff(), app_hidden.require_admin()
  to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

--------------------------------------------------------------------------------
-- Settings a DBA tunes (read by the functions below)
--------------------------------------------------------------------------------

create table app_private.settings (
  key text primary key,
  value numeric not null,
  description text not null
);
insert into app_private.settings (key, value, description) values
  ('prep_base_seconds', 120, 'Fixed time to hand over any order.'),
  ('prep_seconds_per_item', 90, 'Barista time per cup.'),
  ('prep_parallel_baristas', 2, 'Cups made at once (baristas on shift).'),
  ('max_quantity_per_line', 20, 'Largest quantity of one order line.'),
  ('max_lines_per_order', 20, 'Most lines in one order.'),
  ('points_per_currency_unit', 1, 'Loyalty points per whole unit of a completed order''s total.');

create function app_private.setting(k text) returns numeric
language sql stable as $$
  select value from app_private.settings where key = k;
$$;

--------------------------------------------------------------------------------
-- Menu: roasters, suppliers, ingredients, coffees, recipes, reviews
--------------------------------------------------------------------------------

create type app_public.roast_level as enum ('LIGHT', 'MEDIUM', 'MEDIUM_DARK', 'DARK');
create type app_public.coffee_category as enum ('FEATURED', 'ESPRESSO', 'MILK_BASED', 'FILTER', 'COLD', 'SEASONAL');
create type app_public.order_status as enum ('PENDING', 'PAID', 'PREPARING', 'BREWING', 'READY', 'COMPLETED', 'CANCELLED');

-- A domain that is NOT NULL makes array items non-null in GraphQL: [String!]!.
create domain app_public.allergen as text not null check (value <> '');

create table app_public.roasters (
  id uuid primary key default gen_random_uuid(),
  name text not null unique check (name <> ''),
  location text,
  sustainability_rating numeric(3,1) check (sustainability_rating between 0 and 10),
  created_at timestamptz not null default now()
);
comment on table app_public.roasters is 'Who roasts the beans.';
comment on column app_public.roasters.sustainability_rating is 'From 0 to 10.';

create table app_public.suppliers (
  id uuid primary key default gen_random_uuid(),
  name text not null unique check (name <> ''),
  contact text,
  created_at timestamptz not null default now()
);
comment on table app_public.suppliers is 'Where the café buys a coffee''s beans. Admins only.';

create table app_public.ingredients (
  id uuid primary key default gen_random_uuid(),
  name text not null unique check (name <> ''),
  organic boolean not null default false,
  allergens app_public.allergen[] not null default '{}',
  created_at timestamptz not null default now()
);
comment on table app_public.ingredients is 'What drinks are made of.';

create table app_public.coffees (
  id uuid primary key default gen_random_uuid(),
  name text not null check (btrim(name) <> '' and length(name) <= 100),
  price numeric(10,2) not null check (price > 0),
  roast app_public.roast_level not null default 'MEDIUM',
  category app_public.coffee_category not null default 'ESPRESSO',
  description text,
  image_url text check (image_url ~ '^https?://'),
  limited_time_offer boolean not null default false,
  available boolean not null default true,
  roaster_id uuid not null references app_public.roasters on delete restrict,
  created_at timestamptz not null default now()
);
create unique index coffees_name_unique on app_public.coffees (lower(name));
create index coffees_roaster_id_idx on app_public.coffees (roaster_id);
create index coffees_category_idx on app_public.coffees (category, name);
create index coffees_name_trgm_idx on app_public.coffees using gin (lower(name) gin_trgm_ops);
comment on table app_public.coffees is 'A drink on the menu (or off it: see `available`).';
comment on column app_public.coffees.available is 'On sale now. Ordering and the menu only offer available coffees.';
comment on constraint coffees_roaster_id_fkey on app_public.coffees is E'@fieldName roaster\n@notNull\n@foreignFieldName coffees';

-- Admin-only facts about a coffee live apart, so no role can select them by
-- accident; the computed fields `cost`, `margin` and `supplier` read them.
create table app_private.coffee_costs (
  coffee_id uuid primary key references app_public.coffees on delete cascade,
  cost numeric(10,2) check (cost >= 0),
  supplier_id uuid references app_public.suppliers on delete set null
);

create table app_public.recipe_lines (
  coffee_id uuid not null references app_public.coffees on delete cascade,
  ingredient_id uuid not null references app_public.ingredients on delete restrict,
  quantity numeric(10,3) not null check (quantity > 0),
  seasonal boolean not null default false,
  primary key (coffee_id, ingredient_id)
);
create index recipe_lines_ingredient_id_idx on app_public.recipe_lines (ingredient_id);
comment on table app_public.recipe_lines is 'How much of an ingredient one serving of a coffee takes.';
comment on column app_public.recipe_lines.seasonal is 'A seasonal ingredient (shown by seasonalDrinks).';

create table app_public.stock_items (
  ingredient_id uuid primary key references app_public.ingredients on delete cascade,
  current_stock numeric(12,3) not null check (current_stock >= 0),
  alert_level numeric(12,3) not null default 0 check (alert_level >= 0),
  unit text not null default 'unit',
  updated_at timestamptz not null default now()
);
comment on table app_public.stock_items is 'How much of an ingredient is on the shelf, and the level that should raise an alert.';
comment on constraint stock_items_ingredient_id_fkey on app_public.stock_items is E'@fieldName ingredient\n@notNull\n@foreignFieldName stockItem';

--------------------------------------------------------------------------------
-- People: accounts (private), customers, profiles, staff
--------------------------------------------------------------------------------

create table app_private.accounts (
  id uuid primary key default gen_random_uuid(),
  email citext not null unique check (email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'),
  password_hash text not null,
  role text not null check (role in ('customer', 'barista', 'admin')),
  created_at timestamptz not null default now()
);

create table app_public.customers (
  id uuid primary key default gen_random_uuid(),
  name text not null check (btrim(name) <> '' and length(name) <= 100),
  points integer not null default 0 check (points >= 0),
  is_walk_in boolean not null default false,
  created_at timestamptz not null default now()
);
create unique index customers_one_walk_in on app_public.customers (is_walk_in) where is_walk_in;
comment on table app_public.customers is 'A customer of the café. Signed-up customers share their id with their account; orders taken at the counter without a customer belong to the walk-in customer.';
comment on column app_public.customers.points is 'Loyalty points: see app_private.settings points_per_currency_unit.';

create table app_public.profiles (
  customer_id uuid primary key references app_public.customers on delete cascade,
  username citext unique check (username ~ '^[A-Za-z0-9_.]{3,30}$'),
  avatar text check (avatar ~ '^https?://[^\s]+$' and length(avatar) <= 500)
);
comment on table app_public.profiles is 'What a customer shows of themselves.';
comment on constraint profiles_customer_id_fkey on app_public.profiles is E'@fieldName customer\n@foreignFieldName profile';

create table app_public.baristas (
  id uuid primary key default gen_random_uuid(),
  name text not null check (btrim(name) <> ''),
  is_admin boolean not null default false,
  created_at timestamptz not null default now()
);
comment on table app_public.baristas is 'Staff: baristas and admins. Staff ids are their account ids.';

create table app_public.reviews (
  id uuid primary key default gen_random_uuid(),
  coffee_id uuid not null references app_public.coffees on delete cascade,
  customer_id uuid references app_public.customers on delete set null,
  rating integer not null check (rating between 1 and 5),
  comment text,
  created_at timestamptz not null default now()
);
create index reviews_coffee_id_idx on app_public.reviews (coffee_id, created_at desc);
create index reviews_customer_id_idx on app_public.reviews (customer_id);
comment on table app_public.reviews is 'A customer''s rating of a coffee.';
comment on constraint reviews_coffee_id_fkey on app_public.reviews is E'@fieldName coffee\n@notNull\n@foreignFieldName reviewList';
comment on constraint reviews_customer_id_fkey on app_public.reviews is E'@fieldName reviewer';

--------------------------------------------------------------------------------
-- Orders
--------------------------------------------------------------------------------

create table app_public.orders (
  id uuid primary key default gen_random_uuid(),
  customer_id uuid not null references app_public.customers on delete restrict,
  barista_id uuid references app_public.baristas on delete set null,
  status app_public.order_status not null default 'PENDING',
  notes text check (length(notes) <= 500),
  total numeric(10,2) not null default 0 check (total >= 0),
  time_ordered timestamptz not null default now(),
  estimated_ready_time timestamptz,
  created_by uuid,
  paid_at timestamptz,
  payment_method text,
  inventory_taken_at timestamptz,
  inventory_returned_at timestamptz,
  updated_at timestamptz not null default now()
);
create index orders_customer_id_idx on app_public.orders (customer_id, time_ordered desc);
create index orders_barista_id_idx on app_public.orders (barista_id);
create index orders_status_idx on app_public.orders (status, time_ordered);
create index orders_open_idx on app_public.orders (id) where inventory_taken_at is null and status not in ('COMPLETED', 'CANCELLED');
comment on table app_public.orders is 'An order: its lines are order items, its status moves by the rules in order_status_transitions.';
comment on column app_public.orders.total is 'Sum of the lines at the prices captured when the order was made.';
comment on column app_public.orders.inventory_taken_at is E'@behavior -*\nWhen update_inventory took this order''s ingredients from stock.';
comment on column app_public.orders.inventory_returned_at is E'@behavior -*';
comment on column app_public.orders.created_by is E'@behavior -*';
comment on constraint orders_customer_id_fkey on app_public.orders is E'@fieldName customer\n@notNull\n@foreignFieldName orderList';
comment on constraint orders_barista_id_fkey on app_public.orders is E'@fieldName barista\n@foreignFieldName orderList';

create table app_public.order_items (
  id uuid primary key default gen_random_uuid(),
  order_id uuid not null references app_public.orders on delete cascade,
  position integer not null check (position >= 1),
  coffee_id uuid not null references app_public.coffees on delete restrict,
  quantity integer not null check (quantity >= 1),
  unit_price numeric(10,2) not null check (unit_price > 0),
  special_instructions text check (length(special_instructions) <= 200),
  unique (order_id, position)
);
create index order_items_coffee_id_idx on app_public.order_items (coffee_id);
comment on table app_public.order_items is 'A line of an order, at the unit price captured when the order was made.';
comment on constraint order_items_order_id_fkey on app_public.order_items is E'@fieldName parentOrder\n@notNull\n@foreignFieldName itemList';
comment on constraint order_items_coffee_id_fkey on app_public.order_items is E'@fieldName coffee\n@notNull\n@foreignFieldName orderItemList';

-- The order lifecycle, as data. A DBA changes who may move an order where
-- with an INSERT or DELETE here; the trigger below obeys it on every path.
create table app_public.order_status_transitions (
  from_status app_public.order_status not null,
  to_status app_public.order_status not null,
  role text not null check (role in ('customer', 'barista', 'admin', 'system', 'dba')),
  primary key (from_status, to_status, role)
);
comment on table app_public.order_status_transitions is 'Which role may move an order from one status to another. Checked by a trigger on every UPDATE of orders.status.';
insert into app_public.order_status_transitions (from_status, to_status, role)
select f::app_public.order_status, t::app_public.order_status, r
from (values
  ('PENDING', 'PAID', array['system', 'barista', 'admin', 'dba']),
  ('PAID', 'PREPARING', array['system', 'barista', 'admin', 'dba']),
  ('PREPARING', 'BREWING', array['barista', 'admin', 'dba']),
  ('BREWING', 'READY', array['barista', 'admin', 'dba']),
  ('READY', 'COMPLETED', array['barista', 'admin', 'dba']),
  ('PENDING', 'CANCELLED', array['customer', 'barista', 'admin', 'system', 'dba']),
  ('PAID', 'CANCELLED', array['customer', 'barista', 'admin', 'system', 'dba']),
  ('PREPARING', 'CANCELLED', array['barista', 'admin', 'dba'])
) as rules(f, t, roles), unnest(roles) as r;

create table app_public.order_events (
  id bigint generated always as identity primary key,
  order_id uuid not null references app_public.orders on delete cascade,
  from_status app_public.order_status,
  to_status app_public.order_status not null,
  actor_role text not null,
  actor_id uuid,
  created_at timestamptz not null default now()
);
create index order_events_order_id_idx on app_public.order_events (order_id, id);
comment on table app_public.order_events is 'Every status an order took: from, to, by whom, when.';
comment on constraint order_events_order_id_fkey on app_public.order_events is E'@fieldName parentOrder\n@notNull\n@foreignFieldName eventList';

create table app_public.coffee_price_changes (
  id bigint generated always as identity primary key,
  coffee_id uuid not null references app_public.coffees on delete cascade,
  old_price numeric(10,2) not null,
  new_price numeric(10,2) not null,
  changed_by uuid,
  changed_at timestamptz not null default now()
);
create index coffee_price_changes_coffee_id_idx on app_public.coffee_price_changes (coffee_id, changed_at);
comment on table app_public.coffee_price_changes is 'Price history: who changed a coffee''s price, when, from what to what. Admins only.';
comment on constraint coffee_price_changes_coffee_id_fkey on app_public.coffee_price_changes is E'@fieldName coffee\n@notNull\n@foreignFieldName priceChangeList';

create table app_public.stock_movements (
  id bigint generated always as identity primary key,
  ingredient_id uuid not null references app_public.ingredients on delete cascade,
  delta numeric(12,3) not null,
  reason text not null,
  order_id uuid references app_public.orders on delete set null,
  actor_role text not null,
  actor_id uuid,
  created_at timestamptz not null default now()
);
create index stock_movements_ingredient_id_idx on app_public.stock_movements (ingredient_id, created_at);
create index stock_movements_order_id_idx on app_public.stock_movements (order_id);
comment on table app_public.stock_movements is 'Every change of stock: who, when, how much, why. Staff only.';
comment on constraint stock_movements_ingredient_id_fkey on app_public.stock_movements is E'@fieldName ingredient\n@notNull\n@foreignFieldName movementList';
comment on constraint stock_movements_order_id_fkey on app_public.stock_movements is E'@fieldName parentOrder\n@foreignFieldName stockMovementList';

create table app_public.notifications (
  id uuid primary key default gen_random_uuid(),
  customer_id uuid not null references app_public.customers on delete cascade,
  order_id uuid references app_public.orders on delete cascade,
  kind text not null,
  message text not null,
  created_at timestamptz not null default now(),
  unique (order_id, kind)
);
create index notifications_customer_id_idx on app_public.notifications (customer_id, created_at desc);
comment on table app_public.notifications is 'What the café told a customer (e.g. that a payment arrived).';
comment on constraint notifications_customer_id_fkey on app_public.notifications is E'@fieldName customer\n@notNull\n@foreignFieldName notificationList';
comment on constraint notifications_order_id_fkey on app_public.notifications is E'@fieldName parentOrder\n@foreignFieldName notificationList';

--------------------------------------------------------------------------------
-- Row level security and grants: one block a table
--------------------------------------------------------------------------------

-- The menu is public.
alter table app_public.roasters enable row level security;
create policy select_all on app_public.roasters for select using (true);
grant select on app_public.roasters to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

alter table app_public.ingredients enable row level security;
create policy select_all on app_public.ingredients for select using (true);
grant select on app_public.ingredients to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

alter table app_public.coffees enable row level security;
create policy select_all on app_public.coffees for select using (true);
grant select on app_public.coffees to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

alter table app_public.recipe_lines enable row level security;
create policy select_all on app_public.recipe_lines for select using (true);
grant select on app_public.recipe_lines to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

alter table app_public.reviews enable row level security;
create policy select_all on app_public.reviews for select using (true);
grant select on app_public.reviews to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

-- Suppliers: admins only.
alter table app_public.suppliers enable row level security;
create policy select_admin on app_public.suppliers for select to cafe_admin using (true);
grant select on app_public.suppliers to cafe_admin;

-- Stock: staff (and the system).
alter table app_public.stock_items enable row level security;
create policy select_staff on app_public.stock_items for select to cafe_barista, cafe_admin, cafe_system using (true);
grant select on app_public.stock_items to cafe_barista, cafe_admin, cafe_system;

alter table app_public.stock_movements enable row level security;
create policy select_staff on app_public.stock_movements for select to cafe_barista, cafe_admin using (true);
grant select on app_public.stock_movements to cafe_barista, cafe_admin;

-- Customers: staff read all; a customer reads their own row.
alter table app_public.customers enable row level security;
create policy select_staff on app_public.customers for select to cafe_barista, cafe_admin, cafe_system using (true);
create policy select_own on app_public.customers for select to cafe_customer using (id = app_public.current_user_id());
grant select on app_public.customers to cafe_customer, cafe_barista, cafe_admin, cafe_system;

alter table app_public.profiles enable row level security;
create policy select_staff on app_public.profiles for select to cafe_barista, cafe_admin using (true);
create policy select_own on app_public.profiles for select to cafe_customer using (customer_id = app_public.current_user_id());
grant select on app_public.profiles to cafe_customer, cafe_barista, cafe_admin;

-- Orders: staff read all; a customer reads their own.
alter table app_public.orders enable row level security;
create policy select_staff on app_public.orders for select to cafe_barista, cafe_admin, cafe_system using (true);
create policy select_own on app_public.orders for select to cafe_customer using (customer_id = app_public.current_user_id());
grant select on app_public.orders to cafe_customer, cafe_barista, cafe_admin, cafe_system;

alter table app_public.order_items enable row level security;
create policy select_staff on app_public.order_items for select to cafe_barista, cafe_admin, cafe_system using (true);
create policy select_own on app_public.order_items for select to cafe_customer
  using (exists (select 1 from app_public.orders o where o.id = order_id and o.customer_id = app_public.current_user_id()));
grant select on app_public.order_items to cafe_customer, cafe_barista, cafe_admin, cafe_system;

alter table app_public.order_events enable row level security;
create policy select_staff on app_public.order_events for select to cafe_barista, cafe_admin using (true);
create policy select_own on app_public.order_events for select to cafe_customer
  using (exists (select 1 from app_public.orders o where o.id = order_id and o.customer_id = app_public.current_user_id()));
grant select on app_public.order_events to cafe_customer, cafe_barista, cafe_admin;

-- Staff: staff read each other; a customer reads the baristas of their orders.
alter table app_public.baristas enable row level security;
create policy select_staff on app_public.baristas for select to cafe_barista, cafe_admin, cafe_system using (true);
create policy select_own_orders on app_public.baristas for select to cafe_customer
  using (exists (select 1 from app_public.orders o where o.barista_id = baristas.id and o.customer_id = app_public.current_user_id()));
grant select on app_public.baristas to cafe_customer, cafe_barista, cafe_admin, cafe_system;

alter table app_public.order_status_transitions enable row level security;
create policy select_staff on app_public.order_status_transitions for select to cafe_barista, cafe_admin using (true);
grant select on app_public.order_status_transitions to cafe_barista, cafe_admin;

alter table app_public.coffee_price_changes enable row level security;
create policy select_admin on app_public.coffee_price_changes for select to cafe_admin using (true);
grant select on app_public.coffee_price_changes to cafe_admin;

alter table app_public.notifications enable row level security;
create policy select_staff on app_public.notifications for select to cafe_barista, cafe_admin using (true);
create policy select_own on app_public.notifications for select to cafe_customer using (customer_id = app_public.current_user_id());
grant select on app_public.notifications to cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- Stock arithmetic
--------------------------------------------------------------------------------

-- What open orders still need of an ingredient: lines of orders that are not
-- finished and whose ingredients update_inventory has not yet taken.
create function app_private.reserved_stock(p_ingredient_id uuid) returns numeric
language sql stable security definer set search_path = pg_catalog as $$
  select coalesce(sum(oi.quantity * rl.quantity), 0)
  from app_public.orders o
  join app_public.order_items oi on oi.order_id = o.id
  join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id and rl.ingredient_id = p_ingredient_id
  where o.inventory_taken_at is null and o.status not in ('COMPLETED', 'CANCELLED');
$$;

create function app_private.available_stock(p_ingredient_id uuid) returns numeric
language sql stable security definer set search_path = pg_catalog as $$
  select s.current_stock - app_private.reserved_stock(p_ingredient_id)
  from app_public.stock_items s where s.ingredient_id = p_ingredient_id;
$$;

--------------------------------------------------------------------------------
-- Computed fields of Coffee
--------------------------------------------------------------------------------

create function app_public.coffees_ingredients(c app_public.coffees) returns setof app_public.ingredients
language sql stable as $$
  select i.* from app_public.recipe_lines rl
  join app_public.ingredients i on i.id = rl.ingredient_id
  where rl.coffee_id = c.id
  order by i.name;
$$;
comment on function app_public.coffees_ingredients(app_public.coffees) is E'@behavior -connection +list\n@notNull\nWhat the coffee is made of.';

create function app_public.coffees_seasonal_ingredients(c app_public.coffees) returns setof app_public.ingredients
language sql stable as $$
  select i.* from app_public.recipe_lines rl
  join app_public.ingredients i on i.id = rl.ingredient_id
  where rl.coffee_id = c.id and rl.seasonal
  order by i.name;
$$;
comment on function app_public.coffees_seasonal_ingredients(app_public.coffees) is E'@behavior -connection +list\n@notNull\nThe seasonal part of the recipe.';

create function app_public.coffees_reviews(c app_public.coffees, "limit" integer default null) returns setof app_public.reviews
language sql stable as $$
  select r.* from app_public.reviews r
  where r.coffee_id = c.id
  order by r.created_at desc, r.id
  limit least(greatest(coalesce("limit", 20), 0), 100);
$$;
comment on function app_public.coffees_reviews(app_public.coffees, integer) is E'@behavior -connection +list\n@notNull\nNewest first; `limit` defaults to 20 and is capped at 100.';

create function app_public.coffees_cost(c app_public.coffees) returns numeric
language sql stable security definer set search_path = pg_catalog as $$
  select cc.cost from app_private.coffee_costs cc
  where cc.coffee_id = c.id and app_public.is_admin();
$$;
comment on function app_public.coffees_cost(app_public.coffees) is 'What a cup costs the café. Admins only: null for everyone else.';

create function app_public.coffees_margin(c app_public.coffees) returns numeric
language sql stable security definer set search_path = pg_catalog as $$
  select round((c.price - cc.cost) / c.price, 4) from app_private.coffee_costs cc
  where cc.coffee_id = c.id and cc.cost is not null and app_public.is_admin();
$$;
comment on function app_public.coffees_margin(app_public.coffees) is '(price - cost) / price, as a fraction: 0.7 is 70%. Admins only: null for everyone else.';

create function app_public.coffees_supplier(c app_public.coffees) returns app_public.suppliers
language sql stable security definer set search_path = pg_catalog as $$
  select s.* from app_private.coffee_costs cc
  join app_public.suppliers s on s.id = cc.supplier_id
  where cc.coffee_id = c.id and app_public.is_admin();
$$;
comment on function app_public.coffees_supplier(app_public.coffees) is 'Where the beans come from. Admins only: null for everyone else.';

create function app_public.coffees_inventory(c app_public.coffees) returns integer
language sql stable security definer set search_path = pg_catalog as $$
  select case when count(*) = 0 then null
    else greatest(0, min(floor(coalesce(app_private.available_stock(rl.ingredient_id), 1e9) / rl.quantity)))::integer
  end
  from app_public.recipe_lines rl where rl.coffee_id = c.id;
$$;
comment on function app_public.coffees_inventory(app_public.coffees) is 'Servings that available ingredient stock can still make (stock minus what open orders need); null when the coffee has no recipe.';

create type app_public.sales_data as (
  last_week integer,
  trend numeric
);
comment on type app_public.sales_data is E'@typeName SalesData\nCups sold recently.';
comment on column app_public.sales_data.last_week is E'@notNull\nCups sold (order lines of orders PAID or later) in the last 7 days.';
comment on column app_public.sales_data.trend is E'@notNull\nChange against the 7 days before, as a fraction: 0.25 is +25%; 0 when both weeks sold nothing, 1 when only this week sold.';

create function app_public.coffees_sales_data(c app_public.coffees) returns app_public.sales_data
language sql stable security definer set search_path = pg_catalog as $$
  with weeks as (
    select
      coalesce(sum(oi.quantity) filter (where o.time_ordered >= now() - interval '7 days'), 0)::integer as this_week,
      coalesce(sum(oi.quantity) filter (where o.time_ordered < now() - interval '7 days'), 0)::integer as week_before
    from app_public.order_items oi
    join app_public.orders o on o.id = oi.order_id
    where oi.coffee_id = c.id
      and o.status in ('PAID', 'PREPARING', 'BREWING', 'READY', 'COMPLETED')
      and o.time_ordered >= now() - interval '14 days'
  )
  select row(this_week,
    case when week_before = 0 and this_week = 0 then 0
         when week_before = 0 then 1
         else round((this_week - week_before)::numeric / week_before, 4) end)::app_public.sales_data
  from weeks where app_public.is_admin();
$$;
comment on function app_public.coffees_sales_data(app_public.coffees) is 'Cups sold in the last 7 days and the trend. Admins only: null for everyone else.';

--------------------------------------------------------------------------------
-- Computed fields of Order, Customer
--------------------------------------------------------------------------------

create function app_public.orders_items(o app_public.orders) returns setof app_public.order_items
language sql stable as $$
  select oi.* from app_public.order_items oi where oi.order_id = o.id order by oi.position;
$$;
comment on function app_public.orders_items(app_public.orders) is E'@behavior -connection +list\n@notNull\nThe order''s lines, in the order they were given.';

create type app_public.order_line as (
  coffee text,
  quantity integer,
  notes text
);
comment on type app_public.order_line is 'The single-line view of an order that point-of-sale clients read after createOrder(coffeeId:, quantity:, notes:).';
comment on column app_public.order_line.coffee is E'@notNull\nThe coffee''s name.';
comment on column app_public.order_line.quantity is E'@notNull';
comment on column app_public.order_line.notes is 'The order''s notes.';

create function app_public.orders_order(o app_public.orders) returns app_public.order_line
language sql stable security definer set search_path = pg_catalog as $$
  select row(c.name, oi.quantity, o.notes)::app_public.order_line
  from app_public.order_items oi join app_public.coffees c on c.id = oi.coffee_id
  where oi.order_id = o.id
  order by oi.position limit 1;
$$;
comment on function app_public.orders_order(app_public.orders) is E'@notNull\nThe order''s first line (lines keep the order in which they were given; an order has at least one).';

create function app_public.customers_recent_orders(c app_public.customers, "limit" integer default null) returns setof app_public.orders
language sql stable as $$
  select o.* from app_public.orders o
  where o.customer_id = c.id
  order by o.time_ordered desc, o.id
  limit least(greatest(coalesce("limit", 10), 0), 100);
$$;
comment on function app_public.customers_recent_orders(app_public.customers, integer) is E'@behavior -connection +list\n@notNull\nNewest first; `limit` defaults to 10 and is capped at 100.';

--------------------------------------------------------------------------------
-- Root query fields
--------------------------------------------------------------------------------

create function app_public.coffee_list(category app_public.coffee_category default null) returns setof app_public.coffees
language sql stable as $$
  select c.* from app_public.coffees c
  where coffee_list.category is null or c.category = coffee_list.category
  order by c.name;
$$;
comment on function app_public.coffee_list(app_public.coffee_category) is E'@fieldName coffees\n@complexity 10\n@behavior -connection +list\n@notNull\nEvery coffee (on sale or not), by name; `category` narrows it.';

create function app_public.coffee_by_id(id uuid) returns app_public.coffees
language sql stable strict as $$
  select c.* from app_public.coffees c where c.id = coffee_by_id.id;
$$;
comment on function app_public.coffee_by_id(uuid) is E'@fieldName coffee\nOne coffee by id; null when there is none.';

create function app_public.search_coffees(query text default null, name text default null) returns setof app_public.coffees
language plpgsql stable as $$
declare
  term text := lower(btrim(coalesce(query, name)));
begin
  if (query is null) = (name is null) then
    raise exception 'Give exactly one of query or name.' using errcode = '22023';
  end if;
  if term = '' or length(term) > 100 then
    raise exception 'The search term must have 1 to 100 characters.' using errcode = '22023';
  end if;
  return query
    select c.* from app_public.coffees c
    where c.available
      and (lower(c.name) like '%' || term || '%'
           or similarity(lower(c.name), term) > 0.3
           or lower(coalesce(c.description, '')) like '%' || term || '%')
    order by (lower(c.name) = term) desc,
             (lower(c.name) like term || '%') desc,
             (lower(c.name) like '%' || term || '%') desc,
             similarity(lower(c.name), term) desc,
             c.name
    limit 50;
end;
$$;
comment on function app_public.search_coffees(text, text) is E'@complexity 50\n@behavior -connection +list\n@notNull\nCoffees on sale whose name (or description) matches, best first: exact, prefix, substring, then similar spellings (pg_trgm). Exactly one of `query` or `name`.';

create function app_public.current_customer() returns app_public.customers
language sql stable as $$
  select c.* from app_public.customers c
  where c.id = app_public.current_user_id() and app_public.current_actor() = 'customer';
$$;
comment on function app_public.current_customer() is E'@fieldName customer\nThe signed-in customer; null when the request carries no customer.';

create function app_public.featured_coffee() returns app_public.coffees
language sql stable security definer set search_path = pg_catalog as $$
  select c.* from app_public.coffees c
  left join lateral (
    select coalesce(sum(oi.quantity), 0) as sold
    from app_public.order_items oi join app_public.orders o on o.id = oi.order_id
    where oi.coffee_id = c.id and o.time_ordered >= now() - interval '7 days'
      and o.status in ('PAID', 'PREPARING', 'BREWING', 'READY', 'COMPLETED')
  ) s on true
  where c.category = 'FEATURED' and c.available
  order by s.sold desc, c.name
  limit 1;
$$;
comment on function app_public.featured_coffee() is 'The FEATURED coffee on sale that sold most in the last 7 days (ties: by name).';

create function app_public.seasonal_drinks() returns setof app_public.coffees
language sql stable as $$
  select c.* from app_public.coffees c
  where c.available and (c.category = 'SEASONAL' or c.limited_time_offer)
  order by c.name;
$$;
comment on function app_public.seasonal_drinks() is E'@behavior -connection +list\n@notNull\nCoffees on sale in the SEASONAL category or marked limitedTimeOffer.';

create function app_public.menu_items() returns setof app_public.coffees
language sql stable as $$
  select c.* from app_public.coffees c
  where c.available
  order by c.category, c.name;
$$;
comment on function app_public.menu_items() is E'@behavior -connection +list\n@notNull\nWhat the kiosk shows: every coffee on sale now, by category then name.';

create function app_public.low_stock_items() returns setof app_public.stock_items
language plpgsql stable as $$
begin
  perform app_hidden.require_staff();
  return query
    select s.* from app_public.stock_items s
    where s.current_stock <= s.alert_level
    order by s.current_stock / nullif(s.alert_level, 0), s.ingredient_id;
end;
$$;
comment on function app_public.low_stock_items() is E'@behavior -connection +list\n@notNull\nStaff only (barista, admin); others get a FORBIDDEN error. Stock at or below its alert level, emptiest first.';

create function app_public.user_by_id(id uuid) returns app_public.customers
language plpgsql stable strict as $$
declare
  result app_public.customers;
begin
  perform app_hidden.require_staff();
  select c.* into result from app_public.customers c where c.id = user_by_id.id;
  return result;
end;
$$;
comment on function app_public.user_by_id(uuid) is E'@fieldName user\nStaff only (barista, admin; the point of sale signs in as staff).';

create function app_public.order_by_id(id uuid) returns app_public.orders
language sql stable strict as $$
  select o.* from app_public.orders o where o.id = order_by_id.id;
$$;
comment on function app_public.order_by_id(uuid) is E'@fieldName order\nOne order by id, if you may see it; null otherwise.';

grant execute on function
  app_public.coffees_ingredients(app_public.coffees),
  app_public.coffees_seasonal_ingredients(app_public.coffees),
  app_public.coffees_reviews(app_public.coffees, integer),
  app_public.coffees_cost(app_public.coffees),
  app_public.coffees_margin(app_public.coffees),
  app_public.coffees_supplier(app_public.coffees),
  app_public.coffees_inventory(app_public.coffees),
  app_public.coffees_sales_data(app_public.coffees),
  app_public.orders_items(app_public.orders),
  app_public.orders_order(app_public.orders),
  app_public.customers_recent_orders(app_public.customers, integer),
  app_public.coffee_list(app_public.coffee_category),
  app_public.coffee_by_id(uuid),
  app_public.search_coffees(text, text),
  app_public.current_customer(),
  app_public.featured_coffee(),
  app_public.seasonal_drinks(),
  app_public.menu_items(),
  app_public.low_stock_items(),
  app_public.user_by_id(uuid),
  app_public.order_by_id(uuid)
to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

--------------------------------------------------------------------------------
-- Triggers: timestamps, lifecycle rules, events, notifications
--------------------------------------------------------------------------------

create function app_private.tg__timestamps() returns trigger
language plpgsql as $$
begin
  new.updated_at := now();
  return new;
end;
$$;
create trigger _100_timestamps before update on app_public.orders
  for each row execute function app_private.tg__timestamps();
create trigger _100_timestamps before update on app_public.stock_items
  for each row execute function app_private.tg__timestamps();

-- Every status change obeys order_status_transitions, whoever makes it.
create function app_private.tg_orders__check_transition() returns trigger
language plpgsql as $$
declare
  actor text := app_public.current_actor();
begin
  if tg_op = 'INSERT' then
    if new.status <> 'PENDING' and actor <> 'dba' then
      raise exception 'A new order starts PENDING, not %.', new.status using errcode = 'CT001';
    end if;
    return new;
  end if;
  if new.status is not distinct from old.status then
    return new;
  end if;
  if not exists (
    select 1 from app_public.order_status_transitions t
    where t.from_status = old.status and t.to_status = new.status and t.role = actor
  ) then
    raise exception 'An order cannot move from % to % (as %).', old.status, new.status, actor
      using errcode = 'CT001', detail = json_build_object('from', old.status, 'to', new.status, 'role', actor)::text;
  end if;
  if new.status = 'BREWING' and actor in ('barista', 'admin') then
    new.barista_id := app_public.current_user_id();
  end if;
  if new.status = 'PAID' and new.paid_at is null then
    new.paid_at := now();
  end if;
  return new;
end;
$$;
create trigger _200_check_transition before insert or update of status on app_public.orders
  for each row execute function app_private.tg_orders__check_transition();

create function app_private.tg_orders__after_status() returns trigger
language plpgsql security definer set search_path = pg_catalog as $$
declare
  points_rate numeric := coalesce(app_private.setting('points_per_currency_unit'), 0);
begin
  if tg_op = 'UPDATE' and new.status is not distinct from old.status then
    return null;
  end if;
  insert into app_public.order_events (order_id, from_status, to_status, actor_role, actor_id)
  values (new.id, case when tg_op = 'UPDATE' then old.status end, new.status,
          app_public.current_actor(), app_public.current_user_id());
  if tg_op = 'UPDATE' and new.status = 'COMPLETED' then
    update app_public.customers
       set points = points + floor(new.total * points_rate)::integer
     where id = new.customer_id and not is_walk_in;
  end if;
  -- Cancelling an order whose ingredients were already taken gives them back, once.
  if tg_op = 'UPDATE' and new.status = 'CANCELLED'
     and new.inventory_taken_at is not null and new.inventory_returned_at is null then
    perform app_private.return_inventory(new.id, 'order cancelled');
  end if;
  return null;
end;
$$;

-- Subscriptions listen on order:<id> and coffee:new; payloads carry ids
-- only, and every subscriber re-reads the row under its own role.
create function app_private.tg_orders__notify() returns trigger
language plpgsql as $$
declare
  o app_public.orders := coalesce(new, old);
begin
  perform pg_notify('order:' || o.id::text, json_build_object(
    'id', o.id,
    'status', case when tg_op = 'UPDATE' and new.status is distinct from old.status then new.status::text end
  )::text);
  return null;
end;
$$;

create function app_private.tg_order_items__notify() returns trigger
language plpgsql as $$
begin
  perform pg_notify('order:' || coalesce(new.order_id, old.order_id)::text,
    json_build_object('id', coalesce(new.order_id, old.order_id))::text);
  return null;
end;
$$;

create function app_private.tg_coffees__notify_new() returns trigger
language plpgsql as $$
begin
  perform pg_notify('coffee:new', json_build_object('id', new.id)::text);
  return null;
end;
$$;

create function app_private.return_inventory(p_order_id uuid, p_reason text) returns void
language plpgsql security definer set search_path = pg_catalog as $$
declare
  line record;
begin
  update app_public.orders set inventory_returned_at = now()
   where id = p_order_id and inventory_taken_at is not null and inventory_returned_at is null;
  if not found then
    return;
  end if;
  for line in
    select rl.ingredient_id, sum(oi.quantity * rl.quantity) as amount
    from app_public.order_items oi
    join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id
    join app_public.stock_items s on s.ingredient_id = rl.ingredient_id
    where oi.order_id = p_order_id
    group by rl.ingredient_id
  loop
    update app_public.stock_items set current_stock = current_stock + line.amount
     where ingredient_id = line.ingredient_id;
    insert into app_public.stock_movements (ingredient_id, delta, reason, order_id, actor_role, actor_id)
    values (line.ingredient_id, line.amount, p_reason, p_order_id, app_public.current_actor(), app_public.current_user_id());
  end loop;
end;
$$;

create trigger _500_after_status after insert or update of status on app_public.orders
  for each row execute function app_private.tg_orders__after_status();
create trigger _900_notify after insert or update on app_public.orders
  for each row execute function app_private.tg_orders__notify();
create trigger _900_notify after insert or update or delete on app_public.order_items
  for each row execute function app_private.tg_order_items__notify();
create trigger _900_notify_new after insert on app_public.coffees
  for each row execute function app_private.tg_coffees__notify_new();

--------------------------------------------------------------------------------
-- Sign-in
--------------------------------------------------------------------------------

create type app_hidden.session as (
  user_id uuid,
  role text
);

-- Checks a password; the server signs the JWT. Unknown e-mail and wrong
-- password look the same, and take the same time (a dummy hash is checked).
create function app_hidden.authenticate(p_email text, p_password text) returns app_hidden.session
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  account app_private.accounts;
begin
  select a.* into account from app_private.accounts a where a.email operator(public.=) p_email::public.citext;
  if account.id is null then
    perform public.crypt(coalesce(p_password, ''), '$2a$08$aaaaaaaaaaaaaaaaaaaaaOQ8u1ZKrY0O3ri0Z1mPmmCNrBe1mnLg2');
    return null;
  end if;
  if account.password_hash <> public.crypt(coalesce(p_password, ''), account.password_hash) then
    return null;
  end if;
  return row(account.id, account.role)::app_hidden.session;
end;
$$;
grant execute on function app_hidden.authenticate(text, text) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- Refunds owed (a paid order cancelled, or a payment for a cancelled order)
--------------------------------------------------------------------------------

create table app_public.refunds (
  id uuid primary key default gen_random_uuid(),
  order_id uuid not null references app_public.orders on delete cascade,
  amount numeric(10,2) not null check (amount >= 0),
  reason text not null,
  created_at timestamptz not null default now(),
  settled_at timestamptz,
  settled_by uuid
);
create index refunds_order_id_idx on app_public.refunds (order_id);
create index refunds_open_idx on app_public.refunds (created_at) where settled_at is null;
comment on table app_public.refunds is 'Money the café owes back: a paid order that was cancelled, or a payment for an order that could not be paid. Admins list and settle them.';
comment on constraint refunds_order_id_fkey on app_public.refunds is E'@fieldName parentOrder\n@notNull\n@foreignFieldName refundList';
alter table app_public.refunds enable row level security;
create policy select_admin on app_public.refunds for select to cafe_admin using (true);
grant select on app_public.refunds to cafe_admin;

create or replace function app_private.tg_orders__after_status() returns trigger
language plpgsql security definer set search_path = pg_catalog as $$
declare
  points_rate numeric := coalesce(app_private.setting('points_per_currency_unit'), 0);
begin
  if tg_op = 'UPDATE' and new.status is not distinct from old.status then
    return null;
  end if;
  insert into app_public.order_events (order_id, from_status, to_status, actor_role, actor_id)
  values (new.id, case when tg_op = 'UPDATE' then old.status end, new.status,
          app_public.current_actor(), app_public.current_user_id());
  if tg_op = 'UPDATE' and new.status = 'COMPLETED' then
    update app_public.customers
       set points = points + floor(new.total * points_rate)::integer
     where id = new.customer_id and not is_walk_in;
  end if;
  if tg_op = 'UPDATE' and new.status = 'CANCELLED' then
    -- Ingredients already taken from stock go back, once.
    if new.inventory_taken_at is not null and new.inventory_returned_at is null then
      perform app_private.return_inventory(new.id, 'order cancelled');
    end if;
    -- Money already taken is owed back.
    if old.paid_at is not null then
      insert into app_public.refunds (order_id, amount, reason)
      values (new.id, new.total, 'order cancelled after payment (' || coalesce(old.payment_method, 'unknown') || ')');
    end if;
  end if;
  return null;
end;
$$;

--------------------------------------------------------------------------------
-- Mutations. Each is one SQL function the API calls (plugins/mutations.ts);
-- the rules (who, bounds, stock, transitions) live here, so they hold for
-- every path. Hidden from the generated schema by their @behavior.
--------------------------------------------------------------------------------

create function app_private.walk_in_customer_id() returns uuid
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_id uuid;
begin
  select id into v_id from app_public.customers where is_walk_in;
  if v_id is null then
    insert into app_public.customers (name, is_walk_in) values ('Walk-in customer', true)
    on conflict (is_walk_in) where is_walk_in do nothing
    returning id into v_id;
    if v_id is null then
      select id into v_id from app_public.customers where is_walk_in;
    end if;
  end if;
  return v_id;
end;
$$;

-- When an order of `p_items` cups placed now should be ready: the cups
-- already queued (paid, preparing, brewing) go first, `prep_parallel_baristas`
-- at a time. Tune it in app_private.settings.
create function app_private.estimate_ready_time(p_items integer) returns timestamptz
language sql stable security definer set search_path = pg_catalog as $$
  select now() + make_interval(secs =>
    app_private.setting('prep_base_seconds')
    + (coalesce((select sum(oi.quantity) from app_public.orders o join app_public.order_items oi on oi.order_id = o.id
                  where o.status in ('PAID', 'PREPARING', 'BREWING')), 0) + p_items)
      * app_private.setting('prep_seconds_per_item')
      / greatest(app_private.setting('prep_parallel_baristas'), 1));
$$;

create function app_public.create_order(
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
  create temp table if not exists pg_temp.new_order_lines (
    position integer, coffee_id uuid, quantity integer, unit_price numeric(10,2), special_instructions text
  ) on commit drop;
  truncate pg_temp.new_order_lines;
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
    insert into pg_temp.new_order_lines values (v_pos, v_coffee.id, v_qty, v_coffee.price, nullif(line ->> 'special_instructions', ''));
    v_total := v_total + v_qty * v_coffee.price;
    v_cups := v_cups + v_qty;
  end loop;

  -- Stock: lock what this order needs (in a fixed order: no deadlocks), then
  -- refuse it when open orders and this one would need more than the shelf.
  perform 1 from app_public.stock_items s
   where s.ingredient_id in (select rl.ingredient_id from pg_temp.new_order_lines l join app_public.recipe_lines rl on rl.coffee_id = l.coffee_id)
   order by s.ingredient_id for update;
  select i.name as ingredient, c.name as coffee into shortage
  from (
    select rl.ingredient_id, sum(l.quantity * rl.quantity) as need, min(l.coffee_id::text)::uuid as coffee_id
    from pg_temp.new_order_lines l join app_public.recipe_lines rl on rl.coffee_id = l.coffee_id
    group by rl.ingredient_id
  ) n
  join app_public.stock_items s on s.ingredient_id = n.ingredient_id
  join app_public.ingredients i on i.id = n.ingredient_id
  join app_public.coffees c on c.id = n.coffee_id
  where s.current_stock - app_private.reserved_stock(n.ingredient_id) < n.need
  limit 1;
  if shortage.ingredient is not null then
    raise exception 'Not enough % in stock for %.', shortage.ingredient, shortage.coffee using errcode = 'CT002';
  end if;

  insert into app_public.orders (customer_id, notes, total, estimated_ready_time, created_by)
  values (v_customer_id, nullif(v_notes, ''), v_total, app_private.estimate_ready_time(v_cups), app_public.current_user_id())
  returning * into v_order;
  insert into app_public.order_items (order_id, position, coffee_id, quantity, unit_price, special_instructions)
  select v_order.id, position, coffee_id, quantity, unit_price, special_instructions from pg_temp.new_order_lines;
  return v_order;
end;
$$;
comment on function app_public.create_order(jsonb, text, uuid, integer, text, uuid) is E'@behavior -queryField -mutationField -typeField';

create function app_public.update_order_status(p_id uuid, p_status app_public.order_status) returns app_public.orders
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_order app_public.orders;
begin
  perform app_hidden.require_staff();
  select * into v_order from app_public.orders where id = p_id for update;
  if v_order.id is null then
    raise exception 'No order with id %.', p_id using errcode = 'P0002';
  end if;
  if p_status = 'PAID' then
    raise exception 'An order becomes PAID by a payment (the provider''s callback or markOrderPaid), not by updateOrderStatus.'
      using errcode = 'CT001', detail = json_build_object('from', v_order.status, 'to', p_status)::text;
  end if;
  if v_order.status = p_status then
    raise exception 'The order is already %.', p_status
      using errcode = 'CT001', detail = json_build_object('from', v_order.status, 'to', p_status)::text;
  end if;
  update app_public.orders set status = p_status where id = p_id returning * into v_order;
  return v_order;
end;
$$;
comment on function app_public.update_order_status(uuid, app_public.order_status) is E'@behavior -queryField -mutationField -typeField';

create function app_public.cancel_order(p_id uuid) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_order app_public.orders;
begin
  perform app_hidden.require_signed_in();
  select * into v_order from app_public.orders where id = p_id for update;
  -- Someone else's order does not exist, as far as a customer can tell.
  if v_order.id is null
     or (app_public.current_actor() = 'customer' and v_order.customer_id is distinct from app_public.current_user_id()) then
    raise exception 'No order with id %.', p_id using errcode = 'P0002';
  end if;
  if v_order.status = 'CANCELLED' then
    return false;
  end if;
  update app_public.orders set status = 'CANCELLED' where id = p_id;
  return true;
end;
$$;
comment on function app_public.cancel_order(uuid) is E'@behavior -queryField -mutationField -typeField';

create function app_public.update_customer_profile(p_patch jsonb) returns app_public.customers
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_id uuid := app_public.current_user_id();
  v_customer app_public.customers;
  v_username text;
  v_avatar text;
begin
  perform app_hidden.require_signed_in();
  if app_public.current_actor() <> 'customer' then
    raise exception 'Only a signed-in customer has a profile to update.' using errcode = '42501';
  end if;
  if p_patch ? 'name' then
    if p_patch ->> 'name' is null or btrim(p_patch ->> 'name') = '' then
      raise exception 'Name may not be empty.' using errcode = '22023';
    end if;
    if length(btrim(p_patch ->> 'name')) > 100 then
      raise exception 'Name may have at most 100 characters.' using errcode = '22023';
    end if;
    update app_public.customers set name = btrim(p_patch ->> 'name') where id = v_id;
  end if;
  if p_patch ? 'username' or p_patch ? 'avatar' then
    insert into app_public.profiles (customer_id) values (v_id) on conflict do nothing;
  end if;
  if p_patch ? 'username' then
    v_username := p_patch ->> 'username';
    if v_username is not null and v_username !~ '^[A-Za-z0-9_.]{3,30}$' then
      raise exception 'A username has 3 to 30 letters, digits, dots or underscores.' using errcode = '22023';
    end if;
    begin
      update app_public.profiles set username = v_username::public.citext where customer_id = v_id;
    exception when unique_violation then
      raise exception 'That username is taken.' using errcode = '23505';
    end;
  end if;
  if p_patch ? 'avatar' then
    v_avatar := p_patch ->> 'avatar';
    if v_avatar is not null and (v_avatar !~ '^https?://[^\s/]+[^\s]*$' or length(v_avatar) > 500) then
      raise exception 'An avatar must be an http(s) URL of at most 500 characters.' using errcode = '22023';
    end if;
    update app_public.profiles set avatar = v_avatar where customer_id = v_id;
  end if;
  select * into v_customer from app_public.customers where id = v_id;
  if v_customer.id is null then
    raise exception 'No customer record for this account.' using errcode = 'P0002';
  end if;
  return v_customer;
end;
$$;
comment on function app_public.update_customer_profile(jsonb) is E'@behavior -queryField -mutationField -typeField';

create function app_private.check_price(p_price numeric) returns void
language plpgsql immutable as $$
begin
  if p_price is null or p_price <= 0 or p_price >= 100000 then
    raise exception 'A price must be more than 0 and less than 100000.' using errcode = '22023';
  end if;
  if p_price <> round(p_price, 2) then
    raise exception 'A price has at most two decimals.' using errcode = '22023';
  end if;
end;
$$;

create function app_public.create_coffee(
  p_name text,
  p_price numeric,
  p_roast app_public.roast_level default null,
  p_category app_public.coffee_category default null,
  p_roaster_id uuid default null,
  p_description text default null,
  p_image_url text default null,
  p_available boolean default null,
  p_limited_time_offer boolean default null
) returns app_public.coffees
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_coffee app_public.coffees;
  v_roaster_id uuid := p_roaster_id;
begin
  perform app_hidden.require_admin();
  if p_name is null or btrim(p_name) = '' or length(btrim(p_name)) > 100 then
    raise exception 'A coffee''s name has 1 to 100 characters.' using errcode = '22023';
  end if;
  perform app_private.check_price(p_price);
  if p_image_url is not null and p_image_url !~ '^https?://' then
    raise exception 'imageUrl must be an http(s) URL.' using errcode = '22023';
  end if;
  if v_roaster_id is null then
    select id into v_roaster_id from app_public.roasters where name = 'House Roastery';
    if v_roaster_id is null then
      insert into app_public.roasters (name, location) values ('House Roastery', 'In house')
      on conflict (name) do update set name = excluded.name
      returning id into v_roaster_id;
    end if;
  elsif not exists (select 1 from app_public.roasters where id = v_roaster_id) then
    raise exception 'No roaster with id %.', v_roaster_id using errcode = 'P0002';
  end if;
  begin
    insert into app_public.coffees (name, price, roast, category, roaster_id, description, image_url, available, limited_time_offer)
    values (btrim(p_name), p_price, coalesce(p_roast, 'MEDIUM'), coalesce(p_category, 'ESPRESSO'), v_roaster_id,
            p_description, p_image_url, coalesce(p_available, true), coalesce(p_limited_time_offer, false))
    returning * into v_coffee;
  exception when unique_violation then
    raise exception 'A coffee named % already exists.', btrim(p_name) using errcode = '23505';
  end;
  insert into app_private.coffee_costs (coffee_id) values (v_coffee.id);
  return v_coffee;
end;
$$;
comment on function app_public.create_coffee(text, numeric, app_public.roast_level, app_public.coffee_category, uuid, text, text, boolean, boolean) is E'@behavior -queryField -mutationField -typeField';

create function app_public.update_coffee_price(p_id uuid, p_new_price numeric) returns app_public.coffees
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_coffee app_public.coffees;
  v_old numeric(10,2);
begin
  perform app_hidden.require_admin();
  perform app_private.check_price(p_new_price);
  select price into v_old from app_public.coffees where id = p_id for update;
  if v_old is null then
    raise exception 'No coffee with id %.', p_id using errcode = 'P0002';
  end if;
  update app_public.coffees set price = p_new_price where id = p_id returning * into v_coffee;
  if v_old <> p_new_price then
    insert into app_public.coffee_price_changes (coffee_id, old_price, new_price, changed_by)
    values (p_id, v_old, p_new_price, app_public.current_user_id());
  end if;
  return v_coffee;
end;
$$;
comment on function app_public.update_coffee_price(uuid, numeric) is E'@behavior -queryField -mutationField -typeField';

grant execute on function
  app_public.create_order(jsonb, text, uuid, integer, text, uuid),
  app_public.update_order_status(uuid, app_public.order_status),
  app_public.cancel_order(uuid),
  app_public.update_customer_profile(jsonb),
  app_public.create_coffee(text, numeric, app_public.roast_level, app_public.coffee_category, uuid, text, text, boolean, boolean),
  app_public.update_coffee_price(uuid, numeric)
to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

--------------------------------------------------------------------------------
-- Subscriptions: status messages, a status topic, the subscribe-time check
--------------------------------------------------------------------------------

-- The words a customer sees for each status (orderStatusChanged.message).
create function app_public.order_status_message(s app_public.order_status) returns text
language sql immutable as $$
  select case s
    when 'PENDING' then 'Order received'
    when 'PAID' then 'Payment received'
    when 'PREPARING' then 'Preparing'
    when 'BREWING' then 'Brewing'
    when 'READY' then 'Ready for pickup'
    when 'COMPLETED' then 'Completed'
    when 'CANCELLED' then 'Cancelled'
  end;
$$;
comment on function app_public.order_status_message(app_public.order_status) is E'@behavior -queryField -mutationField -typeField\nHuman text for a status: Brewing, Ready for pickup, Completed, ...';
grant execute on function app_public.order_status_message(app_public.order_status) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

-- order:<id> carries every change of an order or its lines; order_status:<id>
-- carries status changes, with the status and barista as they were then, so
-- a subscriber sees each step even when steps follow each other quickly.
create or replace function app_private.tg_orders__notify() returns trigger
language plpgsql as $$
begin
  perform pg_notify('order:' || new.id::text, json_build_object('id', new.id)::text);
  if tg_op = 'INSERT' or new.status is distinct from old.status then
    perform pg_notify('order_status:' || new.id::text, json_build_object(
      'id', new.id, 'status', new.status, 'barista_id', new.barista_id,
      'message', app_public.order_status_message(new.status))::text);
  end if;
  return null;
end;
$$;

-- May the caller follow this order? Customers: their own only (another's
-- is "not found", never "forbidden", so ids reveal nothing); staff: any;
-- anonymous: none.
create function app_hidden.assert_can_follow_order(p_id uuid) returns boolean
language plpgsql stable as $$
begin
  perform app_hidden.require_signed_in();
  -- Runs as the caller: RLS decides what exists.
  if not exists (select 1 from app_public.orders where id = p_id) then
    raise exception 'No order with id %.', p_id using errcode = 'P0002';
  end if;
  return true;
end;
$$;
grant execute on function app_hidden.assert_can_follow_order(uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

--------------------------------------------------------------------------------
-- Payments: the provider's callbacks, the till, the jobs they queue
--------------------------------------------------------------------------------

grant usage on schema app_private to cafe_system;

-- Every delivery, accepted or not.
create table app_private.payment_deliveries (
  id bigint generated always as identity primary key,
  received_at timestamptz not null default now(),
  source text not null,
  dedupe_key text,
  body_sha256 text,
  event text,
  order_id uuid,
  http_status integer not null,
  outcome text not null,
  code text,
  reason text
);
create index payment_deliveries_source_idx on app_private.payment_deliveries (source, received_at);
create index payment_deliveries_received_at_idx on app_private.payment_deliveries (received_at);
create index payment_deliveries_order_id_idx on app_private.payment_deliveries (order_id) where order_id is not null;

-- Keys of processed deliveries (idem:, event:, sha256: share one namespace).
create table app_private.processed_payment_keys (
  key text primary key,
  body_sha256 text not null,
  order_id uuid,
  outcome text not null,
  processed_at timestamptz not null default now()
);

-- The thresholds a DBA tunes: more than `threshold` events in `window_seconds`.
create table app_private.alert_rules (
  kind text primary key,
  threshold integer not null check (threshold >= 0),
  window_seconds integer not null check (window_seconds > 0),
  block_seconds integer not null default 0 check (block_seconds >= 0),
  description text not null
);
insert into app_private.alert_rules (kind, threshold, window_seconds, block_seconds, description) values
  ('burst', 300, 60, 0, 'More callbacks than this from all sources in the window.'),
  ('auth_failures', 5, 300, 900, 'Failed authentications from one source in the window; the source is then blocked for block_seconds.'),
  ('multiple_payments', 0, 86400, 0, 'A payment event for an order already paid (threshold unused: any such event raises an alert).'),
  ('amount_mismatch', 0, 60, 0, 'Any amount mismatch raises an alert.'),
  ('duplicate_key_different_body', 0, 60, 0, 'A known key arriving with a different body.'),
  ('refund_needed', 0, 60, 0, 'A payment for an order that could not take it.');

create table app_private.blocked_sources (
  source text primary key,
  blocked_until timestamptz not null,
  reason text not null
);

create table app_public.payment_alerts (
  id uuid primary key default gen_random_uuid(),
  kind text not null,
  message text not null,
  source text,
  order_id uuid,
  created_at timestamptz not null default now(),
  acknowledged_at timestamptz
);
create index payment_alerts_created_at_idx on app_public.payment_alerts (created_at desc);
comment on table app_public.payment_alerts is 'Unusual payment-callback patterns (bursts, repeated auth failures, several payments for one order, amount mismatches, payments that need refunding). Admins only.';
alter table app_public.payment_alerts enable row level security;
create policy select_admin on app_public.payment_alerts for select to cafe_admin using (true);
grant select on app_public.payment_alerts to cafe_admin;

create function app_public.payment_alert_list("limit" integer default null) returns setof app_public.payment_alerts
language plpgsql stable as $$
begin
  perform app_hidden.require_admin();
  return query select a.* from app_public.payment_alerts a order by a.created_at desc, a.id
    limit least(greatest(coalesce("limit", 50), 0), 500);
end;
$$;
comment on function app_public.payment_alert_list(integer) is E'@fieldName paymentAlerts\n@behavior -connection +list\n@notNull\nAdmins only: the newest payment alerts first.';
grant execute on function app_public.payment_alert_list(integer) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

alter table app_public.refunds add column source_key text unique;

create function app_private.raise_alert(p_kind text, p_message text, p_source text, p_order_id uuid) returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  insert into app_public.payment_alerts (kind, message, source, order_id) values (p_kind, p_message, p_source, p_order_id);
  -- The server logs alerts as warnings when it sees this notification.
  perform pg_notify('payment_alert', json_build_object('kind', p_kind, 'message', p_message, 'source', p_source, 'order_id', p_order_id)::text);
end;
$$;

create function app_private.is_source_blocked(p_source text) returns boolean
language sql stable security definer set search_path = pg_catalog as $$
  select exists (select 1 from app_private.blocked_sources where source = p_source and blocked_until > now());
$$;

create function app_private.log_delivery(
  p_source text, p_http_status integer, p_outcome text, p_code text, p_reason text,
  p_dedupe_key text default null, p_body_sha256 text default null, p_event text default null, p_order_id uuid default null
) returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  rule app_private.alert_rules;
  n integer;
begin
  insert into app_private.payment_deliveries (source, http_status, outcome, code, reason, dedupe_key, body_sha256, event, order_id)
  values (p_source, p_http_status, p_outcome, p_code, left(p_reason, 500), p_dedupe_key, p_body_sha256, left(p_event, 100), p_order_id);

  -- Repeated authentication failures from one source: alert, then block it.
  if p_code in ('UNAUTHORIZED', 'BAD_SIGNATURE') then
    select * into rule from app_private.alert_rules where kind = 'auth_failures';
    select count(*) into n from app_private.payment_deliveries
     where source = p_source and code in ('UNAUTHORIZED', 'BAD_SIGNATURE')
       and received_at > now() - make_interval(secs => rule.window_seconds);
    if n > rule.threshold and not app_private.is_source_blocked(p_source) then
      insert into app_private.blocked_sources (source, blocked_until, reason)
      values (p_source, now() + make_interval(secs => rule.block_seconds), n || ' authentication failures')
      on conflict (source) do update set blocked_until = excluded.blocked_until, reason = excluded.reason;
      perform app_private.raise_alert('auth_failures',
        format('%s failed authentications from %s in %s s; blocked for %s s.', n, p_source, rule.window_seconds, rule.block_seconds),
        p_source, null);
    end if;
  end if;

  -- A burst of deliveries (all sources): one alert a window.
  select * into rule from app_private.alert_rules where kind = 'burst';
  select count(*) into n from app_private.payment_deliveries where received_at > now() - make_interval(secs => rule.window_seconds);
  if n = rule.threshold + 1 and not exists (
    select 1 from app_public.payment_alerts where kind = 'burst' and created_at > now() - make_interval(secs => rule.window_seconds)
  ) then
    perform app_private.raise_alert('burst', format('More than %s callbacks in %s s.', rule.threshold, rule.window_seconds), p_source, null);
  end if;
end;
$$;

-- PENDING -> PAID and the three jobs, exactly once per order: the status
-- moves under the transition rules, so a second payment finds it PAID.
create function app_private.mark_paid(p_order_id uuid, p_method text) returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  update app_public.orders set status = 'PAID', payment_method = p_method, paid_at = now() where id = p_order_id;
  perform graphile_worker.add_job('start_preparation', json_build_object('orderId', p_order_id), job_key := 'start_preparation:' || p_order_id);
  perform graphile_worker.add_job('notify_customer', json_build_object('orderId', p_order_id, 'kind', 'payment_received'), job_key := 'notify_customer:' || p_order_id);
  perform graphile_worker.add_job('update_inventory', json_build_object('orderId', p_order_id), job_key := 'update_inventory:' || p_order_id);
end;
$$;

create type app_private.callback_result as (
  http_status integer,
  status text,
  code text,
  message text,
  order_id uuid
);

-- One delivery, in one transaction: the duplicate check, the order's rules,
-- PAID, the key and the jobs. Answers rather than raises, so the delivery
-- is logged either way. Runs as cafe_system (the transition rules see it).
create function app_private.process_payment_callback(
  p_source text,
  p_key text,
  p_body_sha256 text,
  p_event text,            -- shape A's event, or 'payment.completed' for shape B
  p_status text,           -- shape B's status (null for shape A)
  p_order_ref text,        -- order_id as sent (may be malformed), or null
  p_customer_email text,   -- shape A's data.customer
  p_amount numeric,
  p_items jsonb            -- shape B's items [{product, quantity}]
) returns app_private.callback_result
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  known app_private.processed_payment_keys;
  v_order app_public.orders;
  v_order_id uuid;
  v_matches integer;
  v_customer_email text;
  result app_private.callback_result;
begin
  -- Copies of one delivery, on any process, queue here.
  perform pg_advisory_xact_lock(hashtextextended(p_key, 0));
  select * into known from app_private.processed_payment_keys where key = p_key;
  if known.key is not null then
    if known.body_sha256 <> p_body_sha256 then
      perform app_private.raise_alert('duplicate_key_different_body',
        format('Key %s arrived again with a different body.', p_key), p_source, known.order_id);
    end if;
    result := row(200, 'duplicate', null, 'Already processed.', known.order_id);
    perform app_private.log_delivery(p_source, 200, 'duplicate', null, null, p_key, p_body_sha256, p_event, known.order_id);
    return result;
  end if;

  if p_event is distinct from 'payment.completed' or (p_status is not null and lower(p_status) <> 'paid') then
    insert into app_private.processed_payment_keys (key, body_sha256, outcome) values (p_key, p_body_sha256, 'ignored');
    result := row(200, 'ignored', null, 'Not a completed payment: recorded, nothing done.', null);
    perform app_private.log_delivery(p_source, 200, 'ignored', null, result.message, p_key, p_body_sha256, p_event, null);
    return result;
  end if;

  -- Which order.
  if p_order_ref is not null then
    if p_order_ref ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
      v_order_id := p_order_ref::uuid;
    end if;
    select * into v_order from app_public.orders where id = v_order_id for update;
    if v_order.id is not null and p_customer_email is not null then
      select a.email::text into v_customer_email from app_private.accounts a where a.id = v_order.customer_id;
      if v_customer_email is null or lower(v_customer_email) <> lower(p_customer_email) then
        v_order := null;
      end if;
    end if;
  else
    select count(*), min(o.id::text)::uuid into v_matches, v_order_id
    from app_public.orders o join app_private.accounts a on a.id = o.customer_id
    where a.email operator(public.=) p_customer_email::public.citext and o.status = 'PENDING' and o.total = p_amount;
    if v_matches > 1 then
      result := row(422, null, 'AMBIGUOUS_ORDER', format('%s pending orders of that customer have that amount; send order_id.', v_matches), null);
    elsif v_matches = 1 then
      select * into v_order from app_public.orders where id = v_order_id for update;
    end if;
  end if;

  if result.code is null and v_order.id is null then
    result := row(422, null, 'ORDER_NOT_FOUND', 'No such order (for that customer).', null);
  end if;

  if result.code is null and v_order.status <> 'PENDING' then
    result := row(422, null, 'ORDER_NOT_PAYABLE', format('The order is %s, not PENDING.', v_order.status), v_order.id);
    if v_order.status = 'CANCELLED' then
      insert into app_public.refunds (order_id, amount, reason, source_key)
      values (v_order.id, p_amount, 'payment received for a cancelled order', p_key)
      on conflict (source_key) do nothing;
      perform app_private.raise_alert('refund_needed',
        format('Payment of %s for cancelled order %s: refund it.', p_amount, v_order.id), p_source, v_order.id);
    elsif v_order.paid_at is not null then
      -- Paid already (by the till or another event): money may have been taken twice.
      perform app_private.raise_alert('multiple_payments',
        format('Another payment for order %s, already paid (%s) and now %s.', v_order.id, coalesce(v_order.payment_method, 'unknown'), v_order.status),
        p_source, v_order.id);
    end if;
  end if;

  if result.code is null and p_amount <> v_order.total then
    result := row(422, null, 'AMOUNT_MISMATCH', format('The amount %s is not the order''s total %s.', p_amount, v_order.total), v_order.id);
    perform app_private.raise_alert('amount_mismatch',
      format('Payment of %s for order %s, whose total is %s.', p_amount, v_order.id, v_order.total), p_source, v_order.id);
  end if;

  if result.code is null and p_items is not null then
    -- Quantities summed per coffee, in any order; product is an id or a name.
    if exists (
      with sent as (
        select c.id as coffee_id, sum((i ->> 'quantity')::integer) as quantity, count(*) filter (where c.id is null) as unknown
        from jsonb_array_elements(p_items) i
        left join app_public.coffees c
          on (i ->> 'product') ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' and c.id::text = lower(i ->> 'product')
          or lower(c.name) = lower(i ->> 'product')
        group by c.id
      ), ordered as (
        select coffee_id, sum(quantity) as quantity from app_public.order_items where order_id = v_order.id group by coffee_id
      )
      select 1 from sent full join ordered using (coffee_id)
      where sent.coffee_id is null or ordered.coffee_id is null or sent.quantity <> ordered.quantity
    ) then
      result := row(422, null, 'ITEMS_MISMATCH', 'The items do not match the order''s lines.', v_order.id);
    end if;
  end if;

  if result.code is not null then
    perform app_private.log_delivery(p_source, result.http_status, 'rejected', result.code, result.message, p_key, p_body_sha256, p_event, result.order_id);
    return result;
  end if;

  perform app_private.mark_paid(v_order.id, 'provider');
  insert into app_private.processed_payment_keys (key, body_sha256, order_id, outcome) values (p_key, p_body_sha256, v_order.id, 'processed');
  result := row(200, 'processed', null, 'Payment recorded.', v_order.id);
  perform app_private.log_delivery(p_source, 200, 'processed', null, null, p_key, p_body_sha256, p_event, v_order.id);
  return result;
end;
$$;
grant execute on function
  app_private.process_payment_callback(text, text, text, text, text, text, text, numeric, jsonb),
  app_private.log_delivery(text, integer, text, text, text, text, text, text, uuid),
  app_private.is_source_blocked(text)
to cafe_system;

-- The worker's three tasks, each idempotent.
create function app_private.start_preparation(p_order_id uuid) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  update app_public.orders set status = 'PREPARING' where id = p_order_id and status = 'PAID';
  return found;
end;
$$;

create function app_private.notify_customer(p_order_id uuid, p_kind text) returns app_public.notifications
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_notification app_public.notifications;
begin
  insert into app_public.notifications (customer_id, order_id, kind, message)
  select o.customer_id, o.id, p_kind,
         case p_kind when 'payment_received' then format('Thanks! We received %s for your order; it is being prepared.', o.total)
                     else app_public.order_status_message(o.status) end
  from app_public.orders o where o.id = p_order_id
  on conflict (order_id, kind) do nothing
  returning * into v_notification;
  return v_notification; -- null when it was already sent
end;
$$;

create function app_private.take_inventory(p_order_id uuid) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  line record;
begin
  update app_public.orders set inventory_taken_at = now()
   where id = p_order_id and inventory_taken_at is null and status <> 'CANCELLED';
  if not found then
    return false;
  end if;
  for line in
    select rl.ingredient_id, sum(oi.quantity * rl.quantity) as amount
    from app_public.order_items oi
    join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id
    join app_public.stock_items s on s.ingredient_id = rl.ingredient_id
    where oi.order_id = p_order_id
    group by rl.ingredient_id
    order by rl.ingredient_id
  loop
    update app_public.stock_items set current_stock = greatest(current_stock - line.amount, 0)
     where ingredient_id = line.ingredient_id;
    insert into app_public.stock_movements (ingredient_id, delta, reason, order_id, actor_role, actor_id)
    values (line.ingredient_id, -line.amount, 'order paid', p_order_id, app_public.current_actor(), null);
  end loop;
  return true;
end;
$$;
grant execute on function
  app_private.start_preparation(uuid), app_private.notify_customer(uuid, text), app_private.take_inventory(uuid)
to cafe_system;
