--! Previous: -
--! Hash: sha1:b970d177da223fa4c941678923fde001132fe62c
--! Message: baseline

-- The whole schema, one section per table (with its indexes, triggers, row
-- level security, policies, grants and smart comments) or per family of
-- functions. Sections are numbered with gaps and come in dependency order:
-- whatever a table, a policy, a trigger or a SQL function's body names is
-- created in an earlier section, or earlier in the same one (SQL bodies are
-- checked as they are created; PL/pgSQL bodies when first called).
-- migrations/README.md maps each section to the GraphQL fields it serves and
-- the tests that check it; migrations/CONVENTIONS.md lists the conventions.
--
-- Performance notes 1 to 3 below were found by the benchmarks
-- (bench/README.md): same rules, same errors; what changes is the cost.

--------------------------------------------------------------------------------
-- 010 schemas, extensions and privileges
--
-- app_public is what PostGraphile exposes; app_hidden holds the functions the
-- API's plugins call (callable by the API roles, never introspected);
-- app_private holds credentials, logs and internals. Dropped and made anew:
-- every object below is created once, in its final form.
--
-- Roles (made by the bootstrap, src/db/database.ts, because roles are
-- cluster-wide): cafe_anonymous, cafe_customer, cafe_barista, cafe_admin for
-- requests; cafe_system for the payment route and the worker; a DBA's own
-- session (no SET ROLE) acts as "dba".
--------------------------------------------------------------------------------

create extension if not exists pgcrypto;
create extension if not exists citext;
create extension if not exists pg_trgm;
drop schema if exists app_public cascade;
drop schema if exists app_hidden cascade;
drop schema if exists app_private cascade;
create schema app_public;
create schema app_hidden;
create schema app_private;

-- Schemas: the API's roles reach app_public and app_hidden; cafe_system also
-- app_private (its entry points there are granted one by one).
grant usage on schema app_public to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;
grant usage on schema app_private to cafe_system;
grant usage on schema app_hidden to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

-- Nothing is executable by PUBLIC unless granted. Each section grants what
-- its objects need, next to them: tables SELECT only (every write goes
-- through a function; RLS decides which rows); functions to exactly the
-- roles that call them. The request roles (cafe_anonymous, cafe_customer,
-- cafe_barista, cafe_admin) call app_public functions through generated
-- fields and mutations, app_hidden functions through the plugins; RLS
-- policies and SECURITY INVOKER functions call the helpers as the same
-- roles. cafe_system (the callback route, the worker's tasks, /metrics, the
-- subscriptions' re-reads) calls its app_private entry points. Triggers and
-- what SECURITY DEFINER functions call need no grant; a function granted to
-- no role is callable by its owner only.
alter default privileges revoke execute on functions from public;

-- Performance note 1: random_page_cost 1.1 for this database. The default (4)
-- models spinning disks; with it the planner hash-joined all 200 coffees for
-- every order of the barista queue instead of looking each coffee up by key
-- (figures: docs/performance.md). A database setting, so a DBA can
-- still change it; it applies to sessions opened afterwards. Only the
-- database's owner may set it: when the migrations run as another role, say
-- so and go on.
do $$
begin
  if exists (select 1 from pg_database where datname = current_database() and datdba = (select oid from pg_roles where rolname = current_user)) then
    execute format('alter database %I set random_page_cost = 1.1', current_database());
  else
    raise notice 'random_page_cost left as it is: % does not own database %', current_user, current_database();
  end if;
end
$$;

--------------------------------------------------------------------------------
-- 020 generic triggers: timestamps and the audit log
--
-- Every change of a rule (settings, role limits, transitions, alert rules, the
-- menu's prices and availability, staff accounts) is written to
-- app_private.audit_log by a `_950_audit` trigger in its table's section; DDL
-- by an event trigger (section 810).
--------------------------------------------------------------------------------

create function app_private.tg__timestamps() returns trigger
language plpgsql as $$
begin
  new.updated_at := now();
  return new;
end;
$$;

create table app_private.audit_log (
  id bigint generated always as identity primary key,
  at timestamptz not null default clock_timestamp(),
  actor text not null,
  action text not null,
  entity text not null,
  before jsonb,
  after jsonb
);
create index audit_log_at_idx on app_private.audit_log (at desc, id desc);
comment on table app_private.audit_log is
  'Every change of a rule: who, when, what, before and after. No request role may read or write it directly (no grants, RLS on); admins read it through auditLog. A DBA''s retention job may delete old rows as the owner.';

-- Nothing for the request roles: no grants, and RLS with no policy.
alter table app_private.audit_log enable row level security;

-- Who made the change: the signed-in account (e-mail and role) for GraphQL;
-- the payment callback or the worker (both act as cafe_system: the callback
-- logs in as the API's authenticator, the worker as the owner); else the
-- database user of a DBA's own session.
create function app_private.audit_actor() returns text
language plpgsql stable security definer set search_path = pg_catalog as $$
declare
  v_role text := nullif(current_setting('role', true), 'none');
  v_user uuid := nullif(current_setting('jwt.claims.user_id', true), '')::uuid;
  v_email text;
begin
  if v_role in ('cafe_customer', 'cafe_barista', 'cafe_admin') and v_user is not null then
    select a.email::text into v_email from app_private.accounts a where a.id = v_user;
    return coalesce(v_email, v_user::text) || ' (' || substr(v_role, 6) || ')';
  elsif v_role = 'cafe_system' then
    return case when session_user::text = 'cafe_authenticator' then 'payment callback (cafe_system)' else 'worker (cafe_system)' end;
  elsif v_role is not null then
    return session_user::text || ' as ' || v_role;
  end if;
  return session_user::text;
end;
$$;

-- One trigger function for every audited table. tg_argv[0]: the key columns
-- (comma-separated) that name the row in `entity`; tg_argv[1]: the columns
-- recorded ('*': all). An UPDATE records the changed columns only, and
-- nothing when none of the recorded columns changed.
create function app_private.tg_audit() returns trigger
language plpgsql security definer set search_path = pg_catalog as $$
declare
  v_old jsonb := case when tg_op <> 'INSERT' then to_jsonb(old) end;
  v_new jsonb := case when tg_op <> 'DELETE' then to_jsonb(new) end;
  v_row jsonb := coalesce(v_new, v_old);
  v_columns text[] := case when tg_argv[1] = '*' then null else string_to_array(tg_argv[1], ',') end;
  v_key text;
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
  insert into app_private.audit_log (actor, action, entity, before, after)
  values (app_private.audit_actor(), tg_op, tg_table_schema || '.' || tg_table_name || ' ' || coalesce(v_key, ''), v_old, v_new);
  return null;
end;
$$;

--------------------------------------------------------------------------------
-- 030 accounts and who is calling
--
-- Accounts hold the credentials of customers and staff; no request role reads
-- them. The functions below name the caller for every rule that follows.
--------------------------------------------------------------------------------

create table app_private.accounts (
  id uuid primary key default gen_random_uuid(),
  email citext not null unique check (email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'),
  password_hash text not null,
  role text not null check (role in ('customer', 'barista', 'admin')),
  created_at timestamptz not null default now(),
  disabled_at timestamptz
);
comment on column app_private.accounts.disabled_at is 'When the account was disabled: it can no longer sign in, refresh or act.';

create trigger _950_audit_staff_insert after insert on app_private.accounts
  for each row when (new.role in ('barista', 'admin'))
  execute function app_private.tg_audit('id', 'id,email,role,disabled_at');

create trigger _950_audit_staff after update of role, disabled_at, email on app_private.accounts
  for each row when (old.role in ('barista', 'admin') or new.role in ('barista', 'admin'))
  execute function app_private.tg_audit('id', 'email,role,disabled_at');

create trigger _950_audit_staff_delete after delete on app_private.accounts
  for each row when (old.role in ('barista', 'admin'))
  execute function app_private.tg_audit('id', 'id,email,role,disabled_at');

-- A token acts for its account only while that account exists, is enabled
-- and has the token's role: otherwise (a correctly signed token for an
-- account that does not exist, or no longer does) the caller is nobody,
-- 'anonymous'. Asked of the accounts table, which the request roles cannot
-- read, hence SECURITY DEFINER.
create function app_hidden.signed_in_as(p_role text) returns text
language sql stable security definer set search_path = pg_catalog as $$
  select coalesce((
    select p_role from app_private.accounts a
     where a.id = (select case when c ~* '^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$' then c::uuid end
                     from nullif(current_setting('jwt.claims.user_id', true), '') c)
       and a.role = p_role and a.disabled_at is null), 'anonymous');
$$;
comment on function app_hidden.signed_in_as(text) is 'p_role when the signed-in account (jwt.claims.user_id) exists, is enabled and has that role; else anonymous.';
grant execute on function app_hidden.signed_in_as(text) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

-- The acting role, as the transition rules name it. `current_setting('role')`
-- keeps the role PostGraphile set even inside SECURITY DEFINER functions
-- (where current_user is the owner), so rules see the real caller.
create function app_public.current_actor() returns text
language sql stable as $$
  select case current_setting('role', true)
    when 'cafe_anonymous' then 'anonymous'
    when 'cafe_customer' then app_hidden.signed_in_as('customer')
    when 'cafe_barista' then app_hidden.signed_in_as('barista')
    when 'cafe_admin' then app_hidden.signed_in_as('admin')
    when 'cafe_system' then 'system'
    else 'dba'
  end;
$$;
comment on function app_public.current_actor() is E'@behavior -queryField -mutationField -typeField\nThe acting role: anonymous, customer, barista, admin, system (payments and jobs) or dba (a session that set no role).';
grant execute on function app_public.current_actor() to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

create function app_public.current_user_id() returns uuid
language sql stable as $$
  select nullif(current_setting('jwt.claims.user_id', true), '')::uuid;
$$;
comment on function app_public.current_user_id() is E'@behavior -queryField -mutationField -typeField\nThe signed-in user''s id (customer or staff), from the verified JWT.';
grant execute on function app_public.current_user_id() to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

create function app_public.is_staff() returns boolean
language sql stable as $$
  select app_public.current_actor() in ('barista', 'admin');
$$;
comment on function app_public.is_staff() is E'@behavior -queryField -mutationField -typeField';
grant execute on function app_public.is_staff() to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

create function app_public.is_admin() returns boolean
language sql stable as $$
  select app_public.current_actor() = 'admin';
$$;
comment on function app_public.is_admin() is E'@behavior -queryField -mutationField -typeField';
grant execute on function app_public.is_admin() to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

-- Refusals raise a SQLSTATE of the error catalogue (common/errorCatalogue.ts;
-- docs/errors.md lists each with its extensions.code). CT900 (a setting is
-- missing) is a fault, not a refusal: clients get a masked error. CTI01 never
-- leaves app_hidden.idempotency_claim.
create function app_hidden.require_signed_in() returns void
language plpgsql stable as $$
begin
  if app_public.current_actor() = 'anonymous' then
    raise exception 'You must sign in to do this.' using errcode = '28000';
  end if;
end;
$$;
grant execute on function app_hidden.require_signed_in() to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

create function app_hidden.require_staff() returns void
language plpgsql stable as $$
begin
  perform app_hidden.require_signed_in();
  if not app_public.is_staff() and app_public.current_actor() not in ('system', 'dba') then
    raise exception 'Only staff may do this.' using errcode = '42501';
  end if;
end;
$$;
grant execute on function app_hidden.require_staff() to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

create function app_hidden.require_admin() returns void
language plpgsql stable as $$
begin
  perform app_hidden.require_signed_in();
  if app_public.current_actor() not in ('admin', 'dba') then
    raise exception 'Only an admin may do this.' using errcode = '42501';
  end if;
end;
$$;
grant execute on function app_hidden.require_admin() to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

--------------------------------------------------------------------------------
-- 100 setting definitions
--
-- Settings a DBA tunes (app_private.settings, section 110) fail closed. Each
-- key has a definition here (its kind and range); a row that names no defined
-- key, carries no value, the wrong kind of value or a value out of range is
-- refused when written (22023, naming the key and the range), and no row may
-- be deleted. Readers (app_private.setting, text_setting) raise when a
-- setting is missing: a limit is never silently off.
--------------------------------------------------------------------------------

create table app_private.setting_definitions (
  key text primary key,
  kind text not null check (kind in ('integer', 'numeric', 'currency', 'time_zone')),
  min_value numeric,
  max_value numeric,
  check ((kind in ('integer', 'numeric')) = (min_value is not null and max_value is not null)),
  check (min_value <= max_value)
);
comment on table app_private.setting_definitions is 'The kind (integer, numeric, currency, time_zone) and range of each key of app_private.settings, checked whenever a setting is written.';

insert into app_private.setting_definitions (key, kind, min_value, max_value) values
  ('prep_base_seconds', 'integer', 0, 86400),
  ('prep_seconds_per_item', 'integer', 0, 3600),
  ('prep_parallel_baristas', 'integer', 1, 100),
  ('max_quantity_per_line', 'integer', 1, 1000),
  ('max_lines_per_order', 'integer', 1, 100),
  ('points_per_currency_unit', 'numeric', 0, 1000),
  ('login_window_seconds', 'integer', 1, 604800),
  ('refresh_token_days', 'integer', 1, 365),
  ('password_min_length', 'integer', 8, 200),
  ('worker_dead_after_seconds', 'integer', 5, 86400),
  ('login_max_failures_per_account_and_source', 'integer', 1, 1000),
  ('login_max_failures_per_source', 'integer', 1, 1000000),
  ('login_max_successes_per_account', 'integer', 1, 1000000),
  ('login_max_successes_per_source', 'integer', 1, 1000000),
  ('password_hash_cost', 'integer', 4, 14),
  ('registration_max_per_source', 'integer', 1, 1000000),
  ('registration_window_seconds', 'integer', 1, 604800),
  ('sign_in_log_retention_days', 'integer', 1, 3650),
  ('pending_order_expiry_seconds', 'integer', 1, 86400),
  ('max_open_orders_per_customer', 'integer', 1, 1000000),
  ('max_open_cups_per_customer', 'integer', 1, 1000000),
  ('max_stock_share_percent', 'numeric', 1, 100),
  ('stock_share_cooldown_seconds', 'integer', 0, 86400),
  ('failed_delivery_retention_days', 'integer', 1, 3650),
  ('notify_webhook_backoff_base_seconds', 'numeric', 0.1, 3600),
  ('notify_webhook_backoff_max_seconds', 'numeric', 0.1, 86400),
  ('notify_webhook_max_attempts', 'integer', 1, 1000),
  ('currency', 'currency', null, null),
  ('cafe_time_zone', 'time_zone', null, null),
  ('idempotency_key_retention_hours', 'integer', 1, 720),
  ('idempotency_wait_seconds', 'numeric', 0.1, 60);

--------------------------------------------------------------------------------
-- 110 settings
--------------------------------------------------------------------------------

create table app_private.settings (
  key text primary key references app_private.setting_definitions on update restrict on delete restrict,
  value numeric,
  description text not null,
  text_value text,
  constraint settings_one_value check (num_nonnulls(value, text_value) = 1)
);

-- Checks a setting against its definition before it is written; refuses
-- deleting one (its readers would have nothing to read).
create function app_private.tg_settings__check() returns trigger
language plpgsql as $$
declare
  d app_private.setting_definitions;
begin
  if tg_op = 'DELETE' then
    raise exception 'Setting % may not be deleted: set it to another value instead.', old.key using errcode = '22023';
  end if;
  select * into d from app_private.setting_definitions where key = new.key;
  if d.key is null then
    raise exception 'There is no setting %.', new.key using errcode = '22023',
      hint = 'The known settings are the keys of app_private.setting_definitions.';
  end if;
  if d.kind in ('integer', 'numeric') then
    if new.value is null or new.text_value is not null then
      raise exception 'Setting % is a number in value (between % and %), with no text_value.', new.key, d.min_value, d.max_value using errcode = '22023';
    end if;
    if d.kind = 'integer' and new.value <> trunc(new.value) then
      raise exception 'Setting % is a whole number (between % and %); % is not.', new.key, d.min_value, d.max_value, new.value using errcode = '22023';
    end if;
    if new.value < d.min_value or new.value > d.max_value then
      raise exception 'Setting % must be between % and %; % is not.', new.key, d.min_value, d.max_value, new.value using errcode = '22023';
    end if;
  else
    if new.text_value is null or new.value is not null then
      raise exception 'Setting % is text in text_value (%), with no value.', new.key,
        case d.kind when 'time_zone' then 'a time zone name, e.g. Europe/Paris' else 'an ISO 4217 code, e.g. EUR' end using errcode = '22023';
    end if;
    if d.kind = 'time_zone' then
      perform now() at time zone new.text_value; -- raises 22023 for an unknown zone
    elsif d.kind = 'currency' and new.text_value !~ '^[A-Z]{3}$' then
      raise exception 'Setting % is an ISO 4217 code of three capital letters, e.g. EUR; % is not.', new.key, new.text_value using errcode = '22023';
    end if;
  end if;
  return new;
end;
$$;

create trigger _100_check before insert or update or delete on app_private.settings
  for each row execute function app_private.tg_settings__check();

insert into app_private.settings (key, value, text_value, description) values
  ('prep_base_seconds', '120', NULL, 'Fixed time to hand over any order.'),
  ('prep_seconds_per_item', '90', NULL, 'Barista time per cup.'),
  ('prep_parallel_baristas', '2', NULL, 'Cups made at once (baristas on shift).'),
  ('max_quantity_per_line', '20', NULL, 'Largest quantity of one order line.'),
  ('max_lines_per_order', '20', NULL, 'Most lines in one order.'),
  ('points_per_currency_unit', '1', NULL, 'Loyalty points per whole unit of a completed order''s total.'),
  ('login_window_seconds', '900', NULL, 'The window (and the wait) of the login limits.'),
  ('refresh_token_days', '30', NULL, 'How long a refresh token lives.'),
  ('password_min_length', '10', NULL, 'Shortest password accepted at registration and password change.'),
  ('worker_dead_after_seconds', '5', NULL, 'A worker silent this long is dead: its jobs are unlocked for others to run (workers beat every 2 s; a SIGKILLed worker''s jobs run again within about 8 s).'),
  ('login_max_failures_per_account_and_source', '5', NULL, 'Wrong passwords for one account from one source within login_window_seconds (sign-ins and password changes alike) before that source is refused for that account. Other sources are not affected.'),
  ('login_max_successes_per_account', '30', NULL, 'Successful password checks (sign-ins, password changes) of one account within login_window_seconds, from any source, before further ones are refused: each costs a bcrypt hash.'),
  ('login_max_successes_per_source', '300', NULL, 'Successful password checks (sign-ins, registrations, password changes) from one source within login_window_seconds, any accounts, before further ones from it are refused.'),
  ('password_hash_cost', '10', NULL, 'bcrypt cost of stored passwords, and of the dummy hash checked for an unknown e-mail (so both take the same time). Older hashes are upgraded at the next sign-in.'),
  ('registration_max_per_source', '20', NULL, 'Registrations tried from one source within registration_window_seconds before further ones are refused.'),
  ('registration_window_seconds', '3600', NULL, 'The window (and the wait) of the registration limit.'),
  ('login_max_failures_per_source', '30', NULL, 'Wrong passwords from one source (any accounts) within login_window_seconds before every password check from it is refused.'),
  ('sign_in_log_retention_days', '7', NULL, 'Sign-in and registration attempts older than this (and than their limit''s window) are deleted by the worker (hourly), with refresh tokens expired or revoked this long ago.'),
  ('pending_order_expiry_seconds', '600', NULL, 'An unpaid order made after a change expires this long after it was made (its expires_at); the worker then cancels it and its stock is free again.'),
  ('max_open_orders_per_customer', '5', NULL, 'Most unpaid (PENDING) orders a customer may hold that they made themselves; orders staff make at the till do not count.'),
  ('max_open_cups_per_customer', '40', NULL, 'Most cups in a customer''s own unpaid orders, the new one included.'),
  ('max_stock_share_percent', '25', NULL, 'Most of an ingredient''s stock on the shelf (percent) that one customer''s own orders may hold: open orders not yet taken from stock, and unpaid orders cancelled within stock_share_cooldown_seconds. An order always may hold what one cup of each of its coffees needs. Till orders do not count.'),
  ('stock_share_cooldown_seconds', '600', NULL, 'How long a customer''s cancelled (or expired) unpaid order still counts toward max_stock_share_percent: cancelling and ordering again frees nothing at once.'),
  ('failed_delivery_retention_days', '30', NULL, 'Refused payment deliveries (outcome rejected) older than this are deleted by the worker (hourly).'),
  ('notify_webhook_backoff_base_seconds', '2', NULL, 'Wait before the first retry of a customer notification''s outgoing webhook (NOTIFY_WEBHOOK_URL); it doubles with each failed attempt.'),
  ('notify_webhook_backoff_max_seconds', '3600', NULL, 'Longest wait between two attempts of an outgoing notification webhook.'),
  ('notify_webhook_max_attempts', '25', NULL, 'Attempts of an outgoing notification webhook before the worker gives up on it (with the defaults: about 15 hours).'),
  ('currency', NULL, 'EUR', 'The café''s currency (ISO 4217): a payment callback that names another is refused (422 CURRENCY_MISMATCH).'),
  ('cafe_time_zone', NULL, 'UTC', 'The café''s time zone (an IANA name in text_value): sales report buckets follow it.'),
  ('idempotency_key_retention_hours', '24', NULL, 'How long a mutation''s Idempotency-Key and its answer are kept: a retry within this window gets the first answer. The worker purges older keys (hourly).'),
  ('idempotency_wait_seconds', '10', NULL, 'How long a request waits for a concurrent request with the same Idempotency-Key to finish before it is answered IDEMPOTENCY_KEY_IN_PROGRESS.');

create trigger _950_audit after insert or update or delete on app_private.settings
  for each row execute function app_private.tg_audit('key', 'key,value,text_value');

-- A numeric setting; raises when it is missing (a limit is never off).
create function app_private.setting(k text) returns numeric
language plpgsql stable set search_path = pg_catalog as $$
declare
  v numeric;
begin
  select s.value into v from app_private.settings s where s.key = k;
  if v is null then
    raise exception 'Setting % is missing from app_private.settings (or is not a number).', k using errcode = 'CT900';
  end if;
  return v;
end;
$$;

-- A text setting; raises when it is missing.
create function app_private.text_setting(k text) returns text
language plpgsql stable set search_path = pg_catalog as $$
declare
  v text;
begin
  select s.text_value into v from app_private.settings s where s.key = k;
  if v is null then
    raise exception 'Setting % is missing from app_private.settings (or is not text).', k using errcode = 'CT900';
  end if;
  return v;
end;
$$;
grant execute on function app_private.text_setting(text) to cafe_system;

--------------------------------------------------------------------------------
-- 120 role limits
--------------------------------------------------------------------------------

-- Time limits of the request roles, owned by the DBA. PostGraphile and the
-- system paths enter a role with SET LOCAL ROLE inside a transaction, where
-- ALTER ROLE ... SET does not apply: the API reads this table (at start and
-- on every change, announced on 'role_limits_changed') and sets both limits
-- with set_config(..., true) at the start of each request's transaction;
-- the payment route and the worker call app_private.apply_role_limits()
-- after SET LOCAL ROLE cafe_system. A statement that runs out answers
-- QUERY_TIMEOUT (57014; a lock wait, 55P03, answers the same code).
create table app_private.role_limits (
  role name primary key
    constraint role_limits_request_role check (role in ('cafe_anonymous', 'cafe_customer', 'cafe_barista', 'cafe_admin', 'cafe_system')),
  statement_timeout interval not null
    constraint role_limits_statement_timeout check (statement_timeout >= interval '10 milliseconds' and statement_timeout <= interval '10 minutes'),
  lock_timeout interval not null
    constraint role_limits_lock_timeout check (lock_timeout >= interval '10 milliseconds' and lock_timeout <= interval '10 minutes'),
  description text not null
);
comment on table app_private.role_limits is 'statement_timeout and lock_timeout of each request role (one row per role; change, do not delete).';

insert into app_private.role_limits (role, statement_timeout, lock_timeout, description) values
  ('cafe_anonymous', '3 seconds', '2 seconds', 'Kiosks and strangers: menu reads.'),
  ('cafe_customer', '5 seconds', '3 seconds', 'Signed-in customers: their orders and profile (orders for the same stock wait for each other: a burst must not time out).'),
  ('cafe_barista', '10 seconds', '3 seconds', 'Staff at the bar and the till.'),
  ('cafe_admin', '10 seconds', '3 seconds', 'Admins: reports and the menu.'),
  ('cafe_system', '30 seconds', '10 seconds', 'The payment route, the worker''s jobs, metrics.');
grant select on app_private.role_limits to cafe_system;

create function app_private.tg_role_limits__keep() returns trigger
language plpgsql as $$
begin
  -- Fail closed: a role without limits would run without any.
  raise exception 'Role limits are changed, not deleted (role %).', old.role using errcode = '22023';
end;
$$;

create trigger _100_keep before delete on app_private.role_limits
  for each row execute function app_private.tg_role_limits__keep();

create function app_private.tg_role_limits__announce() returns trigger
language plpgsql as $$
begin
  perform pg_notify('role_limits_changed', '');
  return null;
end;
$$;

create trigger _900_announce after insert or update on app_private.role_limits
  for each statement execute function app_private.tg_role_limits__announce();

create trigger _950_audit after insert or update or delete on app_private.role_limits
  for each row execute function app_private.tg_audit('role', 'role,statement_timeout,lock_timeout');

-- A role's limits as set_config values (milliseconds, as text).
create function app_private.role_limit_settings() returns table (role name, statement_timeout text, lock_timeout text)
language sql stable as $$
  select l.role,
    ceil(extract(epoch from l.statement_timeout) * 1000)::bigint::text,
    ceil(extract(epoch from l.lock_timeout) * 1000)::bigint::text
  from app_private.role_limits l;
$$;
grant execute on function app_private.role_limit_settings() to cafe_system;

-- Applies the current role's limits to this transaction (after SET LOCAL ROLE).
create function app_private.apply_role_limits() returns void
language sql volatile as $$
  select set_config('statement_timeout', s.statement_timeout, true), set_config('lock_timeout', s.lock_timeout, true)
  from app_private.role_limit_settings() s where s.role = current_user;
$$;
grant execute on function app_private.apply_role_limits() to cafe_system;

--------------------------------------------------------------------------------
-- 200 customers
--------------------------------------------------------------------------------

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

-- Staff (and the system) read every customer; a customer reads their own row.
alter table app_public.customers enable row level security;
create policy select_staff on app_public.customers for select to cafe_barista, cafe_admin, cafe_system using ((select app_public.current_actor()) in ('barista', 'admin', 'system'));
create policy select_own on app_public.customers for select to cafe_customer using (id = app_public.current_user_id());
grant select on app_public.customers to cafe_customer, cafe_barista, cafe_admin, cafe_system, cafe_anonymous;

create function app_public.current_customer() returns app_public.customers
language sql stable as $$
  select c.* from app_public.customers c
  where c.id = app_public.current_user_id() and app_public.current_actor() = 'customer';
$$;
comment on function app_public.current_customer() is E'@fieldName customer\nThe signed-in customer; null when the request carries no customer.';
grant execute on function app_public.current_customer() to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

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
grant execute on function app_public.user_by_id(uuid) to cafe_barista, cafe_admin;

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

create function app_public.customer_by_email(email text) returns app_public.customers
language plpgsql stable strict security definer set search_path = pg_catalog as $$
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
grant execute on function app_public.customer_by_email(text) to cafe_barista, cafe_admin;

create function app_public.search_customers(query text) returns setof app_public.customers
language plpgsql stable strict security definer set search_path = pg_catalog as $$
declare
  term text := lower(btrim(query));
begin
  perform app_hidden.require_staff();
  if length(term) < 2 then
    raise exception 'Search with at least 2 characters.' using errcode = '22023';
  end if;
  return query
    select c.* from app_public.customers c
    left join app_private.accounts a on a.id = c.id
    left join app_public.profiles p on p.customer_id = c.id
    where not c.is_walk_in and (
      strpos(lower(a.email::text), term) > 0
      or strpos(lower(p.username::text), term) > 0
      or strpos(lower(c.name), term) > 0)
    order by c.name, c.id
    limit 20;
end;
$$;
comment on function app_public.search_customers(text) is E'@behavior -connection +list\n@notNull\nStaff only: customers whose e-mail, username or name contains the text (20 at most).';
grant execute on function app_public.search_customers(text) to cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 210 profiles
--------------------------------------------------------------------------------

create table app_public.profiles (
  customer_id uuid primary key references app_public.customers on delete cascade,
  username citext unique check (username ~ '^[A-Za-z0-9_.]{3,30}$'),
  avatar text check (avatar ~ '^https?://[^\s]+$' and length(avatar) <= 500)
);
comment on table app_public.profiles is 'What a customer shows of themselves.';
comment on constraint profiles_customer_id_fkey on app_public.profiles is E'@fieldName customer\n@foreignFieldName profile';
alter table app_public.profiles enable row level security;
create policy select_staff on app_public.profiles for select to cafe_barista, cafe_admin using ((select app_public.is_staff()));
create policy select_own on app_public.profiles for select to cafe_customer using (customer_id = app_public.current_user_id());
grant select on app_public.profiles to cafe_customer, cafe_barista, cafe_admin, cafe_anonymous;

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
grant execute on function app_public.update_customer_profile(jsonb) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 220 sign-in limits
--------------------------------------------------------------------------------

-- What the limits count per: the client's address, but an IPv6 client's
-- whole /64 (one subscriber's network: rotating addresses inside it must not
-- reset the count); an IPv4-mapped IPv6 address is its IPv4 address.
create function app_private.source_key(p_source text) returns text
language plpgsql immutable set search_path = pg_catalog as $$
declare
  a inet;
begin
  begin
    a := p_source::inet;
  exception when others then
    return coalesce(p_source, 'unknown');
  end;
  if family(a) = 6 then
    if host(a) ~ '^::ffff:[0-9.]+$' then
      return substr(host(a), 8);
    end if;
    return network(set_masklen(a, 64))::text;
  end if;
  return host(a);
end;
$$;

-- How many times its per-source limits a request's source gets: the API
-- passes TRUSTED_NETWORK_FACTOR in the `cafe.source_limit_factor` setting
-- for a source inside TRUSTED_NETWORKS (a café's Wi-Fi, tills and kiosks:
-- many people behind one address); otherwise 1. Every per-source threshold
-- (never a per-account one) is multiplied by it. Clients cannot set it: they
-- send GraphQL, not SQL.
create function app_private.source_limit_factor() returns integer
language sql stable set search_path = pg_catalog as $$
  select case when current_setting('cafe.source_limit_factor', true) ~ '^[0-9]{1,4}$'
              then least(greatest(current_setting('cafe.source_limit_factor', true)::integer, 1), 1000)
              else 1 end;
$$;

-- Every password check: sign-ins, password changes, and the hashing of
-- registrations and new staff accounts (kind). Wrong passwords and right
-- ones both count: each costs a bcrypt hash.
create table app_private.login_attempts (
  id bigint generated always as identity primary key,
  email text not null,
  source text not null,
  succeeded boolean not null,
  kind text not null default 'login' check (kind in ('login', 'change_password', 'register', 'add_staff_account')),
  attempted_at timestamptz not null default now()
);
create index login_attempts_email_idx on app_private.login_attempts (lower(email), attempted_at);
create index login_attempts_source_idx on app_private.login_attempts (source, attempted_at);
create index login_attempts_email_source_idx on app_private.login_attempts (lower(email), source, attempted_at);

-- Raises 'CT004' (RATE_LIMITED) when one more password check of p_email
-- from p_source would pass a limit within login_window_seconds: wrong
-- passwords for this account from this source, or from this source for
-- any; right ones for this account (from anywhere), or from this source.
-- Wrong passwords from other sources never count: a stranger guessing the
-- admin's password locks out only themselves. Called before the hash (a
-- refused source costs no bcrypt) and again, under the locks, by
-- note_password_check (concurrent checks cannot all slip under a limit).
create function app_private.assert_login_allowed(p_email text, p_source text) returns void
language plpgsql stable security definer set search_path = pg_catalog as $$
declare
  window_start timestamptz := now() - make_interval(secs => app_private.setting('login_window_seconds'));
  minutes numeric := ceil(app_private.setting('login_window_seconds') / 60);
begin
  if (select count(*) from app_private.login_attempts
       where lower(email) = lower(p_email) and source = p_source and not succeeded and attempted_at > window_start)
     >= app_private.setting('login_max_failures_per_account_and_source')
  or (select count(*) from app_private.login_attempts
       where source = p_source and not succeeded and attempted_at > window_start)
     >= app_private.setting('login_max_failures_per_source') * app_private.source_limit_factor() then
    raise exception 'Too many failed sign-ins; try again in % minutes.', minutes
      using errcode = 'CT004', detail = json_build_object('retry_after_seconds', app_private.setting('login_window_seconds'))::text;
  end if;
  if (select count(*) from app_private.login_attempts
       where lower(email) = lower(p_email) and succeeded and attempted_at > window_start)
     >= app_private.setting('login_max_successes_per_account') then
    raise exception 'Too many sign-ins to this account; try again in % minutes.', minutes
      using errcode = 'CT004', detail = json_build_object('retry_after_seconds', app_private.setting('login_window_seconds'))::text;
  end if;
  if (select count(*) from app_private.login_attempts
       where source = p_source and succeeded and attempted_at > window_start)
     >= app_private.setting('login_max_successes_per_source') * app_private.source_limit_factor() then
    raise exception 'Too many sign-ins from your address; try again in % minutes.', minutes
      using errcode = 'CT004', detail = json_build_object('retry_after_seconds', app_private.setting('login_window_seconds'))::text;
  end if;
end;
$$;

-- Records one password check (p_source already a source_key) after its
-- hash: checks the limits again and writes the attempt while holding the
-- account's, then the source's, lock (always in that order), kept until
-- the transaction ends. So concurrent checks are counted one after the
-- other and none passes a limit; only this short step is serial, not the
-- hashing. Raises 'CT004' past a limit (whatever the password was).
create function app_private.note_password_check(p_email text, p_source text, p_ok boolean, p_kind text) returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  perform pg_advisory_xact_lock(hashtextextended('password-check account:' || lower(coalesce(p_email, '')), 0));
  perform pg_advisory_xact_lock(hashtextextended('password-check source:' || p_source, 0));
  perform app_private.assert_login_allowed(coalesce(p_email, ''), p_source);
  insert into app_private.login_attempts (email, source, succeeded, kind)
  values (left(coalesce(p_email, ''), 254), p_source, p_ok, p_kind);
end;
$$;

--------------------------------------------------------------------------------
-- 230 refresh tokens and sign-outs
--------------------------------------------------------------------------------

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

create type app_hidden.session as (
  user_id uuid,
  role text,
  refresh_token text,
  sign_in_id uuid
);

create function app_private.issue_refresh_token(p_account_id uuid, p_family_id uuid) returns text
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

create function app_hidden.refresh_session(p_token text) returns app_hidden.session
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
    -- A spent token presented again: stolen, or a confused client. The sign-in ends.
    perform app_private.revoke_sign_ins(t.account_id, t.family_id, 'refresh token reused');
    return null;
  end if;
  select * into account from app_private.accounts where id = t.account_id for share;
  if account.disabled_at is not null then
    return null;
  end if;
  update app_private.refresh_tokens set used_at = now() where id = t.id;
  return row(account.id, account.role, app_private.issue_refresh_token(account.id, t.family_id), t.family_id)::app_hidden.session;
end;
$$;
grant execute on function app_hidden.refresh_session(text) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

create function app_hidden.logout(p_token text) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  t app_private.refresh_tokens;
begin
  select * into t from app_private.refresh_tokens
   where token_sha256 = encode(sha256(convert_to(coalesce(p_token, ''), 'UTF8')), 'hex');
  if t.id is null then
    return false;
  end if;
  perform app_private.revoke_sign_ins(t.account_id, t.family_id, 'logout');
  return true;
end;
$$;
grant execute on function app_hidden.logout(text) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 240 passwords
--------------------------------------------------------------------------------

create function app_private.check_password_strength(p_password text, p_email text) returns void
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

-- A new account's e-mail, name and password (register, add_staff_account).
create function app_private.check_new_account(p_email text, p_name text, p_password text) returns void
language plpgsql stable security definer set search_path = pg_catalog as $$
begin
  if p_email is null or p_email !~ '^[^@\s]+@[^@\s]+\.[^@\s]+$' or length(p_email) > 254 then
    raise exception 'That is not an e-mail address.' using errcode = '22023';
  end if;
  if p_name is null or btrim(p_name) = '' or length(btrim(p_name)) > 100 then
    raise exception 'A name has 1 to 100 characters.' using errcode = '22023';
  end if;
  perform app_private.check_password_strength(p_password, p_email);
end;
$$;

create function app_private.hash_password(p_password text) returns text
language sql volatile security definer set search_path = pg_catalog as $$
  select public.crypt(p_password, public.gen_salt('bf', app_private.setting('password_hash_cost')::integer));
$$;

-- Checks a password; the server signs the access token. An unknown e-mail,
-- a disabled account and a wrong password take the same path and the same
-- time: one bcrypt at password_hash_cost (a fresh dummy hash for an unknown
-- e-mail), the limits checked before and after it, one attempt recorded.
-- A right password counts too (login_max_successes_*).
create function app_hidden.authenticate(p_email text, p_password text, p_source text default 'unknown') returns app_hidden.session
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  account app_private.accounts;
  cost integer := app_private.setting('password_hash_cost')::integer;
  ok boolean;
  v_sign_in uuid;
begin
  p_source := app_private.source_key(p_source);
  perform app_private.assert_login_allowed(p_email, p_source);
  -- FOR SHARE: a concurrent role change or disable waits for this sign-in,
  -- then revokes it too.
  select a.* into account from app_private.accounts a where a.email operator(public.=) p_email::public.citext for share;
  ok := coalesce(account.password_hash, '') = public.crypt(coalesce(p_password, ''), coalesce(account.password_hash, public.gen_salt('bf', cost)))
        and account.disabled_at is null;
  perform app_private.note_password_check(p_email, p_source, ok, 'login');
  if not ok then
    return null;
  end if;
  -- A hash of another cost is redone, unless a concurrent sign-in of the
  -- account holds its row too (waiting for it could deadlock): next time.
  if substr(account.password_hash, 5, 2) <> lpad(cost::text, 2, '0') then
    update app_private.accounts set password_hash = app_private.hash_password(p_password)
     where id = (select id from app_private.accounts where id = account.id for update skip locked);
  end if;
  v_sign_in := gen_random_uuid();
  return row(account.id, account.role, app_private.issue_refresh_token(account.id, v_sign_in), v_sign_in)::app_hidden.session;
end;
$$;
grant execute on function app_hidden.authenticate(text,text,text) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

-- Null (not an error, so the failure is recorded) when the current
-- password is wrong. The check counts like a sign-in's (lock-out per
-- account and source, per source; successes per account and source): a
-- stolen access token does not give unlimited guesses. The new password is
-- checked first, with no hash.
create function app_hidden.change_password(p_old text, p_new text, p_source text default 'unknown') returns boolean
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  account app_private.accounts;
  ok boolean;
begin
  perform app_hidden.require_signed_in();
  select * into account from app_private.accounts where id = app_public.current_user_id() for update;
  if account.id is null then
    raise exception 'The current password is wrong.' using errcode = '28000';
  end if;
  perform app_private.check_password_strength(p_new, account.email::text);
  p_source := app_private.source_key(p_source);
  perform app_private.assert_login_allowed(account.email::text, p_source);
  ok := account.password_hash = public.crypt(coalesce(p_old, ''), account.password_hash);
  perform app_private.note_password_check(account.email::text, p_source, ok, 'change_password');
  if not ok then
    return null;
  end if;
  update app_private.accounts set password_hash = app_private.hash_password(p_new) where id = account.id;
  -- Every other sign-in ends, access tokens included; this one goes on.
  perform app_private.revoke_sign_ins(account.id, null, 'password changed',
    nullif(current_setting('jwt.claims.sid', true), '')::uuid);
  return true;
end;
$$;
grant execute on function app_hidden.change_password(text,text,text) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 250 revoked sign-ins
--------------------------------------------------------------------------------

-- A sign-in is a refresh-token family; its access tokens carry its id (the
-- `sid` claim). Each revoked sign-in is a row here, announced on the
-- `sign_in_revoked` channel; every API process keeps the recent ones in
-- memory and refuses their access tokens.
create table app_private.revoked_sign_ins (
  sign_in_id uuid primary key,
  account_id uuid not null,
  reason text not null check (reason in ('logout', 'refresh token reused', 'password changed', 'account disabled', 'account deleted', 'role changed')),
  revoked_at timestamptz not null default now()
);
create index revoked_sign_ins_revoked_at_idx on app_private.revoked_sign_ins (revoked_at);

create function app_private.announce_revoked_sign_in() returns trigger
language plpgsql as $$
begin
  perform pg_notify('sign_in_revoked', json_build_object(
    'sid', new.sign_in_id,
    'at', floor(extract(epoch from new.revoked_at) * 1000)
  )::text);
  return null;
end;
$$;

create trigger _900_notify after insert on app_private.revoked_sign_ins
  for each row execute function app_private.announce_revoked_sign_in();

-- Revokes one sign-in (p_sign_in) or every sign-in of an account (but
-- p_keep): its refresh tokens, and, through revoked_sign_ins, its access
-- tokens. Sign-ins whose last token is older than a day (the longest
-- JWT_EXPIRES_IN_SECONDS) have no live access token and are not listed.
create function app_private.revoke_sign_ins(p_account uuid, p_sign_in uuid, p_reason text, p_keep uuid default null) returns integer
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  n integer;
begin
  update app_private.refresh_tokens set revoked_at = now()
   where (family_id = p_sign_in or (p_sign_in is null and account_id = p_account))
     and family_id is distinct from p_keep and revoked_at is null;
  insert into app_private.revoked_sign_ins (sign_in_id, account_id, reason)
  select family_id, account_id, p_reason from app_private.refresh_tokens
   where (family_id = p_sign_in or (p_sign_in is null and account_id = p_account))
     and family_id is distinct from p_keep
   group by family_id, account_id
  having max(created_at) > now() - interval '1 day'
  on conflict (sign_in_id) do nothing;
  get diagnostics n = row_count;
  delete from app_private.revoked_sign_ins where revoked_at < now() - interval '2 days';
  return n;
end;
$$;

-- An account disabled, deleted or given another role: its sign-ins end
-- (a demoted admin's tokens still say admin).
create function app_private.revoke_changed_account() returns trigger
language plpgsql security definer set search_path = pg_catalog as $$
begin
  if tg_op = 'DELETE' then
    perform app_private.revoke_sign_ins(old.id, null, 'account deleted');
    return old;
  end if;
  if new.disabled_at is not null and old.disabled_at is null then
    perform app_private.revoke_sign_ins(new.id, null, 'account disabled');
  elsif new.role is distinct from old.role then
    perform app_private.revoke_sign_ins(new.id, null, 'role changed');
  end if;
  return new;
end;
$$;

create trigger _800_revoke_sign_ins after update of role, disabled_at on app_private.accounts
  for each row execute function app_private.revoke_changed_account();

create trigger _800_revoke_sign_ins_deleted before delete on app_private.accounts
  for each row execute function app_private.revoke_changed_account();

-- What an API process loads at start-up (and after its LISTEN connection
-- comes back): the sign-ins revoked within the last p_seconds.
create function app_hidden.recent_revoked_sign_ins(p_seconds integer)
returns table (sign_in_id uuid, revoked_at_ms bigint)
language sql stable security definer set search_path = pg_catalog as $$
  select r.sign_in_id, floor(extract(epoch from r.revoked_at) * 1000)::bigint
    from app_private.revoked_sign_ins r
   where r.revoked_at > now() - make_interval(secs => p_seconds);
$$;
grant execute on function app_hidden.recent_revoked_sign_ins(integer) to cafe_system;

--------------------------------------------------------------------------------
-- 260 registration
--------------------------------------------------------------------------------

create table app_private.registration_attempts (
  id bigint generated always as identity primary key,
  source text not null,
  attempted_at timestamptz not null default now()
);
create index registration_attempts_source_idx on app_private.registration_attempts (source, attempted_at);

-- Called (and committed) before each registration, whatever its outcome: a
-- CONFLICT tells whether an e-mail is registered, so tries count, not
-- successes. Raises 'CT004' (RATE_LIMITED) past the limit.
create function app_hidden.note_registration_attempt(p_source text) returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  p_source := app_private.source_key(p_source);
  -- One registration of a source at a time (until its transaction ends):
  -- concurrent tries are counted one after the other.
  perform pg_advisory_xact_lock(hashtextextended('registration source:' || p_source, 0));
  if (select count(*) from app_private.registration_attempts
       where source = p_source and attempted_at > now() - make_interval(secs => app_private.setting('registration_window_seconds')))
     >= app_private.setting('registration_max_per_source') * app_private.source_limit_factor() then
    raise exception 'Too many registrations from your address; try again later.' using errcode = 'CT004';
  end if;
  insert into app_private.registration_attempts (source) values (p_source);
end;
$$;
grant execute on function app_hidden.note_registration_attempt(text) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

create function app_hidden.register(p_email text, p_password text, p_name text, p_source text default 'unknown') returns app_hidden.session
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_id uuid;
  v_sign_in uuid := gen_random_uuid();
begin
  perform app_private.check_new_account(p_email, p_name, p_password);
  p_source := app_private.source_key(p_source);
  -- The hash counts as a sign-in from this source (registrations have their
  -- own limit too: note_registration_attempt).
  perform app_private.assert_login_allowed(p_email, p_source);
  begin
    insert into app_private.accounts (email, password_hash, role)
    values (lower(p_email), app_private.hash_password(p_password), 'customer')
    returning id into v_id;
  exception when unique_violation then
    raise exception 'That e-mail address is already registered.' using errcode = '23505';
  end;
  perform app_private.note_password_check(p_email, p_source, true, 'register');
  insert into app_public.customers (id, name) values (v_id, btrim(p_name));
  insert into app_public.profiles (customer_id) values (v_id);
  return row(v_id, 'customer', app_private.issue_refresh_token(v_id, v_sign_in), v_sign_in)::app_hidden.session;
end;
$$;
grant execute on function app_hidden.register(text,text,text,text) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 270 staff
--------------------------------------------------------------------------------

create table app_public.baristas (
  id uuid primary key default gen_random_uuid(),
  name text not null check (btrim(name) <> ''),
  is_admin boolean not null default false,
  created_at timestamptz not null default now()
);
comment on table app_public.baristas is 'Staff: baristas and admins. Staff ids are their account ids.';

-- Staff read each other; a customer reads the baristas of their orders
-- (policy select_own_orders, in section 410: it reads orders).
alter table app_public.baristas enable row level security;
create policy select_staff on app_public.baristas for select to cafe_barista, cafe_admin, cafe_system using ((select app_public.current_actor()) in ('barista', 'admin', 'system'));
grant select on app_public.baristas to cafe_customer, cafe_barista, cafe_admin, cafe_system, cafe_anonymous;

create function app_hidden.add_staff_account(p_email text, p_name text, p_role text, p_password text, p_source text default 'unknown') returns uuid
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_id uuid;
  v_admin text := (select email::text from app_private.accounts where id = app_public.current_user_id());
begin
  perform app_hidden.require_admin();
  if p_role is null or p_role not in ('barista', 'admin') then
    raise exception 'A staff role is barista or admin.' using errcode = '22023';
  end if;
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
  insert into app_public.baristas (id, name, is_admin) values (v_id, btrim(p_name), p_role = 'admin');
  return v_id;
end;
$$;
grant execute on function app_hidden.add_staff_account(text,text,text,text,text) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

-- True when this call disabled the account, false when it already was.
create function app_hidden.disable_account(p_email text) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  account app_private.accounts;
begin
  perform app_hidden.require_admin();
  select * into account from app_private.accounts where email operator(public.=) p_email::public.citext for update;
  if account.id is null then
    raise exception 'No account has that e-mail address.' using errcode = 'P0002';
  end if;
  if account.id = app_public.current_user_id() then
    raise exception 'You cannot disable your own account.' using errcode = '22023';
  end if;
  if account.disabled_at is not null then
    return false;
  end if;
  update app_private.accounts set disabled_at = now() where id = account.id;
  return true;
end;
$$;
grant execute on function app_hidden.disable_account(text) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

create function app_hidden.list_staff()
returns table (email text, name text, role text, disabled_at timestamptz)
language plpgsql stable security definer set search_path = pg_catalog as $$
begin
  perform app_hidden.require_admin();
  return query
    select a.email::text, b.name, a.role, a.disabled_at
      from app_private.accounts a left join app_public.baristas b on b.id = a.id
     where a.role in ('barista', 'admin')
     order by a.role, a.email;
end;
$$;

--------------------------------------------------------------------------------
-- 300 roasters
--------------------------------------------------------------------------------

create table app_public.roasters (
  id uuid primary key default gen_random_uuid(),
  name text not null unique check (name <> ''),
  location text,
  sustainability_rating numeric(3,1) check (sustainability_rating between 0 and 10),
  created_at timestamptz not null default now()
);
comment on table app_public.roasters is 'Who roasts the beans.';
comment on column app_public.roasters.sustainability_rating is 'From 0 to 10.';
alter table app_public.roasters enable row level security;
create policy select_all on app_public.roasters for select using (true);
grant select on app_public.roasters to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

--------------------------------------------------------------------------------
-- 310 ingredients
--------------------------------------------------------------------------------

-- A domain that is NOT NULL makes array items non-null in GraphQL: [String!]!.
create domain app_public.allergen as text not null check (value <> '');

create table app_public.ingredients (
  id uuid primary key default gen_random_uuid(),
  name text not null unique check (name <> ''),
  organic boolean not null default false,
  allergens app_public.allergen[] not null default '{}',
  created_at timestamptz not null default now()
);
comment on table app_public.ingredients is 'What drinks are made of.';
alter table app_public.ingredients enable row level security;
create policy select_all on app_public.ingredients for select using (true);
grant select on app_public.ingredients to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

--------------------------------------------------------------------------------
-- 320 coffees
--------------------------------------------------------------------------------

create type app_public.roast_level as enum ('LIGHT', 'MEDIUM', 'MEDIUM_DARK', 'DARK');

create type app_public.coffee_category as enum ('FEATURED', 'ESPRESSO', 'MILK_BASED', 'FILTER', 'COLD', 'SEASONAL');

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
alter table app_public.coffees enable row level security;
create policy select_all on app_public.coffees for select using (true);
grant select on app_public.coffees to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

create function app_private.tg_coffees__notify_new() returns trigger
language plpgsql as $$
begin
  perform pg_notify('coffee:new', json_build_object('id', new.id)::text);
  return null;
end;
$$;

create trigger _900_notify_new after insert on app_public.coffees
  for each row execute function app_private.tg_coffees__notify_new();

create trigger _950_audit after insert or delete on app_public.coffees
  for each row execute function app_private.tg_audit('id', 'id,name,price,available');

create trigger _950_audit_update after update of price, available on app_public.coffees
  for each row execute function app_private.tg_audit('id', 'price,available');

--------------------------------------------------------------------------------
-- 330 suppliers and coffee costs
--------------------------------------------------------------------------------

create table app_public.suppliers (
  id uuid primary key default gen_random_uuid(),
  name text not null unique check (name <> ''),
  contact text,
  created_at timestamptz not null default now()
);
comment on table app_public.suppliers is 'Where the café buys a coffee''s beans. Admins only.';

-- Admins only.
alter table app_public.suppliers enable row level security;
create policy select_admin on app_public.suppliers for select to cafe_admin using ((select app_public.is_admin()));
grant select on app_public.suppliers to cafe_admin, cafe_anonymous, cafe_customer, cafe_barista;

-- Admin-only facts about a coffee live apart, so no role can select them by
-- accident; the computed fields `cost`, `margin` and `supplier` read them.
create table app_private.coffee_costs (
  coffee_id uuid primary key references app_public.coffees on delete cascade,
  cost numeric(10,2) check (cost >= 0),
  supplier_id uuid references app_public.suppliers on delete set null
);

create function app_public.coffees_cost(c app_public.coffees) returns numeric
language sql stable security definer set search_path = pg_catalog as $$
  select cc.cost from app_private.coffee_costs cc
  where cc.coffee_id = c.id and app_public.is_admin();
$$;
comment on function app_public.coffees_cost(app_public.coffees) is 'What a cup costs the café. Admins only: null for everyone else.';
grant execute on function app_public.coffees_cost(app_public.coffees) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

create function app_public.coffees_margin(c app_public.coffees) returns numeric
language sql stable security definer set search_path = pg_catalog as $$
  select round((c.price - cc.cost) / c.price, 4) from app_private.coffee_costs cc
  where cc.coffee_id = c.id and cc.cost is not null and app_public.is_admin();
$$;
comment on function app_public.coffees_margin(app_public.coffees) is '(price - cost) / price, as a fraction: 0.7 is 70%. Admins only: null for everyone else.';
grant execute on function app_public.coffees_margin(app_public.coffees) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

create function app_public.coffees_supplier(c app_public.coffees) returns app_public.suppliers
language sql stable security definer set search_path = pg_catalog as $$
  select s.* from app_private.coffee_costs cc
  join app_public.suppliers s on s.id = cc.supplier_id
  where cc.coffee_id = c.id and app_public.is_admin();
$$;
comment on function app_public.coffees_supplier(app_public.coffees) is 'Where the beans come from. Admins only: null for everyone else.';
grant execute on function app_public.coffees_supplier(app_public.coffees) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 340 recipe lines
--------------------------------------------------------------------------------

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
alter table app_public.recipe_lines enable row level security;
create policy select_all on app_public.recipe_lines for select using (true);
grant select on app_public.recipe_lines to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

create function app_public.coffees_ingredients(c app_public.coffees) returns setof app_public.ingredients
language sql stable as $$
  select i.* from app_public.recipe_lines rl
  join app_public.ingredients i on i.id = rl.ingredient_id
  where rl.coffee_id = c.id
  order by i.name;
$$;
comment on function app_public.coffees_ingredients(app_public.coffees) is E'@behavior -connection +list\n@notNull\nWhat the coffee is made of.';
grant execute on function app_public.coffees_ingredients(app_public.coffees) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

create function app_public.coffees_seasonal_ingredients(c app_public.coffees) returns setof app_public.ingredients
language sql stable as $$
  select i.* from app_public.recipe_lines rl
  join app_public.ingredients i on i.id = rl.ingredient_id
  where rl.coffee_id = c.id and rl.seasonal
  order by i.name;
$$;
comment on function app_public.coffees_seasonal_ingredients(app_public.coffees) is E'@behavior -connection +list\n@notNull\nThe seasonal part of the recipe.';
grant execute on function app_public.coffees_seasonal_ingredients(app_public.coffees) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 350 reviews
--------------------------------------------------------------------------------

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
alter table app_public.reviews enable row level security;
create policy select_all on app_public.reviews for select using (true);
grant select on app_public.reviews to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system;

create function app_public.coffees_reviews(c app_public.coffees, "limit" integer default null) returns setof app_public.reviews
language sql stable as $$
  select r.* from app_public.reviews r
  where r.coffee_id = c.id
  order by r.created_at desc, r.id
  limit least(greatest(coalesce("limit", 20), 0), 100);
$$;
comment on function app_public.coffees_reviews(app_public.coffees, integer) is E'@behavior -connection +list\n@notNull\n@pageSize 20 100\nNewest first; `limit` defaults to 20 and is capped at 100.';
grant execute on function app_public.coffees_reviews(app_public.coffees,integer) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 360 menu reads
--------------------------------------------------------------------------------

create function app_public.coffee_list(category app_public.coffee_category default null) returns setof app_public.coffees
language sql stable as $$
  select c.* from app_public.coffees c
  where coffee_list.category is null or c.category = coffee_list.category
  order by c.name;
$$;

-- Performance note 2: page sizes (plugins/PageSizePlugin.ts). Lists without `first`
-- return at most DEFAULT_LIST_SIZE rows (MAX_LIST_SIZE with `first`), except
-- where a smart comment says `@pageSize <default> [<max>]`: the menus show
-- every coffee (up to 50), and the functions with a `limit` keep their own
-- default and cap.
comment on function app_public.coffee_list(app_public.coffee_category) is E'@fieldName coffees\n@complexity 10\n@behavior -connection +list\n@notNull\n@pageSize 50\nEvery coffee (on sale or not), by name; `category` narrows it.';
grant execute on function app_public.coffee_list(app_public.coffee_category) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

create function app_public.coffee_by_id(id uuid) returns app_public.coffees
language sql stable strict as $$
  select c.* from app_public.coffees c where c.id = coffee_by_id.id;
$$;
comment on function app_public.coffee_by_id(uuid) is E'@fieldName coffee\nOne coffee by id; null when there is none.';
grant execute on function app_public.coffee_by_id(uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

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
      and (strpos(lower(c.name), term) > 0
           or similarity(lower(c.name), term) > 0.3
           or strpos(lower(coalesce(c.description, '')), term) > 0)
    order by (lower(c.name) = term) desc,
             starts_with(lower(c.name), term) desc,
             (strpos(lower(c.name), term) > 0) desc,
             similarity(lower(c.name), term) desc,
             c.name
    limit 50;
end;
$$;
comment on function app_public.search_coffees(text, text) is E'@complexity 50\n@behavior -connection +list\n@notNull\nCoffees on sale whose name (or description) matches, best first: exact, prefix, substring, then similar spellings (pg_trgm). Exactly one of `query` or `name`.';
grant execute on function app_public.search_coffees(text,text) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

create function app_public.seasonal_drinks() returns setof app_public.coffees
language sql stable as $$
  select c.* from app_public.coffees c
  where c.available and (c.category = 'SEASONAL' or c.limited_time_offer)
  order by c.name;
$$;
comment on function app_public.seasonal_drinks() is E'@behavior -connection +list\n@notNull\nCoffees on sale in the SEASONAL category or marked limitedTimeOffer.';
grant execute on function app_public.seasonal_drinks() to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

create function app_public.menu_items() returns setof app_public.coffees
language sql stable as $$
  select c.* from app_public.coffees c
  where c.available
  order by c.category, c.name;
$$;
comment on function app_public.menu_items() is E'@behavior -connection +list\n@notNull\n@pageSize 50\nWhat the kiosk shows: every coffee on sale now, by category then name.';
grant execute on function app_public.menu_items() to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 370 menu changes and price history
--------------------------------------------------------------------------------

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
alter table app_public.coffee_price_changes enable row level security;
create policy select_admin on app_public.coffee_price_changes for select to cafe_admin using ((select app_public.is_admin()));
grant select on app_public.coffee_price_changes to cafe_admin, cafe_anonymous, cafe_customer, cafe_barista;

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
grant execute on function app_public.create_coffee(text,numeric,app_public.roast_level,app_public.coffee_category,uuid,text,text,boolean,boolean) to cafe_admin;

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
grant execute on function app_public.update_coffee_price(uuid,numeric) to cafe_admin;

create function app_public.set_coffee_available(p_id uuid, p_available boolean) returns app_public.coffees
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_coffee app_public.coffees;
begin
  perform app_hidden.require_admin();
  update app_public.coffees set available = p_available where id = p_id returning * into v_coffee;
  if v_coffee.id is null then
    raise exception 'No coffee with id %.', p_id using errcode = 'P0002';
  end if;
  return v_coffee;
end;
$$;
comment on function app_public.set_coffee_available(uuid, boolean) is E'@behavior -queryField -mutationField -typeField';
grant execute on function app_public.set_coffee_available(uuid,boolean) to cafe_admin;

--------------------------------------------------------------------------------
-- 400 order statuses and their transitions
--------------------------------------------------------------------------------

create type app_public.order_status as enum ('PENDING', 'PAID', 'PREPARING', 'BREWING', 'READY', 'COMPLETED', 'CANCELLED');

-- The order lifecycle, as data. A DBA changes who may move an order where
-- with an INSERT or DELETE here; the trigger below obeys it on every path.
create table app_public.order_status_transitions (
  from_status app_public.order_status not null,
  to_status app_public.order_status not null,
  role text not null check (role in ('customer', 'barista', 'admin', 'system', 'dba')),
  primary key (from_status, to_status, role)
);
comment on table app_public.order_status_transitions is 'Which role may move an order from one status to another. Checked by a trigger on every UPDATE of orders.status.';

insert into app_public.order_status_transitions (from_status, to_status, role) values
  ('PENDING', 'PAID', 'admin'),
  ('PENDING', 'PAID', 'barista'),
  ('PENDING', 'PAID', 'dba'),
  ('PENDING', 'PAID', 'system'),
  ('PENDING', 'CANCELLED', 'admin'),
  ('PENDING', 'CANCELLED', 'barista'),
  ('PENDING', 'CANCELLED', 'customer'),
  ('PENDING', 'CANCELLED', 'dba'),
  ('PENDING', 'CANCELLED', 'system'),
  ('PAID', 'PREPARING', 'admin'),
  ('PAID', 'PREPARING', 'barista'),
  ('PAID', 'PREPARING', 'dba'),
  ('PAID', 'PREPARING', 'system'),
  ('PAID', 'CANCELLED', 'admin'),
  ('PAID', 'CANCELLED', 'barista'),
  ('PAID', 'CANCELLED', 'customer'),
  ('PAID', 'CANCELLED', 'dba'),
  ('PAID', 'CANCELLED', 'system'),
  ('PREPARING', 'BREWING', 'admin'),
  ('PREPARING', 'BREWING', 'barista'),
  ('PREPARING', 'BREWING', 'dba'),
  ('PREPARING', 'CANCELLED', 'admin'),
  ('PREPARING', 'CANCELLED', 'barista'),
  ('PREPARING', 'CANCELLED', 'dba'),
  ('BREWING', 'READY', 'admin'),
  ('BREWING', 'READY', 'barista'),
  ('BREWING', 'READY', 'dba'),
  ('READY', 'COMPLETED', 'admin'),
  ('READY', 'COMPLETED', 'barista'),
  ('READY', 'COMPLETED', 'dba');
alter table app_public.order_status_transitions enable row level security;
create policy select_staff on app_public.order_status_transitions for select to cafe_barista, cafe_admin using ((select app_public.is_staff()));
grant select on app_public.order_status_transitions to cafe_barista, cafe_admin, cafe_anonymous, cafe_customer;

create trigger _950_audit after insert or update or delete on app_public.order_status_transitions
  for each row execute function app_private.tg_audit('from_status,to_status,role', '*');

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

--------------------------------------------------------------------------------
-- 410 orders
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
  updated_at timestamptz not null default now(),
  expires_at timestamptz
);
create index orders_customer_id_idx on app_public.orders (customer_id, time_ordered desc);
create index orders_barista_id_idx on app_public.orders (barista_id);
create index orders_status_idx on app_public.orders (status, time_ordered);
create index orders_open_idx on app_public.orders (id) where inventory_taken_at is null and status not in ('COMPLETED', 'CANCELLED');
create index orders_queue_idx on app_public.orders (time_ordered, id) where status in ('PREPARING', 'BREWING');

-- Performance note 3: the queue estimate (app_private.estimate_ready_time,
-- below) is one join over the orders waiting to be made, which this partial
-- index finds, in PL/pgSQL: a SQL function that cannot be inlined
-- (SECURITY DEFINER, SET search_path) is planned again on every call made
-- from inside another function; PL/pgSQL keeps its plans for the session.
create index orders_waiting_idx on app_public.orders (id) where status in ('PAID', 'PREPARING', 'BREWING');

create index orders_expiry_idx on app_public.orders (expires_at) where status = 'PENDING' and expires_at is not null;

-- Counting a customer's own open orders (createOrder's caps).
create index orders_open_by_creator_idx on app_public.orders (customer_id) where status = 'PENDING';

create index orders_sales_idx on app_public.orders (paid_at) include (status, id, total)
  where paid_at is not null;
comment on table app_public.orders is 'An order: its lines are order items, its status moves by the rules in order_status_transitions.';
comment on column app_public.orders.total is 'Sum of the lines at the prices captured when the order was made.';
comment on column app_public.orders.inventory_taken_at is E'@behavior -*\nWhen update_inventory took this order''s ingredients from stock.';
comment on column app_public.orders.inventory_returned_at is E'@behavior -*';
comment on column app_public.orders.created_by is E'@behavior -*';
comment on constraint orders_customer_id_fkey on app_public.orders is E'@fieldName customer\n@notNull\n@foreignFieldName orderList';
comment on constraint orders_barista_id_fkey on app_public.orders is E'@fieldName barista\n@foreignFieldName orderList';
comment on column app_public.orders.expires_at is 'When this order, if still unpaid (PENDING), is cancelled and its stock freed. Set when it is made; null: it does not expire.';

-- Staff (and the system) read every order; a customer reads their own.
alter table app_public.orders enable row level security;
create policy select_staff on app_public.orders for select to cafe_barista, cafe_admin, cafe_system using ((select app_public.current_actor()) in ('barista', 'admin', 'system'));
create policy select_own on app_public.orders for select to cafe_customer using (customer_id = app_public.current_user_id());
grant select on app_public.orders to cafe_customer, cafe_barista, cafe_admin, cafe_system, cafe_anonymous;

create trigger _100_timestamps before update on app_public.orders
  for each row execute function app_private.tg__timestamps();

-- A customer reads the baristas of their orders (section 270: baristas).
create policy select_own_orders on app_public.baristas for select to cafe_customer
  using (exists (select 1 from app_public.orders o where o.barista_id = baristas.id and o.customer_id = app_public.current_user_id()));

create function app_private.estimate_ready_time(p_items integer) returns timestamptz
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

create function app_public.order_by_id(id uuid) returns app_public.orders
language sql stable strict as $$
  select o.* from app_public.orders o where o.id = order_by_id.id;
$$;
comment on function app_public.order_by_id(uuid) is E'@fieldName order\nOne order by id, if you may see it; null otherwise.';
grant execute on function app_public.order_by_id(uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

create function app_public.customers_recent_orders(c app_public.customers, "limit" integer default null) returns setof app_public.orders
language sql stable as $$
  select o.* from app_public.orders o
  where o.customer_id = c.id
  order by o.time_ordered desc, o.id
  limit least(greatest(coalesce("limit", 10), 0), 100);
$$;
comment on function app_public.customers_recent_orders(app_public.customers, integer) is E'@behavior -connection +list\n@notNull\n@pageSize 10 100\nNewest first; `limit` defaults to 10 and is capped at 100.';
grant execute on function app_public.customers_recent_orders(app_public.customers,integer) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 420 order items
--------------------------------------------------------------------------------

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
comment on constraint order_items_order_id_fkey on app_public.order_items is
  E'@fieldName parentOrder\n@notNull\n@foreignSimpleFieldName items\n@behavior -connection +list';
comment on constraint order_items_coffee_id_fkey on app_public.order_items is E'@fieldName coffee\n@notNull\n@foreignFieldName orderItemList';
alter table app_public.order_items enable row level security;
create policy select_staff on app_public.order_items for select to cafe_barista, cafe_admin, cafe_system using ((select app_public.current_actor()) in ('barista', 'admin', 'system'));
create policy select_own on app_public.order_items for select to cafe_customer
  using (exists (select 1 from app_public.orders o where o.id = order_id and o.customer_id = app_public.current_user_id()));
grant select on app_public.order_items to cafe_customer, cafe_barista, cafe_admin, cafe_system, cafe_anonymous;

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
grant execute on function app_public.orders_order(app_public.orders) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 430 order events and status changes
--------------------------------------------------------------------------------

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
alter table app_public.order_events enable row level security;
create policy select_staff on app_public.order_events for select to cafe_barista, cafe_admin using ((select app_public.is_staff()));
create policy select_own on app_public.order_events for select to cafe_customer
  using (exists (select 1 from app_public.orders o where o.id = order_id and o.customer_id = app_public.current_user_id()));
grant select on app_public.order_events to cafe_customer, cafe_barista, cafe_admin, cafe_anonymous;

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
  points_rate numeric := app_private.setting('points_per_currency_unit');
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

create trigger _500_after_status after insert or update of status on app_public.orders
  for each row execute function app_private.tg_orders__after_status();

--------------------------------------------------------------------------------
-- 440 following orders: topics and who may listen
--------------------------------------------------------------------------------

-- order:<id> carries every change of an order or its lines; order_status:<id>
-- carries status changes, with the status and barista as they were then;
-- order_queue carries the whole row as it was after each queue step, so a
-- barista sees each step in order even when steps follow each other quickly
-- (an order row is well under NOTIFY's 8000-byte limit: notes <= 500
-- characters; should a row ever be larger, its notes are left out rather
-- than the change failing). Topic names on the TypeScript side: common/topics.ts.
create function app_private.tg_orders__notify() returns trigger
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
  -- The barista queue: an order enters it when paid and leaves it when
  -- completed, or cancelled after payment.
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
    perform pg_notify('order_queue', v_row);
  end if;
  return null;
end;
$$;

create trigger _900_notify after insert or update on app_public.orders
  for each row execute function app_private.tg_orders__notify();

create function app_private.tg_order_items__notify() returns trigger
language plpgsql as $$
begin
  perform pg_notify('order:' || coalesce(new.order_id, old.order_id)::text,
    json_build_object('id', coalesce(new.order_id, old.order_id))::text);
  return null;
end;
$$;

create trigger _900_notify after insert or update or delete on app_public.order_items
  for each row execute function app_private.tg_order_items__notify();

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
grant execute on function app_hidden.assert_can_follow_order(uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

-- Subscribing to the queue: staff only (customers FORBIDDEN, anonymous
-- UNAUTHENTICATED).
create function app_hidden.assert_can_follow_queue() returns boolean
language plpgsql stable as $$
begin
  perform app_hidden.require_staff();
  return true;
end;
$$;
grant execute on function app_hidden.assert_can_follow_queue() to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 450 placing an order
--------------------------------------------------------------------------------

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
  v_max_open integer := app_private.setting('max_open_orders_per_customer');
  v_max_open_cups integer := app_private.setting('max_open_cups_per_customer');
  v_expiry numeric := app_private.setting('pending_order_expiry_seconds');
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

  -- A customer's own unpaid orders are capped, in number and in cups (the
  -- new order included). Only orders they made themselves count: orders
  -- staff make at the till (for a walk-in or a named customer) are
  -- supervised, and counting them would let the till block a customer's
  -- app. One customer's orders are checked one at a time (concurrent
  -- requests cannot both slip under the cap).
  if actor = 'customer' then
    perform pg_advisory_xact_lock(hashtextextended('open-orders:' || v_customer_id::text, 0));
    select count(distinct o.id), coalesce(sum(oi.quantity), 0)
      into v_open, v_open_cups
      from app_public.orders o
      left join app_public.order_items oi on oi.order_id = o.id
     where o.customer_id = v_customer_id and o.status = 'PENDING' and o.created_by = v_customer_id;
    if v_open + 1 > v_max_open then
      raise exception 'You have % unpaid orders; pay or cancel one first (at most %).', v_open, v_max_open
        using errcode = 'CT011', detail = json_build_object('open_orders', v_open, 'max_open_orders', v_max_open)::text;
    end if;
    if v_open_cups + v_cups > v_max_open_cups then
      raise exception 'Your unpaid orders would hold % cups; at most % (pay or cancel one first).', v_open_cups + v_cups, v_max_open_cups
        using errcode = 'CT011', detail = json_build_object('open_cups', v_open_cups, 'max_open_cups', v_max_open_cups)::text;
    end if;
  end if;

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
  insert into app_public.orders (customer_id, notes, total, estimated_ready_time, created_by, expires_at)
  values (v_customer_id, nullif(v_notes, ''), v_total, v_ready, app_public.current_user_id(),
          now() + make_interval(secs => v_expiry))
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

  -- Fair share: a customer's own orders may hold at most
  -- max_stock_share_percent of an ingredient's stock on the shelf, counting
  -- their open orders not yet taken from stock (this one included) and
  -- their unpaid orders cancelled (or expired) within
  -- stock_share_cooldown_seconds, so cancelling and ordering again frees
  -- nothing at once. An order may always hold what one cup of each of its
  -- coffees needs (the last cups stay orderable). Till orders are
  -- supervised and exempt. The stock rows are locked above: concurrent
  -- orders are counted one after the other.
  if actor = 'customer' then
    select i.name as ingredient, s.unit, h.held, a.allowed into hog
    from (select n.ingredient_id from app_private.stock_reservations n where n.order_id = v_order.id) mine
    join app_public.stock_items s on s.ingredient_id = mine.ingredient_id
    join app_public.ingredients i on i.id = mine.ingredient_id
    cross join lateral (
      select coalesce((select sum(r.amount) from app_private.stock_reservations r
                        join app_public.orders o on o.id = r.order_id
                       where r.ingredient_id = mine.ingredient_id and o.customer_id = v_customer_id and o.created_by = v_customer_id), 0)
           + coalesce((select sum(oi.quantity * rl.quantity) from app_public.orders o
                        join app_public.order_items oi on oi.order_id = o.id
                        join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id and rl.ingredient_id = mine.ingredient_id
                       where o.customer_id = v_customer_id and o.created_by = v_customer_id
                         and o.status = 'CANCELLED' and o.paid_at is null and o.inventory_taken_at is null
                         and o.updated_at > now() - make_interval(secs => app_private.setting('stock_share_cooldown_seconds'))), 0) as held
    ) h
    cross join lateral (
      select greatest(s.current_stock * app_private.setting('max_stock_share_percent') / 100,
                      (select max(rl.quantity) from app_public.order_items oi
                        join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id and rl.ingredient_id = mine.ingredient_id
                       where oi.order_id = v_order.id)) as allowed
    ) a
    where h.held > a.allowed
    order by mine.ingredient_id
    limit 1;
    if hog.ingredient is not null then
      raise exception 'Your orders would hold % % of %; one customer may hold at most % (% percent of the stock; cancelled orders count for % minutes).',
        trim_scale(hog.held), hog.unit, hog.ingredient, trim_scale(round(hog.allowed, 3)), trim_scale(app_private.setting('max_stock_share_percent')),
        ceil(app_private.setting('stock_share_cooldown_seconds') / 60)
        using errcode = 'CT011', detail = json_build_object('ingredient', hog.ingredient, 'held', hog.held, 'max_held', round(hog.allowed, 3),
          'max_stock_share_percent', app_private.setting('max_stock_share_percent'))::text;
    end if;
  end if;
  return v_order;
end;
$$;
comment on function app_public.create_order(jsonb, text, uuid, integer, text, uuid) is E'@behavior -queryField -mutationField -typeField';
grant execute on function app_public.create_order(jsonb,text,uuid,integer,text,uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 460 moving and cancelling orders
--------------------------------------------------------------------------------

-- The order, locked until the transaction ends, or "not found" (P0002):
-- what every staff or customer action on one order starts with.
create function app_hidden.order_for_update(p_id uuid) returns app_public.orders
language plpgsql volatile set search_path = pg_catalog as $$
declare
  v_order app_public.orders;
begin
  select * into v_order from app_public.orders where id = p_id for update;
  if v_order.id is null then
    raise exception 'No order with id %.', p_id using errcode = 'P0002';
  end if;
  return v_order;
end;
$$;

create function app_public.update_order_status(p_id uuid, p_status app_public.order_status) returns app_public.orders
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_order app_public.orders;
begin
  perform app_hidden.require_staff();
  v_order := app_hidden.order_for_update(p_id);
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
grant execute on function app_public.update_order_status(uuid,app_public.order_status) to cafe_barista, cafe_admin;

create function app_public.cancel_order(p_id uuid) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_order app_public.orders;
begin
  perform app_hidden.require_signed_in();
  v_order := app_hidden.order_for_update(p_id);
  -- Someone else's order does not exist, as far as a customer can tell.
  if app_public.current_actor() = 'customer' and v_order.customer_id is distinct from app_public.current_user_id() then
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
grant execute on function app_public.cancel_order(uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 470 idempotency keys: the claim
--------------------------------------------------------------------------------

-- Idempotent mutations (the Idempotency-Key header; extensions.idempotencyKey
-- over graphql-ws). A key belongs to its owner: the account when signed in,
-- else the source (app_private.source_key: an IPv6 /64). The API
-- (plugins/IdempotencyPlugin.ts) claims the key in the mutation's own transaction
-- before the mutation runs, and marks it `committed` just before that
-- transaction's COMMIT: the claim and the effects are saved together or not
-- at all, so a crash after the effects can never let a retry run them again.
-- The mutation commits before its payload is read (no request holds stock
-- locks while it reads a payload), so the answer is written after, in a
-- second short statement (`done` with the answer). A refusal (the mutation
-- rolled back to the savepoint after the claim) is stored `done` in the
-- mutation's transaction. A concurrent claimer of the same key waits on the
-- unique index until the first transaction ends, then for its answer, at
-- most idempotency_wait_seconds in all. `response` is json, not jsonb: the
-- replay keeps the answer's field order byte for byte.
--   claimed    only ever seen inside the claiming transaction;
--   committed  the effects are saved, the answer not (yet): being built, or
--              lost in a crash between the two writes; never run again;
--   done       `response` is the answer to replay.
create table app_private.idempotency_keys (
  owner text not null,
  key text not null check (key ~ '^[ -~]{1,255}$'),
  request_hash text not null,
  status text not null default 'claimed' check (status in ('claimed', 'committed', 'done')),
  response json,
  mutation_result json,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  primary key (owner, key),
  constraint idempotency_keys_done_has_response check ((status = 'done') = (response is not null))
);
create index idempotency_keys_expires_at_idx on app_private.idempotency_keys (expires_at);
comment on table app_private.idempotency_keys is 'Idempotency-Key claims of mutations and their stored answers, kept idempotency_key_retention_hours.';
comment on column app_private.idempotency_keys.mutation_result is 'The rows the mutation''s own statement returned (as the API selected them), saved with its effects: what the attempt did, even when its answer was never written.';

-- Only through the app_hidden.idempotency_* functions (SECURITY DEFINER):
-- RLS on, no policy, no grant.
alter table app_private.idempotency_keys enable row level security;

-- Whose key: the signed-in account, else the source.
create function app_private.idempotency_owner(p_source text) returns text
language sql stable set search_path = pg_catalog as $$
  select coalesce('account:' || app_public.current_user_id()::text, 'source:' || app_private.source_key(p_source));
$$;

-- Claims (owner, key) for this transaction, or says why not:
--   run          claimed: run the mutation (plugins/IdempotencyPlugin.ts);
--   replay       the same request was answered: `response` is that answer;
--   reused       the key was used for another request;
--   pending      the same request's effects are committed and its answer is
--                not written yet: the API polls idempotency_answer (each
--                poll a short statement, holding no connection between
--                polls: the first request needs one to read its payload)
--                for at most `wait_ms`;
--   in_progress  another transaction held the key for `wait_ms`.
-- `wait_ms` is idempotency_wait_seconds, less than the statement timeout (that
-- would answer QUERY_TIMEOUT, a server fault, instead of IN_PROGRESS).
-- An expired key counts as unused.
create function app_hidden.idempotency_claim(p_key text, p_source text, p_request_hash text)
returns table (outcome text, response json, wait_ms bigint)
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_owner text := app_private.idempotency_owner(p_source);
  v_prev_timeout text := current_setting('lock_timeout');
  -- current_setting shows the timeout with a unit ('5s', '1500ms', '0'):
  -- read as an interval, in milliseconds.
  v_statement_ms numeric := extract(epoch from current_setting('statement_timeout')::interval) * 1000;
  v_wait_ms numeric := coalesce(app_private.setting('idempotency_wait_seconds'), 10) * 1000;
  v_claimed boolean;
  r app_private.idempotency_keys;
begin
  if p_key is null or p_key !~ '^[ -~]{1,255}$' then
    raise exception 'An Idempotency-Key is 1 to 255 printable ASCII characters.' using errcode = '22023';
  end if;
  if v_statement_ms > 0 then
    v_wait_ms := least(v_wait_ms, v_statement_ms - 500);
  end if;
  v_wait_ms := greatest(v_wait_ms, 1);
  begin
    perform set_config('lock_timeout', v_wait_ms::bigint || 'ms', true);
    insert into app_private.idempotency_keys as k (owner, key, request_hash, expires_at)
    values (v_owner, p_key, p_request_hash, now() + make_interval(secs => coalesce(app_private.setting('idempotency_key_retention_hours'), 24) * 3600))
    on conflict (owner, key) do update
      set request_hash = excluded.request_hash, status = 'claimed', response = null, mutation_result = null, created_at = now(), expires_at = excluded.expires_at
      where k.expires_at <= now()
    returning true into v_claimed;
    if v_claimed is null then
      -- ON CONFLICT locked the key's row even though it did not update it:
      -- undo this block so the lock goes (the first request must write its
      -- answer into that row).
      raise exception 'not claimed' using errcode = 'CTI01';
    end if;
  exception
    when lock_not_available then
      perform set_config('lock_timeout', v_prev_timeout, true);
      return query select 'in_progress'::text, null::json, v_wait_ms::bigint;
      return;
    when sqlstate 'CTI01' then
      v_claimed := false;
  end;
  perform set_config('lock_timeout', v_prev_timeout, true);
  if v_claimed then
    return query select 'run'::text, null::json, v_wait_ms::bigint;
    return;
  end if;
  select o.outcome, o.response into r.status, r.response from app_hidden.idempotency_answer(p_key, p_source, p_request_hash) o;
  return query select r.status, r.response, v_wait_ms::bigint;
end;
$$;
grant execute on function app_hidden.idempotency_claim(text,text,text) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 480 idempotency keys: answers
--------------------------------------------------------------------------------

-- What became of a key's committed request: replay (its answer), reused (it
-- was another request) or pending (no answer yet). Reads only.
create function app_hidden.idempotency_answer(p_key text, p_source text, p_request_hash text)
returns table (outcome text, response json)
language sql stable security definer set search_path = pg_catalog as $$
  select case when k.request_hash is null then 'pending'
              when k.request_hash <> p_request_hash then 'reused'
              when k.status = 'done' then 'replay'
              else 'pending' end,
         case when k.request_hash = p_request_hash and k.status = 'done' then k.response end
    from (select 1) one
    left join app_private.idempotency_keys k
      on k.owner = app_private.idempotency_owner(p_source) and k.key = p_key and k.expires_at > now();
$$;
grant execute on function app_hidden.idempotency_answer(text,text,text) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

-- Marks the key this transaction claimed as committed with the mutation's
-- effects (called just before its COMMIT), with what the mutation returned.
create function app_hidden.idempotency_committed(p_key text, p_source text, p_mutation_result json) returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  update app_private.idempotency_keys
     set status = 'committed', mutation_result = p_mutation_result
   where owner = app_private.idempotency_owner(p_source) and key = p_key and status = 'claimed';
  if not found then
    raise exception 'No claimed Idempotency-Key to mark committed.' using errcode = 'P0002';
  end if;
end;
$$;
grant execute on function app_hidden.idempotency_committed(text,text,json) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

-- Stores the answer of the request that claimed (owner, key): in its own
-- transaction (a refusal, or an answer read without a second transaction),
-- or after its COMMIT (the key is `committed`).
create function app_hidden.idempotency_store(p_key text, p_source text, p_response json) returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  update app_private.idempotency_keys
     set status = 'done', response = p_response
   where owner = app_private.idempotency_owner(p_source) and key = p_key and status in ('claimed', 'committed');
  if not found then
    raise exception 'No claimed Idempotency-Key to answer.' using errcode = 'P0002';
  end if;
end;
$$;
grant execute on function app_hidden.idempotency_store(text,text,json) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 500 stock items
--------------------------------------------------------------------------------

create table app_public.stock_items (
  ingredient_id uuid primary key references app_public.ingredients on delete cascade,
  current_stock numeric(12,3) not null check (current_stock >= 0),
  alert_level numeric(12,3) not null default 0 check (alert_level >= 0),
  unit text not null default 'unit',
  updated_at timestamptz not null default now()
);
comment on table app_public.stock_items is 'How much of an ingredient is on the shelf, and the level that should raise an alert.';
comment on constraint stock_items_ingredient_id_fkey on app_public.stock_items is E'@fieldName ingredient\n@notNull\n@foreignFieldName stockItem';

-- Staff (and the system) only.
alter table app_public.stock_items enable row level security;
create policy select_staff on app_public.stock_items for select to cafe_barista, cafe_admin, cafe_system using ((select app_public.current_actor()) in ('barista', 'admin', 'system'));
grant select on app_public.stock_items to cafe_barista, cafe_admin, cafe_system, cafe_anonymous, cafe_customer;

create trigger _100_timestamps before update on app_public.stock_items
  for each row execute function app_private.tg__timestamps();

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
comment on function app_public.low_stock_items() is E'@behavior -connection +list\n@notNull\n@pageSize 100\nStaff only (barista, admin); others get a FORBIDDEN error. Stock at or below its alert level, emptiest first.';
grant execute on function app_public.low_stock_items() to cafe_barista, cafe_admin;

create function app_public.set_stock_alert_level(p_ingredient_id uuid, p_alert_level numeric) returns app_public.stock_items
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
grant execute on function app_public.set_stock_alert_level(uuid,numeric) to cafe_admin;

--------------------------------------------------------------------------------
-- 510 stock reservations
--
-- What open orders hold of each ingredient, kept by triggers so that a DBA's
-- own inserts and updates stay consistent.
--------------------------------------------------------------------------------

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

create function app_private.reserved_stock(p_ingredient_id uuid) returns numeric
language sql stable security definer set search_path = pg_catalog as $$
  select coalesce((select r.amount from app_private.stock_reserved r where r.ingredient_id = p_ingredient_id), 0);
$$;

create function app_private.available_stock(p_ingredient_id uuid) returns numeric
language sql stable security definer set search_path = pg_catalog as $$
  select s.current_stock - app_private.reserved_stock(p_ingredient_id)
  from app_public.stock_items s where s.ingredient_id = p_ingredient_id;
$$;

-- An order's lines reserve what their recipes need (of now), when they are
-- inserted into an open order: by createOrder, by a DBA, by data loads. One
-- statement-level trigger, totals updated in ingredient order.
create function app_private.tg_order_items__reserve_stock() returns trigger
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

create trigger _400_reserve_stock after insert on app_public.order_items
  referencing new table as new_items
  for each statement execute function app_private.tg_order_items__reserve_stock();

-- Takes an order's needs off the totals, once.
create function app_private.release_stock(p_order_id uuid) returns void
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

create function app_private.tg_orders__release_stock() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  perform app_private.release_stock(old.id);
  if tg_op = 'DELETE' then
    return old;
  end if;
  return null;
end;
$$;

create trigger _550_release_stock after update of status, inventory_taken_at on app_public.orders
  for each row
  when (old.inventory_taken_at is null and old.status not in ('COMPLETED', 'CANCELLED')
        and not (new.inventory_taken_at is null and new.status not in ('COMPLETED', 'CANCELLED')))
  execute function app_private.tg_orders__release_stock();

create trigger _550_release_stock_on_delete before delete on app_public.orders
  for each row
  when (old.inventory_taken_at is null and old.status not in ('COMPLETED', 'CANCELLED'))
  execute function app_private.tg_orders__release_stock();

-- Rebuilds the totals from the open orders' lines (by the recipes of now),
-- for after a bulk load that ran without triggers
-- (session_replication_role = replica).
create function app_private.recount_reserved_stock() returns void
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

--------------------------------------------------------------------------------
-- 520 stock movements: taking, returning, restocking
--------------------------------------------------------------------------------

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
alter table app_public.stock_movements enable row level security;
create policy select_staff on app_public.stock_movements for select to cafe_barista, cafe_admin using ((select app_public.is_staff()));
grant select on app_public.stock_movements to cafe_barista, cafe_admin, cafe_anonymous, cafe_customer;

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
grant execute on function app_private.take_inventory(uuid) to cafe_system;

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

create function app_public.restock_ingredient(p_ingredient_id uuid, p_amount numeric, p_reason text default null) returns app_public.stock_items
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
grant execute on function app_public.restock_ingredient(uuid,numeric,text) to cafe_admin;

create function app_public.coffees_inventory(c app_public.coffees) returns integer
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
comment on function app_public.coffees_inventory(app_public.coffees) is 'Servings that available ingredient stock can still make (stock minus what open orders need); null when the coffee has no recipe.';
grant execute on function app_public.coffees_inventory(app_public.coffees) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 600 refunds
--------------------------------------------------------------------------------

create table app_public.refunds (
  id uuid primary key default gen_random_uuid(),
  order_id uuid not null references app_public.orders on delete cascade,
  amount numeric(10,2) not null check (amount >= 0),
  reason text not null,
  created_at timestamptz not null default now(),
  settled_at timestamptz,
  settled_by uuid,
  source_key text unique,
  paid_amount numeric(10,2),
  order_total numeric(10,2),
  above_order_total boolean not null default false
);
create index refunds_order_id_idx on app_public.refunds (order_id);
create index refunds_open_idx on app_public.refunds (created_at) where settled_at is null;
comment on table app_public.refunds is 'Money the café owes back: a paid order that was cancelled, or a payment for an order that could not be paid. Admins list and settle them.';
comment on constraint refunds_order_id_fkey on app_public.refunds is E'@fieldName parentOrder\n@notNull\n@foreignFieldName refundList';
comment on column app_public.refunds.paid_amount is 'What the payment said was paid (for a payment to an order that could not take it).';
comment on column app_public.refunds.order_total is 'The order''s total when the refund was recorded.';
comment on column app_public.refunds.above_order_total is 'More was paid than the order''s total: check with the provider before settling.';
alter table app_public.refunds enable row level security;
create policy select_admin on app_public.refunds for select to cafe_admin using ((select app_public.is_admin()));
grant select on app_public.refunds to cafe_admin, cafe_anonymous, cafe_customer, cafe_barista;

create function app_public.settle_refund(p_id uuid) returns app_public.refunds
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
grant execute on function app_public.settle_refund(uuid) to cafe_admin;

create function app_public.open_refunds() returns setof app_public.refunds
language plpgsql stable as $$
begin
  perform app_hidden.require_admin();
  return query select r.* from app_public.refunds r where r.settled_at is null order by r.created_at, r.id;
end;
$$;
comment on function app_public.open_refunds() is E'@behavior -connection +list\n@notNull\n@pageSize 100\nAdmins only: refunds owed and not yet settled, oldest first.';
grant execute on function app_public.open_refunds() to cafe_admin;

--------------------------------------------------------------------------------
-- 610 payment alerts
--------------------------------------------------------------------------------

-- The thresholds a DBA tunes: more than `threshold` events in `window_seconds`.
create table app_private.alert_rules (
  kind text primary key,
  threshold integer not null check (threshold >= 0),
  window_seconds integer not null check (window_seconds > 0),
  block_seconds integer not null default 0 check (block_seconds >= 0),
  description text not null
);

insert into app_private.alert_rules (kind, threshold, window_seconds, block_seconds, description) values
  ('multiple_payments', '0', '86400', '0', 'A payment event for an order already paid (threshold unused: any such event raises an alert).'),
  ('amount_mismatch', '0', '60', '0', 'Any amount mismatch raises an alert.'),
  ('duplicate_key_different_body', '0', '60', '0', 'A known key arriving with a different body.'),
  ('refund_needed', '0', '60', '0', 'A payment for an order that could not take it.'),
  ('burst', '300', '60', '0', 'More authenticated callbacks than this from all sources in the window (refusals before authentication do not count).'),
  ('auth_failures', '5', '300', '900', 'Failures before authentication (401, 413) from one source in the window; the source is then blocked for block_seconds, and its failures are no longer written.'),
  ('currency_mismatch', '0', '60', '0', 'A payment in another currency than the café''s (settings.currency).'),
  ('refund_above_total', '0', '60', '0', 'A refund owed for more than the order''s total: check with the provider before settling it.');

create trigger _950_audit after insert or update or delete on app_private.alert_rules
  for each row execute function app_private.tg_audit('kind', 'kind,threshold,window_seconds,block_seconds');

create table app_private.alert_windows (
  kind text not null,
  window_start timestamptz not null,
  primary key (kind, window_start)
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
create policy select_admin on app_public.payment_alerts for select to cafe_admin using ((select app_public.is_admin()));
grant select on app_public.payment_alerts to cafe_admin, cafe_anonymous, cafe_customer, cafe_barista;

create function app_private.raise_alert(p_kind text, p_message text, p_source text, p_order_id uuid) returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  insert into app_public.payment_alerts (kind, message, source, order_id) values (p_kind, p_message, p_source, p_order_id);
  -- The server logs alerts as warnings when it sees this notification.
  perform pg_notify('payment_alert', json_build_object('kind', p_kind, 'message', p_message, 'source', p_source, 'order_id', p_order_id)::text);
end;
$$;

create function app_public.payment_alert_list("limit" integer default null) returns setof app_public.payment_alerts
language plpgsql stable as $$
begin
  perform app_hidden.require_admin();
  return query select a.* from app_public.payment_alerts a order by a.created_at desc, a.id
    limit least(greatest(coalesce("limit", 50), 0), 500);
end;
$$;
comment on function app_public.payment_alert_list(integer) is E'@fieldName paymentAlerts\n@behavior -connection +list\n@notNull\n@pageSize 50 500\nAdmins only: the newest payment alerts first.';
grant execute on function app_public.payment_alert_list(integer) to cafe_admin;

--------------------------------------------------------------------------------
-- 620 blocked sources
--------------------------------------------------------------------------------

create table app_private.blocked_sources (
  source text primary key,
  blocked_until timestamptz not null,
  reason text not null
);

create function app_private.is_source_blocked(p_source text) returns boolean
language sql stable security definer set search_path = pg_catalog as $$
  select exists (select 1 from app_private.blocked_sources where source = p_source and blocked_until > now());
$$;
grant execute on function app_private.is_source_blocked(text) to cafe_system;

-- Every API process keeps the block list in memory, so that a blocked
-- source's deliveries are refused before any I/O: each change is announced
-- on `payment_source_blocked` ({"source", "blocked_until"}; null: unblocked).
create function app_private.tg_blocked_sources__notify() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  if tg_op = 'DELETE' then
    perform pg_notify('payment_source_blocked', json_build_object('source', old.source, 'blocked_until', null)::text);
  else
    perform pg_notify('payment_source_blocked', json_build_object('source', new.source, 'blocked_until', new.blocked_until)::text);
  end if;
  return null;
end;
$$;

create trigger _500_notify after insert or update or delete on app_private.blocked_sources
  for each row execute function app_private.tg_blocked_sources__notify();

-- The sources blocked now (each process loads them at start and after its LISTEN connection comes back).
create function app_private.blocked_source_list() returns table (source text, blocked_until timestamptz)
language sql stable security definer set search_path = pg_catalog as $$
  select b.source, b.blocked_until from app_private.blocked_sources b where b.blocked_until > now();
$$;
grant execute on function app_private.blocked_source_list() to cafe_system;

--------------------------------------------------------------------------------
-- 630 payment deliveries
--------------------------------------------------------------------------------

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
create index payment_deliveries_rejected_idx on app_private.payment_deliveries (received_at) where outcome = 'rejected';

-- Refused before we knew who was calling (wrong token or signature, or a
-- body too large to read): counted towards the block of that source, never
-- towards the provider's burst alert; not written at all once the source
-- is blocked.
create function app_private.is_unauthenticated_failure(p_code text) returns boolean
language sql immutable as $$
  select coalesce(p_code in ('UNAUTHORIZED', 'BAD_SIGNATURE', 'PAYLOAD_TOO_LARGE'), false);
$$;
grant execute on function app_private.is_unauthenticated_failure(text) to cafe_system;

-- Returns, for a failure before authentication, until when its source is
-- blocked (null: not blocked): the route keeps its own decisions in memory
-- at once, without waiting for the notification.
create function app_private.log_delivery(
  p_source text, p_http_status integer, p_outcome text, p_code text, p_reason text,
  p_dedupe_key text default null, p_body_sha256 text default null, p_event text default null, p_order_id uuid default null
) returns timestamptz
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  rule app_private.alert_rules;
  n integer;
  v_window timestamptz;
  unauthenticated boolean := app_private.is_unauthenticated_failure(p_code);
  v_blocked_until timestamptz;
begin
  -- A blocked source's failures are answered 429 and counted in memory by
  -- the route; none is written (the route does not call this for them; this
  -- holds for any other caller too).
  if unauthenticated then
    select b.blocked_until into v_blocked_until from app_private.blocked_sources b where b.source = p_source and b.blocked_until > now();
    if v_blocked_until is not null then
      return v_blocked_until;
    end if;
  end if;

  insert into app_private.payment_deliveries (source, http_status, outcome, code, reason, dedupe_key, body_sha256, event, order_id)
  values (p_source, p_http_status, p_outcome, p_code, left(p_reason, 500), p_dedupe_key, p_body_sha256, left(p_event, 100), p_order_id);

  -- Repeated failures before authentication from one source: alert, then
  -- block it (one at a time per source, so concurrent failures alert once).
  if unauthenticated then
    perform pg_advisory_xact_lock(hashtextextended('auth-failures:' || p_source, 0));
    select * into rule from app_private.alert_rules where kind = 'auth_failures';
    select count(*) into n from app_private.payment_deliveries
     where source = p_source and code in ('UNAUTHORIZED', 'BAD_SIGNATURE', 'PAYLOAD_TOO_LARGE')
       and received_at > now() - make_interval(secs => rule.window_seconds);
    select b.blocked_until into v_blocked_until from app_private.blocked_sources b where b.source = p_source and b.blocked_until > now();
    if n > rule.threshold and v_blocked_until is null then
      v_blocked_until := now() + make_interval(secs => rule.block_seconds);
      insert into app_private.blocked_sources (source, blocked_until, reason)
      values (p_source, v_blocked_until, n || ' authentication failures')
      on conflict (source) do update set blocked_until = excluded.blocked_until, reason = excluded.reason;
      perform app_private.raise_alert('auth_failures',
        format('%s failed authentications from %s in %s s; blocked for %s s.', n, p_source, rule.window_seconds, rule.block_seconds),
        p_source, null);
    end if;
    -- Not the provider's doing: no burst alert.
    return v_blocked_until;
  end if;

  -- A burst of the provider's deliveries (authenticated, all sources): one
  -- alert a window. Once this window's alert is out there is nothing to
  -- count, and before it counting past the threshold tells nothing more:
  -- at most threshold + 1 rows are read, not the whole window's (which
  -- grows with the rate: 26,000 rows at 440 callbacks/s).
  select * into rule from app_private.alert_rules where kind = 'burst';
  v_window := date_bin(make_interval(secs => rule.window_seconds), now(), timestamptz 'epoch');
  if exists (select 1 from app_private.alert_windows w where w.kind = 'burst' and w.window_start = v_window) then
    return null;
  end if;
  select count(*) into n from (
    select 1 from app_private.payment_deliveries
     where received_at > now() - make_interval(secs => rule.window_seconds)
       and not app_private.is_unauthenticated_failure(code)
     limit rule.threshold + 1) recent;
  if n > rule.threshold then
    insert into app_private.alert_windows (kind, window_start)
    values ('burst', v_window)
    on conflict do nothing;
    if found then
      perform app_private.raise_alert('burst', format('More than %s authenticated callbacks in %s s.', rule.threshold, rule.window_seconds), p_source, null);
    end if;
  end if;
  return null;
end;
$$;
grant execute on function app_private.log_delivery(text,integer,text,text,text,text,text,text,uuid) to cafe_system;

--------------------------------------------------------------------------------
-- 640 paying at the till
--------------------------------------------------------------------------------

create type app_public.payment_method as enum ('CASH', 'CARD_PRESENT');

-- PENDING -> PAID and its two jobs, exactly once per order: the status
-- moves under the transition rules, so a second payment finds it PAID. (The
-- customer's notification comes from the status change itself:
-- tg_orders__notify_customer.)
create function app_private.mark_paid(p_order_id uuid, p_method text) returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  update app_public.orders set status = 'PAID', payment_method = p_method, paid_at = now() where id = p_order_id;
  perform graphile_worker.add_job('start_preparation', json_build_object('orderId', p_order_id), job_key := 'start_preparation:' || p_order_id);
  perform graphile_worker.add_job('update_inventory', json_build_object('orderId', p_order_id), job_key := 'update_inventory:' || p_order_id);
end;
$$;

create function app_public.mark_order_paid(p_id uuid, p_method app_public.payment_method) returns app_public.orders
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_order app_public.orders;
begin
  perform app_hidden.require_staff();
  v_order := app_hidden.order_for_update(p_id);
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
grant execute on function app_public.mark_order_paid(uuid,app_public.payment_method) to cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 650 the provider's payment callbacks
--------------------------------------------------------------------------------

-- Keys of processed deliveries (idem:, event:, sha256: share one namespace).
create table app_private.processed_payment_keys (
  key text primary key,
  body_sha256 text not null,
  order_id uuid,
  outcome text not null,
  processed_at timestamptz not null default now()
);

create type app_private.callback_result as (
  http_status integer,
  status text,
  code text,
  message text,
  order_id uuid
);

create function app_private.process_payment_callback(
  p_source text,
  p_key text,
  p_body_sha256 text,
  p_event text,            -- 'payment.completed' when the route decided this is a payment (either shape); else what was sent
  p_status text,           -- shape B's status as sent (null for shape A); logged only
  p_order_ref text,        -- order_id as sent (may be malformed), or null
  p_customer_email text,   -- shape A's data.customer
  p_amount numeric,
  p_items jsonb,           -- shape B's items [{product, quantity}]
  p_currency text default null  -- upper-case ISO 4217 code, or null when none was sent
) returns app_private.callback_result
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  known app_private.processed_payment_keys;
  v_order app_public.orders;
  v_order_id uuid;
  v_matches integer;
  v_customer_email text;
  v_currency text := upper(app_private.text_setting('currency'));
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

  -- Whether this is a payment is the route's decision (exact comparison, in
  -- src/payments/schema.ts); here it is only read, never re-derived.
  if p_event is distinct from 'payment.completed' then
    -- Logged, not recorded as processed: the key stays free for the event
    -- that pays (providers may reuse one key across a payment's events).
    result := row(200, 'ignored', null, 'Not a completed payment: recorded, nothing done.', null);
    perform app_private.log_delivery(p_source, 200, 'ignored', null,
      result.message || coalesce(format(' (status %s)', left(p_status, 50)), ''), p_key, p_body_sha256, p_event, null);
    return result;
  end if;

  -- A payment without an amount (or, in shape B, without items) never pays.
  if p_amount is null or p_amount <= 0 or (p_status is not null and (p_items is null or jsonb_typeof(p_items) <> 'array' or jsonb_array_length(p_items) = 0)) then
    result := row(400, null, 'VALIDATION_FAILED', 'A payment needs a positive amount (and, with a status, its items).', null);
    perform app_private.log_delivery(p_source, 400, 'rejected', result.code, result.message, p_key, p_body_sha256, p_event, null);
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

  -- Past its deadline, an unpaid order is cancelled now if the sweep has not
  -- reached it yet (this function runs as cafe_system: the system's move).
  if result.code is null and v_order.status = 'PENDING' and v_order.expires_at <= now() then
    update app_public.orders set status = 'CANCELLED' where id = v_order.id;
    select * into v_order from app_public.orders where id = v_order.id;
  end if;

  if result.code is null and p_currency is not null and p_currency is distinct from v_currency then
    result := row(422, null, 'CURRENCY_MISMATCH', format('The payment is in %s; this café takes %s.', left(p_currency, 3), v_currency), v_order.id);
    perform app_private.raise_alert('currency_mismatch',
      format('Payment of %s %s for order %s; the café takes %s.', p_amount, left(p_currency, 3), v_order.id, v_currency), p_source, v_order.id);
  end if;

  if result.code is null and v_order.status <> 'PENDING' then
    result := row(422, null, 'ORDER_NOT_PAYABLE', format('The order is %s, not PENDING.', v_order.status), v_order.id);
    if v_order.status = 'CANCELLED' then
      -- What was paid is owed back; more than the order's total is flagged.
      insert into app_public.refunds (order_id, amount, reason, source_key, paid_amount, order_total, above_order_total)
      values (v_order.id, p_amount, 'payment received for a cancelled order', p_key, p_amount, v_order.total, p_amount > v_order.total)
      on conflict (source_key) do nothing;
      if found then
        perform app_private.raise_alert('refund_needed',
          format('Payment of %s for cancelled order %s: refund it.', p_amount, v_order.id), p_source, v_order.id);
        if p_amount > v_order.total then
          perform app_private.raise_alert('refund_above_total',
            format('Payment of %s for cancelled order %s, whose total is %s: check with the provider before refunding.', p_amount, v_order.id, v_order.total),
            p_source, v_order.id);
        end if;
      end if;
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
grant execute on function app_private.process_payment_callback(text,text,text,text,text,text,text,numeric,jsonb,text) to cafe_system;

--------------------------------------------------------------------------------
-- 700 notifications
--------------------------------------------------------------------------------

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
alter table app_public.notifications enable row level security;
create policy select_staff on app_public.notifications for select to cafe_barista, cafe_admin using ((select app_public.is_staff()));
create policy select_own on app_public.notifications for select to cafe_customer using (customer_id = app_public.current_user_id());
grant select on app_public.notifications to cafe_customer, cafe_barista, cafe_admin, cafe_anonymous;

create function app_private.notify_customer(p_order_id uuid, p_kind text) returns app_public.notifications
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_notification app_public.notifications;
begin
  insert into app_public.notifications (customer_id, order_id, kind, message)
  select o.customer_id, o.id, p_kind,
         case p_kind when 'payment_received' then format('Thanks! We received %s for your order; it is being prepared.', o.total)
                     when 'ready_for_pickup' then 'Your order is ready for pickup.'
                     when 'refund_owed' then format('Your order was cancelled; %s will be refunded.', o.total)
                     else app_public.order_status_message(o.status) end
  from app_public.orders o where o.id = p_order_id
  on conflict (order_id, kind) do nothing
  returning * into v_notification;
  return v_notification; -- null when it was already sent
end;
$$;
grant execute on function app_private.notify_customer(uuid,text) to cafe_system;

-- Customer notifications come from the status change itself, whoever made
-- it (a payment, the till, a barista, the worker, a DBA's UPDATE): paid,
-- ready for pickup, and cancelled with a refund owed (a paid order: the same
-- rule as the refund row tg_orders__after_status writes). One row per
-- (order, kind): a status taken twice notifies once.
create function app_private.tg_orders__notify_customer() returns trigger
language plpgsql security definer set search_path = pg_catalog as $$
declare
  v_kind text;
begin
  if new.status is not distinct from old.status then
    return null;
  end if;
  v_kind := case
    when new.status = 'PAID' then 'payment_received'
    when new.status = 'READY' then 'ready_for_pickup'
    when new.status = 'CANCELLED' and old.paid_at is not null then 'refund_owed'
  end;
  if v_kind is not null then
    perform app_private.notify_customer(new.id, v_kind);
  end if;
  return null;
end;
$$;

create trigger _600_notify_customer after update of status on app_public.orders
  for each row execute function app_private.tg_orders__notify_customer();

-- notificationAdded: the signed-in customer whose notifications the caller
-- follows (always their own); staff have none (42501), anonymous 28000.
create function app_hidden.notification_recipient() returns uuid
language plpgsql stable as $$
begin
  perform app_hidden.require_signed_in();
  if app_public.current_actor() <> 'customer' then
    raise exception 'Only customers receive notifications.' using errcode = '42501';
  end if;
  return app_public.current_user_id();
end;
$$;
grant execute on function app_hidden.notification_recipient() to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 710 notification webhooks
--------------------------------------------------------------------------------

-- Each notification's outgoing webhook (NOTIFY_WEBHOOK_URL): one row and one
-- job per notification, written with it in the order's transaction (a
-- receiver that is down only delays it). The worker records each attempt
-- and the delivery; a delivered notification is not sent again.
create table app_private.notification_webhooks (
  notification_id uuid primary key references app_public.notifications on delete cascade,
  attempts integer not null default 0,
  last_attempt_at timestamptz,
  last_error text,
  delivered_at timestamptz,
  gave_up_at timestamptz
);
comment on table app_private.notification_webhooks is 'The outgoing webhook of each customer notification: attempts, last error, when it was delivered (or given up after notify_webhook_max_attempts).';

-- A new notification: its webhook job (job_key: one job per notification)
-- and a NOTIFY on the customer's topic (notification:<customer id>,
-- payload {"id"}; common/topics.ts) for notificationAdded.
create function app_private.tg_notifications__publish() returns trigger
language plpgsql security definer set search_path = pg_catalog as $$
begin
  insert into app_private.notification_webhooks (notification_id) values (new.id);
  perform graphile_worker.add_job('notification__send_webhook', json_build_object('id', new.id),
    job_key := 'notification__send_webhook:' || new.id,
    max_attempts := app_private.setting('notify_webhook_max_attempts')::integer);
  perform pg_notify('notification:' || new.customer_id::text, json_build_object('id', new.id)::text);
  return null;
end;
$$;

create trigger _900_publish after insert on app_public.notifications
  for each row execute function app_private.tg_notifications__publish();

-- What the worker sends for a notification (null: gone, delivered or given up).
create function app_private.notification_webhook(p_id uuid) returns jsonb
language sql stable security definer set search_path = pg_catalog as $$
  select jsonb_build_object('id', n.id, 'customerId', n.customer_id, 'orderId', n.order_id,
                            'kind', n.kind, 'message', n.message, 'createdAt', n.created_at)
    from app_public.notifications n join app_private.notification_webhooks w on w.notification_id = n.id
   where n.id = p_id and w.delivered_at is null and w.gave_up_at is null;
$$;
grant execute on function app_private.notification_webhook(uuid) to cafe_system;

create function app_private.notification_webhook_delivered(p_id uuid) returns void
language sql volatile security definer set search_path = pg_catalog as $$
  update app_private.notification_webhooks
     set attempts = attempts + 1, last_attempt_at = now(), delivered_at = coalesce(delivered_at, now()), last_error = null
   where notification_id = p_id;
$$;
grant execute on function app_private.notification_webhook_delivered(uuid) to cafe_system;

-- A failed attempt: the next one is queued (same job_key, so still one job)
-- after notify_webhook_backoff_base_seconds * 2^(attempts - 1), at most
-- notify_webhook_backoff_max_seconds; after notify_webhook_max_attempts it
-- gives up. Returns when the next attempt runs, null when it gave up.
create function app_private.notification_webhook_failed(p_id uuid, p_error text) returns timestamptz
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_attempts integer;
  v_run_at timestamptz;
begin
  update app_private.notification_webhooks
     set attempts = attempts + 1, last_attempt_at = now(), last_error = left(p_error, 500)
   where notification_id = p_id and delivered_at is null and gave_up_at is null
  returning attempts into v_attempts;
  if v_attempts is null then
    return null;
  end if;
  if v_attempts >= app_private.setting('notify_webhook_max_attempts') then
    update app_private.notification_webhooks set gave_up_at = now() where notification_id = p_id;
    return null;
  end if;
  v_run_at := now() + make_interval(secs => least(
    app_private.setting('notify_webhook_backoff_max_seconds'),
    app_private.setting('notify_webhook_backoff_base_seconds') * power(2, least(v_attempts - 1, 30))));
  perform graphile_worker.add_job('notification__send_webhook', json_build_object('id', p_id),
    job_key := 'notification__send_webhook:' || p_id, run_at := v_run_at,
    max_attempts := app_private.setting('notify_webhook_max_attempts')::integer);
  return v_run_at;
end;
$$;
grant execute on function app_private.notification_webhook_failed(uuid,text) to cafe_system;

--------------------------------------------------------------------------------
-- 720 the worker: liveness, job counts, tasks and upkeep
--------------------------------------------------------------------------------

create table app_private.worker_heartbeats (
  worker_id text primary key,
  process text not null,
  last_seen timestamptz not null default now()
);

-- Called by every worker process every few seconds: records its workers as
-- alive, then unlocks jobs held by workers that stopped beating (or never
-- beat and have held a job for too long). Returns the workers released.
create function app_private.worker_heartbeat(p_process text, p_worker_ids text[]) returns text[]
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  dead_after interval := make_interval(secs => app_private.setting('worker_dead_after_seconds'));
  dead text[];
begin
  insert into app_private.worker_heartbeats (worker_id, process, last_seen)
  select unnest(p_worker_ids), p_process, now()
  on conflict (worker_id) do update set last_seen = now(), process = excluded.process;

  select array_agg(distinct j.locked_by) into dead
  from graphile_worker.jobs j
  where j.locked_by is not null
    and j.locked_at < now() - dead_after
    and not exists (
      select 1 from app_private.worker_heartbeats h
      where h.worker_id = j.locked_by and h.last_seen > now() - dead_after);
  if dead is not null then
    perform graphile_worker.force_unlock_workers(dead);
  end if;
  delete from app_private.worker_heartbeats where last_seen < now() - dead_after * 10;
  return coalesce(dead, '{}');
end;
$$;

create function app_private.job_counts() returns table (state text, count bigint)
language plpgsql stable security definer set search_path = pg_catalog as $$
begin
  return query
    select 'queued'::text, count(*) from graphile_worker.jobs j where j.locked_at is null and j.run_at <= now() and j.attempts < j.max_attempts
    union all
    select 'locked'::text, count(*) from graphile_worker.jobs j where j.locked_at is not null
    union all
    select 'failed'::text, count(*) from graphile_worker.jobs j where j.last_error is not null;
end;
$$;
grant execute on function app_private.job_counts() to cafe_system;

-- A worker task (start_preparation, queued by app_private.mark_paid):
-- idempotent.
create function app_private.start_preparation(p_order_id uuid) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  update app_public.orders set status = 'PREPARING' where id = p_order_id and status = 'PAID';
  return found;
end;
$$;
grant execute on function app_private.start_preparation(uuid) to cafe_system;

-- Cancels PENDING orders past their deadline, at most p_limit a call, and
-- returns how many. Called by each worker process every second, as
-- cafe_system (several may share the work: rows locked by another are
-- skipped). SECURITY DEFINER changes the user, not the `role` setting, so
-- the move is the system's and order_status_transitions decides it; the
-- usual triggers free the stock and notify subscribers.
create function app_private.expire_pending_orders(p_limit integer default 500) returns integer
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  n integer;
begin
  with due as (
    select o.id from app_public.orders o
     where o.status = 'PENDING' and o.expires_at <= now()
     order by o.expires_at
     limit greatest(p_limit, 1)
     for update skip locked
  )
  update app_public.orders o set status = 'CANCELLED'
    from due where o.id = due.id;
  get diagnostics n = row_count;
  return n;
end;
$$;
comment on function app_private.expire_pending_orders(integer) is 'Cancels unpaid orders past their expires_at (as the calling role: cafe_system for the worker); returns how many.';
grant execute on function app_private.expire_pending_orders(integer) to cafe_system;

-- Run hourly by the worker (crontab task purge_sign_in_logs): deletes
-- sign-in and registration attempts older than sign_in_log_retention_days
-- (and than their limit's window, which still counts them), and refresh
-- tokens expired or revoked that long ago. A used token whose sign-in goes
-- on stays until it expires: presenting it again must still end the
-- sign-in (refresh_session). Returns how many rows it deleted.
create function app_private.purge_sign_in_logs() returns integer
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  keep interval := make_interval(days => app_private.setting('sign_in_log_retention_days')::integer);
  n integer;
  total integer := 0;
begin
  delete from app_private.login_attempts
   where attempted_at < now() - greatest(keep, make_interval(secs => app_private.setting('login_window_seconds')));
  get diagnostics n = row_count;
  total := total + n;
  delete from app_private.registration_attempts
   where attempted_at < now() - greatest(keep, make_interval(secs => app_private.setting('registration_window_seconds')));
  get diagnostics n = row_count;
  total := total + n;
  delete from app_private.refresh_tokens
   where expires_at < now() - keep or revoked_at < now() - keep;
  get diagnostics n = row_count;
  return total + n;
end;
$$;
grant execute on function app_private.purge_sign_in_logs() to cafe_system;

-- Refused deliveries older than failed_delivery_retention_days go; run
-- hourly by the worker (crontab task purge_failed_deliveries). Returns how
-- many rows it deleted.
create function app_private.purge_failed_deliveries() returns integer
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  n integer;
begin
  delete from app_private.payment_deliveries
   where outcome = 'rejected'
     and received_at < now() - make_interval(days => app_private.setting('failed_delivery_retention_days')::integer);
  get diagnostics n = row_count;
  return n;
end;
$$;
grant execute on function app_private.purge_failed_deliveries() to cafe_system;

-- Idempotency keys past their retention go; run hourly by the worker
-- (crontab task purge_idempotency_keys). Returns how many rows it deleted.
create function app_private.purge_idempotency_keys() returns integer
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  n integer;
begin
  delete from app_private.idempotency_keys where expires_at <= now();
  get diagnostics n = row_count;
  return n;
end;
$$;
grant execute on function app_private.purge_idempotency_keys() to cafe_system;

--------------------------------------------------------------------------------
-- 800 sales: figures and the report
--------------------------------------------------------------------------------

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
grant execute on function app_public.coffees_sales_data(app_public.coffees) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

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
grant execute on function app_public.featured_coffee() to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

create function app_private.cafe_time_zone() returns text
language sql stable security definer set search_path = pg_catalog as $$
  select app_private.text_setting('cafe_time_zone');
$$;

-- An ISO 8601 date (midnight in the café's zone), local date-time (in the
-- café's zone) or date-time with an offset or Z. Anything else: 22023.
create function app_private.parse_report_time(p_value text, p_zone text, p_name text) returns timestamptz
language plpgsql stable as $$
begin
  if p_value ~ '^\d{4}-\d{2}-\d{2}$' then
    return p_value::date::timestamp at time zone p_zone;
  elsif p_value ~ '^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?$' then
    return p_value::timestamp at time zone p_zone;
  elsif p_value ~ '^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}(:?\d{2})?)$' then
    return p_value::timestamptz;
  end if;
  raise exception '% is not an ISO 8601 date or time (e.g. 2026-11-23 or 2026-11-23T08:00:00+01:00).', p_name using errcode = '22023';
exception
  when datetime_field_overflow or invalid_datetime_format or invalid_time_zone_displacement_value then
    raise exception '% is not a valid date or time: %.', p_name, p_value using errcode = '22023';
end;
$$;

-- "2026-11-23T14:00+01:00": a bucket's start in the café's zone, with its
-- offset (the two 01:00 hours of a DST change stay apart).
create function app_private.local_iso(p_at timestamptz, p_zone text, p_hour boolean) returns text
language sql stable as $$
  select case when p_hour then
    to_char(p_at at time zone p_zone, 'YYYY-MM-DD"T"HH24:MI')
      || case when (p_at at time zone p_zone) - (p_at at time zone 'UTC') < interval '0' then '-' else '+' end
      || to_char(abs(extract(epoch from (p_at at time zone p_zone) - (p_at at time zone 'UTC')))::integer / 3600, 'FM00')
      || ':' || to_char(abs(extract(epoch from (p_at at time zone p_zone) - (p_at at time zone 'UTC')))::integer % 3600 / 60, 'FM00')
  else to_char(p_at at time zone p_zone, 'YYYY-MM-DD') end;
$$;

create function app_hidden.sales_report(p_from text, p_to text, p_group_by text, p_max_rows integer)
returns table (bucket text, orders integer, cups integer, revenue double precision)
language plpgsql stable security definer set search_path = pg_catalog as $$
declare
  v_zone text;
  v_from timestamptz;
  v_to timestamptz;
begin
  perform app_hidden.require_admin();
  v_zone := app_private.cafe_time_zone();
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
        group by 1
      ) b
      order by b.start
      limit p_max_rows;
  else
    raise exception 'groupBy is HOUR, DAY or COFFEE.' using errcode = '22023';
  end if;
end;
$$;
comment on function app_hidden.sales_report(text, text, text, integer) is
  'Admins only: paid orders (by payment time, provider or till; orders cancelled after payment left out) from p_from (included) to p_to (excluded), per HOUR or DAY of the café''s time zone, or per COFFEE; at most p_max_rows rows.';
grant execute on function app_hidden.sales_report(text,text,text,integer) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 810 audit: schema changes and reading the log
--------------------------------------------------------------------------------

-- Schema-level rules (policies, grants, functions, tables' RLS switches):
-- an event trigger on ddl_command_end. Creating one needs a superuser, so
-- the service calls app_private.install_ddl_audit() when it has a superuser
-- URL; otherwise a DBA runs it once (docs/api.md). A failure here never
-- blocks the DDL itself: it becomes a warning.
create function app_private.audit_ddl() returns event_trigger
language plpgsql security definer set search_path = pg_catalog as $$
declare
  r record;
  v_any boolean := false;
begin
  if tg_tag not in ('CREATE POLICY', 'ALTER POLICY', 'DROP POLICY', 'GRANT', 'REVOKE', 'ALTER DEFAULT PRIVILEGES',
                    'CREATE FUNCTION', 'ALTER FUNCTION', 'DROP FUNCTION', 'CREATE PROCEDURE', 'ALTER PROCEDURE', 'DROP PROCEDURE',
                    'ALTER TABLE', 'CREATE TRIGGER', 'ALTER TRIGGER', 'DROP TRIGGER', 'CREATE EVENT TRIGGER', 'ALTER EVENT TRIGGER', 'DROP EVENT TRIGGER') then
    return;
  end if;
  begin
    for r in select * from pg_event_trigger_ddl_commands() loop
      if r.schema_name is null or r.schema_name not in ('graphile_worker', 'graphile_migrate', 'pg_temp') and r.schema_name !~ '^pg_temp' then
        v_any := true;
        insert into app_private.audit_log (actor, action, entity, before, after)
        values (app_private.audit_actor(), r.command_tag, coalesce(r.object_type, 'object') || ' ' || coalesce(r.object_identity, '?'),
                null, jsonb_build_object('statement', left(current_query(), 2000)));
      end if;
    end loop;
    if not v_any and tg_tag like 'DROP %' then
      -- Drops are not among ddl_commands(): the statement names the object.
      insert into app_private.audit_log (actor, action, entity, before, after)
      values (app_private.audit_actor(), tg_tag, lower(substr(tg_tag, 6)), null, jsonb_build_object('statement', left(current_query(), 2000)));
    end if;
  exception when others then
    raise warning 'audit of % failed: %', tg_tag, sqlerrm;
  end;
end;
$$;

-- Idempotent; run by a superuser (the service with a superuser URL, or a DBA).
create function app_private.install_ddl_audit() returns void
language plpgsql as $$
begin
  if not exists (select 1 from pg_catalog.pg_event_trigger where evtname = 'cafe_audit_ddl') then
    create event trigger cafe_audit_ddl on ddl_command_end execute function app_private.audit_ddl();
  end if;
end;
$$;

create function app_private.ddl_audit_installed() returns boolean
language sql stable as $$
  select exists (select 1 from pg_catalog.pg_event_trigger where evtname = 'cafe_audit_ddl' and evtenabled <> 'D');
$$;

create function app_hidden.audit_log(p_first integer, p_offset integer)
returns table (at timestamptz, actor text, action text, entity text, before text, after text)
language plpgsql stable security definer set search_path = pg_catalog as $$
begin
  perform app_hidden.require_admin();
  if p_first < 0 or p_offset < 0 then
    raise exception 'first and offset are 0 or more.' using errcode = '22023';
  end if;
  return query
    select l.at, l.actor, l.action, l.entity, l.before::text, l.after::text
    from app_private.audit_log l
    order by l.at desc, l.id desc
    limit least(coalesce(p_first, 100), 500) offset coalesce(p_offset, 0);
end;
$$;
comment on function app_hidden.audit_log(integer, integer) is 'Admins only: the audit log, newest first; at most 500 rows (100 when p_first is null; the API passes its DEFAULT_LIST_SIZE).';
grant execute on function app_hidden.audit_log(integer,integer) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 900 live cache: announcing changes to public reads
--------------------------------------------------------------------------------

-- The API keeps answers to public reads (the menu, a coffee,
-- search; src/http/liveCache.ts PUBLIC_READS) in memory and drops them all
-- when a table those answers are made of changes. One statement-level
-- trigger per table announces the change on one channel (common/topics.ts
-- PUBLIC_READS_TOPIC), payload the table's name; Postgres folds identical
-- notifications of one transaction into one, after commit.
create function app_private.tg__announce_public_reads() returns trigger
language plpgsql as $$
begin
  perform pg_notify('public_reads_changed', tg_table_schema || '.' || tg_table_name);
  return null;
end;
$$;

create trigger _900_live_cache after insert or update or delete or truncate on app_public.coffees
  for each statement execute function app_private.tg__announce_public_reads();
create trigger _900_live_cache after insert or update or delete or truncate on app_public.roasters
  for each statement execute function app_private.tg__announce_public_reads();
create trigger _900_live_cache after insert or update or delete or truncate on app_public.ingredients
  for each statement execute function app_private.tg__announce_public_reads();
create trigger _900_live_cache after insert or update or delete or truncate on app_public.recipe_lines
  for each statement execute function app_private.tg__announce_public_reads();
create trigger _900_live_cache after insert or update or delete or truncate on app_public.reviews
  for each statement execute function app_private.tg__announce_public_reads();
-- coffee.inventory: stock on the shelf less what open orders hold.
create trigger _900_live_cache after insert or update or delete or truncate on app_public.stock_items
  for each statement execute function app_private.tg__announce_public_reads();
create trigger _900_live_cache after insert or update or delete or truncate on app_private.stock_reserved
  for each statement execute function app_private.tg__announce_public_reads();
-- featuredCoffee: what sold most in the last 7 days.
create trigger _900_live_cache after insert or update of status, time_ordered or delete or truncate on app_public.orders
  for each statement execute function app_private.tg__announce_public_reads();
create trigger _900_live_cache after insert or update or delete or truncate on app_public.order_items
  for each statement execute function app_private.tg__announce_public_reads();
