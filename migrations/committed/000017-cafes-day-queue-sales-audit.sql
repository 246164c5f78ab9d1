--! Previous: sha1:10f6d4a7cc79bafac03477dd0bbb413390c422b8
--! Hash: sha1:b764174f485e685e2473aadbcce34aeb8e39a8aa
--! Message: the cafe's day: queue topic, sales report, audit log

-- 000018: the café's day.
--   1. order_queue: one NOTIFY per order entering, moving through or leaving
--      the barista queue (orderQueueChanged), whatever made the change.
--   2. sales_report: paid orders per hour, day or coffee, in the café's
--      time zone (setting cafe_time_zone).
--   3. audit_log: every change of a rule (settings, transitions, alert
--      rules, coffee prices/availability/creation, staff accounts) and,
--      once a superuser installs the event trigger, of the schema's rules.

--------------------------------------------------------------------------------
-- 1. The queue topic
--------------------------------------------------------------------------------

-- order:<id> carries every change of an order or its lines; order_status:<id>
-- carries status changes, with the status and barista as they were then;
-- order_queue carries the whole row as it was after each queue step, so a
-- barista sees each step in order even when steps follow each other quickly
-- (an order row is well under NOTIFY's 8000-byte limit: notes <= 500
-- characters; should a row ever be larger, its notes are left out rather
-- than the change failing). Topic names on the TypeScript side: src/topics.ts.
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

-- Subscribing to the queue: staff only (customers FORBIDDEN, anonymous
-- UNAUTHENTICATED).
create or replace function app_hidden.assert_can_follow_queue() returns boolean
language plpgsql stable as $$
begin
  perform app_hidden.require_staff();
  return true;
end;
$$;
grant execute on function app_hidden.assert_can_follow_queue() to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 2. Sales
--------------------------------------------------------------------------------

-- Settings may hold text (a time zone) as well as numbers: exactly one of
-- value / text_value.
alter table app_private.settings add column if not exists text_value text;
alter table app_private.settings alter column value drop not null;
alter table app_private.settings drop constraint if exists settings_one_value;
alter table app_private.settings add constraint settings_one_value check (num_nonnulls(value, text_value) = 1);

create or replace function app_private.tg_settings__check() returns trigger
language plpgsql as $$
begin
  if new.key = 'cafe_time_zone' then
    if new.text_value is null then
      raise exception 'cafe_time_zone is a time zone name in text_value, e.g. Europe/Paris.' using errcode = '22023';
    end if;
    perform now() at time zone new.text_value; -- raises 22023 for an unknown zone
  end if;
  return new;
end;
$$;
drop trigger if exists _100_check on app_private.settings;
create trigger _100_check before insert or update on app_private.settings
  for each row execute function app_private.tg_settings__check();

insert into app_private.settings (key, value, text_value, description) values
  ('cafe_time_zone', null, 'UTC', 'The café''s time zone (an IANA name in text_value): sales report buckets follow it.')
on conflict (key) do nothing;

create or replace function app_private.cafe_time_zone() returns text
language sql stable security definer set search_path = pg_catalog as $$
  select coalesce((select text_value from app_private.settings where key = 'cafe_time_zone'), 'UTC');
$$;

-- Sales are counted by payment time; an order cancelled after payment owes
-- its payment back (a refund), so it is left out. The report reads this
-- index only (an index-only scan: status, id and total are in it; PostgreSQL
-- 15 still wants status there even when a predicate would imply it). At
-- 1,000,000 orders a day's report takes ~15-40 ms (200 ms of sequential scan
-- without it); the time grows with the orders in the range, not the table.
drop index if exists app_public.orders_sales_idx;
create index orders_sales_idx on app_public.orders (paid_at) include (status, id, total)
  where paid_at is not null;

-- An ISO 8601 date (midnight in the café's zone), local date-time (in the
-- café's zone) or date-time with an offset or Z. Anything else: 22023.
create or replace function app_private.parse_report_time(p_value text, p_zone text, p_name text) returns timestamptz
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
create or replace function app_private.local_iso(p_at timestamptz, p_zone text, p_hour boolean) returns text
language sql stable as $$
  select case when p_hour then
    to_char(p_at at time zone p_zone, 'YYYY-MM-DD"T"HH24:MI')
      || case when (p_at at time zone p_zone) - (p_at at time zone 'UTC') < interval '0' then '-' else '+' end
      || to_char(abs(extract(epoch from (p_at at time zone p_zone) - (p_at at time zone 'UTC')))::integer / 3600, 'FM00')
      || ':' || to_char(abs(extract(epoch from (p_at at time zone p_zone) - (p_at at time zone 'UTC')))::integer % 3600 / 60, 'FM00')
  else to_char(p_at at time zone p_zone, 'YYYY-MM-DD') end;
$$;

drop function if exists app_hidden.sales_report(text, text, text);
create function app_hidden.sales_report(p_from text, p_to text, p_group_by text)
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
  if p_group_by = 'COFFEE' then
    return query
      select c.name::text, count(distinct o.id)::integer, sum(oi.quantity)::integer, sum(oi.quantity * oi.unit_price)::double precision
      from app_public.orders o
      join app_public.order_items oi on oi.order_id = o.id
      join app_public.coffees c on c.id = oi.coffee_id
      where o.paid_at >= v_from and o.paid_at < v_to and o.paid_at is not null and o.status <> 'CANCELLED'
      group by c.id, c.name
      order by 4 desc, 1;
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
      order by b.start;
  else
    raise exception 'groupBy is HOUR, DAY or COFFEE.' using errcode = '22023';
  end if;
end;
$$;
comment on function app_hidden.sales_report(text, text, text) is
  'Admins only: paid orders (by payment time, provider or till; orders cancelled after payment left out) from p_from (included) to p_to (excluded), per HOUR or DAY of the café''s time zone, or per COFFEE.';
grant execute on function app_hidden.sales_report(text, text, text) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 3. The audit log
--------------------------------------------------------------------------------

-- The staff engineer's column (disabling a staff account); created here too
-- so the audit trigger can name it whichever migration runs first.
alter table app_private.accounts add column if not exists disabled_at timestamptz;

create table if not exists app_private.audit_log (
  id bigint generated always as identity primary key,
  at timestamptz not null default clock_timestamp(),
  actor text not null,
  action text not null,
  entity text not null,
  before jsonb,
  after jsonb
);
create index if not exists audit_log_at_idx on app_private.audit_log (at desc, id desc);
comment on table app_private.audit_log is
  'Every change of a rule: who, when, what, before and after. No request role may read or write it directly (no grants, RLS on); admins read it through auditLog. A DBA''s retention job may delete old rows as the owner.';
-- Nothing for the request roles: no grants, and RLS with no policy.
alter table app_private.audit_log enable row level security;
revoke all on app_private.audit_log from public;

-- Who made the change: the signed-in account (e-mail and role) for GraphQL;
-- the payment callback or the worker (both act as cafe_system: the callback
-- logs in as the API's authenticator, the worker as the owner); else the
-- database user of a DBA's own session.
create or replace function app_private.audit_actor() returns text
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
create or replace function app_private.tg_audit() returns trigger
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

drop trigger if exists _950_audit on app_private.settings;
create trigger _950_audit after insert or update or delete on app_private.settings
  for each row execute function app_private.tg_audit('key', 'key,value,text_value');
drop trigger if exists _950_audit on app_public.order_status_transitions;
create trigger _950_audit after insert or update or delete on app_public.order_status_transitions
  for each row execute function app_private.tg_audit('from_status,to_status,role', '*');
drop trigger if exists _950_audit on app_private.alert_rules;
create trigger _950_audit after insert or update or delete on app_private.alert_rules
  for each row execute function app_private.tg_audit('kind', 'kind,threshold,window_seconds,block_seconds');
drop trigger if exists _950_audit on app_public.coffees;
drop trigger if exists _950_audit_update on app_public.coffees;
create trigger _950_audit after insert or delete on app_public.coffees
  for each row execute function app_private.tg_audit('id', 'id,name,price,available');
create trigger _950_audit_update after update of price, available on app_public.coffees
  for each row execute function app_private.tg_audit('id', 'price,available');
-- Staff accounts: added, removed, role changed, disabled. The password hash
-- is never recorded.
drop trigger if exists _950_audit_staff on app_private.accounts;
drop trigger if exists _950_audit_staff_insert on app_private.accounts;
drop trigger if exists _950_audit_staff_delete on app_private.accounts;
create trigger _950_audit_staff_insert after insert on app_private.accounts
  for each row when (new.role in ('barista', 'admin'))
  execute function app_private.tg_audit('id', 'id,email,role,disabled_at');
create trigger _950_audit_staff after update of role, disabled_at, email on app_private.accounts
  for each row when (old.role in ('barista', 'admin') or new.role in ('barista', 'admin'))
  execute function app_private.tg_audit('id', 'email,role,disabled_at');
create trigger _950_audit_staff_delete after delete on app_private.accounts
  for each row when (old.role in ('barista', 'admin'))
  execute function app_private.tg_audit('id', 'id,email,role,disabled_at');

-- Schema-level rules (policies, grants, functions, tables' RLS switches):
-- an event trigger on ddl_command_end. Creating one needs a superuser, so
-- the service calls app_private.install_ddl_audit() when it has a superuser
-- URL; otherwise a DBA runs it once (README). A failure here never blocks
-- the DDL itself: it becomes a warning.
create or replace function app_private.audit_ddl() returns event_trigger
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
create or replace function app_private.install_ddl_audit() returns void
language plpgsql as $$
begin
  if not exists (select 1 from pg_catalog.pg_event_trigger where evtname = 'cafe_audit_ddl') then
    create event trigger cafe_audit_ddl on ddl_command_end execute function app_private.audit_ddl();
  end if;
end;
$$;

create or replace function app_private.ddl_audit_installed() returns boolean
language sql stable as $$
  select exists (select 1 from pg_catalog.pg_event_trigger where evtname = 'cafe_audit_ddl' and evtenabled <> 'D');
$$;

-- Admins read the log newest first, a page at a time (at most 500 rows: a
-- larger `first` is cut to 500).
drop function if exists app_hidden.audit_log(integer, integer);
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
grant execute on function app_hidden.audit_log(integer, integer) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;
