--! Previous: sha1:270f0bf40217e3d6ed6968d450e283d9c044882d
--! Hash: sha1:bc554dc22aa0d482e17deb066239df6911bf2998
--! Message: accounts, till, refunds, upkeep

-- 000002: accounts (register, refresh tokens, password changes, login
-- throttling), the till (markOrderPaid), refunds owed, menu and stock upkeep.

--------------------------------------------------------------------------------
-- Login throttling
--------------------------------------------------------------------------------

drop table if exists app_private.login_attempts cascade;
create table app_private.login_attempts (
  id bigint generated always as identity primary key,
  email text not null,
  source text not null,
  succeeded boolean not null,
  attempted_at timestamptz not null default now()
);
create index login_attempts_email_idx on app_private.login_attempts (lower(email), attempted_at);
create index login_attempts_source_idx on app_private.login_attempts (source, attempted_at);

insert into app_private.settings (key, value, description) values
  ('login_max_failures_per_account', 5, 'Failed sign-ins for one e-mail within login_window_seconds before further tries are refused.'),
  ('login_max_failures_per_source', 30, 'Failed sign-ins from one address within login_window_seconds before further tries are refused.'),
  ('login_window_seconds', 900, 'The window (and the wait) of the login limits.'),
  ('refresh_token_days', 30, 'How long a refresh token lives.'),
  ('password_min_length', 10, 'Shortest password accepted at registration and password change.')
on conflict (key) do nothing;

-- Raises 'CT004' (RATE_LIMITED) while an account or a source has failed too often.
create or replace function app_private.assert_login_allowed(p_email text, p_source text) returns void
language plpgsql stable security definer set search_path = pg_catalog as $$
declare
  window_start timestamptz := now() - make_interval(secs => app_private.setting('login_window_seconds'));
begin
  if (select count(*) from app_private.login_attempts
       where lower(email) = lower(p_email) and not succeeded and attempted_at > window_start)
     >= app_private.setting('login_max_failures_per_account')
  or (select count(*) from app_private.login_attempts
       where source = p_source and not succeeded and attempted_at > window_start)
     >= app_private.setting('login_max_failures_per_source') then
    raise exception 'Too many failed sign-ins; try again in % minutes.', ceil(app_private.setting('login_window_seconds') / 60)
      using errcode = 'CT004';
  end if;
end;
$$;

--------------------------------------------------------------------------------
-- Sign-in, with refresh tokens
--------------------------------------------------------------------------------

drop table if exists app_private.refresh_tokens cascade;
create table app_private.refresh_tokens (
  id uuid primary key default gen_random_uuid(),
  family_id uuid not null,
  account_id uuid not null references app_private.accounts on delete cascade,
  token_sha256 text not null unique,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz,
  revoked_at timestamptz
);
create index refresh_tokens_family_idx on app_private.refresh_tokens (family_id);
create index refresh_tokens_account_idx on app_private.refresh_tokens (account_id);

drop type if exists app_hidden.session cascade;
create type app_hidden.session as (
  user_id uuid,
  role text,
  refresh_token text
);

create or replace function app_private.issue_refresh_token(p_account_id uuid, p_family_id uuid) returns text
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  token text := translate(encode(public.gen_random_bytes(32), 'base64'), '+/=', '-_');
begin
  insert into app_private.refresh_tokens (family_id, account_id, token_sha256, expires_at)
  values (coalesce(p_family_id, gen_random_uuid()), p_account_id, encode(sha256(convert_to(token, 'UTF8')), 'hex'),
          now() + make_interval(days => app_private.setting('refresh_token_days')::integer));
  return token;
end;
$$;

-- Checks a password; the server signs the access token. Unknown e-mail and
-- wrong password look the same and take the same time (a dummy hash is
-- checked). Every attempt is recorded for the login limits.
create or replace function app_hidden.authenticate(p_email text, p_password text, p_source text default 'unknown') returns app_hidden.session
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  account app_private.accounts;
  ok boolean;
begin
  perform app_private.assert_login_allowed(p_email, p_source);
  select a.* into account from app_private.accounts a where a.email operator(public.=) p_email::public.citext;
  if account.id is null then
    perform public.crypt(coalesce(p_password, ''), '$2a$08$aaaaaaaaaaaaaaaaaaaaaOQ8u1ZKrY0O3ri0Z1mPmmCNrBe1mnLg2');
    ok := false;
  else
    ok := account.password_hash = public.crypt(coalesce(p_password, ''), account.password_hash);
  end if;
  insert into app_private.login_attempts (email, source, succeeded) values (left(coalesce(p_email, ''), 254), p_source, ok);
  if not ok then
    return null;
  end if;
  return row(account.id, account.role, app_private.issue_refresh_token(account.id, null))::app_hidden.session;
end;
$$;
drop function if exists app_hidden.authenticate(text, text);
grant execute on function app_hidden.authenticate(text, text, text) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

-- Rotates a refresh token: the old one is spent, a new one of the same
-- family returned. Presenting a spent token again means it was stolen (or
-- the client is confused): the whole family is revoked.
create or replace function app_hidden.refresh_session(p_token text) returns app_hidden.session
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  t app_private.refresh_tokens;
  account app_private.accounts;
begin
  select * into t from app_private.refresh_tokens
   where token_sha256 = encode(sha256(convert_to(coalesce(p_token, ''), 'UTF8')), 'hex') for update;
  if t.id is null or t.revoked_at is not null or t.expires_at < now() then
    return null;
  end if;
  if t.used_at is not null then
    update app_private.refresh_tokens set revoked_at = now() where family_id = t.family_id and revoked_at is null;
    return null;
  end if;
  update app_private.refresh_tokens set used_at = now() where id = t.id;
  select * into account from app_private.accounts where id = t.account_id;
  return row(account.id, account.role, app_private.issue_refresh_token(account.id, t.family_id))::app_hidden.session;
end;
$$;

create or replace function app_hidden.logout(p_token text) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_family uuid;
begin
  select family_id into v_family from app_private.refresh_tokens
   where token_sha256 = encode(sha256(convert_to(coalesce(p_token, ''), 'UTF8')), 'hex');
  if v_family is null then
    return false;
  end if;
  update app_private.refresh_tokens set revoked_at = now() where family_id = v_family and revoked_at is null;
  return true;
end;
$$;

create or replace function app_private.check_password_strength(p_password text, p_email text) returns void
language plpgsql stable security definer set search_path = pg_catalog as $$
begin
  if p_password is null or length(p_password) < app_private.setting('password_min_length') then
    raise exception 'A password needs at least % characters.', app_private.setting('password_min_length') using errcode = '22023';
  end if;
  if length(p_password) > 200 then
    raise exception 'A password has at most 200 characters.' using errcode = '22023';
  end if;
  if p_password !~ '[A-Za-z]' or p_password !~ '[^A-Za-z]' then
    raise exception 'A password needs letters and at least one digit or symbol.' using errcode = '22023';
  end if;
  if lower(p_password) = lower(p_email) or lower(p_password) = lower(split_part(p_email, '@', 1)) then
    raise exception 'A password may not be your e-mail address.' using errcode = '22023';
  end if;
end;
$$;

create or replace function app_hidden.register(p_email text, p_password text, p_name text) returns app_hidden.session
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_id uuid;
begin
  if p_email is null or p_email !~ '^[^@\s]+@[^@\s]+\.[^@\s]+$' or length(p_email) > 254 then
    raise exception 'That is not an e-mail address.' using errcode = '22023';
  end if;
  if p_name is null or btrim(p_name) = '' or length(btrim(p_name)) > 100 then
    raise exception 'A name has 1 to 100 characters.' using errcode = '22023';
  end if;
  perform app_private.check_password_strength(p_password, p_email);
  begin
    insert into app_private.accounts (email, password_hash, role)
    values (lower(p_email), public.crypt(p_password, public.gen_salt('bf', 10)), 'customer')
    returning id into v_id;
  exception when unique_violation then
    raise exception 'That e-mail address is already registered.' using errcode = '23505';
  end;
  insert into app_public.customers (id, name) values (v_id, btrim(p_name));
  insert into app_public.profiles (customer_id) values (v_id);
  return row(v_id, 'customer', app_private.issue_refresh_token(v_id, null))::app_hidden.session;
end;
$$;

create or replace function app_hidden.change_password(p_old text, p_new text) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  account app_private.accounts;
begin
  perform app_hidden.require_signed_in();
  select * into account from app_private.accounts where id = app_public.current_user_id() for update;
  if account.id is null or account.password_hash <> public.crypt(coalesce(p_old, ''), account.password_hash) then
    raise exception 'The current password is wrong.' using errcode = '28000';
  end if;
  perform app_private.check_password_strength(p_new, account.email::text);
  update app_private.accounts set password_hash = public.crypt(p_new, public.gen_salt('bf', 10)) where id = account.id;
  -- Every other session ends.
  update app_private.refresh_tokens set revoked_at = now() where account_id = account.id and revoked_at is null;
  return true;
end;
$$;

grant execute on function
  app_hidden.refresh_session(text), app_hidden.logout(text), app_hidden.register(text, text, text), app_hidden.change_password(text, text)
to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- The till
--------------------------------------------------------------------------------

drop type if exists app_public.payment_method cascade;
create type app_public.payment_method as enum ('CASH', 'CARD_PRESENT');

create or replace function app_public.mark_order_paid(p_id uuid, p_method app_public.payment_method) returns app_public.orders
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_order app_public.orders;
begin
  perform app_hidden.require_staff();
  select * into v_order from app_public.orders where id = p_id for update;
  if v_order.id is null then
    raise exception 'No order with id %.', p_id using errcode = 'P0002';
  end if;
  if v_order.status <> 'PENDING' then
    raise exception 'The order is %, so it cannot be paid.', v_order.status
      using errcode = 'CT001', detail = json_build_object('from', v_order.status, 'to', 'PAID')::text;
  end if;
  perform app_private.mark_paid(p_id, lower(p_method::text));
  select * into v_order from app_public.orders where id = p_id;
  return v_order;
end;
$$;
comment on function app_public.mark_order_paid(uuid, app_public.payment_method) is E'@behavior -queryField -mutationField -typeField';

create or replace function app_public.customer_by_email(email text) returns app_public.customers
language plpgsql stable strict as $$
declare
  result app_public.customers;
begin
  perform app_hidden.require_staff();
  select c.* into result from app_public.customers c
  join app_private.accounts a on a.id = c.id
  where a.email operator(public.=) customer_by_email.email::public.citext;
  return result;
end;
$$;
comment on function app_public.customer_by_email(text) is E'Staff only: the customer with this e-mail address (the point of sale looks customers up).';
alter function app_public.customer_by_email(text) security definer;
alter function app_public.customer_by_email(text) set search_path = pg_catalog;

create or replace function app_public.search_customers(query text) returns setof app_public.customers
language plpgsql stable strict security definer set search_path = pg_catalog as $$
begin
  perform app_hidden.require_staff();
  if length(btrim(query)) < 2 then
    raise exception 'Search with at least 2 characters.' using errcode = '22023';
  end if;
  return query
    select c.* from app_public.customers c
    left join app_private.accounts a on a.id = c.id
    left join app_public.profiles p on p.customer_id = c.id
    where not c.is_walk_in and (
      a.email::text ilike '%' || btrim(search_customers.query) || '%'
      or p.username::text ilike '%' || btrim(search_customers.query) || '%'
      or c.name ilike '%' || btrim(search_customers.query) || '%')
    order by c.name, c.id
    limit 20;
end;
$$;
comment on function app_public.search_customers(text) is E'@behavior -connection +list\n@notNull\nStaff only: customers whose e-mail, username or name contains the text (20 at most).';

--------------------------------------------------------------------------------
-- Refunds owed
--------------------------------------------------------------------------------

create or replace function app_public.settle_refund(p_id uuid) returns app_public.refunds
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_refund app_public.refunds;
begin
  perform app_hidden.require_admin();
  update app_public.refunds set settled_at = coalesce(settled_at, now()), settled_by = coalesce(settled_by, app_public.current_user_id())
   where id = p_id returning * into v_refund;
  if v_refund.id is null then
    raise exception 'No refund with id %.', p_id using errcode = 'P0002';
  end if;
  return v_refund;
end;
$$;
comment on function app_public.settle_refund(uuid) is E'@behavior -queryField -mutationField -typeField';

create or replace function app_public.open_refunds() returns setof app_public.refunds
language plpgsql stable as $$
begin
  perform app_hidden.require_admin();
  return query select r.* from app_public.refunds r where r.settled_at is null order by r.created_at, r.id;
end;
$$;
comment on function app_public.open_refunds() is E'@behavior -connection +list\n@notNull\nAdmins only: refunds owed and not yet settled, oldest first.';

--------------------------------------------------------------------------------
-- Menu and stock upkeep
--------------------------------------------------------------------------------

-- Availability changes reach listeners on coffee:<id> (newCoffee is only
-- for coffees that are new).
create or replace function app_public.set_coffee_available(p_id uuid, p_available boolean) returns app_public.coffees
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_coffee app_public.coffees;
begin
  perform app_hidden.require_admin();
  update app_public.coffees set available = p_available where id = p_id returning * into v_coffee;
  if v_coffee.id is null then
    raise exception 'No coffee with id %.', p_id using errcode = 'P0002';
  end if;
  perform pg_notify('coffee:' || p_id::text, json_build_object('id', p_id, 'available', p_available)::text);
  return v_coffee;
end;
$$;
comment on function app_public.set_coffee_available(uuid, boolean) is E'@behavior -queryField -mutationField -typeField';

create or replace function app_public.restock_ingredient(p_ingredient_id uuid, p_amount numeric, p_reason text default null) returns app_public.stock_items
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_item app_public.stock_items;
begin
  perform app_hidden.require_admin();
  if p_amount is null or p_amount = 0 or abs(p_amount) > 1000000 then
    raise exception 'The amount must be non-zero (negative to write stock off).' using errcode = '22023';
  end if;
  if not exists (select 1 from app_public.ingredients where id = p_ingredient_id) then
    raise exception 'No ingredient with id %.', p_ingredient_id using errcode = 'P0002';
  end if;
  insert into app_public.stock_items (ingredient_id, current_stock) values (p_ingredient_id, 0) on conflict do nothing;
  update app_public.stock_items set current_stock = current_stock + p_amount
   where ingredient_id = p_ingredient_id returning * into v_item;
  insert into app_public.stock_movements (ingredient_id, delta, reason, actor_role, actor_id)
  values (p_ingredient_id, p_amount, coalesce(nullif(btrim(p_reason), ''), case when p_amount > 0 then 'restock' else 'write-off' end),
          app_public.current_actor(), app_public.current_user_id());
  return v_item;
exception when check_violation then
  raise exception 'Stock cannot go below zero.' using errcode = '22023';
end;
$$;
comment on function app_public.restock_ingredient(uuid, numeric, text) is E'@behavior -queryField -mutationField -typeField';

create or replace function app_public.set_stock_alert_level(p_ingredient_id uuid, p_alert_level numeric) returns app_public.stock_items
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_item app_public.stock_items;
begin
  perform app_hidden.require_admin();
  if p_alert_level is null or p_alert_level < 0 or p_alert_level > 1000000 then
    raise exception 'An alert level is between 0 and 1000000.' using errcode = '22023';
  end if;
  update app_public.stock_items set alert_level = p_alert_level where ingredient_id = p_ingredient_id returning * into v_item;
  if v_item.ingredient_id is null then
    raise exception 'No stock is kept of ingredient %.', p_ingredient_id using errcode = 'P0002';
  end if;
  return v_item;
end;
$$;
comment on function app_public.set_stock_alert_level(uuid, numeric) is E'@behavior -queryField -mutationField -typeField';

grant execute on function
  app_public.mark_order_paid(uuid, app_public.payment_method),
  app_public.customer_by_email(text),
  app_public.search_customers(text),
  app_public.settle_refund(uuid),
  app_public.open_refunds(),
  app_public.set_coffee_available(uuid, boolean),
  app_public.restock_ingredient(uuid, numeric, text),
  app_public.set_stock_alert_level(uuid, numeric)
to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;
