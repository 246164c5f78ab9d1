--! Previous: sha1:b970d177da223fa4c941678923fde001132fe62c
--! Hash: sha1:d21993d730cebb96f7b4e9766e4642bf11ba1820
--! Message: stores

--! no-transaction
-- Several transactions (hence no-transaction above, and the explicit begin
-- and commit): the change itself, then the validation of each new foreign
-- key, which scans its table under SHARE UPDATE EXCLUSIVE (reads and writes
-- go on) after the first transaction has released its locks. The later ones
-- only validate what the first made valid by construction (every existing
-- row holds the default store's id); should one ever fail, the first stays
-- committed and the VALIDATE statements may be run again by hand.
begin;

-- A chain of cafés: stores on one database.
--
-- Everything that happens in a café (orders, order events, stock items,
-- reservations, stock movements, payment deliveries, refunds,
-- notifications) belongs to a store; the menu (coffees, recipes, prices),
-- customers, points and chain-wide settings stay the chain's. The café that
-- existed becomes the default store: every store_id column defaults to it,
-- and every API argument that names a store means it when absent, so every
-- path and document written for one café keeps working unchanged.
--
-- Shipped the way a DBA ships it (docs/schema-evolution.md): expand, fill,
-- then constrain, in an order that keeps the locks on the big tables
-- (orders, order_events) short: their store_id is added with a constant
-- default (the default store's fixed id), which PostgreSQL records in the
-- catalogue instead of rewriting the table; the foreign keys are added NOT
-- VALID and validated after the change has committed (section 990); no
-- index is built on them here. The figures on 200,000 orders:
-- docs/scaling.md (bench/migration-locks.ts).
--
-- Sections as in the baseline: one per table or family of functions.

--------------------------------------------------------------------------------
-- 010 stores
--
-- A store's own settings: its time zone, the expiry of its unpaid orders,
-- the caps on a customer's open orders and cups there, and its stock
-- thresholds (a customer's share of its stock, and how long cancelled
-- orders count). A null setting column follows the chain's setting of the
-- same name in app_private.settings, which stays the default; a value is
-- checked against the same definition (app_private.setting_definitions).
--------------------------------------------------------------------------------

create table app_public.stores (
  id uuid primary key default gen_random_uuid(),
  name text not null check (btrim(name) <> '' and length(name) <= 100),
  time_zone text not null,
  address text check (length(address) <= 500),
  is_open boolean not null default true,
  is_default boolean not null default false,
  pending_order_expiry_seconds integer,
  max_open_orders_per_customer integer,
  max_open_cups_per_customer integer,
  max_stock_share_percent numeric,
  stock_share_cooldown_seconds integer,
  created_at timestamptz not null default now()
);
create unique index stores_name_unique on app_public.stores (lower(name));
create unique index stores_one_default on app_public.stores (is_default) where is_default;
comment on table app_public.stores is 'A café of the chain. Orders, stock, refunds and notifications belong to one; the menu, customers and points are the chain''s.';
comment on column app_public.stores.time_zone is 'The store''s time zone (an IANA name): its sales report''s hours and days.';
comment on column app_public.stores.is_open is 'Taking orders now. Customers and kiosks see open stores only.';
comment on column app_public.stores.is_default is 'The store that an API argument naming no store means (the café that existed before the chain). Exactly one.';
comment on column app_public.stores.pending_order_expiry_seconds is 'An unpaid order here expires this long after it was made; null: the chain''s pending_order_expiry_seconds.';
comment on column app_public.stores.max_open_orders_per_customer is 'Most unpaid orders a customer holds here; null: the chain''s setting.';
comment on column app_public.stores.max_open_cups_per_customer is 'Most cups in a customer''s unpaid orders here; null: the chain''s setting.';
comment on column app_public.stores.max_stock_share_percent is 'Most of an ingredient''s stock here one customer''s orders may hold (percent); null: the chain''s setting.';
comment on column app_public.stores.stock_share_cooldown_seconds is 'How long a cancelled unpaid order still counts toward that share; null: the chain''s setting.';

-- Its settings are checked against the chain's definitions, and its time zone
-- must exist (22023, as for app_private.settings).
create function app_private.tg_stores__check() returns trigger
language plpgsql as $$
declare
  d app_private.setting_definitions;
  v numeric;
begin
  perform now() at time zone new.time_zone; -- raises 22023 for an unknown zone
  for d in select * from app_private.setting_definitions
            where key in ('pending_order_expiry_seconds', 'max_open_orders_per_customer', 'max_open_cups_per_customer',
                          'max_stock_share_percent', 'stock_share_cooldown_seconds') loop
    v := (to_jsonb(new) ->> d.key)::numeric;
    if v is not null and (v < d.min_value or v > d.max_value) then
      raise exception 'Setting % must be between % and %; % is not.', d.key, d.min_value, d.max_value, v using errcode = '22023';
    end if;
  end loop;
  return new;
end;
$$;

create trigger _100_check before insert or update on app_public.stores
  for each row execute function app_private.tg_stores__check();

-- The café that existed: its time zone is the chain's until a DBA sets its own.
insert into app_public.stores (id, name, time_zone, is_default)
values ('5707e000-0000-4000-8000-000000000001', 'Main store', app_private.text_setting('cafe_time_zone'), true);

create trigger _950_audit after insert or update or delete on app_public.stores
  for each row execute function app_private.tg_audit('id', '*');

-- Customers and strangers read the open stores; staff every store.
alter table app_public.stores enable row level security;
create policy select_open on app_public.stores for select using (is_open or (select app_public.is_staff()));
grant select on app_public.stores to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

create function app_hidden.default_store_id() returns uuid
language sql stable security definer set search_path = pg_catalog as $$
  select s.id from app_public.stores s where s.is_default;
$$;
comment on function app_hidden.default_store_id() is 'The default store: what an argument naming no store means.';
grant execute on function app_hidden.default_store_id() to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

-- The store an argument names (the default one when null); P0002 when there is none.
create function app_hidden.store_or_default(p_store_id uuid) returns uuid
language plpgsql stable security definer set search_path = pg_catalog as $$
declare
  v_id uuid;
begin
  if p_store_id is null then
    return app_hidden.default_store_id();
  end if;
  select s.id into v_id from app_public.stores s where s.id = p_store_id;
  if v_id is null then
    raise exception 'No store with id %.', p_store_id using errcode = 'P0002';
  end if;
  return v_id;
end;
$$;
grant execute on function app_hidden.store_or_default(uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

-- A store's setting: its own column, else the chain's (raises CT900 when
-- neither is there: a limit is never silently off).
create function app_private.store_setting(p_store_id uuid, k text) returns numeric
language plpgsql stable security definer set search_path = pg_catalog as $$
declare
  v numeric;
begin
  select (to_jsonb(s) ->> k)::numeric into v from app_public.stores s where s.id = p_store_id;
  return coalesce(v, app_private.setting(k));
end;
$$;

create function app_public.store_list() returns setof app_public.stores
language sql stable as $$
  select s.* from app_public.stores s order by s.is_default desc, s.name;
$$;
comment on function app_public.store_list() is E'@fieldName stores\n@behavior -connection +list\n@notNull\n@pageSize 100\nThe chain''s stores, the default one first, then by name: the open ones (staff: all).';
grant execute on function app_public.store_list() to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 020 staff per store
--
-- Who works where, in one table a DBA reads and writes:
--   insert into app_public.store_staff (store_id, staff_id) values (…, …);
-- assigns a barista (or makes an admin the manager of that store). A member
-- of staff with `chain_wide` works at every store: the chain's admin.
--------------------------------------------------------------------------------

alter table app_public.baristas add column chain_wide boolean not null default false;
comment on column app_public.baristas.chain_wide is 'Works at every store (the chain''s admin). Others work at the stores of their store_staff rows; an admin who is not chain-wide is the manager of those stores only.';
update app_public.baristas set chain_wide = true where is_admin;

create table app_public.store_staff (
  store_id uuid not null references app_public.stores on delete cascade,
  staff_id uuid not null references app_public.baristas on delete cascade,
  assigned_at timestamptz not null default now(),
  primary key (store_id, staff_id)
);
create index store_staff_staff_id_idx on app_public.store_staff (staff_id);
comment on table app_public.store_staff is 'Which member of staff works at which store: a barista sees and moves that store''s orders; an admin manages it.';
comment on constraint store_staff_store_id_fkey on app_public.store_staff is E'@fieldName store\n@notNull\n@foreignFieldName staffList';
comment on constraint store_staff_staff_id_fkey on app_public.store_staff is E'@fieldName staff\n@notNull\n@foreignFieldName storeList';
alter table app_public.store_staff enable row level security;
create policy select_staff on app_public.store_staff for select to cafe_barista, cafe_admin, cafe_system using ((select app_public.is_staff()) or (select app_public.current_actor()) = 'system');
grant select on app_public.store_staff to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

create trigger _950_audit after insert or update or delete on app_public.store_staff
  for each row execute function app_private.tg_audit('store_id,staff_id', 'store_id,staff_id');

-- The baristas who worked before the chain work at the default store.
insert into app_public.store_staff (store_id, staff_id)
select '5707e000-0000-4000-8000-000000000001', b.id from app_public.baristas b where not b.is_admin;

--------------------------------------------------------------------------------
-- 030 who works where: what the policies ask
--
-- staff_store_ids() is the one question every store policy asks, once per
-- statement: the stores whose rows the caller may see as staff. is_admin()
-- now means the chain's admin (so every rule written for "the admin" before
-- the chain stays the chain admin's, and a store manager gets nothing more
-- by default); is_store_admin(store) is an admin of that store.
--------------------------------------------------------------------------------

create function app_hidden.staff_is_chain_wide() returns boolean
language sql stable security definer set search_path = pg_catalog as $$
  select coalesce((select b.chain_wide from app_public.baristas b where b.id = app_public.current_user_id()), false);
$$;
grant execute on function app_hidden.staff_is_chain_wide() to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

create function app_public.staff_store_ids() returns uuid[]
language sql stable security definer set search_path = pg_catalog as $$
  select coalesce(case
    when a.actor in ('system', 'dba') or (a.actor in ('barista', 'admin') and app_hidden.staff_is_chain_wide())
      then (select array_agg(s.id order by s.id) from app_public.stores s)
    when a.actor in ('barista', 'admin')
      then (select array_agg(ss.store_id order by ss.store_id) from app_public.store_staff ss where ss.staff_id = app_public.current_user_id())
  end, '{}')
  from (select app_public.current_actor() as actor) a;
$$;
comment on function app_public.staff_store_ids() is E'@behavior -queryField -mutationField -typeField\nThe stores whose orders, stock, refunds and notifications the caller sees as staff: every store for the chain''s admin (and chain-wide staff), the system and a DBA; their store_staff rows for a barista or a store manager; none for anyone else.';
grant execute on function app_public.staff_store_ids() to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

create or replace function app_public.is_admin() returns boolean
language sql stable as $$
  select app_public.current_actor() = 'admin' and app_hidden.staff_is_chain_wide();
$$;
comment on function app_public.is_admin() is E'@behavior -queryField -mutationField -typeField\nThe chain''s admin (a store manager is not).';

create function app_public.is_store_admin(p_store_id uuid) returns boolean
language sql stable as $$
  select app_public.current_actor() = 'admin' and p_store_id = any (app_public.staff_store_ids());
$$;
comment on function app_public.is_store_admin(uuid) is E'@behavior -queryField -mutationField -typeField\nAn admin of that store: its manager, or the chain''s admin.';
grant execute on function app_public.is_store_admin(uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

-- The chain's admin (or a DBA): the menu, prices, staff accounts, stores.
create or replace function app_hidden.require_admin() returns void
language plpgsql stable as $$
begin
  perform app_hidden.require_signed_in();
  if app_public.current_actor() = 'admin' and not app_public.is_admin() then
    raise exception 'Only the chain''s admin may do this (a store manager manages their stores only).' using errcode = '42501';
  end if;
  if app_public.current_actor() not in ('admin', 'dba') then
    raise exception 'Only an admin may do this.' using errcode = '42501';
  end if;
end;
$$;

-- An admin of that store (its manager or the chain's admin), or a DBA; with
-- no store, an admin of any store.
create function app_hidden.require_store_admin(p_store_id uuid) returns void
language plpgsql stable as $$
begin
  perform app_hidden.require_signed_in();
  if app_public.current_actor() = 'dba' then
    return;
  end if;
  if app_public.current_actor() <> 'admin' then
    raise exception 'Only an admin may do this.' using errcode = '42501';
  end if;
  if p_store_id is null and cardinality(app_public.staff_store_ids()) = 0
     or p_store_id is not null and not app_public.is_store_admin(p_store_id) then
    raise exception 'Only an admin of this store may do this.' using errcode = '42501';
  end if;
end;
$$;
grant execute on function app_hidden.require_store_admin(uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

-- Staff who work at that store (or the system, or a DBA).
create function app_hidden.require_store_staff(p_store_id uuid) returns void
language plpgsql stable as $$
begin
  perform app_hidden.require_staff();
  if not p_store_id = any (app_public.staff_store_ids()) then
    raise exception 'You do not work at this store.' using errcode = '42501';
  end if;
end;
$$;
grant execute on function app_hidden.require_store_staff(uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

--------------------------------------------------------------------------------
-- 040 coffee availability per store
--
-- The menu is the chain's (coffees.available puts a coffee on sale or takes
-- it off everywhere); a store may take a coffee off its own menu with a row
-- here (available = false), and put it back.
--------------------------------------------------------------------------------

create table app_public.store_coffees (
  store_id uuid not null references app_public.stores on delete cascade,
  coffee_id uuid not null references app_public.coffees on delete cascade,
  available boolean not null,
  primary key (store_id, coffee_id)
);
create index store_coffees_coffee_id_idx on app_public.store_coffees (coffee_id);
comment on table app_public.store_coffees is 'A store''s own availability of a coffee: false takes it off that store''s menu (a coffee the chain does not sell is off everywhere).';
comment on constraint store_coffees_store_id_fkey on app_public.store_coffees is E'@fieldName store\n@notNull\n@foreignFieldName coffeeAvailabilityList';
comment on constraint store_coffees_coffee_id_fkey on app_public.store_coffees is E'@fieldName coffee\n@notNull\n@foreignFieldName storeAvailabilityList';
alter table app_public.store_coffees enable row level security;
create policy select_all on app_public.store_coffees for select using (true);
grant select on app_public.store_coffees to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

create trigger _950_audit after insert or update or delete on app_public.store_coffees
  for each row execute function app_private.tg_audit('store_id,coffee_id', 'store_id,coffee_id,available');

-- On sale at that store: on the chain's menu and not taken off there.
create function app_hidden.on_sale_at(p_coffee app_public.coffees, p_store_id uuid) returns boolean
language sql stable security definer set search_path = pg_catalog as $$
  select p_coffee.available and coalesce((select sc.available from app_public.store_coffees sc
                                          where sc.store_id = p_store_id and sc.coffee_id = p_coffee.id), true);
$$;
grant execute on function app_hidden.on_sale_at(app_public.coffees, uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

create function app_public.coffees_available_at(c app_public.coffees, store_id uuid default null) returns boolean
language sql stable as $$
  select app_hidden.on_sale_at(c, app_hidden.store_or_default(coffees_available_at.store_id));
$$;
comment on function app_public.coffees_available_at(app_public.coffees, uuid) is E'@notNull\nOn sale at that store (absent: the default store): on the chain''s menu and not taken off there.';
grant execute on function app_public.coffees_available_at(app_public.coffees, uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

-- Without a store: the chain's menu (the chain's admin). With one: that
-- store's menu (its manager or the chain's admin).
drop function app_public.set_coffee_available(uuid, boolean);
create function app_public.set_coffee_available(p_id uuid, p_available boolean, p_store_id uuid default null) returns app_public.coffees
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_coffee app_public.coffees;
begin
  if p_store_id is null then
    perform app_hidden.require_admin();
    update app_public.coffees set available = p_available where id = p_id returning * into v_coffee;
  else
    perform app_hidden.require_store_admin(app_hidden.store_or_default(p_store_id));
    select * into v_coffee from app_public.coffees where id = p_id;
    if v_coffee.id is not null then
      insert into app_public.store_coffees (store_id, coffee_id, available) values (p_store_id, p_id, p_available)
      on conflict (store_id, coffee_id) do update set available = excluded.available;
    end if;
  end if;
  if v_coffee.id is null then
    raise exception 'No coffee with id %.', p_id using errcode = 'P0002';
  end if;
  return v_coffee;
end;
$$;
comment on function app_public.set_coffee_available(uuid, boolean, uuid) is E'@behavior -queryField -mutationField -typeField';
grant execute on function app_public.set_coffee_available(uuid,boolean,uuid) to cafe_admin;

--------------------------------------------------------------------------------
-- 100 store_id on everything that happens in a café
--
-- Expand: each column is added with the default store's id as a constant
-- default, which PostgreSQL keeps in the catalogue (no rewrite, no scan:
-- the existing rows read it from there), then its default becomes
-- app_hidden.default_store_id() for the rows to come. Constrain: foreign
-- keys NOT VALID, then validated (SHARE UPDATE EXCLUSIVE: reads and writes
-- go on). Store-scoped tables whose keys cost nothing to change today are
-- keyed (store_id, …), as Citus would want (docs/scaling.md).
--------------------------------------------------------------------------------

alter table app_public.orders add column store_id uuid not null default '5707e000-0000-4000-8000-000000000001';
alter table app_public.orders alter column store_id set default app_hidden.default_store_id();
alter table app_public.orders add constraint orders_store_id_fkey foreign key (store_id) references app_public.stores on delete restrict not valid;
comment on column app_public.orders.store_id is 'The store the order is for (absent in createOrder: the default store).';
comment on constraint orders_store_id_fkey on app_public.orders is E'@fieldName store\n@notNull\n@foreignFieldName orderList';

alter table app_public.order_events add column store_id uuid not null default '5707e000-0000-4000-8000-000000000001';
alter table app_public.order_events alter column store_id set default app_hidden.default_store_id();
alter table app_public.order_events add constraint order_events_store_id_fkey foreign key (store_id) references app_public.stores on delete restrict not valid;
comment on constraint order_events_store_id_fkey on app_public.order_events is E'@fieldName store\n@notNull\n@foreignFieldName orderEventList';

alter table app_public.notifications add column store_id uuid not null default '5707e000-0000-4000-8000-000000000001';
alter table app_public.notifications alter column store_id set default app_hidden.default_store_id();
alter table app_public.notifications add constraint notifications_store_id_fkey foreign key (store_id) references app_public.stores on delete restrict not valid;
comment on constraint notifications_store_id_fkey on app_public.notifications is E'@fieldName store\n@notNull\n@foreignFieldName notificationList';

alter table app_public.refunds add column store_id uuid not null default '5707e000-0000-4000-8000-000000000001';
alter table app_public.refunds alter column store_id set default app_hidden.default_store_id();
alter table app_public.refunds add constraint refunds_store_id_fkey foreign key (store_id) references app_public.stores on delete restrict not valid;
comment on constraint refunds_store_id_fkey on app_public.refunds is E'@fieldName store\n@notNull\n@foreignFieldName refundList';

alter table app_public.stock_movements add column store_id uuid not null default '5707e000-0000-4000-8000-000000000001';
alter table app_public.stock_movements alter column store_id set default app_hidden.default_store_id();
alter table app_public.stock_movements add constraint stock_movements_store_id_fkey foreign key (store_id) references app_public.stores on delete restrict not valid;
comment on constraint stock_movements_store_id_fkey on app_public.stock_movements is E'@fieldName store\n@notNull\n@foreignFieldName stockMovementList';

-- Every delivery so far came to the one café; from now on, one refused
-- before its order was known belongs to no store.
alter table app_private.payment_deliveries add column store_id uuid default '5707e000-0000-4000-8000-000000000001';
alter table app_private.payment_deliveries alter column store_id drop default;
alter table app_private.payment_deliveries add constraint payment_deliveries_store_id_fkey foreign key (store_id) references app_public.stores on delete restrict not valid;

-- Stock per store: keyed (store_id, ingredient_id).
alter table app_public.stock_items add column store_id uuid not null default '5707e000-0000-4000-8000-000000000001' references app_public.stores on delete cascade;
alter table app_public.stock_items alter column store_id set default app_hidden.default_store_id();
alter table app_public.stock_items drop constraint stock_items_pkey;
alter table app_public.stock_items add primary key (store_id, ingredient_id);
create index stock_items_ingredient_id_idx on app_public.stock_items (ingredient_id);
comment on constraint stock_items_store_id_fkey on app_public.stock_items is E'@fieldName store\n@notNull\n@foreignFieldName stockItemList';
comment on constraint stock_items_ingredient_id_fkey on app_public.stock_items is E'@fieldName ingredient\n@notNull\n@foreignFieldName stockItems';
comment on table app_public.stock_items is 'How much of an ingredient a store has on the shelf, and the level that should raise an alert. An ingredient without a row at a store is not counted there (never short).';

alter table app_private.stock_reservations add column store_id uuid not null default '5707e000-0000-4000-8000-000000000001' references app_public.stores on delete cascade;
alter table app_private.stock_reservations alter column store_id drop default;

alter table app_private.stock_reserved add column store_id uuid not null default '5707e000-0000-4000-8000-000000000001' references app_public.stores on delete cascade;
alter table app_private.stock_reserved alter column store_id drop default;
alter table app_private.stock_reserved drop constraint stock_reserved_pkey;
alter table app_private.stock_reserved add primary key (store_id, ingredient_id);
comment on table app_private.stock_reserved is 'Per store and ingredient: the sum of the open orders'' stock_reservations.';

-- Who did what to a store's rules: the audit log's rows name the store (when
-- the row changed has one), so a store manager reads their stores' only.
alter table app_private.audit_log add column store_id uuid;


-- Rows written about an order belong to the order's store, whoever writes
-- them (a function, a trigger, a DBA): the order decides, not the writer.
create function app_private.tg__store_of_order() returns trigger
language plpgsql security definer set search_path = pg_catalog as $$
declare
  v_store uuid;
begin
  if new.order_id is not null then
    select o.store_id into v_store from app_public.orders o where o.id = new.order_id;
    -- (No such order: its foreign key, where there is one, answers.)
    new.store_id := coalesce(v_store, new.store_id);
  end if;
  return new;
end;
$$;

create trigger _050_store_of_order before insert or update of order_id on app_public.order_events
  for each row execute function app_private.tg__store_of_order();
create trigger _050_store_of_order before insert or update of order_id on app_public.notifications
  for each row execute function app_private.tg__store_of_order();
create trigger _050_store_of_order before insert or update of order_id on app_public.refunds
  for each row execute function app_private.tg__store_of_order();
create trigger _050_store_of_order before insert or update of order_id on app_public.stock_movements
  for each row execute function app_private.tg__store_of_order();
create trigger _050_store_of_order before insert or update of order_id on app_private.payment_deliveries
  for each row execute function app_private.tg__store_of_order();
create trigger _050_store_of_order before insert or update of order_id on app_private.stock_reservations
  for each row execute function app_private.tg__store_of_order();

-- An order stays in its store.
create function app_private.tg_orders__keep_store() returns trigger
language plpgsql as $$
begin
  raise exception 'An order stays in the store it was made for.' using errcode = '22023';
end;
$$;

create trigger _100_keep_store before update of store_id on app_public.orders
  for each row when (new.store_id is distinct from old.store_id)
  execute function app_private.tg_orders__keep_store();

--------------------------------------------------------------------------------
-- 200 RLS per store
--
-- Staff see the rows of the stores they work at (staff_store_ids(), asked
-- once per statement); a customer still sees their own, at every store.
--------------------------------------------------------------------------------

drop policy select_staff on app_public.orders;
create policy select_staff on app_public.orders for select to cafe_barista, cafe_admin, cafe_system
  using (store_id = any ((select app_public.staff_store_ids())::uuid[]));

drop policy select_staff on app_public.order_items;
create policy select_staff on app_public.order_items for select to cafe_barista, cafe_admin, cafe_system
  using (exists (select 1 from app_public.orders o where o.id = order_id and o.store_id = any ((select app_public.staff_store_ids())::uuid[])));

drop policy select_staff on app_public.order_events;
create policy select_staff on app_public.order_events for select to cafe_barista, cafe_admin
  using (store_id = any ((select app_public.staff_store_ids())::uuid[]));

drop policy select_staff on app_public.notifications;
create policy select_staff on app_public.notifications for select to cafe_barista, cafe_admin
  using (store_id = any ((select app_public.staff_store_ids())::uuid[]));

drop policy select_staff on app_public.stock_items;
create policy select_staff on app_public.stock_items for select to cafe_barista, cafe_admin, cafe_system
  using (store_id = any ((select app_public.staff_store_ids())::uuid[]));

drop policy select_staff on app_public.stock_movements;
create policy select_staff on app_public.stock_movements for select to cafe_barista, cafe_admin
  using (store_id = any ((select app_public.staff_store_ids())::uuid[]));

-- Refunds: the admins of the refund's store (its manager, the chain's admin).
drop policy select_admin on app_public.refunds;
create policy select_admin on app_public.refunds for select to cafe_admin
  using ((select app_public.current_actor()) = 'admin' and store_id = any ((select app_public.staff_store_ids())::uuid[]));

-- A customer reads the baristas of their orders; staff read each other.
-- (Unchanged: app_public.baristas' policies.)

--------------------------------------------------------------------------------
-- 300 menu reads per store
--------------------------------------------------------------------------------

drop function app_public.seasonal_drinks();
-- (The store's own availability inline, not through on_sale_at: the menus
-- read every coffee, and a SQL function that cannot be inlined runs once a row.)
create function app_public.seasonal_drinks(store_id uuid default null) returns setof app_public.coffees
language sql stable as $$
  select c.* from app_public.coffees c
  cross join (select app_hidden.store_or_default(seasonal_drinks.store_id) as id) st
  where c.available and (c.category = 'SEASONAL' or c.limited_time_offer)
    and not exists (select 1 from app_public.store_coffees sc where sc.store_id = st.id and sc.coffee_id = c.id and not sc.available)
  order by c.name;
$$;
comment on function app_public.seasonal_drinks(uuid) is E'@behavior -connection +list\n@notNull\nCoffees on sale at the store (absent: the default store) in the SEASONAL category or marked limitedTimeOffer.';
grant execute on function app_public.seasonal_drinks(uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

drop function app_public.menu_items();
create function app_public.menu_items(store_id uuid default null) returns setof app_public.coffees
language sql stable as $$
  select c.* from app_public.coffees c
  cross join (select app_hidden.store_or_default(menu_items.store_id) as id) st
  where c.available
    and not exists (select 1 from app_public.store_coffees sc where sc.store_id = st.id and sc.coffee_id = c.id and not sc.available)
  order by c.category, c.name;
$$;
comment on function app_public.menu_items(uuid) is E'@behavior -connection +list\n@notNull\n@pageSize 50\nWhat the kiosk shows: every coffee on sale now at the store (absent: the default store), by category then name.';
grant execute on function app_public.menu_items(uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

drop function app_public.featured_coffee();
create function app_public.featured_coffee(store_id uuid default null) returns app_public.coffees
language sql stable security definer set search_path = pg_catalog as $$
  select c.* from app_public.coffees c
  cross join (select app_hidden.store_or_default(featured_coffee.store_id) as id) st
  left join lateral (
    select coalesce(sum(oi.quantity), 0) as sold
    from app_public.order_items oi join app_public.orders o on o.id = oi.order_id
    where oi.coffee_id = c.id and o.store_id = st.id and o.time_ordered >= now() - interval '7 days'
      and o.status in ('PAID', 'PREPARING', 'BREWING', 'READY', 'COMPLETED')
  ) s on true
  where c.category = 'FEATURED' and c.available
    and not exists (select 1 from app_public.store_coffees sc where sc.store_id = st.id and sc.coffee_id = c.id and not sc.available)
  order by s.sold desc, c.name
  limit 1;
$$;
comment on function app_public.featured_coffee(uuid) is 'The FEATURED coffee on sale at the store (absent: the default store) that sold most there in the last 7 days (ties: by name).';
grant execute on function app_public.featured_coffee(uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 400 orders per store: placing, finding, following
--------------------------------------------------------------------------------

-- The queue estimate counts the cups waiting at the order's store.
drop function app_private.estimate_ready_time(integer);
create function app_private.estimate_ready_time(p_items integer, p_store_id uuid) returns timestamptz
language plpgsql stable security definer set search_path = pg_catalog as $$
begin
  return now() + make_interval(secs =>
    app_private.setting('prep_base_seconds')
    + (coalesce((select sum(oi.quantity)
                   from app_public.orders o join app_public.order_items oi on oi.order_id = o.id
                  where o.status in ('PAID', 'PREPARING', 'BREWING') and o.store_id = p_store_id), 0) + p_items)
      * app_private.setting('prep_seconds_per_item')
      / greatest(app_private.setting('prep_parallel_baristas'), 1));
end;
$$;

-- The order, locked until the transaction ends, or "not found" (P0002):
-- what every staff or customer action on one order starts with. Staff of
-- another store find nothing, as under RLS.
create or replace function app_hidden.order_for_update(p_id uuid) returns app_public.orders
language plpgsql volatile set search_path = pg_catalog as $$
declare
  v_order app_public.orders;
begin
  select * into v_order from app_public.orders where id = p_id for update;
  if v_order.id is null
     or app_public.current_actor() in ('barista', 'admin') and not v_order.store_id = any (app_public.staff_store_ids()) then
    raise exception 'No order with id %.', p_id using errcode = 'P0002';
  end if;
  return v_order;
end;
$$;

-- Following the queue: staff of that store (absent: the default store).
-- Returns the store's id: its topic is order_queue:<store id>.
drop function app_hidden.assert_can_follow_queue();
create function app_hidden.assert_can_follow_queue(p_store_id uuid default null) returns uuid
language plpgsql stable as $$
declare
  v_store uuid;
begin
  perform app_hidden.require_staff();
  v_store := app_hidden.store_or_default(p_store_id);
  perform app_hidden.require_store_staff(v_store);
  return v_store;
end;
$$;
grant execute on function app_hidden.assert_can_follow_queue(uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

-- Topics as in the baseline; the barista queue is per store:
-- order_queue:<store id> (common/topics.ts orderQueueTopic).
create or replace function app_private.tg_orders__notify() returns trigger
language plpgsql as $$
declare
  v_row text;
begin
  perform pg_notify('order:' || new.id::text, json_build_object('id', new.id)::text);
  if tg_op = 'INSERT' or new.status is distinct from old.status then
    perform pg_notify('order_status:' || new.id::text, json_build_object(
      'id', new.id, 'status', new.status, 'barista_id', new.barista_id,
      'message', app_public.order_status_message(new.status))::text);
  end if;
  if (case
       when tg_op = 'INSERT' then new.status in ('PAID', 'PREPARING', 'BREWING', 'READY')
       when new.status is not distinct from old.status then false
       when new.status in ('PAID', 'PREPARING', 'BREWING', 'READY', 'COMPLETED') then true
       else new.status = 'CANCELLED' and old.paid_at is not null
     end) then
    v_row := row_to_json(new)::text;
    if octet_length(v_row) >= 7900 then
      v_row := (to_jsonb(new) - 'notes')::text;
    end if;
    perform pg_notify('order_queue:' || new.store_id::text, v_row);
  end if;
  return null;
end;
$$;

drop function app_public.create_order(jsonb, text, uuid, integer, text, uuid);
create function app_public.create_order(
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
  shortage record;
  hog record;
  v_items jsonb := '[]';
  v_ready timestamptz;
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
    v_items := v_items || jsonb_build_object('position', v_pos, 'coffee_id', v_coffee.id, 'quantity', v_qty,
      'unit_price', v_coffee.price, 'special_instructions', nullif(line ->> 'special_instructions', ''));
    v_total := v_total + v_qty * v_coffee.price;
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
     select rl.ingredient_id from jsonb_array_elements(v_items) l
     join app_public.recipe_lines rl on rl.coffee_id = (l ->> 'coffee_id')::uuid)
   order by s.ingredient_id for update;
  insert into app_public.orders (customer_id, notes, total, estimated_ready_time, created_by, expires_at, store_id)
  values (v_customer_id, nullif(v_notes, ''), v_total, v_ready, app_public.current_user_id(),
          now() + make_interval(secs => v_expiry), v_store.id)
  returning * into v_order;
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
           + coalesce((select sum(oi.quantity * rl.quantity) from app_public.orders o
                        join app_public.order_items oi on oi.order_id = o.id
                        join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id and rl.ingredient_id = mine.ingredient_id
                       where o.customer_id = v_customer_id and o.created_by = v_customer_id and o.store_id = v_store.id
                         and o.status = 'CANCELLED' and o.paid_at is null and o.inventory_taken_at is null
                         and o.updated_at > now() - make_interval(secs => v_cooldown)), 0) as held
    ) h
    cross join lateral (
      select greatest(s.current_stock * v_share / 100,
                      (select max(rl.quantity) from app_public.order_items oi
                        join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id and rl.ingredient_id = mine.ingredient_id
                       where oi.order_id = v_order.id)) as allowed
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
  return v_order;
end;
$$;
comment on function app_public.create_order(jsonb, text, uuid, integer, text, uuid, uuid) is E'@behavior -queryField -mutationField -typeField';
grant execute on function app_public.create_order(jsonb,text,uuid,integer,text,uuid,uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 500 stock per store
--------------------------------------------------------------------------------

drop function app_public.low_stock_items();
create function app_public.low_stock_items(store_id uuid default null) returns setof app_public.stock_items
language plpgsql stable as $$
declare
  v_store uuid;
begin
  perform app_hidden.require_staff();
  v_store := app_hidden.store_or_default(low_stock_items.store_id);
  perform app_hidden.require_store_staff(v_store);
  return query
    select s.* from app_public.stock_items s
    where s.store_id = v_store and s.current_stock <= s.alert_level
    order by s.current_stock / nullif(s.alert_level, 0), s.ingredient_id;
end;
$$;
comment on function app_public.low_stock_items(uuid) is E'@behavior -connection +list\n@notNull\n@pageSize 100\nStaff of the store (absent: the default store) only; others get a FORBIDDEN error. Its stock at or below its alert level, emptiest first.';
grant execute on function app_public.low_stock_items(uuid) to cafe_barista, cafe_admin;

drop function app_public.set_stock_alert_level(uuid, numeric);
create function app_public.set_stock_alert_level(p_ingredient_id uuid, p_alert_level numeric, p_store_id uuid default null) returns app_public.stock_items
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_store uuid := app_hidden.store_or_default(p_store_id);
  v_item app_public.stock_items;
begin
  perform app_hidden.require_store_admin(v_store);
  if p_alert_level is null or p_alert_level < 0 or p_alert_level > 1000000 then
    raise exception 'An alert level is between 0 and 1000000.' using errcode = '22023';
  end if;
  update app_public.stock_items set alert_level = p_alert_level
   where store_id = v_store and ingredient_id = p_ingredient_id returning * into v_item;
  if v_item.ingredient_id is null then
    raise exception 'No stock is kept of ingredient % at this store.', p_ingredient_id using errcode = 'P0002';
  end if;
  return v_item;
end;
$$;
comment on function app_public.set_stock_alert_level(uuid, numeric, uuid) is E'@behavior -queryField -mutationField -typeField';
grant execute on function app_public.set_stock_alert_level(uuid,numeric,uuid) to cafe_admin;

drop function app_private.available_stock(uuid);
drop function app_private.reserved_stock(uuid);
create function app_private.reserved_stock(p_ingredient_id uuid, p_store_id uuid default null) returns numeric
language sql stable security definer set search_path = pg_catalog as $$
  select coalesce((select r.amount from app_private.stock_reserved r
                    where r.store_id = coalesce(p_store_id, app_hidden.default_store_id()) and r.ingredient_id = p_ingredient_id), 0);
$$;

create function app_private.available_stock(p_ingredient_id uuid, p_store_id uuid default null) returns numeric
language sql stable security definer set search_path = pg_catalog as $$
  select s.current_stock - app_private.reserved_stock(p_ingredient_id, s.store_id)
  from app_public.stock_items s where s.store_id = coalesce(p_store_id, app_hidden.default_store_id()) and s.ingredient_id = p_ingredient_id;
$$;

-- An order's lines reserve what their recipes need at the order's store.
create or replace function app_private.tg_order_items__reserve_stock() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  with needs as (
    select ni.order_id, o.store_id, rl.ingredient_id, sum(ni.quantity * rl.quantity) as amount
    from new_items ni
    join app_public.orders o on o.id = ni.order_id
    join app_public.recipe_lines rl on rl.coffee_id = ni.coffee_id
    where o.inventory_taken_at is null and o.status not in ('COMPLETED', 'CANCELLED')
    group by ni.order_id, o.store_id, rl.ingredient_id
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

create or replace function app_private.release_stock(p_order_id uuid) returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  perform 1 from app_public.stock_items s
   where (s.store_id, s.ingredient_id) in (select r.store_id, r.ingredient_id from app_private.stock_reservations r where r.order_id = p_order_id)
   order by s.store_id, s.ingredient_id for update;
  with gone as (
    delete from app_private.stock_reservations r where r.order_id = p_order_id returning r.store_id, r.ingredient_id, r.amount
  )
  insert into app_private.stock_reserved (store_id, ingredient_id, amount)
  select g.store_id, g.ingredient_id, -g.amount from gone g order by g.store_id, g.ingredient_id
  on conflict (store_id, ingredient_id) do update set amount = app_private.stock_reserved.amount + excluded.amount;
end;
$$;

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
    select rl.ingredient_id, sum(oi.quantity * rl.quantity) as amount
    from app_public.order_items oi
    join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id
    join app_public.stock_items s on s.store_id = v_store and s.ingredient_id = rl.ingredient_id
    where oi.order_id = p_order_id
    group by rl.ingredient_id
    order by rl.ingredient_id
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
    select rl.ingredient_id, sum(oi.quantity * rl.quantity) as amount
    from app_public.order_items oi
    join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id
    join app_public.stock_items s on s.store_id = v_store and s.ingredient_id = rl.ingredient_id
    where oi.order_id = p_order_id
    group by rl.ingredient_id
  loop
    update app_public.stock_items set current_stock = current_stock + line.amount
     where store_id = v_store and ingredient_id = line.ingredient_id;
    insert into app_public.stock_movements (store_id, ingredient_id, delta, reason, order_id, actor_role, actor_id)
    values (v_store, line.ingredient_id, line.amount, p_reason, p_order_id, app_public.current_actor(), app_public.current_user_id());
  end loop;
end;
$$;

drop function app_public.restock_ingredient(uuid, numeric, text);
create function app_public.restock_ingredient(p_ingredient_id uuid, p_amount numeric, p_reason text default null, p_store_id uuid default null) returns app_public.stock_items
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_store uuid := app_hidden.store_or_default(p_store_id);
  v_item app_public.stock_items;
begin
  perform app_hidden.require_store_admin(v_store);
  if p_amount is null or p_amount = 0 or abs(p_amount) > 1000000 then
    raise exception 'The amount must be non-zero (negative to write stock off).' using errcode = '22023';
  end if;
  if not exists (select 1 from app_public.ingredients where id = p_ingredient_id) then
    raise exception 'No ingredient with id %.', p_ingredient_id using errcode = 'P0002';
  end if;
  insert into app_public.stock_items (store_id, ingredient_id, current_stock) values (v_store, p_ingredient_id, 0) on conflict do nothing;
  update app_public.stock_items set current_stock = current_stock + p_amount
   where store_id = v_store and ingredient_id = p_ingredient_id returning * into v_item;
  insert into app_public.stock_movements (store_id, ingredient_id, delta, reason, actor_role, actor_id)
  values (v_store, p_ingredient_id, p_amount, coalesce(nullif(btrim(p_reason), ''), case when p_amount > 0 then 'restock' else 'write-off' end),
          app_public.current_actor(), app_public.current_user_id());
  return v_item;
exception when check_violation then
  raise exception 'Stock cannot go below zero.' using errcode = '22023';
end;
$$;
comment on function app_public.restock_ingredient(uuid, numeric, text, uuid) is E'@behavior -queryField -mutationField -typeField';
grant execute on function app_public.restock_ingredient(uuid,numeric,text,uuid) to cafe_admin;

drop function app_public.coffees_inventory(app_public.coffees);
create function app_public.coffees_inventory(c app_public.coffees, store_id uuid default null) returns integer
language plpgsql stable security definer set search_path = pg_catalog as $$
declare
  v_store uuid := app_hidden.store_or_default(coffees_inventory.store_id);
begin
  return (
    select case when count(*) = 0 then null
      else greatest(0, min(floor(coalesce(s.current_stock - coalesce(r.amount, 0), 1e9) / rl.quantity)))::integer
    end
    from app_public.recipe_lines rl
    left join app_public.stock_items s on s.store_id = v_store and s.ingredient_id = rl.ingredient_id
    left join app_private.stock_reserved r on r.store_id = v_store and r.ingredient_id = rl.ingredient_id
    where rl.coffee_id = c.id);
end;
$$;
comment on function app_public.coffees_inventory(app_public.coffees, uuid) is 'Servings that the store''s (absent: the default store''s) ingredient stock can still make (stock minus what open orders there need); null when the coffee has no recipe.';
grant execute on function app_public.coffees_inventory(app_public.coffees, uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

-- What stood at Ingredient.stockItem and Query.stockItemByIngredientId
-- before the chain: now the default store's row (or the store named).
create function app_public.ingredients_stock_item(i app_public.ingredients, store_id uuid default null) returns app_public.stock_items
language sql stable as $$
  select s.* from app_public.stock_items s
  where s.store_id = app_hidden.store_or_default(ingredients_stock_item.store_id) and s.ingredient_id = i.id;
$$;
comment on function app_public.ingredients_stock_item(app_public.ingredients, uuid) is E'@notNull\nThe ingredient''s stock at the store (absent: the default store). Staff only.';
grant execute on function app_public.ingredients_stock_item(app_public.ingredients, uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

create function app_public.stock_item_by_ingredient_id(ingredient_id uuid, store_id uuid default null) returns app_public.stock_items
language sql stable as $$
  select s.* from app_public.stock_items s
  where s.store_id = app_hidden.store_or_default(stock_item_by_ingredient_id.store_id) and s.ingredient_id = stock_item_by_ingredient_id.ingredient_id;
$$;
comment on function app_public.stock_item_by_ingredient_id(uuid, uuid) is 'One ingredient''s stock at the store (absent: the default store). Staff only.';
grant execute on function app_public.stock_item_by_ingredient_id(uuid, uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 600 refunds per store
--------------------------------------------------------------------------------

create or replace function app_public.settle_refund(p_id uuid) returns app_public.refunds
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_refund app_public.refunds;
begin
  perform app_hidden.require_store_admin(null);
  select * into v_refund from app_public.refunds where id = p_id for update;
  if v_refund.id is null or app_public.current_actor() <> 'dba' and not app_public.is_store_admin(v_refund.store_id) then
    raise exception 'No refund with id %.', p_id using errcode = 'P0002';
  end if;
  update app_public.refunds set settled_at = coalesce(settled_at, now()), settled_by = coalesce(settled_by, app_public.current_user_id())
   where id = p_id returning * into v_refund;
  return v_refund;
end;
$$;

create or replace function app_public.open_refunds() returns setof app_public.refunds
language plpgsql stable as $$
begin
  perform app_hidden.require_store_admin(null);
  return query select r.* from app_public.refunds r
    where r.settled_at is null and r.store_id = any (app_public.staff_store_ids())
    order by r.created_at, r.id;
end;
$$;
comment on function app_public.open_refunds() is E'@behavior -connection +list\n@notNull\n@pageSize 100\nAdmins only: refunds owed at their stores (the chain''s admin: every store) and not yet settled, oldest first.';

--------------------------------------------------------------------------------
-- 700 sales and the audit log per store
--------------------------------------------------------------------------------

drop function app_hidden.sales_report(text, text, text, integer);
create function app_hidden.sales_report(p_from text, p_to text, p_group_by text, p_max_rows integer, p_store_id uuid default null)
returns table (bucket text, orders integer, cups integer, revenue double precision)
language plpgsql stable security definer set search_path = pg_catalog as $$
declare
  v_zone text;
  v_stores uuid[];
  v_from timestamptz;
  v_to timestamptz;
begin
  if p_store_id is null then
    perform app_hidden.require_store_admin(null);
    v_zone := app_private.cafe_time_zone();
    v_stores := app_public.staff_store_ids();
  else
    perform app_hidden.require_store_admin(app_hidden.store_or_default(p_store_id));
    select s.time_zone into v_zone from app_public.stores s where s.id = p_store_id;
    v_stores := array[p_store_id];
  end if;
  v_from := app_private.parse_report_time(p_from, v_zone, 'from');
  v_to := app_private.parse_report_time(p_to, v_zone, 'to');
  if v_from > v_to then
    raise exception '`from` (%) is after `to` (%).', p_from, p_to using errcode = '22023';
  end if;
  if p_group_by in ('HOUR', 'DAY')
     and extract(epoch from v_to - v_from) / (case p_group_by when 'HOUR' then 3600 else 86400 end) >= p_max_rows - 1 then
    raise exception 'A report has at most % rows: ask for a shorter range, or group by a longer period.', p_max_rows using errcode = '22023';
  end if;
  if p_group_by = 'COFFEE' then
    return query
      select c.name::text, count(distinct o.id)::integer, sum(oi.quantity)::integer, sum(oi.quantity * oi.unit_price)::double precision
      from app_public.orders o
      join app_public.order_items oi on oi.order_id = o.id
      join app_public.coffees c on c.id = oi.coffee_id
      where o.paid_at >= v_from and o.paid_at < v_to and o.paid_at is not null and o.status <> 'CANCELLED'
        and o.store_id = any (v_stores)
      group by c.id, c.name
      order by 4 desc, 1
      limit p_max_rows;
  elsif p_group_by in ('HOUR', 'DAY') then
    return query
      select app_private.local_iso(b.start, v_zone, p_group_by = 'HOUR'), b.orders::integer, b.cups::integer, b.revenue::double precision
      from (
        select date_trunc(lower(p_group_by), o.paid_at, v_zone) as start, count(*) as orders,
               sum((select sum(oi.quantity) from app_public.order_items oi where oi.order_id = o.id)) as cups,
               sum(o.total) as revenue
        from app_public.orders o
        where o.paid_at >= v_from and o.paid_at < v_to and o.paid_at is not null and o.status <> 'CANCELLED'
          and o.store_id = any (v_stores)
        group by 1
      ) b
      order by b.start
      limit p_max_rows;
  else
    raise exception 'groupBy is HOUR, DAY or COFFEE.' using errcode = '22023';
  end if;
end;
$$;
comment on function app_hidden.sales_report(text, text, text, integer, uuid) is
  'Admins only: paid orders (by payment time, provider or till; orders cancelled after payment left out) from p_from (included) to p_to (excluded), per HOUR or DAY, or per COFFEE; at most p_max_rows rows. With p_store_id: that store (its admins), in its time zone; without: every store the caller manages (the chain''s admin: the chain), in the chain''s cafe_time_zone.';
grant execute on function app_hidden.sales_report(text,text,text,integer,uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

-- The audit log's row names the store of the row changed (its store_id, or
-- its id for a store itself).
create or replace function app_private.tg_audit() returns trigger
language plpgsql security definer set search_path = pg_catalog as $$
declare
  v_old jsonb := case when tg_op <> 'INSERT' then to_jsonb(old) end;
  v_new jsonb := case when tg_op <> 'DELETE' then to_jsonb(new) end;
  v_row jsonb := coalesce(v_new, v_old);
  v_columns text[] := case when tg_argv[1] = '*' then null else string_to_array(tg_argv[1], ',') end;
  v_key text;
  v_store uuid := (case when tg_table_schema = 'app_public' and tg_table_name = 'stores' then v_row ->> 'id' else v_row ->> 'store_id' end)::uuid;
begin
  if v_columns is not null then
    v_old := case when v_old is not null then (select jsonb_object_agg(k, v_old -> k) from unnest(v_columns) k) end;
    v_new := case when v_new is not null then (select jsonb_object_agg(k, v_new -> k) from unnest(v_columns) k) end;
  end if;
  if tg_op = 'UPDATE' then
    select jsonb_object_agg(k, v_old -> k), jsonb_object_agg(k, v_new -> k) into v_old, v_new
    from jsonb_object_keys(v_new) k
    where v_new -> k is distinct from v_old -> k;
    if v_new is null then
      return null;
    end if;
  end if;
  select string_agg(v_row ->> k, ' ') into v_key from unnest(string_to_array(tg_argv[0], ',')) k;
  insert into app_private.audit_log (actor, action, entity, before, after, store_id)
  values (app_private.audit_actor(), tg_op, tg_table_schema || '.' || tg_table_name || ' ' || coalesce(v_key, ''), v_old, v_new, v_store);
  return null;
end;
$$;

-- Stock alert levels are a store's rule: audited, with the store.
create trigger _950_audit_alert_level after update of alert_level on app_public.stock_items
  for each row execute function app_private.tg_audit('store_id,ingredient_id', 'alert_level');

-- The chain's admin reads the whole log; a store manager the rows of their stores.
create or replace function app_hidden.audit_log(p_first integer, p_offset integer)
returns table (at timestamptz, actor text, action text, entity text, before text, after text)
language plpgsql stable security definer set search_path = pg_catalog as $$
declare
  v_all boolean;
  v_stores uuid[];
begin
  perform app_hidden.require_store_admin(null);
  if p_first < 0 or p_offset < 0 then
    raise exception 'first and offset are 0 or more.' using errcode = '22023';
  end if;
  v_all := app_public.current_actor() = 'dba' or app_public.is_admin();
  v_stores := app_public.staff_store_ids();
  return query
    select l.at, l.actor, l.action, l.entity, l.before::text, l.after::text
    from app_private.audit_log l
    where v_all or l.store_id = any (v_stores)
    order by l.at desc, l.id desc
    limit least(coalesce(p_first, 100), 500) offset coalesce(p_offset, 0);
end;
$$;
comment on function app_hidden.audit_log(integer, integer) is 'Admins only: the audit log, newest first (a store manager: the rows of their stores); at most 500 rows (100 when p_first is null; the API passes its DEFAULT_LIST_SIZE).';

--------------------------------------------------------------------------------
-- 800 stores and staff: what admins do
--------------------------------------------------------------------------------

-- A new store starts closed to nothing: open, with the chain's settings, and
-- a stock row (empty) for every ingredient the default store counts, so
-- nothing is sold there before it is stocked.
create function app_public.add_store(p_name text, p_time_zone text, p_address text default null) returns app_public.stores
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_store app_public.stores;
begin
  perform app_hidden.require_admin();
  if p_name is null or btrim(p_name) = '' or length(btrim(p_name)) > 100 then
    raise exception 'A store''s name has 1 to 100 characters.' using errcode = '22023';
  end if;
  if p_time_zone is null or not exists (select 1 from pg_catalog.pg_timezone_names where name = p_time_zone) then
    raise exception 'Unknown time zone %: an IANA name, e.g. Europe/Paris.', p_time_zone using errcode = '22023';
  end if;
  begin
    insert into app_public.stores (name, time_zone, address) values (btrim(p_name), p_time_zone, p_address)
    returning * into v_store;
  exception when unique_violation then
    raise exception 'A store named % already exists.', btrim(p_name) using errcode = '23505';
  end;
  insert into app_public.stock_items (store_id, ingredient_id, current_stock, alert_level, unit)
  select v_store.id, s.ingredient_id, 0, s.alert_level, s.unit
    from app_public.stock_items s where s.store_id = app_hidden.default_store_id();
  return v_store;
end;
$$;
comment on function app_public.add_store(text, text, text) is E'@behavior -queryField -mutationField -typeField';
grant execute on function app_public.add_store(text,text,text) to cafe_admin;

-- Assigns a member of staff to a store (true; false when they already work
-- there). The same as a DBA's one insert into store_staff.
create function app_public.assign_staff(p_account_id uuid, p_store_id uuid) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  perform app_hidden.require_admin();
  perform app_hidden.store_or_default(p_store_id);
  if p_store_id is null then
    raise exception 'Give the store.' using errcode = '22023';
  end if;
  if not exists (select 1 from app_public.baristas where id = p_account_id) then
    raise exception 'No staff account with id %.', p_account_id using errcode = 'P0002';
  end if;
  insert into app_public.store_staff (store_id, staff_id) values (p_store_id, p_account_id) on conflict do nothing;
  return found;
end;
$$;
comment on function app_public.assign_staff(uuid, uuid) is E'@behavior -queryField -mutationField -typeField';
grant execute on function app_public.assign_staff(uuid,uuid) to cafe_admin;

-- A store's settings (its admins): a JSON patch of the columns given; null
-- puts a setting back to the chain's.
create function app_public.update_store(p_id uuid, p_patch jsonb) returns app_public.stores
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_store app_public.stores;
  k text;
begin
  perform app_hidden.require_store_admin(app_hidden.store_or_default(p_id));
  for k in select jsonb_object_keys(coalesce(p_patch, '{}')) loop
    if k not in ('name', 'time_zone', 'address', 'is_open', 'pending_order_expiry_seconds', 'max_open_orders_per_customer',
                 'max_open_cups_per_customer', 'max_stock_share_percent', 'stock_share_cooldown_seconds') then
      raise exception 'A store has no setting %.', k using errcode = '22023';
    end if;
    if k in ('name', 'time_zone', 'is_open') and p_patch -> k = 'null'::jsonb then
      raise exception '% cannot be null.', k using errcode = '22023';
    end if;
  end loop;
  begin
    update app_public.stores s set
      name = case when p_patch ? 'name' then btrim(p_patch ->> 'name') else s.name end,
      time_zone = case when p_patch ? 'time_zone' then p_patch ->> 'time_zone' else s.time_zone end,
      address = case when p_patch ? 'address' then p_patch ->> 'address' else s.address end,
      is_open = case when p_patch ? 'is_open' then (p_patch ->> 'is_open')::boolean else s.is_open end,
      pending_order_expiry_seconds = case when p_patch ? 'pending_order_expiry_seconds' then (p_patch ->> 'pending_order_expiry_seconds')::integer else s.pending_order_expiry_seconds end,
      max_open_orders_per_customer = case when p_patch ? 'max_open_orders_per_customer' then (p_patch ->> 'max_open_orders_per_customer')::integer else s.max_open_orders_per_customer end,
      max_open_cups_per_customer = case when p_patch ? 'max_open_cups_per_customer' then (p_patch ->> 'max_open_cups_per_customer')::integer else s.max_open_cups_per_customer end,
      max_stock_share_percent = case when p_patch ? 'max_stock_share_percent' then (p_patch ->> 'max_stock_share_percent')::numeric else s.max_stock_share_percent end,
      stock_share_cooldown_seconds = case when p_patch ? 'stock_share_cooldown_seconds' then (p_patch ->> 'stock_share_cooldown_seconds')::integer else s.stock_share_cooldown_seconds end
    where s.id = p_id
    returning * into v_store;
  exception
    when unique_violation then
      raise exception 'A store named % already exists.', btrim(p_patch ->> 'name') using errcode = '23505';
    when check_violation or invalid_text_representation or numeric_value_out_of_range then
      raise exception 'A store setting is out of range or of the wrong kind: %', sqlerrm using errcode = '22023';
  end;
  return v_store;
end;
$$;
comment on function app_public.update_store(uuid, jsonb) is E'@behavior -queryField -mutationField -typeField';
grant execute on function app_public.update_store(uuid,jsonb) to cafe_admin;

-- Staff accounts: an admin without a store is the chain's admin; with one,
-- that store's manager. A barista works at the store given (else the
-- default store).
drop function app_hidden.add_staff_account(text, text, text, text, text);
create function app_hidden.add_staff_account(p_email text, p_name text, p_role text, p_password text, p_source text default 'unknown', p_store_id uuid default null) returns uuid
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_id uuid;
  v_admin text := (select email::text from app_private.accounts where id = app_public.current_user_id());
  v_store uuid;
begin
  perform app_hidden.require_admin();
  if p_role is null or p_role not in ('barista', 'admin') then
    raise exception 'A staff role is barista or admin.' using errcode = '22023';
  end if;
  v_store := case when p_store_id is not null or p_role = 'barista' then app_hidden.store_or_default(p_store_id) end;
  perform app_private.check_new_account(p_email, p_name, p_password);
  -- Through the API, the hash counts as a password check of the admin's
  -- account and source (a DBA's own session, e.g. the CLI, is not counted).
  if app_public.current_actor() <> 'dba' then
    perform app_private.note_password_check(v_admin, app_private.source_key(p_source), true, 'add_staff_account');
  end if;
  begin
    insert into app_private.accounts (email, password_hash, role)
    values (lower(p_email), app_private.hash_password(p_password), p_role)
    returning id into v_id;
  exception when unique_violation then
    raise exception 'That e-mail address is already registered.' using errcode = '23505';
  end;
  insert into app_public.baristas (id, name, is_admin, chain_wide) values (v_id, btrim(p_name), p_role = 'admin', v_store is null);
  if v_store is not null then
    insert into app_public.store_staff (store_id, staff_id) values (v_store, v_id);
  end if;
  return v_id;
end;
$$;
grant execute on function app_hidden.add_staff_account(text,text,text,text,text,uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

create function app_public.baristas_stores(b app_public.baristas) returns setof app_public.stores
language sql stable as $$
  select s.* from app_public.stores s
  where b.chain_wide or exists (select 1 from app_public.store_staff ss where ss.store_id = s.id and ss.staff_id = b.id)
  order by s.is_default desc, s.name;
$$;
comment on function app_public.baristas_stores(app_public.baristas) is E'@behavior -connection +list\n@notNull\n@pageSize 100\nThe stores this member of staff works at (every store for chain-wide staff).';
grant execute on function app_public.baristas_stores(app_public.baristas) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 900 live cache: a store's menu and inventory
--------------------------------------------------------------------------------

create trigger _900_live_cache after insert or update or delete or truncate on app_public.store_coffees
  for each statement execute function app_private.tg__announce_public_reads();
create trigger _900_live_cache after insert or update or delete or truncate on app_public.stores
  for each statement execute function app_private.tg__announce_public_reads();

commit;

--------------------------------------------------------------------------------
-- 990 constrain: validate the new foreign keys, one table a transaction
--------------------------------------------------------------------------------

begin;
alter table app_public.orders validate constraint orders_store_id_fkey;
commit;
begin;
alter table app_public.order_events validate constraint order_events_store_id_fkey;
commit;
begin;
alter table app_public.notifications validate constraint notifications_store_id_fkey;
commit;
begin;
alter table app_public.refunds validate constraint refunds_store_id_fkey;
commit;
begin;
alter table app_public.stock_movements validate constraint stock_movements_store_id_fkey;
commit;
begin;
alter table app_private.payment_deliveries validate constraint payment_deliveries_store_id_fkey;
commit;
