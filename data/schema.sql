--
-- PostgreSQL database dump
--

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: app_hidden; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA app_hidden;

--
-- Name: app_private; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA app_private;

--
-- Name: app_public; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA app_public;

--
-- Name: citext; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS citext WITH SCHEMA public;

--
-- Name: EXTENSION citext; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON EXTENSION citext IS 'data type for case-insensitive character strings';

--
-- Name: pg_trgm; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

--
-- Name: EXTENSION pg_trgm; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON EXTENSION pg_trgm IS 'text similarity measurement and index searching based on trigrams';

--
-- Name: pgcrypto; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS pgcrypto WITH SCHEMA public;

--
-- Name: EXTENSION pgcrypto; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON EXTENSION pgcrypto IS 'cryptographic functions';

--
-- Name: payment_start; Type: TYPE; Schema: app_hidden; Owner: -
--

CREATE TYPE app_hidden.payment_start AS (
	order_id uuid,
	amount_minor bigint,
	currency text,
	intent_id text
);

--
-- Name: session; Type: TYPE; Schema: app_hidden; Owner: -
--

CREATE TYPE app_hidden.session AS (
	user_id uuid,
	role text,
	refresh_token text,
	sign_in_id uuid
);

--
-- Name: callback_result; Type: TYPE; Schema: app_private; Owner: -
--

CREATE TYPE app_private.callback_result AS (
	http_status integer,
	status text,
	code text,
	message text,
	order_id uuid
);

--
-- Name: allergen; Type: DOMAIN; Schema: app_public; Owner: -
--

CREATE DOMAIN app_public.allergen AS text NOT NULL
	CONSTRAINT allergen_check CHECK ((VALUE <> ''::text));

--
-- Name: coffee_category; Type: TYPE; Schema: app_public; Owner: -
--

CREATE TYPE app_public.coffee_category AS ENUM (
    'FEATURED',
    'ESPRESSO',
    'MILK_BASED',
    'FILTER',
    'COLD',
    'SEASONAL'
);

--
-- Name: order_item_option; Type: TYPE; Schema: app_public; Owner: -
--

CREATE TYPE app_public.order_item_option AS (
	name text,
	price_delta numeric(10,2)
);

--
-- Name: TYPE order_item_option; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TYPE app_public.order_item_option IS 'An option of an order line, as it was ordered.';

--
-- Name: COLUMN order_item_option.name; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.order_item_option.name IS '@notNull';

--
-- Name: COLUMN order_item_option.price_delta; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.order_item_option.price_delta IS '@notNull';

--
-- Name: order_line; Type: TYPE; Schema: app_public; Owner: -
--

CREATE TYPE app_public.order_line AS (
	coffee text,
	quantity integer,
	notes text
);

--
-- Name: TYPE order_line; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TYPE app_public.order_line IS 'The single-line view of an order that point-of-sale clients read after createOrder(coffeeId:, quantity:, notes:).';

--
-- Name: COLUMN order_line.coffee; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.order_line.coffee IS '@notNull
The coffee''s name.';

--
-- Name: COLUMN order_line.quantity; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.order_line.quantity IS '@notNull';

--
-- Name: COLUMN order_line.notes; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.order_line.notes IS 'The order''s notes.';

--
-- Name: order_status; Type: TYPE; Schema: app_public; Owner: -
--

CREATE TYPE app_public.order_status AS ENUM (
    'PENDING',
    'PAID',
    'PREPARING',
    'BREWING',
    'READY',
    'COMPLETED',
    'CANCELLED'
);

--
-- Name: payment_method; Type: TYPE; Schema: app_public; Owner: -
--

CREATE TYPE app_public.payment_method AS ENUM (
    'CASH',
    'CARD_PRESENT'
);

--
-- Name: refund_status; Type: TYPE; Schema: app_public; Owner: -
--

CREATE TYPE app_public.refund_status AS ENUM (
    'PENDING',
    'SENT',
    'SUCCEEDED',
    'FAILED'
);

--
-- Name: TYPE refund_status; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TYPE app_public.refund_status IS 'PENDING: owed (being sent to the provider, or to settle by hand); SENT: the provider took it; SUCCEEDED: paid back; FAILED: the provider refused it (settle by hand).';

--
-- Name: roast_level; Type: TYPE; Schema: app_public; Owner: -
--

CREATE TYPE app_public.roast_level AS ENUM (
    'LIGHT',
    'MEDIUM',
    'MEDIUM_DARK',
    'DARK'
);

--
-- Name: sales_data; Type: TYPE; Schema: app_public; Owner: -
--

CREATE TYPE app_public.sales_data AS (
	last_week integer,
	trend numeric
);

--
-- Name: TYPE sales_data; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TYPE app_public.sales_data IS '@typeName SalesData
Cups sold recently.';

--
-- Name: COLUMN sales_data.last_week; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.sales_data.last_week IS '@notNull
Cups sold (order lines of orders PAID or later) in the last 7 days.';

--
-- Name: COLUMN sales_data.trend; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.sales_data.trend IS '@notNull
Change against the 7 days before, as a fraction: 0.25 is +25%; 0 when both weeks sold nothing, 1 when only this week sold.';

--
-- Name: add_staff_account(text, text, text, text, text, uuid); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.add_staff_account(p_email text, p_name text, p_role text, p_password text, p_source text DEFAULT 'unknown'::text, p_store_id uuid DEFAULT NULL::uuid) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: assert_can_follow_order(uuid); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.assert_can_follow_order(p_id uuid) RETURNS boolean
    LANGUAGE plpgsql STABLE
    AS $$
begin
  perform app_hidden.require_signed_in();
  -- Runs as the caller: RLS decides what exists.
  if not exists (select 1 from app_public.orders where id = p_id) then
    raise exception 'No order with id %.', p_id using errcode = 'P0002';
  end if;
  return true;
end;
$$;

--
-- Name: assert_can_follow_queue(uuid); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.assert_can_follow_queue(p_store_id uuid DEFAULT NULL::uuid) RETURNS uuid
    LANGUAGE plpgsql STABLE
    AS $$
declare
  v_store uuid;
begin
  perform app_hidden.require_staff();
  v_store := app_hidden.store_or_default(p_store_id);
  perform app_hidden.require_store_staff(v_store);
  return v_store;
end;
$$;

--
-- Name: assert_password_check_allowed(text, text, boolean); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.assert_password_check_allowed(p_email text, p_source text, p_registration boolean DEFAULT false) RETURNS void
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
declare
  v_source text := app_private.source_key(p_source);
begin
  if p_registration then
    perform app_private.assert_registration_allowed(v_source);
  end if;
  perform app_private.assert_login_allowed(
    coalesce(p_email, (select email::text from app_private.accounts where id = app_public.current_user_id()), ''), v_source);
end;
$$;

--
-- Name: audit_log(integer, integer); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.audit_log(p_first integer, p_offset integer) RETURNS TABLE(at timestamp with time zone, actor text, action text, entity text, before text, after text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION audit_log(p_first integer, p_offset integer); Type: COMMENT; Schema: app_hidden; Owner: -
--

COMMENT ON FUNCTION app_hidden.audit_log(p_first integer, p_offset integer) IS 'Admins only: the audit log, newest first (a store manager: the rows of their stores); at most 500 rows (100 when p_first is null; the API passes its DEFAULT_LIST_SIZE).';

--
-- Name: authenticate(text, text, text); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.authenticate(p_email text, p_password text, p_source text DEFAULT 'unknown'::text) RETURNS app_hidden.session
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: change_password(text, text, text); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.change_password(p_old text, p_new text, p_source text DEFAULT 'unknown'::text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: default_store_id(); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.default_store_id() RETURNS uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select s.id from app_public.stores s where s.is_default;
$$;

--
-- Name: FUNCTION default_store_id(); Type: COMMENT; Schema: app_hidden; Owner: -
--

COMMENT ON FUNCTION app_hidden.default_store_id() IS 'The default store: what an argument naming no store means.';

--
-- Name: disable_account(text); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.disable_account(p_email text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: idempotency_answer(text, text, text); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.idempotency_answer(p_key text, p_source text, p_request_hash text) RETURNS TABLE(outcome text, response json)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select case when k.request_hash is null then 'pending'
              when k.request_hash <> p_request_hash then 'reused'
              when k.status = 'done' then 'replay'
              else 'pending' end,
         case when k.request_hash = p_request_hash and k.status = 'done' then k.response end
    from (select 1) one
    left join app_private.idempotency_keys k
      on k.owner = app_private.idempotency_owner(p_source) and k.key = p_key and k.expires_at > now();
$$;

--
-- Name: idempotency_claim(text, text, text); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.idempotency_claim(p_key text, p_source text, p_request_hash text) RETURNS TABLE(outcome text, response json, wait_ms bigint)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $_$
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
$_$;

--
-- Name: idempotency_committed(text, text, json); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.idempotency_committed(p_key text, p_source text, p_mutation_result json) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  if app_private.transaction_changed_rows() = 0 then
    perform app_hidden.idempotency_forget(p_key, p_source);
    return false;
  end if;
  update app_private.idempotency_keys
     set status = 'committed', mutation_result = p_mutation_result
   where owner = app_private.idempotency_owner(p_source) and key = p_key and status = 'claimed';
  if not found then
    raise exception 'No claimed Idempotency-Key to mark committed.' using errcode = 'P0002';
  end if;
  return true;
end;
$$;

--
-- Name: idempotency_forget(text, text); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.idempotency_forget(p_key text, p_source text) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  delete from app_private.idempotency_keys
   where owner = app_private.idempotency_owner(p_source) and key = p_key and status = 'claimed';
$$;

--
-- Name: idempotency_store(text, text, json); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.idempotency_store(p_key text, p_source text, p_response json) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  if app_private.transaction_changed_rows() = 0
     and exists (select 1 from app_private.idempotency_keys
                  where owner = app_private.idempotency_owner(p_source) and key = p_key and status = 'claimed') then
    perform app_hidden.idempotency_forget(p_key, p_source);
    return;
  end if;
  update app_private.idempotency_keys
     set status = 'done', response = p_response
   where owner = app_private.idempotency_owner(p_source) and key = p_key and status in ('claimed', 'committed');
  if not found then
    raise exception 'No claimed Idempotency-Key to answer.' using errcode = 'P0002';
  end if;
end;
$$;

--
-- Name: list_staff(); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.list_staff() RETURNS TABLE(email text, name text, role text, disabled_at timestamp with time zone)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  perform app_hidden.require_admin();
  return query
    select a.email::text, b.name, a.role, a.disabled_at
      from app_private.accounts a left join app_public.baristas b on b.id = a.id
     where a.role in ('barista', 'admin')
     order by a.role, a.email;
end;
$$;

--
-- Name: logout(text); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.logout(p_token text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: note_registration_attempt(text); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.note_registration_attempt(p_source text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  p_source := app_private.source_key(p_source);
  -- One registration of a source at a time (until its transaction ends):
  -- concurrent tries are counted one after the other.
  perform pg_advisory_xact_lock(hashtextextended('registration source:' || p_source, 0));
  perform app_private.assert_registration_allowed(p_source);
  insert into app_private.registration_attempts (source) values (p_source);
end;
$$;

--
-- Name: notification_recipient(); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.notification_recipient() RETURNS uuid
    LANGUAGE plpgsql STABLE
    AS $$
begin
  perform app_hidden.require_signed_in();
  if app_public.current_actor() <> 'customer' then
    raise exception 'Only customers receive notifications.' using errcode = '42501';
  end if;
  return app_public.current_user_id();
end;
$$;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: coffees; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.coffees (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    price numeric(10,2) NOT NULL,
    roast app_public.roast_level DEFAULT 'MEDIUM'::app_public.roast_level NOT NULL,
    category app_public.coffee_category DEFAULT 'ESPRESSO'::app_public.coffee_category NOT NULL,
    description text,
    image_url text,
    limited_time_offer boolean DEFAULT false NOT NULL,
    available boolean DEFAULT true NOT NULL,
    roaster_id uuid NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT coffees_image_url_check CHECK ((image_url ~ '^https?://'::text)),
    CONSTRAINT coffees_name_check CHECK (((btrim(name) <> ''::text) AND (length(name) <= 100))),
    CONSTRAINT coffees_price_check CHECK ((price > (0)::numeric))
);

--
-- Name: TABLE coffees; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.coffees IS 'A drink on the menu (or off it: see `available`).';

--
-- Name: COLUMN coffees.available; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.coffees.available IS 'On sale now. Ordering and the menu only offer available coffees.';

--
-- Name: on_sale_at(app_public.coffees, uuid); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.on_sale_at(p_coffee app_public.coffees, p_store_id uuid) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select p_coffee.available and coalesce((select sc.available from app_public.store_coffees sc
                                          where sc.store_id = p_store_id and sc.coffee_id = p_coffee.id), true);
$$;

--
-- Name: orders; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.orders (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    customer_id uuid NOT NULL,
    barista_id uuid,
    status app_public.order_status DEFAULT 'PENDING'::app_public.order_status NOT NULL,
    notes text,
    total numeric(10,2) DEFAULT 0 NOT NULL,
    time_ordered timestamp with time zone DEFAULT now() NOT NULL,
    estimated_ready_time timestamp with time zone,
    created_by uuid,
    paid_at timestamp with time zone,
    payment_method text,
    inventory_taken_at timestamp with time zone,
    inventory_returned_at timestamp with time zone,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone,
    store_id uuid DEFAULT app_hidden.default_store_id() NOT NULL,
    CONSTRAINT orders_notes_check CHECK ((length(notes) <= 500)),
    CONSTRAINT orders_total_check CHECK ((total >= (0)::numeric))
);

--
-- Name: TABLE orders; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.orders IS 'An order: its lines are order items, its status moves by the rules in order_status_transitions.';

--
-- Name: COLUMN orders.total; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.orders.total IS 'Sum of the lines at the prices captured when the order was made.';

--
-- Name: COLUMN orders.created_by; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.orders.created_by IS '@behavior -*';

--
-- Name: COLUMN orders.inventory_taken_at; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.orders.inventory_taken_at IS '@behavior -*
When update_inventory took this order''s ingredients from stock.';

--
-- Name: COLUMN orders.inventory_returned_at; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.orders.inventory_returned_at IS '@behavior -*';

--
-- Name: COLUMN orders.expires_at; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.orders.expires_at IS 'When this order, if still unpaid (PENDING), is cancelled and its stock freed. Set when it is made; null: it does not expire.';

--
-- Name: COLUMN orders.store_id; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.orders.store_id IS 'The store the order is for (absent in createOrder: the default store).';

--
-- Name: order_for_update(uuid); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.order_for_update(p_id uuid) RETURNS app_public.orders
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: payment_start(uuid); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.payment_start(p_order_id uuid) RETURNS app_hidden.payment_start
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
declare
  v_order app_public.orders;
  v_currency text := upper(app_private.text_setting('currency'));
  result app_hidden.payment_start;
begin
  perform app_hidden.require_signed_in();
  select * into v_order from app_public.orders where id = p_order_id;
  -- Someone else's order does not exist, as far as a customer can tell.
  if v_order.id is null or (app_public.current_actor() = 'customer' and v_order.customer_id is distinct from app_public.current_user_id()) then
    raise exception 'No order with id %.', p_order_id using errcode = 'P0002';
  end if;
  if not (app_public.is_staff() or app_public.current_actor() = 'customer') then
    raise exception 'Only the order''s customer or staff may take its payment.' using errcode = '42501';
  end if;
  -- Staff at the till of the order's store (000002-stores.sql): another
  -- store's order is not theirs to see.
  if app_public.is_staff() and not v_order.store_id = any (app_public.staff_store_ids()) then
    raise exception 'No order with id %.', p_order_id using errcode = 'P0002';
  end if;
  if v_order.status <> 'PENDING' or v_order.expires_at <= now() then
    raise exception 'The order is %, so it cannot be paid.', case when v_order.status = 'PENDING' then 'past its deadline' else v_order.status::text end
      using errcode = 'CT001', detail = json_build_object('from', v_order.status, 'to', 'PAID')::text;
  end if;
  if v_order.total <= 0 then
    raise exception 'The order''s total is %: there is nothing to pay.', v_order.total using errcode = '22023';
  end if;
  result.order_id := v_order.id;
  result.amount_minor := app_private.to_minor_units(v_order.total, v_currency);
  result.currency := v_currency;
  select i.intent_id into result.intent_id from app_private.payment_intents i
   where i.order_id = v_order.id and i.amount_minor = result.amount_minor and i.currency = v_currency and i.canceled_at is null
   order by i.created_at desc limit 1;
  return result;
end;
$$;

--
-- Name: FUNCTION payment_start(p_order_id uuid); Type: COMMENT; Schema: app_hidden; Owner: -
--

COMMENT ON FUNCTION app_hidden.payment_start(p_order_id uuid) IS 'startPayment''s rule: the order''s own customer or staff, a PENDING order; what to charge (minor units), and the intent already made for it.';

--
-- Name: recent_revoked_sign_ins(integer); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.recent_revoked_sign_ins(p_seconds integer) RETURNS TABLE(sign_in_id uuid, revoked_at_ms bigint)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select r.sign_in_id, floor(extract(epoch from r.revoked_at) * 1000)::bigint
    from app_private.revoked_sign_ins r
   where r.revoked_at > now() - make_interval(secs => p_seconds);
$$;

--
-- Name: record_payment_intent(uuid, text, bigint, text); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.record_payment_intent(p_order_id uuid, p_intent_id text, p_amount_minor bigint, p_currency text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  perform app_hidden.payment_start(p_order_id);
  insert into app_private.payment_intents (intent_id, order_id, amount_minor, currency)
  values (left(p_intent_id, 255), p_order_id, p_amount_minor, upper(p_currency))
  on conflict (intent_id) do nothing;
end;
$$;

--
-- Name: refresh_session(text); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.refresh_session(p_token text) RETURNS app_hidden.session
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: register(text, text, text, text); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.register(p_email text, p_password text, p_name text, p_source text DEFAULT 'unknown'::text) RETURNS app_hidden.session
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: require_admin(); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.require_admin() RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
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

--
-- Name: require_signed_in(); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.require_signed_in() RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
begin
  if app_public.current_actor() = 'anonymous' then
    raise exception 'You must sign in to do this.' using errcode = '28000';
  end if;
end;
$$;

--
-- Name: require_staff(); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.require_staff() RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
begin
  perform app_hidden.require_signed_in();
  if not app_public.is_staff() and app_public.current_actor() not in ('system', 'dba') then
    raise exception 'Only staff may do this.' using errcode = '42501';
  end if;
end;
$$;

--
-- Name: require_store_admin(uuid); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.require_store_admin(p_store_id uuid) RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
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

--
-- Name: require_store_staff(uuid); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.require_store_staff(p_store_id uuid) RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
begin
  perform app_hidden.require_staff();
  if not p_store_id = any (app_public.staff_store_ids()) then
    raise exception 'You do not work at this store.' using errcode = '42501';
  end if;
end;
$$;

--
-- Name: sales_report(text, text, text, integer, uuid); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.sales_report(p_from text, p_to text, p_group_by text, p_max_rows integer, p_store_id uuid DEFAULT NULL::uuid) RETURNS TABLE(bucket text, orders integer, cups integer, revenue double precision)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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
  elsif p_group_by = 'OPTION' then
    return query
      select x.name, count(distinct o.id)::integer, sum(oi.quantity)::integer, sum(oi.quantity * x.price_delta)::double precision
      from app_public.orders o
      join app_public.order_items oi on oi.order_id = o.id
      join app_private.order_item_options x on x.order_id = oi.order_id and x.position = oi.position
      where o.paid_at >= v_from and o.paid_at < v_to and o.paid_at is not null and o.status <> 'CANCELLED'
        and o.store_id = any (v_stores)
      group by x.name
      order by 3 desc, 1
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
    raise exception 'groupBy is HOUR, DAY, COFFEE or OPTION.' using errcode = '22023';
  end if;
end;
$$;

--
-- Name: FUNCTION sales_report(p_from text, p_to text, p_group_by text, p_max_rows integer, p_store_id uuid); Type: COMMENT; Schema: app_hidden; Owner: -
--

COMMENT ON FUNCTION app_hidden.sales_report(p_from text, p_to text, p_group_by text, p_max_rows integer, p_store_id uuid) IS 'Admins only: paid orders (by payment time, provider or till; orders cancelled after payment left out) from p_from (included) to p_to (excluded), per HOUR or DAY, or per COFFEE, or per OPTION (by name as ordered: cups with it and the money its price deltas took); at most p_max_rows rows. With p_store_id: that store (its admins), in its time zone; without: every store the caller manages (the chain''s admin: the chain), in the chain''s cafe_time_zone.';

--
-- Name: share_rate_usage(text, bigint, integer, text[], integer[], integer[], integer[], bigint[]); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.share_rate_usage(p_process text, p_now_ms bigint, p_unknown_percent integer, p_keys text[], p_used integer[], p_demand integer[], p_budgets integer[], p_window_ends bigint[]) RETURNS TABLE(key text, ceiling integer, window_end_ms bigint, live integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
declare
  v_now timestamptz := clock_timestamp();
  v_live integer;
  v_keys text[];
  r record;
  -- What a process may spend on a key before it first sends it.
  v_allowance integer;
  -- The others holding the key: their counts, what they may spend (their ceilings, or counts when higher), their weights.
  v_others_used integer;
  v_others_hold integer;
  v_others_weight numeric;
  v_appeared timestamptz;
  -- Live processes without a row for the key: not synced since it appeared (may be about to ask), or synced since.
  v_fresh integer;
  v_quiet integer;
  v_weight numeric;
  v_free integer;
  v_part integer;
  v_room integer;
begin
  insert into app_private.rate_usage as u (key, process, used, budget, ceiling, window_end_ms, synced_at) values ('', p_process, 0, 0, 0, p_now_ms + 2000, v_now)
    on conflict on constraint rate_usage_pkey do update set window_end_ms = excluded.window_end_ms, synced_at = excluded.synced_at;
  delete from app_private.rate_usage u where u.window_end_ms < p_now_ms - 10000;
  select count(*) into v_live from app_private.rate_usage u where u.key = '' and u.window_end_ms > p_now_ms;
  live := v_live;
  -- The keys sent, and this process's keys whose unused room another process is waiting for.
  select array_agg(k order by k) into v_keys from (
    select unnest(p_keys) as k
    union
    select u.key from app_private.rate_usage u
     where u.process = p_process and u.key <> '' and u.window_end_ms > p_now_ms and u.ceiling > u.used
       and exists (select from app_private.rate_usage o where o.key = u.key and o.process <> p_process and o.window_end_ms > p_now_ms and o.unmet)
  ) keys;
  perform pg_advisory_xact_lock(hashtextextended('rate_usage:' || k, 0)) from unnest(v_keys) as k order by k;
  for r in
    select t.k, coalesce(s.used, own.used) as used, coalesce(s.demand, 0) as demand, coalesce(s.budget, own.budget) as budget,
           coalesce(s.window_end, own.window_end_ms) as window_end,
           case when own.window_end_ms = coalesce(s.window_end, own.window_end_ms) then own.since end as since
      from unnest(v_keys) as t(k)
      left join unnest(p_keys, p_used, p_demand, p_budgets, p_window_ends) as s(k, used, demand, budget, window_end) on s.k = t.k
      left join app_private.rate_usage own on own.key = t.k and own.process = p_process
     order by t.k
  loop
    v_allowance := greatest(1, r.budget * p_unknown_percent / 100 / v_live);
    select coalesce(sum(o.used), 0), coalesce(sum(greatest(o.used, o.ceiling)), 0), coalesce(sum(o.demand + v_allowance), 0), least(min(o.since), coalesce(r.since, v_now))
      into v_others_used, v_others_hold, v_others_weight, v_appeared
      from app_private.rate_usage o
     where o.key = r.k and o.process <> p_process and o.window_end_ms > p_now_ms;
    select count(*) filter (where h.synced_at < v_appeared), count(*) filter (where h.synced_at >= v_appeared)
      into v_fresh, v_quiet
      from app_private.rate_usage h
     where h.key = '' and h.process <> p_process and h.window_end_ms > p_now_ms
       and not exists (select from app_private.rate_usage o where o.key = r.k and o.process = h.process and o.window_end_ms > p_now_ms);
    -- A process without a row may spend its allowance before it asks: kept for it.
    v_weight := r.demand + v_allowance;
    v_free := greatest(r.budget - r.used - v_others_used - (v_fresh + v_quiet) * v_allowance, 0);
    v_part := floor(v_free * v_weight / (v_weight + v_others_weight + v_fresh * v_weight));
    v_room := greatest(r.budget - r.used - v_others_hold - (v_fresh + v_quiet) * v_allowance, 0);
    key := r.k;
    ceiling := r.used + least(v_part, v_room);
    window_end_ms := r.window_end;
    insert into app_private.rate_usage as u (key, process, used, budget, ceiling, window_end_ms, demand, unmet, since, synced_at)
      values (r.k, p_process, r.used, r.budget, ceiling, r.window_end, r.demand, v_room < v_part, coalesce(r.since, v_now), v_now)
      on conflict on constraint rate_usage_pkey do update set used = excluded.used, budget = excluded.budget, ceiling = excluded.ceiling,
        window_end_ms = excluded.window_end_ms, demand = excluded.demand, unmet = excluded.unmet, since = excluded.since, synced_at = excluded.synced_at;
    return next;
  end loop;
  if coalesce(cardinality(v_keys), 0) = 0 then
    key := '';
    ceiling := 0;
    window_end_ms := 0;
    return next;
  end if;
end;
$$;

--
-- Name: FUNCTION share_rate_usage(p_process text, p_now_ms bigint, p_unknown_percent integer, p_keys text[], p_used integer[], p_demand integer[], p_budgets integer[], p_window_ends bigint[]); Type: COMMENT; Schema: app_hidden; Owner: -
--

COMMENT ON FUNCTION app_hidden.share_rate_usage(p_process text, p_now_ms bigint, p_unknown_percent integer, p_keys text[], p_used integer[], p_demand integer[], p_budgets integer[], p_window_ends bigint[]) IS 'One API process''s request counts and demands in; how far it may go on for each key (its part of what is left, by demand), and how many processes are live, out.';

--
-- Name: signed_in_as(text); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.signed_in_as(p_role text) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $_$
declare
  v_claim text := nullif(current_setting('jwt.claims.user_id', true), '');
begin
  if v_claim is null or v_claim !~* '^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$' then
    return 'anonymous';
  end if;
  perform 1 from app_private.accounts a where a.id = v_claim::uuid and a.role = p_role and a.disabled_at is null;
  return case when found then p_role else 'anonymous' end;
end;
$_$;

--
-- Name: FUNCTION signed_in_as(p_role text); Type: COMMENT; Schema: app_hidden; Owner: -
--

COMMENT ON FUNCTION app_hidden.signed_in_as(p_role text) IS 'p_role when the signed-in account (jwt.claims.user_id) exists, is enabled and has that role; else anonymous.';

--
-- Name: staff_is_chain_wide(); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.staff_is_chain_wide() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  return coalesce((select b.chain_wide from app_public.baristas b where b.id = app_public.current_user_id()), false);
end;
$$;

--
-- Name: store_or_default(uuid); Type: FUNCTION; Schema: app_hidden; Owner: -
--

CREATE FUNCTION app_hidden.store_or_default(p_store_id uuid) RETURNS uuid
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $_$
declare
  v_id uuid;
  v_text text;
  v_open boolean;
begin
  if p_store_id is null then
    v_text := nullif(current_setting('cafe.store_argument', true), '');
    if v_text ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
      select s.id into v_id from app_public.stores s where s.id = v_text::uuid;
      if v_id is not null then
        return v_id;
      end if;
    end if;
    v_text := nullif(current_setting('cafe.store_id', true), '');
    if v_text is null then
      return app_hidden.default_store_id();
    end if;
    if v_text !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
      raise exception 'X-Store-Id is not a store id: %.', left(v_text, 40) using errcode = '22023';
    end if;
    select s.id, s.is_open into v_id, v_open from app_public.stores s where s.id = v_text::uuid;
    if v_id is null then
      raise exception 'No store with id % (X-Store-Id).', v_text using errcode = '22023';
    end if;
    if not v_open then
      raise exception 'The store % (X-Store-Id) is closed.', v_text using errcode = '22023';
    end if;
    return v_id;
  end if;
  select s.id into v_id from app_public.stores s where s.id = p_store_id;
  if v_id is null then
    raise exception 'No store with id %.', p_store_id using errcode = 'P0002';
  end if;
  return v_id;
end;
$_$;

--
-- Name: FUNCTION store_or_default(p_store_id uuid); Type: COMMENT; Schema: app_hidden; Owner: -
--

COMMENT ON FUNCTION app_hidden.store_or_default(p_store_id uuid) IS 'The store an argument names; when it names none, the store every root field of the operation named (cafe.store_argument), else the request''s store (cafe.store_id, from X-Store-Id: refused when unknown or closed), else the default store.';

--
-- Name: add_sales(uuid[], timestamp with time zone[], uuid[], bigint[]); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.add_sales(p_stores uuid[], p_hours timestamp with time zone[], p_coffees uuid[], p_sold bigint[]) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION add_sales(p_stores uuid[], p_hours timestamp with time zone[], p_coffees uuid[], p_sold bigint[]); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.add_sales(p_stores uuid[], p_hours timestamp with time zone[], p_coffees uuid[], p_sold bigint[]) IS 'Adds sales (parallel arrays; a negative quantity takes one back) to app_private.coffee_sales, and prunes those stores'' buckets older than 8 days.';

--
-- Name: announce_revoked_sign_in(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.announce_revoked_sign_in() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
begin
  perform pg_notify('sign_in_revoked', json_build_object(
    'sid', new.sign_in_id,
    'at', floor(extract(epoch from new.revoked_at) * 1000)
  )::text);
  return null;
end;
$$;

--
-- Name: apply_role_limits(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.apply_role_limits() RETURNS void
    LANGUAGE sql
    AS $$
  select set_config('statement_timeout', s.statement_timeout, true), set_config('lock_timeout', s.lock_timeout, true)
  from app_private.role_limit_settings() s where s.role = current_user;
$$;

--
-- Name: assert_login_allowed(text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.assert_login_allowed(p_email text, p_source text) RETURNS void
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: assert_registration_allowed(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.assert_registration_allowed(p_source text) RETURNS void
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  if (select count(*) from app_private.registration_attempts
       where source = p_source and attempted_at > now() - make_interval(secs => app_private.setting('registration_window_seconds')))
     >= app_private.setting('registration_max_per_source') * app_private.source_limit_factor() then
    raise exception 'Too many registrations from your address; try again later.' using errcode = 'CT004';
  end if;
end;
$$;

--
-- Name: audit_actor(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.audit_actor() RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
declare
  v_role text := nullif(current_setting('role', true), 'none');
  v_user uuid := nullif(current_setting('jwt.claims.user_id', true), '')::uuid;
  v_email text;
begin
  if v_role in ('cafe_customer', 'cafe_barista', 'cafe_admin') and v_user is not null then
    select a.email::text into v_email from app_private.accounts a where a.id = v_user;
    return coalesce(v_email, v_user::text) || ' (' || substr(v_role, 6) || ')';
  elsif v_role = 'cafe_system' then
    return case when session_user::text = (select pg_get_userbyid(d.datdba)::text from pg_database d where d.datname = current_database())
                then 'worker (cafe_system)' else 'payment callback (cafe_system)' end;
  elsif v_role is not null then
    return session_user::text || ' as ' || v_role;
  end if;
  return session_user::text;
end;
$$;

--
-- Name: audit_ddl(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.audit_ddl() RETURNS event_trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: available_stock(uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.available_stock(p_ingredient_id uuid, p_store_id uuid DEFAULT NULL::uuid) RETURNS numeric
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select s.current_stock - app_private.reserved_stock(p_ingredient_id, s.store_id)
  from app_public.stock_items s where s.store_id = coalesce(p_store_id, app_hidden.default_store_id()) and s.ingredient_id = p_ingredient_id;
$$;

--
-- Name: blocked_source_list(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.blocked_source_list() RETURNS TABLE(source text, blocked_until timestamp with time zone)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select b.source, b.blocked_until from app_private.blocked_sources b where b.blocked_until > now();
$$;

--
-- Name: cafe_time_zone(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.cafe_time_zone() RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select app_private.text_setting('cafe_time_zone');
$$;

--
-- Name: check_new_account(text, text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.check_new_account(p_email text, p_name text, p_password text) RETURNS void
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $_$
begin
  if p_email is null or p_email !~ '^[^@\s]+@[^@\s]+\.[^@\s]+$' or length(p_email) > 254 then
    raise exception 'That is not an e-mail address.' using errcode = '22023';
  end if;
  if p_name is null or btrim(p_name) = '' or length(btrim(p_name)) > 100 then
    raise exception 'A name has 1 to 100 characters.' using errcode = '22023';
  end if;
  perform app_private.check_password_strength(p_password, p_email);
end;
$_$;

--
-- Name: check_password_strength(text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.check_password_strength(p_password text, p_email text) RETURNS void
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: check_price(numeric); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.check_price(p_price numeric) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    AS $$
begin
  if p_price is null or p_price <= 0 or p_price >= 100000 then
    raise exception 'A price must be more than 0 and less than 100000.' using errcode = '22023';
  end if;
  if p_price <> round(p_price, 2) then
    raise exception 'A price has at most two decimals.' using errcode = '22023';
  end if;
end;
$$;

--
-- Name: coffee_price_at(uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.coffee_price_at(p_coffee_id uuid, p_store_id uuid) RETURNS numeric
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select coalesce((select p.price from app_public.store_coffee_prices p where p.store_id = p_store_id and p.coffee_id = p_coffee_id),
                  (select c.price from app_public.coffees c where c.id = p_coffee_id));
$$;

--
-- Name: currency_exponent(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.currency_exponent(p_currency text) RETURNS integer
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog'
    AS $$
  select case
    when upper(p_currency) in ('BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF') then 0
    when upper(p_currency) in ('BHD', 'JOD', 'KWD', 'OMR', 'TND') then 3
    else 2
  end;
$$;

--
-- Name: FUNCTION currency_exponent(p_currency text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.currency_exponent(p_currency text) IS 'Decimals of a currency''s minor unit as Stripe counts them (0 for JPY and the other zero-decimal currencies, 3 for KWD, 2 otherwise).';

--
-- Name: ddl_audit_installed(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.ddl_audit_installed() RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
  select exists (select 1 from pg_catalog.pg_event_trigger where evtname = 'cafe_audit_ddl' and evtenabled <> 'D');
$$;

--
-- Name: default_options(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.default_options(p_coffee_id uuid) RETURNS uuid[]
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select coalesce(array_agg(o.id order by o.id), '{}')
  from app_public.coffee_option_groups cg
  join app_public.options o on o.group_id = cg.group_id and o.is_default
  where cg.coffee_id = p_coffee_id;
$$;

--
-- Name: estimate_ready_time(integer, uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.estimate_ready_time(p_items integer, p_store_id uuid) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: expire_pending_orders(integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.expire_pending_orders(p_limit integer DEFAULT 500) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION expire_pending_orders(p_limit integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.expire_pending_orders(p_limit integer) IS 'Cancels unpaid orders past their expires_at (as the calling role: cafe_system for the worker); returns how many.';

--
-- Name: from_minor_units(bigint, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.from_minor_units(p_minor bigint, p_currency text) RETURNS numeric
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog'
    AS $$
  select p_minor::numeric / power(10::numeric, app_private.currency_exponent(p_currency));
$$;

--
-- Name: hash_password(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.hash_password(p_password text) RETURNS text
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select public.crypt(p_password, public.gen_salt('bf', app_private.setting('password_hash_cost')::integer));
$$;

--
-- Name: idempotency_owner(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.idempotency_owner(p_source text) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog'
    AS $$
  select coalesce('account:' || app_public.current_user_id()::text, 'source:' || app_private.source_key(p_source));
$$;

--
-- Name: install_ddl_audit(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.install_ddl_audit() RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  if not exists (select 1 from pg_catalog.pg_event_trigger where evtname = 'cafe_audit_ddl') then
    create event trigger cafe_audit_ddl on ddl_command_end execute function app_private.audit_ddl();
  end if;
end;
$$;

--
-- Name: inventory_of(uuid[]); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.inventory_of(p_coffees uuid[]) RETURNS TABLE(store_id uuid, coffee_id uuid, servings integer)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  with c as (
    select distinct x.id from unnest(p_coffees) x(id)
  ), defaults as (
    select cg.coffee_id, o.ingredient_id, o.ingredient_amount, o.recipe_factor
    from c join app_public.coffee_option_groups cg on cg.coffee_id = c.id
    join app_public.options o on o.group_id = cg.group_id and o.is_default
  ), factor as (
    select d.coffee_id, round(exp(sum(ln(d.recipe_factor))), 6) as f from defaults d where d.recipe_factor is not null group by d.coffee_id
  ), usage as (
    select u.coffee_id, u.ingredient_id, sum(u.amount) as amount
    from (
      select rl.coffee_id, rl.ingredient_id, rl.quantity * coalesce(f.f, 1) as amount
      from c join app_public.recipe_lines rl on rl.coffee_id = c.id
      left join factor f on f.coffee_id = rl.coffee_id
      union all
      select d.coffee_id, d.ingredient_id, d.ingredient_amount from defaults d where d.ingredient_amount is not null
    ) u
    group by u.coffee_id, u.ingredient_id
  )
  select st.id, c.id,
         case when count(u.ingredient_id) = 0 then null
           else greatest(0, min(floor(coalesce(s.current_stock - coalesce(r.amount, 0), 1e9) / u.amount)))::integer
         end
  from app_public.stores st
  cross join c
  left join usage u on u.coffee_id = c.id
  left join app_public.stock_items s on s.store_id = st.id and s.ingredient_id = u.ingredient_id
  left join app_private.stock_reserved r on r.store_id = st.id and r.ingredient_id = u.ingredient_id
  group by st.id, c.id;
$$;

--
-- Name: is_source_blocked(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.is_source_blocked(p_source text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select exists (select 1 from app_private.blocked_sources where source = p_source and blocked_until > now());
$$;

--
-- Name: is_unauthenticated_failure(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.is_unauthenticated_failure(p_code text) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
  select coalesce(p_code in ('UNAUTHORIZED', 'BAD_SIGNATURE', 'PAYLOAD_TOO_LARGE'), false);
$$;

--
-- Name: issue_refresh_token(uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.issue_refresh_token(p_account_id uuid, p_family_id uuid) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
declare
  token text := translate(encode(public.gen_random_bytes(32), 'base64'), '+/=', '-_');
begin
  insert into app_private.refresh_tokens (family_id, account_id, token_sha256, expires_at)
  values (coalesce(p_family_id, gen_random_uuid()), p_account_id, encode(sha256(convert_to(token, 'UTF8')), 'hex'),
          now() + make_interval(days => app_private.setting('refresh_token_days')::integer));
  return token;
end;
$$;

--
-- Name: job_counts(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.job_counts() RETURNS TABLE(state text, count bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  return query
    select 'queued'::text, count(*) from graphile_worker.jobs j where j.locked_at is null and j.run_at <= now() and j.attempts < j.max_attempts
    union all
    select 'locked'::text, count(*) from graphile_worker.jobs j where j.locked_at is not null
    union all
    select 'failed'::text, count(*) from graphile_worker.jobs j where j.last_error is not null;
end;
$$;

--
-- Name: line_usage(uuid, uuid[]); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.line_usage(p_coffee_id uuid, p_option_ids uuid[]) RETURNS TABLE(ingredient_id uuid, amount numeric)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: local_iso(timestamp with time zone, text, boolean); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.local_iso(p_at timestamp with time zone, p_zone text, p_hour boolean) RETURNS text
    LANGUAGE sql STABLE
    AS $$
  select case when p_hour then
    to_char(p_at at time zone p_zone, 'YYYY-MM-DD"T"HH24:MI')
      || case when (p_at at time zone p_zone) - (p_at at time zone 'UTC') < interval '0' then '-' else '+' end
      || to_char(abs(extract(epoch from (p_at at time zone p_zone) - (p_at at time zone 'UTC')))::integer / 3600, 'FM00')
      || ':' || to_char(abs(extract(epoch from (p_at at time zone p_zone) - (p_at at time zone 'UTC')))::integer % 3600 / 60, 'FM00')
  else to_char(p_at at time zone p_zone, 'YYYY-MM-DD') end;
$$;

--
-- Name: log_delivery(text, integer, text, text, text, text, text, text, uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.log_delivery(p_source text, p_http_status integer, p_outcome text, p_code text, p_reason text, p_dedupe_key text DEFAULT NULL::text, p_body_sha256 text DEFAULT NULL::text, p_event text DEFAULT NULL::text, p_order_id uuid DEFAULT NULL::uuid) RETURNS timestamp with time zone
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: mark_paid(uuid, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.mark_paid(p_order_id uuid, p_method text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  update app_public.orders set status = 'PAID', payment_method = p_method, paid_at = now() where id = p_order_id;
  perform graphile_worker.add_job('start_preparation', json_build_object('orderId', p_order_id), job_key := 'start_preparation:' || p_order_id);
  perform graphile_worker.add_job('update_inventory', json_build_object('orderId', p_order_id), job_key := 'update_inventory:' || p_order_id);
end;
$$;

--
-- Name: note_password_check(text, text, boolean, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.note_password_check(p_email text, p_source text, p_ok boolean, p_kind text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  perform pg_advisory_xact_lock(hashtextextended('password-check account:' || lower(coalesce(p_email, '')), 0));
  perform pg_advisory_xact_lock(hashtextextended('password-check source:' || p_source, 0));
  perform app_private.assert_login_allowed(coalesce(p_email, ''), p_source);
  insert into app_private.login_attempts (email, source, succeeded, kind)
  values (left(coalesce(p_email, ''), 254), p_source, p_ok, p_kind);
end;
$$;

--
-- Name: notification_webhook(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.notification_webhook(p_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select jsonb_build_object('id', n.id, 'customerId', n.customer_id, 'orderId', n.order_id,
                            'kind', n.kind, 'message', n.message, 'createdAt', n.created_at)
    from app_public.notifications n join app_private.notification_webhooks w on w.notification_id = n.id
   where n.id = p_id and w.delivered_at is null and w.gave_up_at is null;
$$;

--
-- Name: notification_webhook_delivered(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.notification_webhook_delivered(p_id uuid) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  update app_private.notification_webhooks
     set attempts = attempts + 1, last_attempt_at = now(), delivered_at = coalesce(delivered_at, now()), last_error = null
   where notification_id = p_id;
$$;

--
-- Name: notification_webhook_failed(uuid, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.notification_webhook_failed(p_id uuid, p_error text) RETURNS timestamp with time zone
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: notifications; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.notifications (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    customer_id uuid NOT NULL,
    order_id uuid,
    kind text NOT NULL,
    message text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    store_id uuid DEFAULT app_hidden.default_store_id() NOT NULL
);

--
-- Name: TABLE notifications; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.notifications IS 'What the café told a customer (e.g. that a payment arrived).';

--
-- Name: notify_customer(uuid, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.notify_customer(p_order_id uuid, p_kind text) RETURNS app_public.notifications
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
declare
  v_notification app_public.notifications;
begin
  insert into app_public.notifications (customer_id, order_id, kind, message)
  select o.customer_id, o.id, p_kind,
         case p_kind when 'payment_received' then format('Thanks! We received %s for your order; it is being prepared.', o.total)
                     when 'ready_for_pickup' then 'Your order is ready for pickup.'
                     when 'refund_owed' then format('Your order was cancelled; %s will be refunded.', o.total)
                     when 'payment_failed' then 'Your payment did not go through; please try again or use another card.'
                     else app_public.order_status_message(o.status) end
  from app_public.orders o where o.id = p_order_id
  on conflict (order_id, kind) do nothing
  returning * into v_notification;
  return v_notification; -- null when it was already sent
end;
$$;

--
-- Name: ops_counts(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.ops_counts() RETURNS TABLE(metric text, value double precision)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select 'workers_alive', count(*)::float8 from app_private.worker_heartbeats
   where last_seen > now() - make_interval(secs => app_private.setting('worker_dead_after_seconds'))
  union all
  select 'workers_dead', count(*)::float8 from app_private.worker_heartbeats
   where last_seen <= now() - make_interval(secs => app_private.setting('worker_dead_after_seconds'))
  union all
  select 'webhooks_pending', count(*)::float8 from app_private.notification_webhooks where delivered_at is null and gave_up_at is null
  union all
  select 'webhooks_gave_up', count(*)::float8 from app_private.notification_webhooks where gave_up_at is not null
  union all
  select 'refunds_open', count(*)::float8 from app_public.refunds where settled_at is null
  union all
  select 'refund_oldest_open_seconds', coalesce(extract(epoch from now() - min(created_at)), 0)::float8 from app_public.refunds where settled_at is null;
$$;

--
-- Name: FUNCTION ops_counts(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.ops_counts() IS 'Gauges for /metrics: workers alive and dead, notification webhooks pending and given up, refunds open and the oldest one''s age.';

--
-- Name: option_available_at(uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.option_available_at(p_option_id uuid, p_store_id uuid) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select coalesce((select so.available from app_public.store_options so where so.store_id = p_store_id and so.option_id = p_option_id), true);
$$;

--
-- Name: stores; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.stores (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    time_zone text NOT NULL,
    address text,
    is_open boolean DEFAULT true NOT NULL,
    is_default boolean DEFAULT false NOT NULL,
    pending_order_expiry_seconds integer,
    max_open_orders_per_customer integer,
    max_open_cups_per_customer integer,
    max_stock_share_percent numeric,
    stock_share_cooldown_seconds integer,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT stores_address_check CHECK ((length(address) <= 500)),
    CONSTRAINT stores_name_check CHECK (((btrim(name) <> ''::text) AND (length(name) <= 100)))
);

--
-- Name: TABLE stores; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.stores IS 'A café of the chain. Orders, stock, refunds and notifications belong to one; the menu, customers and points are the chain''s.';

--
-- Name: COLUMN stores.time_zone; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.stores.time_zone IS 'The store''s time zone (an IANA name): its sales report''s hours and days.';

--
-- Name: COLUMN stores.is_open; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.stores.is_open IS 'Taking orders now. Customers and kiosks see open stores only.';

--
-- Name: COLUMN stores.is_default; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.stores.is_default IS 'The store that an API argument naming no store means (the café that existed before the chain). Exactly one.';

--
-- Name: COLUMN stores.pending_order_expiry_seconds; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.stores.pending_order_expiry_seconds IS 'An unpaid order here expires this long after it was made; null: the chain''s pending_order_expiry_seconds.';

--
-- Name: COLUMN stores.max_open_orders_per_customer; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.stores.max_open_orders_per_customer IS 'Most unpaid orders a customer holds here; null: the chain''s setting.';

--
-- Name: COLUMN stores.max_open_cups_per_customer; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.stores.max_open_cups_per_customer IS 'Most cups in a customer''s unpaid orders here; null: the chain''s setting.';

--
-- Name: COLUMN stores.max_stock_share_percent; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.stores.max_stock_share_percent IS 'Most of an ingredient''s stock here one customer''s orders may hold (percent); null: the chain''s setting.';

--
-- Name: COLUMN stores.stock_share_cooldown_seconds; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.stores.stock_share_cooldown_seconds IS 'How long a cancelled unpaid order still counts toward that share; null: the chain''s setting.';

--
-- Name: order_line_options(app_public.coffees, app_public.stores, jsonb, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.order_line_options(p_coffee app_public.coffees, p_store app_public.stores, p_option_ids jsonb, p_pos integer) RETURNS uuid[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $_$
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
$_$;

--
-- Name: order_line_usage(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.order_line_usage(p_order_id uuid) RETURNS TABLE(line integer, coffee_id uuid, quantity integer, ingredient_id uuid, amount numeric)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select oi.position, oi.coffee_id, oi.quantity, u.ingredient_id, u.amount
  from app_public.order_items oi
  cross join lateral app_private.line_usage(oi.coffee_id, array(
    select x.option_id from app_private.order_item_options x where x.order_id = oi.order_id and x.position = oi.position)) u
  where oi.order_id = p_order_id;
$$;

--
-- Name: parse_report_time(text, text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.parse_report_time(p_value text, p_zone text, p_name text) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    AS $_$
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
$_$;

--
-- Name: payment_intent_canceled(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.payment_intent_canceled(p_intent_id text) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  update app_private.payment_intents set canceled_at = coalesce(canceled_at, now()) where intent_id = p_intent_id and succeeded_at is null;
$$;

--
-- Name: payment_intent_to_cancel(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.payment_intent_to_cancel(p_intent_id text) RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select i.intent_id from app_private.payment_intents i where i.intent_id = p_intent_id and i.succeeded_at is null and i.canceled_at is null;
$$;

--
-- Name: process_payment_callback(text, text, text, text, text, text, text, numeric, jsonb, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.process_payment_callback(p_source text, p_key text, p_body_sha256 text, p_event text, p_status text, p_order_ref text, p_customer_email text, p_amount numeric, p_items jsonb, p_currency text DEFAULT NULL::text) RETURNS app_private.callback_result
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $_$
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
$_$;

--
-- Name: process_stripe_event(text, text, text, text, text, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.process_stripe_event(p_source text, p_event_id text, p_body_sha256 text, p_type text, p_action text, p_fields jsonb) RETURNS app_private.callback_result
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $_$
declare
  v_key text := 'stripe:' || p_event_id;
  known app_private.processed_payment_keys;
  v_intent_id text := p_fields ->> 'intentId';
  v_currency text := upper(p_fields ->> 'currency');
  v_minor bigint := (p_fields ->> 'amount')::bigint;
  v_order app_public.orders;
  v_order_id uuid;
  v_refund app_public.refunds;
  v_settled bigint;
  r app_private.callback_result;
  result app_private.callback_result;
begin
  perform pg_advisory_xact_lock(hashtextextended(v_key, 0));
  select * into known from app_private.processed_payment_keys where key = v_key;
  if known.key is not null then
    if known.body_sha256 <> p_body_sha256 then
      perform app_private.raise_alert('duplicate_key_different_body', format('Key %s arrived again with a different body.', v_key), p_source, known.order_id);
    end if;
    result := row(200, 'duplicate', null, 'Already processed.', known.order_id);
    perform app_private.log_delivery(p_source, 200, 'duplicate', null, null, v_key, p_body_sha256, p_type, known.order_id);
    return result;
  end if;

  if p_fields ->> 'orderRef' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
    v_order_id := (p_fields ->> 'orderRef')::uuid;
  end if;
  if v_order_id is null and v_intent_id is not null then
    select i.order_id into v_order_id from app_private.payment_intents i where i.intent_id = v_intent_id;
  end if;

  if p_action = 'payment' then
    -- One intent pays once, whatever the event (a copy, another event id,
    -- events out of order) and whenever it arrives: events of one intent
    -- queue here, so the next one's check below sees the first's effect.
    if v_intent_id is not null then
      perform pg_advisory_xact_lock(hashtextextended('stripe_intent:' || v_intent_id, 0));
    end if;
    if exists (select 1 from app_private.payment_intents i where i.intent_id = v_intent_id and i.succeeded_at is not null) then
      result := row(200, 'duplicate', null, 'This payment was processed already.', v_order_id);
      perform app_private.log_delivery(p_source, 200, 'duplicate', null, null, v_key, p_body_sha256, p_type, v_order_id);
      return result;
    end if;
    -- Paid: its cancellation (if the order is cancelled now) must not be queued.
    update app_private.payment_intents set succeeded_at = now() where intent_id = v_intent_id;
    -- The same path as the generic callback's (it logs the delivery).
    r := app_private.process_payment_callback(p_source, v_key, p_body_sha256, 'payment.completed', null,
      v_order_id::text, null, app_private.from_minor_units(v_minor, v_currency), null, v_currency);
    if r.order_id is not null and v_intent_id is not null then
      insert into app_private.payment_intents (intent_id, order_id, amount_minor, currency, succeeded_at)
      values (v_intent_id, r.order_id, v_minor, v_currency, now())
      on conflict (intent_id) do update set succeeded_at = coalesce(app_private.payment_intents.succeeded_at, now());
    end if;
    if r.code is null then
      return r;
    end if;
    -- A business refusal: answered 2xx (Stripe must not retry it), recorded
    -- as processed (a copy changes nothing), an alert, and the money taken
    -- owed back.
    insert into app_private.processed_payment_keys (key, body_sha256, order_id, outcome) values (v_key, p_body_sha256, r.order_id, 'refused');
    if r.order_id is null then
      perform app_private.raise_alert('unknown_order',
        format('Stripe payment %s of %s %s names no order of this café (%s): refund it from the Stripe dashboard.', v_intent_id, v_minor, v_currency, coalesce(p_fields ->> 'orderRef', 'no order_id')),
        p_source, null);
    elsif v_intent_id is not null then
      select * into v_order from app_public.orders where id = r.order_id;
      -- A cancelled order's refund was written by process_payment_callback
      -- (source_key); any other refusal owes back what was taken.
      update app_public.refunds set provider = 'stripe', provider_payment_id = v_intent_id, currency = v_currency, amount_minor = v_minor
       where source_key = v_key and provider is null;
      if not found then
        insert into app_public.refunds (order_id, amount, reason, source_key, paid_amount, order_total, above_order_total, provider, provider_payment_id, currency, amount_minor)
        values (r.order_id, app_private.from_minor_units(v_minor, v_currency), format('Stripe payment refused (%s): %s', r.code, r.message), v_key,
                app_private.from_minor_units(v_minor, v_currency), v_order.total, false, 'stripe', v_intent_id, v_currency, v_minor)
        on conflict (source_key) do nothing;
        if found then
          perform app_private.raise_alert('refund_needed',
            format('Stripe payment %s of %s %s for order %s was refused (%s): it is refunded.', v_intent_id, v_minor, v_currency, r.order_id, r.code), p_source, r.order_id);
        end if;
      end if;
    end if;
    return row(200, 'refused', r.code, r.message, r.order_id)::app_private.callback_result;
  end if;

  if p_action = 'payment_failed' then
    select * into v_order from app_public.orders where id = v_order_id;
    if v_order.id is not null and v_order.status = 'PENDING' then
      perform app_private.notify_customer(v_order.id, 'payment_failed');
      result := row(200, 'processed', null, 'The customer is told the payment failed.', v_order.id);
    else
      result := row(200, 'ignored', null, 'No PENDING order for this failed payment.', v_order.id);
    end if;
  elsif p_action = 'refund_settled' then
    if p_fields ->> 'refundRef' is not null or p_fields ->> 'providerRefundId' is not null then
      -- refund.updated: one refund, by our id (its metadata) or the provider's.
      update app_public.refunds
         set status = 'SUCCEEDED', settled_at = coalesce(settled_at, now()), provider_refund_id = coalesce(provider_refund_id, left(p_fields ->> 'providerRefundId', 255)), last_error = null
       where provider = 'stripe' and status <> 'SUCCEEDED'
         and (id::text = p_fields ->> 'refundRef' or provider_refund_id = p_fields ->> 'providerRefundId')
      returning * into v_refund;
      result := row(200, case when v_refund.id is null then 'ignored' else 'processed' end, null, 'Refund settled.', v_refund.order_id);
    else
      -- charge.refunded: the payment's refunds, oldest first, as far as the
      -- amount refunded so far (cumulative) covers them.
      select coalesce(sum(x.amount_minor), 0) into v_settled from app_public.refunds x
       where x.provider_payment_id = v_intent_id and x.provider = 'stripe' and x.status = 'SUCCEEDED';
      for v_refund in
        select * from app_public.refunds x where x.provider_payment_id = v_intent_id and x.provider = 'stripe' and x.status <> 'SUCCEEDED'
         order by x.created_at, x.id for update
      loop
        exit when v_settled + v_refund.amount_minor > v_minor;
        v_settled := v_settled + v_refund.amount_minor;
        update app_public.refunds set status = 'SUCCEEDED', settled_at = coalesce(settled_at, now()), last_error = null where id = v_refund.id;
        v_order_id := v_refund.order_id;
      end loop;
      result := row(200, 'processed', null, 'Refunds settled.', v_order_id);
    end if;
  elsif p_action = 'refund_failed' then
    update app_public.refunds
       set status = 'FAILED', last_error = left(coalesce(p_fields ->> 'reason', 'refund failed'), 500)
     where provider = 'stripe' and status in ('PENDING', 'SENT')
       and (id::text = p_fields ->> 'refundRef' or provider_refund_id = p_fields ->> 'providerRefundId')
    returning * into v_refund;
    if v_refund.id is not null then
      perform app_private.raise_alert('refund_failed',
        format('Stripe reports refund %s of %s for order %s failed (%s): pay it another way, then settle it.', v_refund.id, v_refund.amount, v_refund.order_id, coalesce(p_fields ->> 'reason', 'no reason given')),
        p_source, v_refund.order_id);
    end if;
    result := row(200, case when v_refund.id is null then 'ignored' else 'processed' end, null, 'Refund failed.', v_refund.order_id);
  elsif p_action = 'incomplete' then
    -- A verified event without a field its action needs (p_fields.missing,
    -- named by the route as Stripe names them): a business refusal, never
    -- a failure Stripe retries for days. Nothing is paid or settled.
    perform app_private.raise_alert('stripe_event_incomplete',
      format('Stripe event %s (%s, payment %s) lacks %s: nothing was done. Check it in the Stripe dashboard.',
             p_event_id, left(p_type, 100), coalesce(v_intent_id, 'unknown'), left(p_fields ->> 'missing', 200)),
      p_source, v_order_id);
    result := row(200, 'refused', 'VALIDATION_FAILED', format('The event lacks %s.', left(p_fields ->> 'missing', 200)), v_order_id);
  elsif p_action = 'dispute' then
    perform app_private.raise_alert('payment_dispute',
      format('Dispute on Stripe payment %s (order %s): %s %s, reason %s. Answer it in the Stripe dashboard.',
             coalesce(v_intent_id, 'unknown'), coalesce(v_order_id::text, 'unknown'), v_minor, v_currency, coalesce(p_fields ->> 'reason', 'none given')),
      p_source, v_order_id);
    result := row(200, 'processed', null, 'Alert raised.', v_order_id);
  else
    -- Any other event: acknowledged, nothing done (not recorded as processed).
    result := row(200, 'ignored', null, 'Not an event this service acts on.', null);
    perform app_private.log_delivery(p_source, 200, 'ignored', null, result.message, v_key, p_body_sha256, p_type, null);
    return result;
  end if;

  insert into app_private.processed_payment_keys (key, body_sha256, order_id, outcome) values (v_key, p_body_sha256, result.order_id, result.status);
  perform app_private.log_delivery(p_source, 200, result.status, result.code, case when result.code is not null then result.message end, v_key, p_body_sha256, p_type, result.order_id);
  return result;
end;
$_$;

--
-- Name: purge_failed_deliveries(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.purge_failed_deliveries() RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: purge_idempotency_keys(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.purge_idempotency_keys() RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
declare
  n integer;
begin
  delete from app_private.idempotency_keys where expires_at <= now();
  get diagnostics n = row_count;
  return n;
end;
$$;

--
-- Name: purge_sign_in_logs(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.purge_sign_in_logs() RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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
  delete from app_private.order_sources os
   where os.placed_at < now() - keep
     and not exists (select 1 from app_private.stock_reservations r where r.order_id = os.order_id);
  get diagnostics n = row_count;
  total := total + n;
  delete from app_private.refresh_tokens
   where expires_at < now() - keep or revoked_at < now() - keep;
  get diagnostics n = row_count;
  return total + n;
end;
$$;

--
-- Name: raise_alert(text, text, text, uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.raise_alert(p_kind text, p_message text, p_source text, p_order_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  insert into app_public.payment_alerts (kind, message, source, order_id) values (p_kind, p_message, p_source, p_order_id);
  -- The server logs alerts as warnings when it sees this notification.
  perform pg_notify('payment_alert', json_build_object('kind', p_kind, 'message', p_message, 'source', p_source, 'order_id', p_order_id)::text);
end;
$$;

--
-- Name: rank_featured_coffee(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.rank_featured_coffee(p_store_id uuid) RETURNS uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION rank_featured_coffee(p_store_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.rank_featured_coffee(p_store_id uuid) IS 'The FEATURED coffee on sale at the store that sold most there in the last 7 days, counted by the hour (app_private.coffee_sales; ties: by name), ranked now: featured_coffee() reads it as last kept.';

--
-- Name: recount_reserved_stock(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.recount_reserved_stock() RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: recount_sales(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.recount_sales() RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION recount_sales(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.recount_sales() IS 'Rebuilds app_private.coffee_sales from the orders of the last 8 days (after a load with triggers off; recount_reserved_stock() calls it).';

--
-- Name: refund_failed(uuid, text, boolean); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.refund_failed(p_id uuid, p_error text, p_permanent boolean) RETURNS timestamp with time zone
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
declare
  v_refund app_public.refunds;
  v_after integer;
  v_run_at timestamptz;
begin
  update app_public.refunds
     set attempts = attempts + 1, last_error = left(p_error, 500), status = case when p_permanent then 'FAILED'::app_public.refund_status else status end
   where id = p_id and status = 'PENDING'
  returning * into v_refund;
  if v_refund.id is null then
    return null;
  end if;
  if p_permanent then
    perform app_private.raise_alert('refund_failed',
      format('The provider refused refund %s of %s for order %s: %s. Pay it another way, then settle it.', v_refund.id, v_refund.amount, v_refund.order_id, left(p_error, 200)),
      null, v_refund.order_id);
    return null;
  end if;
  select r.window_seconds into v_after from app_private.alert_rules r where r.kind = 'refund_failing';
  if v_refund.alerted_at is null and v_refund.created_at <= now() - make_interval(secs => v_after) then
    update app_public.refunds set alerted_at = now() where id = p_id;
    perform app_private.raise_alert('refund_failing',
      format('Refund %s of %s for order %s is owed since %s and still failing (%s attempts): %s', v_refund.id, v_refund.amount, v_refund.order_id, v_refund.created_at, v_refund.attempts, left(p_error, 200)),
      null, v_refund.order_id);
  end if;
  v_run_at := now() + make_interval(secs => least(
    app_private.setting('refund_backoff_max_seconds'),
    app_private.setting('refund_backoff_base_seconds') * power(2, least(v_refund.attempts - 1, 30))));
  perform graphile_worker.add_job('refund__pay', json_build_object('id', p_id), job_key := 'refund__pay:' || p_id, run_at := v_run_at);
  return v_run_at;
end;
$$;

--
-- Name: refund_payout(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.refund_payout(p_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select jsonb_build_object('id', r.id, 'orderId', r.order_id, 'paymentIntent', r.provider_payment_id, 'amount', r.amount_minor, 'currency', lower(r.currency))
    from app_public.refunds r
   where r.id = p_id and r.provider = 'stripe' and r.status = 'PENDING' and r.settled_at is null
     and r.provider_payment_id is not null and r.amount_minor is not null;
$$;

--
-- Name: refund_sent(uuid, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.refund_sent(p_id uuid, p_provider_refund_id text) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  update app_public.refunds
     set status = 'SENT', provider_refund_id = left(p_provider_refund_id, 255), attempts = attempts + 1, last_error = null
   where id = p_id and status = 'PENDING';
$$;

--
-- Name: release_stock(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.release_stock(p_order_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: request_source(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.request_source() RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog'
    AS $$
  select case when coalesce(current_setting('cafe.source', true), '') = '' then null
              else app_private.source_key(current_setting('cafe.source', true)) end;
$$;

--
-- Name: reserved_stock(uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.reserved_stock(p_ingredient_id uuid, p_store_id uuid DEFAULT NULL::uuid) RETURNS numeric
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select coalesce((select r.amount from app_private.stock_reserved r
                    where r.store_id = coalesce(p_store_id, app_hidden.default_store_id()) and r.ingredient_id = p_ingredient_id), 0);
$$;

--
-- Name: return_inventory(uuid, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.return_inventory(p_order_id uuid, p_reason text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: revoke_changed_account(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.revoke_changed_account() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: revoke_sign_ins(uuid, uuid, text, uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.revoke_sign_ins(p_account uuid, p_sign_in uuid, p_reason text, p_keep uuid DEFAULT NULL::uuid) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: role_limit_settings(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.role_limit_settings() RETURNS TABLE(role name, statement_timeout text, lock_timeout text)
    LANGUAGE sql STABLE
    AS $$
  select l.role,
    ceil(extract(epoch from l.statement_timeout) * 1000)::bigint::text,
    ceil(extract(epoch from l.lock_timeout) * 1000)::bigint::text
  from app_private.role_limits l;
$$;

--
-- Name: sale_counts(app_public.order_status); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.sale_counts(p_status app_public.order_status) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog'
    AS $$
  select p_status in ('PAID', 'PREPARING', 'BREWING', 'READY', 'COMPLETED');
$$;

--
-- Name: sales_hour(timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.sales_hour(p_at timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog'
    AS $$
  select date_bin('1 hour', p_at, timestamptz '2000-01-01 00:00:00+00');
$$;

--
-- Name: setting(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.setting(k text) RETURNS numeric
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: source_key(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.source_key(p_source text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog'
    AS $_$
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
$_$;

--
-- Name: source_limit_factor(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.source_limit_factor() RETURNS integer
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog'
    AS $_$
  select case when current_setting('cafe.source_limit_factor', true) ~ '^[0-9]{1,4}$'
              then least(greatest(current_setting('cafe.source_limit_factor', true)::integer, 1), 1000)
              else 1 end;
$_$;

--
-- Name: start_preparation(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.start_preparation(p_order_id uuid) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  update app_public.orders set status = 'PREPARING' where id = p_order_id and status = 'PAID';
  return found;
end;
$$;

--
-- Name: store_setting(uuid, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.store_setting(p_store_id uuid, k text) RETURNS numeric
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
declare
  v numeric;
begin
  select (to_jsonb(s) ->> k)::numeric into v from app_public.stores s where s.id = p_store_id;
  return coalesce(v, app_private.setting(k));
end;
$$;

--
-- Name: take_inventory(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.take_inventory(p_order_id uuid) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: text_setting(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.text_setting(k text) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: tg__announce_public_reads(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg__announce_public_reads() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: tg__count_sales(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg__count_sales() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION tg__count_sales(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg__count_sales() IS 'Keeps app_private.coffee_sales: what the statement''s orders and order lines add to or take from the counted sales.';

--
-- Name: tg__queue_featured(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg__queue_featured() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: tg__queue_inventory(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg__queue_inventory() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: tg__queue_inventory_update(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg__queue_inventory_update() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: tg__store_of_order(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg__store_of_order() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: tg__timestamps(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg__timestamps() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
begin
  new.updated_at := now();
  return new;
end;
$$;

--
-- Name: tg__uncount_deleted_order(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg__uncount_deleted_order() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION tg__uncount_deleted_order(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg__uncount_deleted_order() IS 'Takes a counted order''s lines back from app_private.coffee_sales before it is deleted (its lines go after it, by cascade).';

--
-- Name: tg_audit(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_audit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: tg_blocked_sources__notify(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_blocked_sources__notify() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  if tg_op = 'DELETE' then
    perform pg_notify('payment_source_blocked', json_build_object('source', old.source, 'blocked_until', null)::text);
  else
    perform pg_notify('payment_source_blocked', json_build_object('source', new.source, 'blocked_until', new.blocked_until)::text);
  end if;
  return null;
end;
$$;

--
-- Name: tg_coffees__notify_new(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_coffees__notify_new() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
begin
  perform pg_notify('coffee:new', json_build_object('id', new.id)::text);
  return null;
end;
$$;

--
-- Name: tg_coffees__queue_public_reads(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_coffees__queue_public_reads() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  insert into app_private.public_read_changes (what)
  select n.id::text from new_rows n
  union select 'featured' where exists (select 1 from new_rows n where n.category = 'FEATURED')
  on conflict do nothing;
  return null;
end;
$$;

--
-- Name: tg_idempotency_keys__limit(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_idempotency_keys__limit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
declare
  v_max integer := app_private.setting('idempotency_keys_per_owner')
                   * case when new.owner like 'source:%' then app_private.source_limit_factor() else 1 end;
begin
  -- The claim: what this connection's counters say before the mutation runs (transaction_changed_rows).
  perform set_config('cafe.changed_rows_at_claim', app_private.xact_changed_rows_so_far()::text, true);
  if exists (select 1 from app_private.idempotency_keys where owner = new.owner and key = new.key) then
    return new;
  end if;
  if (select count(*) from (select 1 from app_private.idempotency_keys
                             where owner = new.owner
                               and created_at > now() - make_interval(secs => app_private.setting('idempotency_key_window_seconds'))
                             limit v_max) mine) >= v_max then
    raise exception 'Too many Idempotency-Keys from you; try again later, or retry without a new key.'
      using errcode = 'CT012',
            detail = json_build_object('retry_after_seconds', app_private.setting('idempotency_key_window_seconds'))::text;
  end if;
  return new;
end;
$$;

--
-- Name: tg_jobs__trace_context(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_jobs__trace_context() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog'
    AS $_$
declare
  v_traceparent text := current_setting('cafe.traceparent', true);
begin
  if v_traceparent ~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' and json_typeof(new.payload) = 'object' then
    new.payload := (new.payload::jsonb || jsonb_build_object('traceparent', v_traceparent))::json;
  end if;
  return new;
end;
$_$;

--
-- Name: FUNCTION tg_jobs__trace_context(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_jobs__trace_context() IS 'Adds the transaction''s cafe.traceparent (set by the API while tracing is on) to the payload of each job it queues.';

--
-- Name: tg_notifications__publish(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_notifications__publish() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  insert into app_private.notification_webhooks (notification_id) values (new.id);
  perform graphile_worker.add_job('notification__send_webhook', json_build_object('id', new.id),
    job_key := 'notification__send_webhook:' || new.id,
    max_attempts := app_private.setting('notify_webhook_max_attempts')::integer);
  perform pg_notify('notification:' || new.customer_id::text, json_build_object('id', new.id)::text);
  return null;
end;
$$;

--
-- Name: tg_order_items__notify(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_order_items__notify() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
begin
  perform pg_notify('order:' || coalesce(new.order_id, old.order_id)::text,
    json_build_object('id', coalesce(new.order_id, old.order_id))::text);
  return null;
end;
$$;

--
-- Name: tg_order_items__reserve_stock(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_order_items__reserve_stock() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: tg_orders__after_status(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_orders__after_status() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: tg_orders__cancel_payment_intents(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_orders__cancel_payment_intents() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  if old.status is distinct from 'CANCELLED' then
    perform graphile_worker.add_job('payment_intent__cancel', json_build_object('intentId', i.intent_id),
      job_key := 'payment_intent__cancel:' || i.intent_id)
      from app_private.payment_intents i
     where i.order_id = new.id and i.succeeded_at is null and i.canceled_at is null;
  end if;
  return null;
end;
$$;

--
-- Name: tg_orders__check_transition(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_orders__check_transition() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: tg_orders__keep_store(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_orders__keep_store() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
begin
  raise exception 'An order stays in the store it was made for.' using errcode = '22023';
end;
$$;

--
-- Name: tg_orders__notify(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_orders__notify() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: tg_orders__notify_customer(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_orders__notify_customer() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: tg_orders__release_stock(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_orders__release_stock() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  perform app_private.release_stock(old.id);
  if tg_op = 'DELETE' then
    return old;
  end if;
  return null;
end;
$$;

--
-- Name: tg_public_read_changes__announce(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_public_read_changes__announce() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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
        from (select st.id as store_id, app_private.rank_featured_coffee(st.id) as id
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

--
-- Name: tg_refunds__provider(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_refunds__provider() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
declare
  v_intent app_private.payment_intents;
begin
  if new.provider is null then
    select i.* into v_intent from app_private.payment_intents i join app_public.orders o on o.id = i.order_id
     where i.order_id = new.order_id and i.succeeded_at is not null and o.payment_method = 'provider'
     order by i.succeeded_at desc limit 1;
    if v_intent.intent_id is not null then
      new.provider := v_intent.provider;
      new.provider_payment_id := v_intent.intent_id;
      new.currency := v_intent.currency;
      new.amount_minor := least(app_private.to_minor_units(new.amount, v_intent.currency), v_intent.amount_minor);
    end if;
  end if;
  return new;
end;
$$;

--
-- Name: tg_refunds__queue_payout(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_refunds__queue_payout() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  if new.provider = 'stripe' and new.status = 'PENDING' and new.provider_refund_id is null
     and (tg_op = 'INSERT' or old.provider is distinct from new.provider) then
    perform graphile_worker.add_job('refund__pay', json_build_object('id', new.id), job_key := 'refund__pay:' || new.id);
  end if;
  return null;
end;
$$;

--
-- Name: tg_role_limits__announce(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_role_limits__announce() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
begin
  perform pg_notify('role_limits_changed', '');
  return null;
end;
$$;

--
-- Name: tg_role_limits__keep(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_role_limits__keep() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
begin
  -- Fail closed: a role without limits would run without any.
  raise exception 'Role limits are changed, not deleted (role %).', old.role using errcode = '22023';
end;
$$;

--
-- Name: tg_settings__check(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_settings__check() RETURNS trigger
    LANGUAGE plpgsql
    AS $_$
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
$_$;

--
-- Name: tg_stores__check(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_stores__check() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: tg_stores__queue_inventory(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_stores__queue_inventory() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  insert into app_private.public_read_changes (what) select c.id::text from app_public.coffees c on conflict do nothing;
  return null;
end;
$$;

--
-- Name: to_minor_units(numeric, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.to_minor_units(p_amount numeric, p_currency text) RETURNS bigint
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog'
    AS $$
  select round(p_amount * power(10::numeric, app_private.currency_exponent(p_currency)))::bigint;
$$;

--
-- Name: transaction_changed_rows(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.transaction_changed_rows() RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select app_private.xact_changed_rows_so_far() - coalesce(nullif(current_setting('cafe.changed_rows_at_claim', true), '')::bigint, 0);
$$;

--
-- Name: walk_in_customer_id(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.walk_in_customer_id() RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: worker_heartbeat(text, text[]); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.worker_heartbeat(p_process text, p_worker_ids text[]) RETURNS text[]
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: xact_changed_rows_so_far(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.xact_changed_rows_so_far() RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::bigint
    from pg_catalog.pg_stat_xact_user_tables
   where relid <> 'app_private.idempotency_keys'::regclass;
$$;

--
-- Name: options; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.options (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    group_id uuid NOT NULL,
    name text NOT NULL,
    price_delta numeric(10,2) DEFAULT 0 NOT NULL,
    is_default boolean DEFAULT false NOT NULL,
    ingredient_id uuid,
    ingredient_amount numeric(10,3),
    recipe_factor numeric(6,3),
    "position" integer DEFAULT 0 NOT NULL,
    CONSTRAINT options_check CHECK (((ingredient_amount IS NULL) OR (ingredient_id IS NOT NULL))),
    CONSTRAINT options_ingredient_amount_check CHECK ((ingredient_amount > (0)::numeric)),
    CONSTRAINT options_name_check CHECK (((btrim(name) <> ''::text) AND (length(name) <= 100))),
    CONSTRAINT options_price_delta_check CHECK ((abs(price_delta) <= (1000)::numeric)),
    CONSTRAINT options_recipe_factor_check CHECK (((recipe_factor > (0)::numeric) AND (recipe_factor <= (10)::numeric)))
);

--
-- Name: TABLE options; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.options IS 'One choice of an option group, with its price delta and its effect on the recipe (section 040 of 000018-options.sql).';

--
-- Name: COLUMN options.ingredient_id; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.options.ingredient_id IS 'With ingredient_amount: that amount of it is added to a serving. Alone: it takes the place of the ingredient of the group''s default option, at the recipe''s amount (Oat for Whole).';

--
-- Name: COLUMN options.recipe_factor; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.options.recipe_factor IS 'Every recipe amount of a serving times this (sizes).';

--
-- Name: add_option(uuid, text, numeric, boolean, uuid, numeric, numeric); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.add_option(p_group_id uuid, p_name text, p_price_delta numeric, p_is_default boolean DEFAULT NULL::boolean, p_ingredient_id uuid DEFAULT NULL::uuid, p_ingredient_amount numeric DEFAULT NULL::numeric, p_recipe_factor numeric DEFAULT NULL::numeric) RETURNS app_public.options
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION add_option(p_group_id uuid, p_name text, p_price_delta numeric, p_is_default boolean, p_ingredient_id uuid, p_ingredient_amount numeric, p_recipe_factor numeric); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.add_option(p_group_id uuid, p_name text, p_price_delta numeric, p_is_default boolean, p_ingredient_id uuid, p_ingredient_amount numeric, p_recipe_factor numeric) IS '@behavior -queryField -mutationField -typeField';

--
-- Name: option_groups; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.option_groups (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    min_selections integer DEFAULT 0 NOT NULL,
    max_selections integer DEFAULT 1 NOT NULL,
    CONSTRAINT option_groups_check CHECK ((min_selections <= max_selections)),
    CONSTRAINT option_groups_max_selections_check CHECK (((max_selections >= 1) AND (max_selections <= 20))),
    CONSTRAINT option_groups_min_selections_check CHECK ((min_selections >= 0)),
    CONSTRAINT option_groups_name_check CHECK (((btrim(name) <> ''::text) AND (length(name) <= 100)))
);

--
-- Name: TABLE option_groups; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.option_groups IS 'A choice a coffee offers (Size, Milk, Extra shot): between min_selections and max_selections of its options per order line.';

--
-- Name: add_option_group(text, integer, integer, uuid[]); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.add_option_group(p_name text, p_min_selections integer, p_max_selections integer, p_coffee_ids uuid[]) RETURNS app_public.option_groups
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION add_option_group(p_name text, p_min_selections integer, p_max_selections integer, p_coffee_ids uuid[]); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.add_option_group(p_name text, p_min_selections integer, p_max_selections integer, p_coffee_ids uuid[]) IS '@behavior -queryField -mutationField -typeField';

--
-- Name: add_store(text, text, text); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.add_store(p_name text, p_time_zone text, p_address text DEFAULT NULL::text) RETURNS app_public.stores
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION add_store(p_name text, p_time_zone text, p_address text); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.add_store(p_name text, p_time_zone text, p_address text) IS '@behavior -queryField -mutationField -typeField';

--
-- Name: assign_staff(uuid, uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.assign_staff(p_account_id uuid, p_store_id uuid) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION assign_staff(p_account_id uuid, p_store_id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.assign_staff(p_account_id uuid, p_store_id uuid) IS '@behavior -queryField -mutationField -typeField';

--
-- Name: baristas; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.baristas (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    is_admin boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    chain_wide boolean DEFAULT false NOT NULL,
    CONSTRAINT baristas_name_check CHECK ((btrim(name) <> ''::text))
);

--
-- Name: TABLE baristas; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.baristas IS 'Staff: baristas and admins. Staff ids are their account ids.';

--
-- Name: COLUMN baristas.chain_wide; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.baristas.chain_wide IS 'Works at every store (the chain''s admin). Others work at the stores of their store_staff rows; an admin who is not chain-wide is the manager of those stores only.';

--
-- Name: baristas_stores(app_public.baristas); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.baristas_stores(b app_public.baristas) RETURNS SETOF app_public.stores
    LANGUAGE sql STABLE
    AS $$
  select s.* from app_public.stores s
  where b.chain_wide or exists (select 1 from app_public.store_staff ss where ss.store_id = s.id and ss.staff_id = b.id)
  order by s.is_default desc, s.name;
$$;

--
-- Name: FUNCTION baristas_stores(b app_public.baristas); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.baristas_stores(b app_public.baristas) IS '@behavior -connection +list
@notNull
@pageSize 100
The stores this member of staff works at (every store for chain-wide staff).';

--
-- Name: cancel_order(uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.cancel_order(p_id uuid) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION cancel_order(p_id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.cancel_order(p_id uuid) IS '@behavior -queryField -mutationField -typeField';

--
-- Name: coffee_by_id(uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.coffee_by_id(id uuid) RETURNS app_public.coffees
    LANGUAGE sql STABLE STRICT
    AS $$
  select c.* from app_public.coffees c where c.id = coffee_by_id.id;
$$;

--
-- Name: FUNCTION coffee_by_id(id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.coffee_by_id(id uuid) IS '@fieldName coffee
One coffee by id; null when there is none.';

--
-- Name: coffee_list(app_public.coffee_category); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.coffee_list(category app_public.coffee_category DEFAULT NULL::app_public.coffee_category) RETURNS SETOF app_public.coffees
    LANGUAGE sql STABLE
    AS $$
  select c.* from app_public.coffees c
  where coffee_list.category is null or c.category = coffee_list.category
  order by c.name;
$$;

--
-- Name: FUNCTION coffee_list(category app_public.coffee_category); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.coffee_list(category app_public.coffee_category) IS '@fieldName coffees
@complexity 10
@behavior -connection +list
@notNull
@pageSize 50
Every coffee (on sale or not), by name; `category` narrows it.';

--
-- Name: coffees_available_at(app_public.coffees, uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.coffees_available_at(c app_public.coffees, store_id uuid DEFAULT NULL::uuid) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
  select app_hidden.on_sale_at(c, app_hidden.store_or_default(coffees_available_at.store_id));
$$;

--
-- Name: FUNCTION coffees_available_at(c app_public.coffees, store_id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.coffees_available_at(c app_public.coffees, store_id uuid) IS '@notNull
On sale at that store (absent: the default store): on the chain''s menu and not taken off there.';

--
-- Name: coffees_cost(app_public.coffees); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.coffees_cost(c app_public.coffees) RETURNS numeric
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select cc.cost from app_private.coffee_costs cc
  where cc.coffee_id = c.id and app_public.is_admin();
$$;

--
-- Name: FUNCTION coffees_cost(c app_public.coffees); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.coffees_cost(c app_public.coffees) IS 'What a cup costs the café. Admins only: null for everyone else.';

--
-- Name: ingredients; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.ingredients (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    organic boolean DEFAULT false NOT NULL,
    allergens app_public.allergen[] DEFAULT '{}'::app_public.allergen[] NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT ingredients_name_check CHECK ((name <> ''::text))
);

--
-- Name: TABLE ingredients; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.ingredients IS 'What drinks are made of.';

--
-- Name: coffees_ingredients(app_public.coffees); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.coffees_ingredients(c app_public.coffees) RETURNS SETOF app_public.ingredients
    LANGUAGE sql STABLE
    AS $$
  select i.* from app_public.recipe_lines rl
  join app_public.ingredients i on i.id = rl.ingredient_id
  where rl.coffee_id = c.id
  order by i.name;
$$;

--
-- Name: FUNCTION coffees_ingredients(c app_public.coffees); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.coffees_ingredients(c app_public.coffees) IS '@behavior -connection +list
@notNull
What the coffee is made of.';

--
-- Name: coffees_inventory(app_public.coffees, uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.coffees_inventory(c app_public.coffees, store_id uuid DEFAULT NULL::uuid) RETURNS integer
    LANGUAGE sql STABLE
    AS $$
  select i.servings from app_public.coffee_inventory i
   where i.store_id = app_hidden.store_or_default(coffees_inventory.store_id) and i.coffee_id = c.id;
$$;

--
-- Name: FUNCTION coffees_inventory(c app_public.coffees, store_id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.coffees_inventory(c app_public.coffees, store_id uuid) IS 'Servings that the store''s (absent: the default store''s) ingredient stock can still make (stock minus what open orders there need); null when the coffee has no recipe.';

--
-- Name: coffees_margin(app_public.coffees); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.coffees_margin(c app_public.coffees) RETURNS numeric
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select round((c.price - cc.cost) / c.price, 4) from app_private.coffee_costs cc
  where cc.coffee_id = c.id and cc.cost is not null and app_public.is_admin();
$$;

--
-- Name: FUNCTION coffees_margin(c app_public.coffees); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.coffees_margin(c app_public.coffees) IS '(price - cost) / price, as a fraction: 0.7 is 70%. Admins only: null for everyone else.';

--
-- Name: coffees_option_groups(app_public.coffees); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.coffees_option_groups(c app_public.coffees) RETURNS SETOF app_public.option_groups
    LANGUAGE sql STABLE
    AS $$
  select g.* from app_public.coffee_option_groups cg
  join app_public.option_groups g on g.id = cg.group_id
  where cg.coffee_id = c.id
  order by cg.position, g.name;
$$;

--
-- Name: FUNCTION coffees_option_groups(c app_public.coffees); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.coffees_option_groups(c app_public.coffees) IS '@behavior -connection +list
@notNull
The choices the coffee offers (Size, Milk, ...).';

--
-- Name: reviews; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.reviews (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    coffee_id uuid NOT NULL,
    customer_id uuid,
    rating integer NOT NULL,
    comment text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT reviews_rating_check CHECK (((rating >= 1) AND (rating <= 5)))
);

--
-- Name: TABLE reviews; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.reviews IS 'A customer''s rating of a coffee.';

--
-- Name: coffees_reviews(app_public.coffees, integer); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.coffees_reviews(c app_public.coffees, "limit" integer DEFAULT NULL::integer) RETURNS SETOF app_public.reviews
    LANGUAGE sql STABLE
    AS $$
  select r.* from app_public.reviews r
  where r.coffee_id = c.id
  order by r.created_at desc, r.id
  limit least(greatest(coalesce("limit", 20), 0), 100);
$$;

--
-- Name: FUNCTION coffees_reviews(c app_public.coffees, "limit" integer); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.coffees_reviews(c app_public.coffees, "limit" integer) IS '@behavior -connection +list
@notNull
@pageSize 20 100
Newest first; `limit` defaults to 20 and is capped at 100.';

--
-- Name: coffees_sales_data(app_public.coffees); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.coffees_sales_data(c app_public.coffees) RETURNS app_public.sales_data
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION coffees_sales_data(c app_public.coffees); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.coffees_sales_data(c app_public.coffees) IS 'Cups sold in the last 7 days and the trend. Admins only: null for everyone else.';

--
-- Name: coffees_seasonal_ingredients(app_public.coffees); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.coffees_seasonal_ingredients(c app_public.coffees) RETURNS SETOF app_public.ingredients
    LANGUAGE sql STABLE
    AS $$
  select i.* from app_public.recipe_lines rl
  join app_public.ingredients i on i.id = rl.ingredient_id
  where rl.coffee_id = c.id and rl.seasonal
  order by i.name;
$$;

--
-- Name: FUNCTION coffees_seasonal_ingredients(c app_public.coffees); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.coffees_seasonal_ingredients(c app_public.coffees) IS '@behavior -connection +list
@notNull
The seasonal part of the recipe.';

--
-- Name: coffees_store_price(app_public.coffees, uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.coffees_store_price(c app_public.coffees, store_id uuid DEFAULT NULL::uuid) RETURNS numeric
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select app_private.coffee_price_at(c.id, app_hidden.store_or_default(coffees_store_price.store_id));
$$;

--
-- Name: FUNCTION coffees_store_price(c app_public.coffees, store_id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.coffees_store_price(c app_public.coffees, store_id uuid) IS '@notNull
The price at that store (absent: the default store): its own price there, else the chain''s (price).';

--
-- Name: suppliers; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.suppliers (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    contact text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT suppliers_name_check CHECK ((name <> ''::text))
);

--
-- Name: TABLE suppliers; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.suppliers IS 'Where the café buys a coffee''s beans. Admins only.';

--
-- Name: coffees_supplier(app_public.coffees); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.coffees_supplier(c app_public.coffees) RETURNS app_public.suppliers
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select s.* from app_private.coffee_costs cc
  join app_public.suppliers s on s.id = cc.supplier_id
  where cc.coffee_id = c.id and app_public.is_admin();
$$;

--
-- Name: FUNCTION coffees_supplier(c app_public.coffees); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.coffees_supplier(c app_public.coffees) IS 'Where the beans come from. Admins only: null for everyone else.';

--
-- Name: create_coffee(text, numeric, app_public.roast_level, app_public.coffee_category, uuid, text, text, boolean, boolean); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.create_coffee(p_name text, p_price numeric, p_roast app_public.roast_level DEFAULT NULL::app_public.roast_level, p_category app_public.coffee_category DEFAULT NULL::app_public.coffee_category, p_roaster_id uuid DEFAULT NULL::uuid, p_description text DEFAULT NULL::text, p_image_url text DEFAULT NULL::text, p_available boolean DEFAULT NULL::boolean, p_limited_time_offer boolean DEFAULT NULL::boolean) RETURNS app_public.coffees
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION create_coffee(p_name text, p_price numeric, p_roast app_public.roast_level, p_category app_public.coffee_category, p_roaster_id uuid, p_description text, p_image_url text, p_available boolean, p_limited_time_offer boolean); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.create_coffee(p_name text, p_price numeric, p_roast app_public.roast_level, p_category app_public.coffee_category, p_roaster_id uuid, p_description text, p_image_url text, p_available boolean, p_limited_time_offer boolean) IS '@behavior -queryField -mutationField -typeField';

--
-- Name: create_order(jsonb, text, uuid, integer, text, uuid, uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.create_order(p_items jsonb DEFAULT NULL::jsonb, p_input_notes text DEFAULT NULL::text, p_coffee_id uuid DEFAULT NULL::uuid, p_quantity integer DEFAULT NULL::integer, p_notes text DEFAULT NULL::text, p_customer_id uuid DEFAULT NULL::uuid, p_store_id uuid DEFAULT NULL::uuid) RETURNS app_public.orders
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION create_order(p_items jsonb, p_input_notes text, p_coffee_id uuid, p_quantity integer, p_notes text, p_customer_id uuid, p_store_id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.create_order(p_items jsonb, p_input_notes text, p_coffee_id uuid, p_quantity integer, p_notes text, p_customer_id uuid, p_store_id uuid) IS '@behavior -queryField -mutationField -typeField';

--
-- Name: current_actor(); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.current_actor() RETURNS text
    LANGUAGE sql STABLE
    AS $$
  select case current_setting('role', true)
    when 'cafe_anonymous' then 'anonymous'
    when 'cafe_customer' then app_hidden.signed_in_as('customer')
    when 'cafe_barista' then app_hidden.signed_in_as('barista')
    when 'cafe_admin' then app_hidden.signed_in_as('admin')
    when 'cafe_system' then 'system'
    else 'dba'
  end;
$$;

--
-- Name: FUNCTION current_actor(); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.current_actor() IS '@behavior -queryField -mutationField -typeField
The acting role: anonymous, customer, barista, admin, system (payments and jobs) or dba (a session that set no role).';

--
-- Name: customers; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.customers (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    points integer DEFAULT 0 NOT NULL,
    is_walk_in boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT customers_name_check CHECK (((btrim(name) <> ''::text) AND (length(name) <= 100))),
    CONSTRAINT customers_points_check CHECK ((points >= 0))
);

--
-- Name: TABLE customers; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.customers IS 'A customer of the café. Signed-up customers share their id with their account; orders taken at the counter without a customer belong to the walk-in customer.';

--
-- Name: COLUMN customers.points; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.customers.points IS 'Loyalty points: see app_private.settings points_per_currency_unit.';

--
-- Name: current_customer(); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.current_customer() RETURNS app_public.customers
    LANGUAGE sql STABLE
    AS $$
  select c.* from app_public.customers c
  where c.id = app_public.current_user_id() and app_public.current_actor() = 'customer';
$$;

--
-- Name: FUNCTION current_customer(); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.current_customer() IS '@fieldName customer
The signed-in customer; null when the request carries no customer.';

--
-- Name: current_user_id(); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.current_user_id() RETURNS uuid
    LANGUAGE sql STABLE
    AS $$
  select nullif(current_setting('jwt.claims.user_id', true), '')::uuid;
$$;

--
-- Name: FUNCTION current_user_id(); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.current_user_id() IS '@behavior -queryField -mutationField -typeField
The signed-in user''s id (customer or staff), from the verified JWT.';

--
-- Name: customer_by_email(text); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.customer_by_email(email text) RETURNS app_public.customers
    LANGUAGE plpgsql STABLE STRICT SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION customer_by_email(email text); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.customer_by_email(email text) IS 'Staff only: the customer with this e-mail address (the point of sale looks customers up).';

--
-- Name: customers_recent_orders(app_public.customers, integer); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.customers_recent_orders(c app_public.customers, "limit" integer DEFAULT NULL::integer) RETURNS SETOF app_public.orders
    LANGUAGE sql STABLE
    AS $$
  select o.* from app_public.orders o
  where o.customer_id = c.id
  order by o.time_ordered desc, o.id
  limit least(greatest(coalesce("limit", 10), 0), 100);
$$;

--
-- Name: FUNCTION customers_recent_orders(c app_public.customers, "limit" integer); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.customers_recent_orders(c app_public.customers, "limit" integer) IS '@behavior -connection +list
@notNull
@pageSize 10 100
Newest first; `limit` defaults to 10 and is capped at 100.';

--
-- Name: featured_coffee(uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.featured_coffee(store_id uuid DEFAULT NULL::uuid) RETURNS app_public.coffees
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select c.* from app_public.coffees c
  where c.id = (
    select case when s.store_id is null then app_private.rank_featured_coffee(st.id) else s.featured_coffee_id end
    from (select app_hidden.store_or_default(featured_coffee.store_id) as id) st
    left join app_private.public_read_state s on s.store_id = st.id);
$$;

--
-- Name: FUNCTION featured_coffee(store_id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.featured_coffee(store_id uuid) IS 'The FEATURED coffee on sale at the store (absent: the default store) that sold most there in the last 7 days (ties: by name).';

--
-- Name: stock_items; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.stock_items (
    ingredient_id uuid NOT NULL,
    current_stock numeric(12,3) NOT NULL,
    alert_level numeric(12,3) DEFAULT 0 NOT NULL,
    unit text DEFAULT 'unit'::text NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    store_id uuid DEFAULT app_hidden.default_store_id() NOT NULL,
    CONSTRAINT stock_items_alert_level_check CHECK ((alert_level >= (0)::numeric)),
    CONSTRAINT stock_items_current_stock_check CHECK ((current_stock >= (0)::numeric))
);

--
-- Name: TABLE stock_items; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.stock_items IS 'How much of an ingredient a store has on the shelf, and the level that should raise an alert. An ingredient without a row at a store is not counted there (never short).';

--
-- Name: ingredients_stock_item(app_public.ingredients, uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.ingredients_stock_item(i app_public.ingredients, store_id uuid DEFAULT NULL::uuid) RETURNS app_public.stock_items
    LANGUAGE sql STABLE
    AS $$
  select s.* from app_public.stock_items s
  where s.store_id = app_hidden.store_or_default(ingredients_stock_item.store_id) and s.ingredient_id = i.id;
$$;

--
-- Name: FUNCTION ingredients_stock_item(i app_public.ingredients, store_id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.ingredients_stock_item(i app_public.ingredients, store_id uuid) IS '@notNull
@behavior +filter:proc:filterBy
The ingredient''s stock at the store (absent: the default store). Staff only.';

--
-- Name: is_admin(); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.is_admin() RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
  select app_public.current_actor() = 'admin' and app_hidden.staff_is_chain_wide();
$$;

--
-- Name: FUNCTION is_admin(); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.is_admin() IS '@behavior -queryField -mutationField -typeField
The chain''s admin (a store manager is not).';

--
-- Name: is_staff(); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.is_staff() RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
  select app_public.current_actor() in ('barista', 'admin');
$$;

--
-- Name: FUNCTION is_staff(); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.is_staff() IS '@behavior -queryField -mutationField -typeField';

--
-- Name: is_store_admin(uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.is_store_admin(p_store_id uuid) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
  select app_public.current_actor() = 'admin' and p_store_id = any (app_public.staff_store_ids());
$$;

--
-- Name: FUNCTION is_store_admin(p_store_id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.is_store_admin(p_store_id uuid) IS '@behavior -queryField -mutationField -typeField
An admin of that store: its manager, or the chain''s admin.';

--
-- Name: low_stock_items(uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.low_stock_items(store_id uuid DEFAULT NULL::uuid) RETURNS SETOF app_public.stock_items
    LANGUAGE plpgsql STABLE
    AS $$
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

--
-- Name: FUNCTION low_stock_items(store_id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.low_stock_items(store_id uuid) IS '@behavior -connection +list
@notNull
@pageSize 100
Staff of the store (absent: the default store) only; others get a FORBIDDEN error. Its stock at or below its alert level, emptiest first.';

--
-- Name: mark_order_paid(uuid, app_public.payment_method); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.mark_order_paid(p_id uuid, p_method app_public.payment_method) RETURNS app_public.orders
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION mark_order_paid(p_id uuid, p_method app_public.payment_method); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.mark_order_paid(p_id uuid, p_method app_public.payment_method) IS '@behavior -queryField -mutationField -typeField';

--
-- Name: menu_items(uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.menu_items(store_id uuid DEFAULT NULL::uuid) RETURNS SETOF app_public.coffees
    LANGUAGE sql STABLE
    AS $$
  select c.* from app_public.coffees c
  cross join (select app_hidden.store_or_default(menu_items.store_id) as id) st
  where c.available
    and not exists (select 1 from app_public.store_coffees sc where sc.store_id = st.id and sc.coffee_id = c.id and not sc.available)
  order by c.category, c.name;
$$;

--
-- Name: FUNCTION menu_items(store_id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.menu_items(store_id uuid) IS '@behavior -connection +list
@notNull
@pageSize 50
What the kiosk shows: every coffee on sale now at the store (absent: the default store), by category then name.';

--
-- Name: refunds; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.refunds (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    order_id uuid NOT NULL,
    amount numeric(10,2) NOT NULL,
    reason text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    settled_at timestamp with time zone,
    settled_by uuid,
    source_key text,
    paid_amount numeric(10,2),
    order_total numeric(10,2),
    above_order_total boolean DEFAULT false NOT NULL,
    store_id uuid DEFAULT app_hidden.default_store_id() NOT NULL,
    status app_public.refund_status DEFAULT 'PENDING'::app_public.refund_status NOT NULL,
    provider text,
    provider_payment_id text,
    provider_refund_id text,
    currency text,
    amount_minor bigint,
    attempts integer DEFAULT 0 NOT NULL,
    last_error text,
    alerted_at timestamp with time zone,
    CONSTRAINT refunds_amount_check CHECK ((amount >= (0)::numeric)),
    CONSTRAINT refunds_amount_minor_check CHECK ((amount_minor > 0))
);

--
-- Name: TABLE refunds; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.refunds IS 'Money the café owes back: a paid order that was cancelled, or a payment for an order that could not be paid. Admins list and settle them.';

--
-- Name: COLUMN refunds.paid_amount; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.refunds.paid_amount IS 'What the payment said was paid (for a payment to an order that could not take it).';

--
-- Name: COLUMN refunds.order_total; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.refunds.order_total IS 'The order''s total when the refund was recorded.';

--
-- Name: COLUMN refunds.above_order_total; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.refunds.above_order_total IS 'More was paid than the order''s total: check with the provider before settling.';

--
-- Name: COLUMN refunds.status; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.refunds.status IS 'Where the refund stands: PENDING, SENT (taken by the provider), SUCCEEDED (paid back), FAILED (refused by the provider: settle by hand).';

--
-- Name: COLUMN refunds.provider; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.refunds.provider IS 'stripe when the refund is paid back through the provider''s API (the order was paid through it); null: settled by hand (cash, till).';

--
-- Name: COLUMN refunds.provider_payment_id; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.refunds.provider_payment_id IS 'The provider''s payment the refund goes back to (a Stripe PaymentIntent id).';

--
-- Name: COLUMN refunds.provider_refund_id; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.refunds.provider_refund_id IS 'The provider''s refund id, once it took the refund.';

--
-- Name: COLUMN refunds.currency; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.refunds.currency IS 'The currency of amount_minor (the payment''s).';

--
-- Name: COLUMN refunds.amount_minor; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.refunds.amount_minor IS 'What the provider pays back, in the currency''s minor units.';

--
-- Name: COLUMN refunds.attempts; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.refunds.attempts IS 'Calls of the provider''s Refunds API so far.';

--
-- Name: COLUMN refunds.last_error; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.refunds.last_error IS 'Why the latest attempt failed (null after one succeeded).';

--
-- Name: COLUMN refunds.alerted_at; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.refunds.alerted_at IS '@behavior -*';

--
-- Name: open_refunds(); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.open_refunds() RETURNS SETOF app_public.refunds
    LANGUAGE plpgsql STABLE
    AS $$
begin
  perform app_hidden.require_store_admin(null);
  return query select r.* from app_public.refunds r
    where r.settled_at is null and r.store_id = any (app_public.staff_store_ids())
    order by r.created_at, r.id;
end;
$$;

--
-- Name: FUNCTION open_refunds(); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.open_refunds() IS '@behavior -connection +list
@notNull
@pageSize 100
Admins only: refunds owed at their stores (the chain''s admin: every store) and not yet settled, oldest first.';

--
-- Name: option_groups_options(app_public.option_groups); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.option_groups_options(g app_public.option_groups) RETURNS SETOF app_public.options
    LANGUAGE sql STABLE
    AS $$
  select o.* from app_public.options o where o.group_id = g.id order by o.position, o.name;
$$;

--
-- Name: FUNCTION option_groups_options(g app_public.option_groups); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.option_groups_options(g app_public.option_groups) IS '@behavior -connection +list
@notNull
The group''s options, in position order.';

--
-- Name: options_available(app_public.options, uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.options_available(o app_public.options, store_id uuid DEFAULT NULL::uuid) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select app_private.option_available_at(o.id, app_hidden.store_or_default(options_available.store_id));
$$;

--
-- Name: FUNCTION options_available(o app_public.options, store_id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.options_available(o app_public.options, store_id uuid) IS '@notNull
On offer at that store (absent: the default store): not switched off there (setOptionAvailable).';

--
-- Name: options_inventory(app_public.options, uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.options_inventory(o app_public.options, store_id uuid DEFAULT NULL::uuid) RETURNS integer
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION options_inventory(o app_public.options, store_id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.options_inventory(o app_public.options, store_id uuid) IS 'Servings of this option the store''s (absent: the default store''s) stock can still make, less what open orders hold: its ingredient over what one serving takes (a swap: the most any of the group''s coffees'' recipes takes). Null when it uses no counted ingredient.';

--
-- Name: order_by_id(uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.order_by_id(id uuid) RETURNS app_public.orders
    LANGUAGE sql STABLE STRICT
    AS $$
  select o.* from app_public.orders o where o.id = order_by_id.id;
$$;

--
-- Name: FUNCTION order_by_id(id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.order_by_id(id uuid) IS '@fieldName order
One order by id, if you may see it; null otherwise.';

--
-- Name: order_items; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.order_items (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    order_id uuid NOT NULL,
    "position" integer NOT NULL,
    coffee_id uuid NOT NULL,
    quantity integer NOT NULL,
    unit_price numeric(10,2) NOT NULL,
    special_instructions text,
    CONSTRAINT order_items_position_check CHECK (("position" >= 1)),
    CONSTRAINT order_items_quantity_check CHECK ((quantity >= 1)),
    CONSTRAINT order_items_special_instructions_check CHECK ((length(special_instructions) <= 200)),
    CONSTRAINT order_items_unit_price_check CHECK ((unit_price > (0)::numeric))
);

--
-- Name: TABLE order_items; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.order_items IS 'A line of an order, at the unit price captured when the order was made.';

--
-- Name: order_items_line_total(app_public.order_items); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.order_items_line_total(oi app_public.order_items) RETURNS numeric
    LANGUAGE sql STABLE
    AS $$
  select oi.unit_price * oi.quantity;
$$;

--
-- Name: FUNCTION order_items_line_total(oi app_public.order_items); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.order_items_line_total(oi app_public.order_items) IS '@notNull
unitPrice (the store''s price plus the options'' deltas) times quantity.';

--
-- Name: order_items_options(app_public.order_items); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.order_items_options(oi app_public.order_items) RETURNS SETOF app_public.order_item_option
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select row(x.name, x.price_delta)::app_public.order_item_option
  from app_private.order_item_options x
  join app_public.options o on o.id = x.option_id
  join app_public.option_groups g on g.id = o.group_id
  where x.order_id = oi.order_id and x.position = oi.position
  order by g.name, o.position, x.name;
$$;

--
-- Name: FUNCTION order_items_options(oi app_public.order_items); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.order_items_options(oi app_public.order_items) IS '@behavior -connection +list
@notNull
The options chosen for the line (each group''s defaults when none were given).';

--
-- Name: order_status_message(app_public.order_status); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.order_status_message(s app_public.order_status) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
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

--
-- Name: FUNCTION order_status_message(s app_public.order_status); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.order_status_message(s app_public.order_status) IS '@behavior -queryField -mutationField -typeField
Human text for a status: Brewing, Ready for pickup, Completed, ...';

--
-- Name: orders_order(app_public.orders); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.orders_order(o app_public.orders) RETURNS app_public.order_line
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
  select row(c.name, oi.quantity, o.notes)::app_public.order_line
  from app_public.order_items oi join app_public.coffees c on c.id = oi.coffee_id
  where oi.order_id = o.id
  order by oi.position limit 1;
$$;

--
-- Name: FUNCTION orders_order(o app_public.orders); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.orders_order(o app_public.orders) IS '@notNull
The order''s first line (lines keep the order in which they were given; an order has at least one).';

--
-- Name: payment_alerts; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.payment_alerts (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    kind text NOT NULL,
    message text NOT NULL,
    source text,
    order_id uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    acknowledged_at timestamp with time zone
);

--
-- Name: TABLE payment_alerts; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.payment_alerts IS 'Unusual payment-callback patterns (bursts, repeated auth failures, several payments for one order, amount mismatches, payments that need refunding). Admins only.';

--
-- Name: payment_alert_list(integer); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.payment_alert_list("limit" integer DEFAULT NULL::integer) RETURNS SETOF app_public.payment_alerts
    LANGUAGE plpgsql STABLE
    AS $$
begin
  perform app_hidden.require_admin();
  return query select a.* from app_public.payment_alerts a order by a.created_at desc, a.id
    limit least(greatest(coalesce("limit", 50), 0), 500);
end;
$$;

--
-- Name: FUNCTION payment_alert_list("limit" integer); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.payment_alert_list("limit" integer) IS '@fieldName paymentAlerts
@behavior -connection +list
@notNull
@pageSize 50 500
Admins only: the newest payment alerts first.';

--
-- Name: restock_ingredient(uuid, numeric, text, uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.restock_ingredient(p_ingredient_id uuid, p_amount numeric, p_reason text DEFAULT NULL::text, p_store_id uuid DEFAULT NULL::uuid) RETURNS app_public.stock_items
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION restock_ingredient(p_ingredient_id uuid, p_amount numeric, p_reason text, p_store_id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.restock_ingredient(p_ingredient_id uuid, p_amount numeric, p_reason text, p_store_id uuid) IS '@behavior -queryField -mutationField -typeField';

--
-- Name: search_coffees(text, text); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.search_coffees(query text DEFAULT NULL::text, name text DEFAULT NULL::text) RETURNS SETOF app_public.coffees
    LANGUAGE plpgsql STABLE
    AS $$
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

--
-- Name: FUNCTION search_coffees(query text, name text); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.search_coffees(query text, name text) IS '@complexity 50
@behavior -connection +list
@notNull
Coffees on sale whose name (or description) matches, best first: exact, prefix, substring, then similar spellings (pg_trgm). Exactly one of `query` or `name`.';

--
-- Name: search_customers(text); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.search_customers(query text) RETURNS SETOF app_public.customers
    LANGUAGE plpgsql STABLE STRICT SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION search_customers(query text); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.search_customers(query text) IS '@behavior -connection +list
@notNull
Staff only: customers whose e-mail, username or name contains the text (20 at most).';

--
-- Name: seasonal_drinks(uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.seasonal_drinks(store_id uuid DEFAULT NULL::uuid) RETURNS SETOF app_public.coffees
    LANGUAGE sql STABLE
    AS $$
  select c.* from app_public.coffees c
  cross join (select app_hidden.store_or_default(seasonal_drinks.store_id) as id) st
  where c.available and (c.category = 'SEASONAL' or c.limited_time_offer)
    and not exists (select 1 from app_public.store_coffees sc where sc.store_id = st.id and sc.coffee_id = c.id and not sc.available)
  order by c.name;
$$;

--
-- Name: FUNCTION seasonal_drinks(store_id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.seasonal_drinks(store_id uuid) IS '@behavior -connection +list
@notNull
Coffees on sale at the store (absent: the default store) in the SEASONAL category or marked limitedTimeOffer.';

--
-- Name: set_coffee_available(uuid, boolean, uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.set_coffee_available(p_id uuid, p_available boolean, p_store_id uuid DEFAULT NULL::uuid) RETURNS app_public.coffees
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION set_coffee_available(p_id uuid, p_available boolean, p_store_id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.set_coffee_available(p_id uuid, p_available boolean, p_store_id uuid) IS '@behavior -queryField -mutationField -typeField';

--
-- Name: set_option_available(uuid, uuid, boolean); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.set_option_available(p_store_id uuid, p_option_id uuid, p_available boolean) RETURNS app_public.options
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION set_option_available(p_store_id uuid, p_option_id uuid, p_available boolean); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.set_option_available(p_store_id uuid, p_option_id uuid, p_available boolean) IS '@behavior -queryField -mutationField -typeField';

--
-- Name: set_stock_alert_level(uuid, numeric, uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.set_stock_alert_level(p_ingredient_id uuid, p_alert_level numeric, p_store_id uuid DEFAULT NULL::uuid) RETURNS app_public.stock_items
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION set_stock_alert_level(p_ingredient_id uuid, p_alert_level numeric, p_store_id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.set_stock_alert_level(p_ingredient_id uuid, p_alert_level numeric, p_store_id uuid) IS '@behavior -queryField -mutationField -typeField';

--
-- Name: set_store_price(uuid, uuid, numeric); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.set_store_price(p_store_id uuid, p_coffee_id uuid, p_price numeric DEFAULT NULL::numeric) RETURNS app_public.coffees
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION set_store_price(p_store_id uuid, p_coffee_id uuid, p_price numeric); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.set_store_price(p_store_id uuid, p_coffee_id uuid, p_price numeric) IS '@behavior -queryField -mutationField -typeField';

--
-- Name: settle_refund(uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.settle_refund(p_id uuid) RETURNS app_public.refunds
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
declare
  v_refund app_public.refunds;
begin
  perform app_hidden.require_store_admin(null);
  select * into v_refund from app_public.refunds where id = p_id for update;
  if v_refund.id is null or app_public.current_actor() <> 'dba' and not app_public.is_store_admin(v_refund.store_id) then
    raise exception 'No refund with id %.', p_id using errcode = 'P0002';
  end if;
  update app_public.refunds set settled_at = coalesce(settled_at, now()), settled_by = coalesce(settled_by, app_public.current_user_id()), status = 'SUCCEEDED'
   where id = p_id returning * into v_refund;
  return v_refund;
end;
$$;

--
-- Name: FUNCTION settle_refund(p_id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.settle_refund(p_id uuid) IS '@behavior -queryField -mutationField -typeField';

--
-- Name: staff_store_ids(); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.staff_store_ids() RETURNS uuid[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
declare
  v_actor text := app_public.current_actor();
begin
  if v_actor in ('system', 'dba') or (v_actor in ('barista', 'admin') and app_hidden.staff_is_chain_wide()) then
    return coalesce((select array_agg(s.id order by s.id) from app_public.stores s), '{}');
  elsif v_actor in ('barista', 'admin') then
    return coalesce((select array_agg(ss.store_id order by ss.store_id) from app_public.store_staff ss where ss.staff_id = app_public.current_user_id()), '{}');
  end if;
  return '{}';
end;
$$;

--
-- Name: FUNCTION staff_store_ids(); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.staff_store_ids() IS '@behavior -queryField -mutationField -typeField
The stores whose orders, stock, refunds and notifications the caller sees as staff: every store for the chain''s admin (and chain-wide staff), the system and a DBA; their store_staff rows for a barista or a store manager; none for anyone else.';

--
-- Name: stock_item_by_ingredient_id(uuid, uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.stock_item_by_ingredient_id(ingredient_id uuid, store_id uuid DEFAULT NULL::uuid) RETURNS app_public.stock_items
    LANGUAGE sql STABLE
    AS $$
  select s.* from app_public.stock_items s
  where s.store_id = app_hidden.store_or_default(stock_item_by_ingredient_id.store_id) and s.ingredient_id = stock_item_by_ingredient_id.ingredient_id;
$$;

--
-- Name: FUNCTION stock_item_by_ingredient_id(ingredient_id uuid, store_id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.stock_item_by_ingredient_id(ingredient_id uuid, store_id uuid) IS 'One ingredient''s stock at the store (absent: the default store). Staff only.';

--
-- Name: store_list(); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.store_list() RETURNS SETOF app_public.stores
    LANGUAGE sql STABLE
    AS $$
  select s.* from app_public.stores s order by s.is_default desc, s.name;
$$;

--
-- Name: FUNCTION store_list(); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.store_list() IS '@fieldName stores
@behavior -connection +list
@notNull
@pageSize 100
The chain''s stores, the default one first, then by name: the open ones (staff: all).';

--
-- Name: update_coffee_price(uuid, numeric); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.update_coffee_price(p_id uuid, p_new_price numeric) RETURNS app_public.coffees
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION update_coffee_price(p_id uuid, p_new_price numeric); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.update_coffee_price(p_id uuid, p_new_price numeric) IS '@behavior -queryField -mutationField -typeField';

--
-- Name: update_customer_profile(jsonb); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.update_customer_profile(p_patch jsonb) RETURNS app_public.customers
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $_$
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
$_$;

--
-- Name: FUNCTION update_customer_profile(p_patch jsonb); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.update_customer_profile(p_patch jsonb) IS '@behavior -queryField -mutationField -typeField';

--
-- Name: update_order_status(uuid, app_public.order_status); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.update_order_status(p_id uuid, p_status app_public.order_status) RETURNS app_public.orders
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION update_order_status(p_id uuid, p_status app_public.order_status); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.update_order_status(p_id uuid, p_status app_public.order_status) IS '@behavior -queryField -mutationField -typeField';

--
-- Name: update_store(uuid, jsonb); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.update_store(p_id uuid, p_patch jsonb) RETURNS app_public.stores
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
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

--
-- Name: FUNCTION update_store(p_id uuid, p_patch jsonb); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.update_store(p_id uuid, p_patch jsonb) IS '@behavior -queryField -mutationField -typeField';

--
-- Name: user_by_id(uuid); Type: FUNCTION; Schema: app_public; Owner: -
--

CREATE FUNCTION app_public.user_by_id(id uuid) RETURNS app_public.customers
    LANGUAGE plpgsql STABLE STRICT
    AS $$
declare
  result app_public.customers;
begin
  perform app_hidden.require_staff();
  select c.* into result from app_public.customers c where c.id = user_by_id.id;
  return result;
end;
$$;

--
-- Name: FUNCTION user_by_id(id uuid); Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON FUNCTION app_public.user_by_id(id uuid) IS '@fieldName user
Staff only (barista, admin; the point of sale signs in as staff).';

--
-- Name: accounts; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.accounts (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    email public.citext NOT NULL,
    password_hash text NOT NULL,
    role text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    disabled_at timestamp with time zone,
    CONSTRAINT accounts_email_check CHECK ((email OPERATOR(public.~) '^[^@\s]+@[^@\s]+\.[^@\s]+$'::public.citext)),
    CONSTRAINT accounts_role_check CHECK ((role = ANY (ARRAY['customer'::text, 'barista'::text, 'admin'::text])))
);

--
-- Name: COLUMN accounts.disabled_at; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.accounts.disabled_at IS 'When the account was disabled: it can no longer sign in, refresh or act.';

--
-- Name: alert_rules; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.alert_rules (
    kind text NOT NULL,
    threshold integer NOT NULL,
    window_seconds integer NOT NULL,
    block_seconds integer DEFAULT 0 NOT NULL,
    description text NOT NULL,
    CONSTRAINT alert_rules_block_seconds_check CHECK ((block_seconds >= 0)),
    CONSTRAINT alert_rules_threshold_check CHECK ((threshold >= 0)),
    CONSTRAINT alert_rules_window_seconds_check CHECK ((window_seconds > 0))
);

--
-- Name: alert_windows; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.alert_windows (
    kind text NOT NULL,
    window_start timestamp with time zone NOT NULL
);

--
-- Name: audit_log; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.audit_log (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    actor text NOT NULL,
    action text NOT NULL,
    entity text NOT NULL,
    before jsonb,
    after jsonb,
    store_id uuid
);

--
-- Name: TABLE audit_log; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.audit_log IS 'Every change of a rule: who, when, what, before and after. No request role may read or write it directly (no grants, RLS on); admins read it through auditLog. A DBA''s retention job may delete old rows as the owner.';

--
-- Name: audit_log_id_seq; Type: SEQUENCE; Schema: app_private; Owner: -
--

ALTER TABLE app_private.audit_log ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.audit_log_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: blocked_sources; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.blocked_sources (
    source text NOT NULL,
    blocked_until timestamp with time zone NOT NULL,
    reason text NOT NULL
);

--
-- Name: coffee_costs; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.coffee_costs (
    coffee_id uuid NOT NULL,
    cost numeric(10,2),
    supplier_id uuid,
    CONSTRAINT coffee_costs_cost_check CHECK ((cost >= (0)::numeric))
);

--
-- Name: coffee_sales; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.coffee_sales (
    store_id uuid NOT NULL,
    hour timestamp with time zone NOT NULL,
    coffee_id uuid NOT NULL,
    sold bigint NOT NULL
);

--
-- Name: TABLE coffee_sales; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.coffee_sales IS 'Quantities sold (orders PAID or later: sale_counts()) per store, hour ordered and coffee, kept by triggers on orders and order_items; rank_featured_coffee() sums the last 7 days. Rows older than 8 days are pruned as sales are counted; recount_reserved_stock() rebuilds them.';

--
-- Name: idempotency_keys; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.idempotency_keys (
    owner text NOT NULL,
    key text NOT NULL,
    request_hash text NOT NULL,
    status text DEFAULT 'claimed'::text NOT NULL,
    response json,
    mutation_result json,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT idempotency_keys_done_has_response CHECK (((status = 'done'::text) = (response IS NOT NULL))),
    CONSTRAINT idempotency_keys_key_check CHECK ((key ~ '^[ -~]{1,255}$'::text)),
    CONSTRAINT idempotency_keys_status_check CHECK ((status = ANY (ARRAY['claimed'::text, 'committed'::text, 'done'::text])))
);

--
-- Name: TABLE idempotency_keys; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.idempotency_keys IS 'Idempotency-Key claims of mutations and their stored answers, kept idempotency_key_retention_hours.';

--
-- Name: COLUMN idempotency_keys.mutation_result; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.idempotency_keys.mutation_result IS 'The rows the mutation''s own statement returned (as the API selected them), saved with its effects: what the attempt did, even when its answer was never written.';

--
-- Name: login_attempts; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.login_attempts (
    id bigint NOT NULL,
    email text NOT NULL,
    source text NOT NULL,
    succeeded boolean NOT NULL,
    kind text DEFAULT 'login'::text NOT NULL,
    attempted_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT login_attempts_kind_check CHECK ((kind = ANY (ARRAY['login'::text, 'change_password'::text, 'register'::text, 'add_staff_account'::text])))
);

--
-- Name: login_attempts_id_seq; Type: SEQUENCE; Schema: app_private; Owner: -
--

ALTER TABLE app_private.login_attempts ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.login_attempts_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: notification_webhooks; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.notification_webhooks (
    notification_id uuid NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    last_attempt_at timestamp with time zone,
    last_error text,
    delivered_at timestamp with time zone,
    gave_up_at timestamp with time zone
);

--
-- Name: TABLE notification_webhooks; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.notification_webhooks IS 'The outgoing webhook of each customer notification: attempts, last error, when it was delivered (or given up after notify_webhook_max_attempts).';

--
-- Name: order_item_options; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.order_item_options (
    order_id uuid NOT NULL,
    "position" integer NOT NULL,
    option_id uuid NOT NULL,
    name text NOT NULL,
    price_delta numeric(10,2) NOT NULL
);

--
-- Name: TABLE order_item_options; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.order_item_options IS 'The options of each order line as ordered (OrderItem.options); app_private.order_line_usage() reads them.';

--
-- Name: order_sources; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.order_sources (
    order_id uuid NOT NULL,
    source text NOT NULL,
    placed_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: TABLE order_sources; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.order_sources IS 'Which source (app_private.source_key: an address, an IPv6 /64) placed each order made through the API; the per-source stock share counts by it.';

--
-- Name: payment_deliveries; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.payment_deliveries (
    id bigint NOT NULL,
    received_at timestamp with time zone DEFAULT now() NOT NULL,
    source text NOT NULL,
    dedupe_key text,
    body_sha256 text,
    event text,
    order_id uuid,
    http_status integer NOT NULL,
    outcome text NOT NULL,
    code text,
    reason text,
    store_id uuid
);

--
-- Name: payment_deliveries_id_seq; Type: SEQUENCE; Schema: app_private; Owner: -
--

ALTER TABLE app_private.payment_deliveries ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.payment_deliveries_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: payment_intents; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.payment_intents (
    intent_id text NOT NULL,
    provider text DEFAULT 'stripe'::text NOT NULL,
    order_id uuid NOT NULL,
    amount_minor bigint NOT NULL,
    currency text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    succeeded_at timestamp with time zone,
    canceled_at timestamp with time zone,
    CONSTRAINT payment_intents_amount_minor_check CHECK ((amount_minor > 0))
);

--
-- Name: TABLE payment_intents; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.payment_intents IS 'The provider''s payment intents of each order: made by startPayment (or named by a webhook), paid, cancelled.';

--
-- Name: processed_payment_keys; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.processed_payment_keys (
    key text NOT NULL,
    body_sha256 text NOT NULL,
    order_id uuid,
    outcome text NOT NULL,
    processed_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: public_read_changes; Type: TABLE; Schema: app_private; Owner: -
--

CREATE UNLOGGED TABLE app_private.public_read_changes (
    txid xid8 DEFAULT pg_current_xact_id() NOT NULL,
    what text NOT NULL
);

--
-- Name: TABLE public_read_changes; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.public_read_changes IS 'What the current transaction may have changed of the public reads; emptied at its COMMIT.';

--
-- Name: public_read_state; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.public_read_state (
    store_id uuid NOT NULL,
    featured_coffee_id uuid
);

--
-- Name: TABLE public_read_state; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.public_read_state IS 'Each store''s featured coffee as last announced (featuredCoffee moves: announce it).';

--
-- Name: rate_usage; Type: TABLE; Schema: app_private; Owner: -
--

CREATE UNLOGGED TABLE app_private.rate_usage (
    key text NOT NULL,
    process text NOT NULL,
    used integer NOT NULL,
    budget integer NOT NULL,
    ceiling integer NOT NULL,
    window_end_ms bigint NOT NULL,
    demand integer DEFAULT 0 NOT NULL,
    unmet boolean DEFAULT false NOT NULL,
    since timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    synced_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT rate_usage_budget_check CHECK ((budget >= 0)),
    CONSTRAINT rate_usage_ceiling_check CHECK ((ceiling >= 0)),
    CONSTRAINT rate_usage_demand_check CHECK ((demand >= 0)),
    CONSTRAINT rate_usage_used_check CHECK ((used >= 0))
);

--
-- Name: TABLE rate_usage; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.rate_usage IS 'Request counts of each API process per payer key in its current window, and how far each may go: N processes give a payer one budget.';

--
-- Name: COLUMN rate_usage.demand; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.rate_usage.demand IS 'Requests the process was asked for under the key (refused ones included) between its two latest syncs: its weight in the split.';

--
-- Name: COLUMN rate_usage.unmet; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.rate_usage.unmet IS 'The process was granted less than its part because others hold room: they give their unused room back at their next sync.';

--
-- Name: COLUMN rate_usage.since; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.rate_usage.since IS 'When this row''s window was first sent (a key appears at its first row).';

--
-- Name: COLUMN rate_usage.synced_at; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.rate_usage.synced_at IS 'When the process last sent this row (its heartbeat row: its last sync).';

--
-- Name: refresh_tokens; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.refresh_tokens (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    family_id uuid NOT NULL,
    account_id uuid NOT NULL,
    token_sha256 text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    revoked_at timestamp with time zone
);

--
-- Name: registration_attempts; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.registration_attempts (
    id bigint NOT NULL,
    source text NOT NULL,
    attempted_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: registration_attempts_id_seq; Type: SEQUENCE; Schema: app_private; Owner: -
--

ALTER TABLE app_private.registration_attempts ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.registration_attempts_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: revoked_sign_ins; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.revoked_sign_ins (
    sign_in_id uuid NOT NULL,
    account_id uuid NOT NULL,
    reason text NOT NULL,
    revoked_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT revoked_sign_ins_reason_check CHECK ((reason = ANY (ARRAY['logout'::text, 'refresh token reused'::text, 'password changed'::text, 'account disabled'::text, 'account deleted'::text, 'role changed'::text])))
);

--
-- Name: role_limits; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.role_limits (
    role name NOT NULL,
    statement_timeout interval NOT NULL,
    lock_timeout interval NOT NULL,
    description text NOT NULL,
    CONSTRAINT role_limits_lock_timeout CHECK (((lock_timeout >= '00:00:00.01'::interval) AND (lock_timeout <= '00:10:00'::interval))),
    CONSTRAINT role_limits_request_role CHECK ((role = ANY (ARRAY['cafe_anonymous'::name, 'cafe_customer'::name, 'cafe_barista'::name, 'cafe_admin'::name, 'cafe_system'::name]))),
    CONSTRAINT role_limits_statement_timeout CHECK (((statement_timeout >= '00:00:00.01'::interval) AND (statement_timeout <= '00:10:00'::interval)))
);

--
-- Name: TABLE role_limits; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.role_limits IS 'statement_timeout and lock_timeout of each request role (one row per role; change, do not delete).';

--
-- Name: setting_definitions; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.setting_definitions (
    key text NOT NULL,
    kind text NOT NULL,
    min_value numeric,
    max_value numeric,
    CONSTRAINT setting_definitions_check CHECK (((kind = ANY (ARRAY['integer'::text, 'numeric'::text])) = ((min_value IS NOT NULL) AND (max_value IS NOT NULL)))),
    CONSTRAINT setting_definitions_check1 CHECK ((min_value <= max_value)),
    CONSTRAINT setting_definitions_kind_check CHECK ((kind = ANY (ARRAY['integer'::text, 'numeric'::text, 'currency'::text, 'time_zone'::text])))
);

--
-- Name: TABLE setting_definitions; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.setting_definitions IS 'The kind (integer, numeric, currency, time_zone) and range of each key of app_private.settings, checked whenever a setting is written.';

--
-- Name: settings; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.settings (
    key text NOT NULL,
    value numeric,
    description text NOT NULL,
    text_value text,
    CONSTRAINT settings_one_value CHECK ((num_nonnulls(value, text_value) = 1))
);

--
-- Name: stock_reservations; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.stock_reservations (
    order_id uuid NOT NULL,
    ingredient_id uuid NOT NULL,
    amount numeric(14,3) NOT NULL,
    store_id uuid NOT NULL,
    CONSTRAINT stock_reservations_amount_check CHECK ((amount >= (0)::numeric))
);

--
-- Name: TABLE stock_reservations; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.stock_reservations IS 'What each open order needs of each ingredient, written when it was placed.';

--
-- Name: stock_reserved; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.stock_reserved (
    ingredient_id uuid NOT NULL,
    amount numeric(14,3) DEFAULT 0 NOT NULL,
    store_id uuid NOT NULL
);

--
-- Name: TABLE stock_reserved; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.stock_reserved IS 'Per store and ingredient: the sum of the open orders'' stock_reservations.';

--
-- Name: worker_heartbeats; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.worker_heartbeats (
    worker_id text NOT NULL,
    process text NOT NULL,
    last_seen timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: coffee_inventory; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.coffee_inventory (
    store_id uuid NOT NULL,
    coffee_id uuid NOT NULL,
    servings integer
);

--
-- Name: TABLE coffee_inventory; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.coffee_inventory IS '@behavior -*
Coffee.inventory kept current at COMMIT by the live reads triggers (section 905 of 000005-live-reads.sql).';

--
-- Name: coffee_option_groups; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.coffee_option_groups (
    coffee_id uuid NOT NULL,
    group_id uuid NOT NULL,
    "position" integer DEFAULT 0 NOT NULL
);

--
-- Name: TABLE coffee_option_groups; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.coffee_option_groups IS '@behavior -*
Which option groups a coffee offers (Coffee.optionGroups), in position order.';

--
-- Name: coffee_price_changes; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.coffee_price_changes (
    id bigint NOT NULL,
    coffee_id uuid NOT NULL,
    old_price numeric(10,2) NOT NULL,
    new_price numeric(10,2) NOT NULL,
    changed_by uuid,
    changed_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: TABLE coffee_price_changes; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.coffee_price_changes IS 'Price history: who changed a coffee''s price, when, from what to what. Admins only.';

--
-- Name: coffee_price_changes_id_seq; Type: SEQUENCE; Schema: app_public; Owner: -
--

ALTER TABLE app_public.coffee_price_changes ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_public.coffee_price_changes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: order_events; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.order_events (
    id bigint NOT NULL,
    order_id uuid NOT NULL,
    from_status app_public.order_status,
    to_status app_public.order_status NOT NULL,
    actor_role text NOT NULL,
    actor_id uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    store_id uuid DEFAULT app_hidden.default_store_id() NOT NULL
);

--
-- Name: TABLE order_events; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.order_events IS 'Every status an order took: from, to, by whom, when.';

--
-- Name: order_events_id_seq; Type: SEQUENCE; Schema: app_public; Owner: -
--

ALTER TABLE app_public.order_events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_public.order_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: order_status_transitions; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.order_status_transitions (
    from_status app_public.order_status NOT NULL,
    to_status app_public.order_status NOT NULL,
    role text NOT NULL,
    CONSTRAINT order_status_transitions_role_check CHECK ((role = ANY (ARRAY['customer'::text, 'barista'::text, 'admin'::text, 'system'::text, 'dba'::text])))
);

--
-- Name: TABLE order_status_transitions; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.order_status_transitions IS 'Which role may move an order from one status to another. Checked by a trigger on every UPDATE of orders.status.';

--
-- Name: profiles; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.profiles (
    customer_id uuid NOT NULL,
    username public.citext,
    avatar text,
    CONSTRAINT profiles_avatar_check CHECK (((avatar ~ '^https?://[^\s]+$'::text) AND (length(avatar) <= 500))),
    CONSTRAINT profiles_username_check CHECK ((username OPERATOR(public.~) '^[A-Za-z0-9_.]{3,30}$'::public.citext))
);

--
-- Name: TABLE profiles; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.profiles IS 'What a customer shows of themselves.';

--
-- Name: recipe_lines; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.recipe_lines (
    coffee_id uuid NOT NULL,
    ingredient_id uuid NOT NULL,
    quantity numeric(10,3) NOT NULL,
    seasonal boolean DEFAULT false NOT NULL,
    CONSTRAINT recipe_lines_quantity_check CHECK ((quantity > (0)::numeric))
);

--
-- Name: TABLE recipe_lines; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.recipe_lines IS 'How much of an ingredient one serving of a coffee takes.';

--
-- Name: COLUMN recipe_lines.seasonal; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.recipe_lines.seasonal IS 'A seasonal ingredient (shown by seasonalDrinks).';

--
-- Name: roasters; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.roasters (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    location text,
    sustainability_rating numeric(3,1),
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT roasters_name_check CHECK ((name <> ''::text)),
    CONSTRAINT roasters_sustainability_rating_check CHECK (((sustainability_rating >= (0)::numeric) AND (sustainability_rating <= (10)::numeric)))
);

--
-- Name: TABLE roasters; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.roasters IS 'Who roasts the beans.';

--
-- Name: COLUMN roasters.sustainability_rating; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON COLUMN app_public.roasters.sustainability_rating IS 'From 0 to 10.';

--
-- Name: stock_movements; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.stock_movements (
    id bigint NOT NULL,
    ingredient_id uuid NOT NULL,
    delta numeric(12,3) NOT NULL,
    reason text NOT NULL,
    order_id uuid,
    actor_role text NOT NULL,
    actor_id uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    store_id uuid DEFAULT app_hidden.default_store_id() NOT NULL
);

--
-- Name: TABLE stock_movements; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.stock_movements IS 'Every change of stock: who, when, how much, why. Staff only.';

--
-- Name: stock_movements_id_seq; Type: SEQUENCE; Schema: app_public; Owner: -
--

ALTER TABLE app_public.stock_movements ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_public.stock_movements_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: store_coffee_prices; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.store_coffee_prices (
    store_id uuid NOT NULL,
    coffee_id uuid NOT NULL,
    price numeric(10,2) NOT NULL,
    CONSTRAINT store_coffee_prices_price_check CHECK ((price > (0)::numeric))
);

--
-- Name: TABLE store_coffee_prices; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.store_coffee_prices IS '@behavior -*
A coffee''s own price at a store (without a row: the chain''s, coffees.price).';

--
-- Name: store_coffees; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.store_coffees (
    store_id uuid NOT NULL,
    coffee_id uuid NOT NULL,
    available boolean NOT NULL
);

--
-- Name: TABLE store_coffees; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.store_coffees IS 'A store''s own availability of a coffee: false takes it off that store''s menu (a coffee the chain does not sell is off everywhere).';

--
-- Name: store_options; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.store_options (
    store_id uuid NOT NULL,
    option_id uuid NOT NULL,
    available boolean NOT NULL
);

--
-- Name: TABLE store_options; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.store_options IS '@behavior -*
An option''s availability at a store (without a row: available). false: the store ran out ("no oat milk today").';

--
-- Name: store_staff; Type: TABLE; Schema: app_public; Owner: -
--

CREATE TABLE app_public.store_staff (
    store_id uuid NOT NULL,
    staff_id uuid NOT NULL,
    assigned_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: TABLE store_staff; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON TABLE app_public.store_staff IS 'Which member of staff works at which store: a barista sees and moves that store''s orders; an admin manages it.';

--
-- Name: accounts accounts_email_key; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.accounts
    ADD CONSTRAINT accounts_email_key UNIQUE (email);

--
-- Name: accounts accounts_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.accounts
    ADD CONSTRAINT accounts_pkey PRIMARY KEY (id);

--
-- Name: alert_rules alert_rules_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.alert_rules
    ADD CONSTRAINT alert_rules_pkey PRIMARY KEY (kind);

--
-- Name: alert_windows alert_windows_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.alert_windows
    ADD CONSTRAINT alert_windows_pkey PRIMARY KEY (kind, window_start);

--
-- Name: audit_log audit_log_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.audit_log
    ADD CONSTRAINT audit_log_pkey PRIMARY KEY (id);

--
-- Name: blocked_sources blocked_sources_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.blocked_sources
    ADD CONSTRAINT blocked_sources_pkey PRIMARY KEY (source);

--
-- Name: coffee_costs coffee_costs_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.coffee_costs
    ADD CONSTRAINT coffee_costs_pkey PRIMARY KEY (coffee_id);

--
-- Name: coffee_sales coffee_sales_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.coffee_sales
    ADD CONSTRAINT coffee_sales_pkey PRIMARY KEY (store_id, hour, coffee_id);

--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (owner, key);

--
-- Name: login_attempts login_attempts_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.login_attempts
    ADD CONSTRAINT login_attempts_pkey PRIMARY KEY (id);

--
-- Name: notification_webhooks notification_webhooks_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.notification_webhooks
    ADD CONSTRAINT notification_webhooks_pkey PRIMARY KEY (notification_id);

--
-- Name: order_item_options order_item_options_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.order_item_options
    ADD CONSTRAINT order_item_options_pkey PRIMARY KEY (order_id, "position", option_id);

--
-- Name: order_sources order_sources_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.order_sources
    ADD CONSTRAINT order_sources_pkey PRIMARY KEY (order_id);

--
-- Name: payment_deliveries payment_deliveries_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.payment_deliveries
    ADD CONSTRAINT payment_deliveries_pkey PRIMARY KEY (id);

--
-- Name: payment_intents payment_intents_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.payment_intents
    ADD CONSTRAINT payment_intents_pkey PRIMARY KEY (intent_id);

--
-- Name: processed_payment_keys processed_payment_keys_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.processed_payment_keys
    ADD CONSTRAINT processed_payment_keys_pkey PRIMARY KEY (key);

--
-- Name: public_read_changes public_read_changes_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.public_read_changes
    ADD CONSTRAINT public_read_changes_pkey PRIMARY KEY (txid, what);

--
-- Name: public_read_state public_read_state_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.public_read_state
    ADD CONSTRAINT public_read_state_pkey PRIMARY KEY (store_id);

--
-- Name: rate_usage rate_usage_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.rate_usage
    ADD CONSTRAINT rate_usage_pkey PRIMARY KEY (key, process);

--
-- Name: refresh_tokens refresh_tokens_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.refresh_tokens
    ADD CONSTRAINT refresh_tokens_pkey PRIMARY KEY (id);

--
-- Name: refresh_tokens refresh_tokens_token_sha256_key; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.refresh_tokens
    ADD CONSTRAINT refresh_tokens_token_sha256_key UNIQUE (token_sha256);

--
-- Name: registration_attempts registration_attempts_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.registration_attempts
    ADD CONSTRAINT registration_attempts_pkey PRIMARY KEY (id);

--
-- Name: revoked_sign_ins revoked_sign_ins_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.revoked_sign_ins
    ADD CONSTRAINT revoked_sign_ins_pkey PRIMARY KEY (sign_in_id);

--
-- Name: role_limits role_limits_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.role_limits
    ADD CONSTRAINT role_limits_pkey PRIMARY KEY (role);

--
-- Name: setting_definitions setting_definitions_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.setting_definitions
    ADD CONSTRAINT setting_definitions_pkey PRIMARY KEY (key);

--
-- Name: settings settings_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.settings
    ADD CONSTRAINT settings_pkey PRIMARY KEY (key);

--
-- Name: stock_reservations stock_reservations_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.stock_reservations
    ADD CONSTRAINT stock_reservations_pkey PRIMARY KEY (order_id, ingredient_id);

--
-- Name: stock_reserved stock_reserved_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.stock_reserved
    ADD CONSTRAINT stock_reserved_pkey PRIMARY KEY (store_id, ingredient_id);

--
-- Name: worker_heartbeats worker_heartbeats_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.worker_heartbeats
    ADD CONSTRAINT worker_heartbeats_pkey PRIMARY KEY (worker_id);

--
-- Name: baristas baristas_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.baristas
    ADD CONSTRAINT baristas_pkey PRIMARY KEY (id);

--
-- Name: coffee_inventory coffee_inventory_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.coffee_inventory
    ADD CONSTRAINT coffee_inventory_pkey PRIMARY KEY (store_id, coffee_id);

--
-- Name: coffee_option_groups coffee_option_groups_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.coffee_option_groups
    ADD CONSTRAINT coffee_option_groups_pkey PRIMARY KEY (coffee_id, group_id);

--
-- Name: coffee_price_changes coffee_price_changes_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.coffee_price_changes
    ADD CONSTRAINT coffee_price_changes_pkey PRIMARY KEY (id);

--
-- Name: coffees coffees_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.coffees
    ADD CONSTRAINT coffees_pkey PRIMARY KEY (id);

--
-- Name: customers customers_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.customers
    ADD CONSTRAINT customers_pkey PRIMARY KEY (id);

--
-- Name: ingredients ingredients_name_key; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.ingredients
    ADD CONSTRAINT ingredients_name_key UNIQUE (name);

--
-- Name: ingredients ingredients_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.ingredients
    ADD CONSTRAINT ingredients_pkey PRIMARY KEY (id);

--
-- Name: notifications notifications_order_id_kind_key; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.notifications
    ADD CONSTRAINT notifications_order_id_kind_key UNIQUE (order_id, kind);

--
-- Name: notifications notifications_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.notifications
    ADD CONSTRAINT notifications_pkey PRIMARY KEY (id);

--
-- Name: option_groups option_groups_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.option_groups
    ADD CONSTRAINT option_groups_pkey PRIMARY KEY (id);

--
-- Name: options options_group_id_name_key; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.options
    ADD CONSTRAINT options_group_id_name_key UNIQUE (group_id, name);

--
-- Name: options options_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.options
    ADD CONSTRAINT options_pkey PRIMARY KEY (id);

--
-- Name: order_events order_events_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.order_events
    ADD CONSTRAINT order_events_pkey PRIMARY KEY (id);

--
-- Name: order_items order_items_order_id_position_key; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.order_items
    ADD CONSTRAINT order_items_order_id_position_key UNIQUE (order_id, "position");

--
-- Name: order_items order_items_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.order_items
    ADD CONSTRAINT order_items_pkey PRIMARY KEY (id);

--
-- Name: order_status_transitions order_status_transitions_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.order_status_transitions
    ADD CONSTRAINT order_status_transitions_pkey PRIMARY KEY (from_status, to_status, role);

--
-- Name: orders orders_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.orders
    ADD CONSTRAINT orders_pkey PRIMARY KEY (id);

--
-- Name: payment_alerts payment_alerts_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.payment_alerts
    ADD CONSTRAINT payment_alerts_pkey PRIMARY KEY (id);

--
-- Name: profiles profiles_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.profiles
    ADD CONSTRAINT profiles_pkey PRIMARY KEY (customer_id);

--
-- Name: profiles profiles_username_key; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.profiles
    ADD CONSTRAINT profiles_username_key UNIQUE (username);

--
-- Name: recipe_lines recipe_lines_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.recipe_lines
    ADD CONSTRAINT recipe_lines_pkey PRIMARY KEY (coffee_id, ingredient_id);

--
-- Name: refunds refunds_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.refunds
    ADD CONSTRAINT refunds_pkey PRIMARY KEY (id);

--
-- Name: refunds refunds_provider_refund_id_key; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.refunds
    ADD CONSTRAINT refunds_provider_refund_id_key UNIQUE (provider_refund_id);

--
-- Name: CONSTRAINT refunds_provider_refund_id_key ON refunds; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT refunds_provider_refund_id_key ON app_public.refunds IS '@behavior -single';

--
-- Name: refunds refunds_source_key_key; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.refunds
    ADD CONSTRAINT refunds_source_key_key UNIQUE (source_key);

--
-- Name: reviews reviews_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.reviews
    ADD CONSTRAINT reviews_pkey PRIMARY KEY (id);

--
-- Name: roasters roasters_name_key; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.roasters
    ADD CONSTRAINT roasters_name_key UNIQUE (name);

--
-- Name: roasters roasters_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.roasters
    ADD CONSTRAINT roasters_pkey PRIMARY KEY (id);

--
-- Name: stock_items stock_items_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.stock_items
    ADD CONSTRAINT stock_items_pkey PRIMARY KEY (store_id, ingredient_id);

--
-- Name: stock_movements stock_movements_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.stock_movements
    ADD CONSTRAINT stock_movements_pkey PRIMARY KEY (id);

--
-- Name: store_coffee_prices store_coffee_prices_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.store_coffee_prices
    ADD CONSTRAINT store_coffee_prices_pkey PRIMARY KEY (store_id, coffee_id);

--
-- Name: store_coffees store_coffees_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.store_coffees
    ADD CONSTRAINT store_coffees_pkey PRIMARY KEY (store_id, coffee_id);

--
-- Name: store_options store_options_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.store_options
    ADD CONSTRAINT store_options_pkey PRIMARY KEY (store_id, option_id);

--
-- Name: store_staff store_staff_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.store_staff
    ADD CONSTRAINT store_staff_pkey PRIMARY KEY (store_id, staff_id);

--
-- Name: stores stores_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.stores
    ADD CONSTRAINT stores_pkey PRIMARY KEY (id);

--
-- Name: suppliers suppliers_name_key; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.suppliers
    ADD CONSTRAINT suppliers_name_key UNIQUE (name);

--
-- Name: suppliers suppliers_pkey; Type: CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.suppliers
    ADD CONSTRAINT suppliers_pkey PRIMARY KEY (id);

--
-- Name: audit_log_at_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX audit_log_at_idx ON app_private.audit_log USING btree (at DESC, id DESC);

--
-- Name: idempotency_keys_expires_at_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX idempotency_keys_expires_at_idx ON app_private.idempotency_keys USING btree (expires_at);

--
-- Name: idempotency_keys_owner_created_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX idempotency_keys_owner_created_idx ON app_private.idempotency_keys USING btree (owner, created_at);

--
-- Name: login_attempts_email_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX login_attempts_email_idx ON app_private.login_attempts USING btree (lower(email), attempted_at);

--
-- Name: login_attempts_email_source_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX login_attempts_email_source_idx ON app_private.login_attempts USING btree (lower(email), source, attempted_at);

--
-- Name: login_attempts_source_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX login_attempts_source_idx ON app_private.login_attempts USING btree (source, attempted_at);

--
-- Name: order_item_options_option_id_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX order_item_options_option_id_idx ON app_private.order_item_options USING btree (option_id);

--
-- Name: order_sources_placed_at_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX order_sources_placed_at_idx ON app_private.order_sources USING btree (placed_at);

--
-- Name: order_sources_source_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX order_sources_source_idx ON app_private.order_sources USING btree (source, placed_at);

--
-- Name: payment_deliveries_order_id_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX payment_deliveries_order_id_idx ON app_private.payment_deliveries USING btree (order_id) WHERE (order_id IS NOT NULL);

--
-- Name: payment_deliveries_received_at_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX payment_deliveries_received_at_idx ON app_private.payment_deliveries USING btree (received_at);

--
-- Name: payment_deliveries_rejected_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX payment_deliveries_rejected_idx ON app_private.payment_deliveries USING btree (received_at) WHERE (outcome = 'rejected'::text);

--
-- Name: payment_deliveries_source_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX payment_deliveries_source_idx ON app_private.payment_deliveries USING btree (source, received_at);

--
-- Name: payment_intents_order_id_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX payment_intents_order_id_idx ON app_private.payment_intents USING btree (order_id);

--
-- Name: refresh_tokens_account_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX refresh_tokens_account_idx ON app_private.refresh_tokens USING btree (account_id);

--
-- Name: refresh_tokens_family_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX refresh_tokens_family_idx ON app_private.refresh_tokens USING btree (family_id);

--
-- Name: registration_attempts_source_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX registration_attempts_source_idx ON app_private.registration_attempts USING btree (source, attempted_at);

--
-- Name: revoked_sign_ins_revoked_at_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX revoked_sign_ins_revoked_at_idx ON app_private.revoked_sign_ins USING btree (revoked_at);

--
-- Name: coffee_inventory_coffee_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX coffee_inventory_coffee_id_idx ON app_public.coffee_inventory USING btree (coffee_id);

--
-- Name: coffee_option_groups_group_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX coffee_option_groups_group_id_idx ON app_public.coffee_option_groups USING btree (group_id);

--
-- Name: coffee_price_changes_coffee_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX coffee_price_changes_coffee_id_idx ON app_public.coffee_price_changes USING btree (coffee_id, changed_at);

--
-- Name: coffees_category_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX coffees_category_idx ON app_public.coffees USING btree (category, name);

--
-- Name: coffees_name_trgm_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX coffees_name_trgm_idx ON app_public.coffees USING gin (lower(name) public.gin_trgm_ops);

--
-- Name: coffees_name_unique; Type: INDEX; Schema: app_public; Owner: -
--

CREATE UNIQUE INDEX coffees_name_unique ON app_public.coffees USING btree (lower(name));

--
-- Name: coffees_roaster_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX coffees_roaster_id_idx ON app_public.coffees USING btree (roaster_id);

--
-- Name: customers_one_walk_in; Type: INDEX; Schema: app_public; Owner: -
--

CREATE UNIQUE INDEX customers_one_walk_in ON app_public.customers USING btree (is_walk_in) WHERE is_walk_in;

--
-- Name: notifications_customer_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX notifications_customer_id_idx ON app_public.notifications USING btree (customer_id, created_at DESC);

--
-- Name: options_ingredient_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX options_ingredient_id_idx ON app_public.options USING btree (ingredient_id);

--
-- Name: order_events_order_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX order_events_order_id_idx ON app_public.order_events USING btree (order_id, id);

--
-- Name: order_items_coffee_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX order_items_coffee_id_idx ON app_public.order_items USING btree (coffee_id);

--
-- Name: orders_barista_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX orders_barista_id_idx ON app_public.orders USING btree (barista_id);

--
-- Name: orders_customer_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX orders_customer_id_idx ON app_public.orders USING btree (customer_id, time_ordered DESC);

--
-- Name: orders_expiry_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX orders_expiry_idx ON app_public.orders USING btree (expires_at) WHERE ((status = 'PENDING'::app_public.order_status) AND (expires_at IS NOT NULL));

--
-- Name: orders_open_by_creator_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX orders_open_by_creator_idx ON app_public.orders USING btree (customer_id) WHERE (status = 'PENDING'::app_public.order_status);

--
-- Name: orders_open_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX orders_open_idx ON app_public.orders USING btree (id) WHERE ((inventory_taken_at IS NULL) AND (status <> ALL (ARRAY['COMPLETED'::app_public.order_status, 'CANCELLED'::app_public.order_status])));

--
-- Name: orders_queue_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX orders_queue_idx ON app_public.orders USING btree (time_ordered, id) WHERE (status = ANY (ARRAY['PREPARING'::app_public.order_status, 'BREWING'::app_public.order_status]));

--
-- Name: orders_sales_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX orders_sales_idx ON app_public.orders USING btree (paid_at) INCLUDE (status, id, total) WHERE (paid_at IS NOT NULL);

--
-- Name: orders_status_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX orders_status_idx ON app_public.orders USING btree (status, time_ordered);

--
-- Name: orders_waiting_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX orders_waiting_idx ON app_public.orders USING btree (id) WHERE (status = ANY (ARRAY['PAID'::app_public.order_status, 'PREPARING'::app_public.order_status, 'BREWING'::app_public.order_status]));

--
-- Name: payment_alerts_created_at_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX payment_alerts_created_at_idx ON app_public.payment_alerts USING btree (created_at DESC);

--
-- Name: recipe_lines_ingredient_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX recipe_lines_ingredient_id_idx ON app_public.recipe_lines USING btree (ingredient_id);

--
-- Name: refunds_open_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX refunds_open_idx ON app_public.refunds USING btree (created_at) WHERE (settled_at IS NULL);

--
-- Name: refunds_order_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX refunds_order_id_idx ON app_public.refunds USING btree (order_id);

--
-- Name: refunds_provider_payment_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX refunds_provider_payment_idx ON app_public.refunds USING btree (provider_payment_id) WHERE (provider_payment_id IS NOT NULL);

--
-- Name: reviews_coffee_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX reviews_coffee_id_idx ON app_public.reviews USING btree (coffee_id, created_at DESC);

--
-- Name: reviews_customer_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX reviews_customer_id_idx ON app_public.reviews USING btree (customer_id);

--
-- Name: stock_items_ingredient_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX stock_items_ingredient_id_idx ON app_public.stock_items USING btree (ingredient_id);

--
-- Name: stock_movements_ingredient_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX stock_movements_ingredient_id_idx ON app_public.stock_movements USING btree (ingredient_id, created_at);

--
-- Name: stock_movements_order_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX stock_movements_order_id_idx ON app_public.stock_movements USING btree (order_id);

--
-- Name: store_coffee_prices_coffee_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX store_coffee_prices_coffee_id_idx ON app_public.store_coffee_prices USING btree (coffee_id);

--
-- Name: store_coffees_coffee_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX store_coffees_coffee_id_idx ON app_public.store_coffees USING btree (coffee_id);

--
-- Name: store_options_option_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX store_options_option_id_idx ON app_public.store_options USING btree (option_id);

--
-- Name: store_staff_staff_id_idx; Type: INDEX; Schema: app_public; Owner: -
--

CREATE INDEX store_staff_staff_id_idx ON app_public.store_staff USING btree (staff_id);

--
-- Name: stores_name_unique; Type: INDEX; Schema: app_public; Owner: -
--

CREATE UNIQUE INDEX stores_name_unique ON app_public.stores USING btree (lower(name));

--
-- Name: stores_one_default; Type: INDEX; Schema: app_public; Owner: -
--

CREATE UNIQUE INDEX stores_one_default ON app_public.stores USING btree (is_default) WHERE is_default;

--
-- Name: payment_deliveries _050_store_of_order; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _050_store_of_order BEFORE INSERT OR UPDATE OF order_id ON app_private.payment_deliveries FOR EACH ROW EXECUTE FUNCTION app_private.tg__store_of_order();

--
-- Name: stock_reservations _050_store_of_order; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _050_store_of_order BEFORE INSERT OR UPDATE OF order_id ON app_private.stock_reservations FOR EACH ROW EXECUTE FUNCTION app_private.tg__store_of_order();

--
-- Name: settings _100_check; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _100_check BEFORE INSERT OR DELETE OR UPDATE ON app_private.settings FOR EACH ROW EXECUTE FUNCTION app_private.tg_settings__check();

--
-- Name: role_limits _100_keep; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _100_keep BEFORE DELETE ON app_private.role_limits FOR EACH ROW EXECUTE FUNCTION app_private.tg_role_limits__keep();

--
-- Name: idempotency_keys _100_limit; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _100_limit BEFORE INSERT ON app_private.idempotency_keys FOR EACH ROW EXECUTE FUNCTION app_private.tg_idempotency_keys__limit();

--
-- Name: blocked_sources _500_notify; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _500_notify AFTER INSERT OR DELETE OR UPDATE ON app_private.blocked_sources FOR EACH ROW EXECUTE FUNCTION app_private.tg_blocked_sources__notify();

--
-- Name: accounts _800_revoke_sign_ins; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _800_revoke_sign_ins AFTER UPDATE OF role, disabled_at ON app_private.accounts FOR EACH ROW EXECUTE FUNCTION app_private.revoke_changed_account();

--
-- Name: accounts _800_revoke_sign_ins_deleted; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _800_revoke_sign_ins_deleted BEFORE DELETE ON app_private.accounts FOR EACH ROW EXECUTE FUNCTION app_private.revoke_changed_account();

--
-- Name: public_read_changes _900_announce; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE CONSTRAINT TRIGGER _900_announce AFTER INSERT ON app_private.public_read_changes DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION app_private.tg_public_read_changes__announce();

--
-- Name: role_limits _900_announce; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _900_announce AFTER INSERT OR UPDATE ON app_private.role_limits FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_role_limits__announce();

--
-- Name: stock_reserved _900_inventory_delete; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _900_inventory_delete AFTER DELETE ON app_private.stock_reserved REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_inventory('amount');

--
-- Name: stock_reserved _900_inventory_insert; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _900_inventory_insert AFTER INSERT ON app_private.stock_reserved REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_inventory('amount');

--
-- Name: stock_reserved _900_inventory_truncate; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _900_inventory_truncate AFTER TRUNCATE ON app_private.stock_reserved FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_inventory('amount');

--
-- Name: stock_reserved _900_inventory_update; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _900_inventory_update AFTER UPDATE ON app_private.stock_reserved REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_inventory_update('amount');

--
-- Name: revoked_sign_ins _900_notify; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _900_notify AFTER INSERT ON app_private.revoked_sign_ins FOR EACH ROW EXECUTE FUNCTION app_private.announce_revoked_sign_in();

--
-- Name: alert_rules _950_audit; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _950_audit AFTER INSERT OR DELETE OR UPDATE ON app_private.alert_rules FOR EACH ROW EXECUTE FUNCTION app_private.tg_audit('kind', 'kind,threshold,window_seconds,block_seconds');

--
-- Name: role_limits _950_audit; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _950_audit AFTER INSERT OR DELETE OR UPDATE ON app_private.role_limits FOR EACH ROW EXECUTE FUNCTION app_private.tg_audit('role', 'role,statement_timeout,lock_timeout');

--
-- Name: settings _950_audit; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _950_audit AFTER INSERT OR DELETE OR UPDATE ON app_private.settings FOR EACH ROW EXECUTE FUNCTION app_private.tg_audit('key', 'key,value,text_value');

--
-- Name: accounts _950_audit_staff; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _950_audit_staff AFTER UPDATE OF role, disabled_at, email ON app_private.accounts FOR EACH ROW WHEN (((old.role = ANY (ARRAY['barista'::text, 'admin'::text])) OR (new.role = ANY (ARRAY['barista'::text, 'admin'::text])))) EXECUTE FUNCTION app_private.tg_audit('id', 'email,role,disabled_at');

--
-- Name: accounts _950_audit_staff_delete; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _950_audit_staff_delete AFTER DELETE ON app_private.accounts FOR EACH ROW WHEN ((old.role = ANY (ARRAY['barista'::text, 'admin'::text]))) EXECUTE FUNCTION app_private.tg_audit('id', 'id,email,role,disabled_at');

--
-- Name: accounts _950_audit_staff_insert; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _950_audit_staff_insert AFTER INSERT ON app_private.accounts FOR EACH ROW WHEN ((new.role = ANY (ARRAY['barista'::text, 'admin'::text]))) EXECUTE FUNCTION app_private.tg_audit('id', 'id,email,role,disabled_at');

--
-- Name: notifications _050_store_of_order; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _050_store_of_order BEFORE INSERT OR UPDATE OF order_id ON app_public.notifications FOR EACH ROW EXECUTE FUNCTION app_private.tg__store_of_order();

--
-- Name: order_events _050_store_of_order; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _050_store_of_order BEFORE INSERT OR UPDATE OF order_id ON app_public.order_events FOR EACH ROW EXECUTE FUNCTION app_private.tg__store_of_order();

--
-- Name: refunds _050_store_of_order; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _050_store_of_order BEFORE INSERT OR UPDATE OF order_id ON app_public.refunds FOR EACH ROW EXECUTE FUNCTION app_private.tg__store_of_order();

--
-- Name: stock_movements _050_store_of_order; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _050_store_of_order BEFORE INSERT OR UPDATE OF order_id ON app_public.stock_movements FOR EACH ROW EXECUTE FUNCTION app_private.tg__store_of_order();

--
-- Name: stores _100_check; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _100_check BEFORE INSERT OR UPDATE ON app_public.stores FOR EACH ROW EXECUTE FUNCTION app_private.tg_stores__check();

--
-- Name: orders _100_keep_store; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _100_keep_store BEFORE UPDATE OF store_id ON app_public.orders FOR EACH ROW WHEN ((new.store_id IS DISTINCT FROM old.store_id)) EXECUTE FUNCTION app_private.tg_orders__keep_store();

--
-- Name: refunds _100_provider; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _100_provider BEFORE INSERT ON app_public.refunds FOR EACH ROW EXECUTE FUNCTION app_private.tg_refunds__provider();

--
-- Name: orders _100_timestamps; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _100_timestamps BEFORE UPDATE ON app_public.orders FOR EACH ROW EXECUTE FUNCTION app_private.tg__timestamps();

--
-- Name: stock_items _100_timestamps; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _100_timestamps BEFORE UPDATE ON app_public.stock_items FOR EACH ROW EXECUTE FUNCTION app_private.tg__timestamps();

--
-- Name: orders _200_check_transition; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _200_check_transition BEFORE INSERT OR UPDATE OF status ON app_public.orders FOR EACH ROW EXECUTE FUNCTION app_private.tg_orders__check_transition();

--
-- Name: order_items _400_reserve_stock; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _400_reserve_stock AFTER INSERT ON app_public.order_items REFERENCING NEW TABLE AS new_items FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_order_items__reserve_stock();

--
-- Name: orders _500_after_status; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _500_after_status AFTER INSERT OR UPDATE OF status ON app_public.orders FOR EACH ROW EXECUTE FUNCTION app_private.tg_orders__after_status();

--
-- Name: refunds _500_queue_payout; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _500_queue_payout AFTER INSERT OR UPDATE OF provider ON app_public.refunds FOR EACH ROW EXECUTE FUNCTION app_private.tg_refunds__queue_payout();

--
-- Name: orders _550_cancel_payment_intents; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _550_cancel_payment_intents AFTER UPDATE OF status ON app_public.orders FOR EACH ROW WHEN ((new.status = 'CANCELLED'::app_public.order_status)) EXECUTE FUNCTION app_private.tg_orders__cancel_payment_intents();

--
-- Name: orders _550_release_stock; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _550_release_stock AFTER UPDATE OF status, inventory_taken_at ON app_public.orders FOR EACH ROW WHEN (((old.inventory_taken_at IS NULL) AND (old.status <> ALL (ARRAY['COMPLETED'::app_public.order_status, 'CANCELLED'::app_public.order_status])) AND (NOT ((new.inventory_taken_at IS NULL) AND (new.status <> ALL (ARRAY['COMPLETED'::app_public.order_status, 'CANCELLED'::app_public.order_status])))))) EXECUTE FUNCTION app_private.tg_orders__release_stock();

--
-- Name: orders _550_release_stock_on_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _550_release_stock_on_delete BEFORE DELETE ON app_public.orders FOR EACH ROW WHEN (((old.inventory_taken_at IS NULL) AND (old.status <> ALL (ARRAY['COMPLETED'::app_public.order_status, 'CANCELLED'::app_public.order_status])))) EXECUTE FUNCTION app_private.tg_orders__release_stock();

--
-- Name: orders _600_notify_customer; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _600_notify_customer AFTER UPDATE OF status ON app_public.orders FOR EACH ROW EXECUTE FUNCTION app_private.tg_orders__notify_customer();

--
-- Name: order_items _890_sales_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _890_sales_delete AFTER DELETE ON app_public.order_items REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__count_sales();

--
-- Name: orders _890_sales_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _890_sales_delete BEFORE DELETE ON app_public.orders FOR EACH ROW WHEN (app_private.sale_counts(old.status)) EXECUTE FUNCTION app_private.tg__uncount_deleted_order();

--
-- Name: order_items _890_sales_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _890_sales_insert AFTER INSERT ON app_public.order_items REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__count_sales();

--
-- Name: orders _890_sales_truncate; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _890_sales_truncate AFTER TRUNCATE ON app_public.orders FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__count_sales();

--
-- Name: order_items _890_sales_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _890_sales_update AFTER UPDATE ON app_public.order_items REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__count_sales();

--
-- Name: orders _890_sales_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _890_sales_update AFTER UPDATE ON app_public.orders REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__count_sales();

--
-- Name: order_items _900_featured_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_featured_delete AFTER DELETE ON app_public.order_items REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_featured();

--
-- Name: orders _900_featured_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_featured_delete AFTER DELETE ON app_public.orders REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_featured();

--
-- Name: store_coffees _900_featured_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_featured_delete AFTER DELETE ON app_public.store_coffees REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_featured();

--
-- Name: order_items _900_featured_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_featured_insert AFTER INSERT ON app_public.order_items REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_featured();

--
-- Name: orders _900_featured_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_featured_insert AFTER INSERT ON app_public.orders REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_featured();

--
-- Name: store_coffees _900_featured_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_featured_insert AFTER INSERT ON app_public.store_coffees REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_featured();

--
-- Name: orders _900_featured_truncate; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_featured_truncate AFTER TRUNCATE ON app_public.orders FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_featured();

--
-- Name: coffees _900_featured_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_featured_update AFTER UPDATE ON app_public.coffees REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_featured();

--
-- Name: order_items _900_featured_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_featured_update AFTER UPDATE ON app_public.order_items REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_featured();

--
-- Name: orders _900_featured_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_featured_update AFTER UPDATE ON app_public.orders REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_featured();

--
-- Name: store_coffees _900_featured_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_featured_update AFTER UPDATE ON app_public.store_coffees REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_featured();

--
-- Name: recipe_lines _900_inventory_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_inventory_delete AFTER DELETE ON app_public.recipe_lines REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_inventory();

--
-- Name: stock_items _900_inventory_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_inventory_delete AFTER DELETE ON app_public.stock_items REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_inventory('current_stock');

--
-- Name: recipe_lines _900_inventory_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_inventory_insert AFTER INSERT ON app_public.recipe_lines REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_inventory();

--
-- Name: stock_items _900_inventory_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_inventory_insert AFTER INSERT ON app_public.stock_items REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_inventory('current_stock');

--
-- Name: stores _900_inventory_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_inventory_insert AFTER INSERT ON app_public.stores FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_stores__queue_inventory();

--
-- Name: recipe_lines _900_inventory_truncate; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_inventory_truncate AFTER TRUNCATE ON app_public.recipe_lines FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_inventory();

--
-- Name: stock_items _900_inventory_truncate; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_inventory_truncate AFTER TRUNCATE ON app_public.stock_items FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_inventory('current_stock');

--
-- Name: recipe_lines _900_inventory_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_inventory_update AFTER UPDATE ON app_public.recipe_lines REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_inventory_update();

--
-- Name: stock_items _900_inventory_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_inventory_update AFTER UPDATE ON app_public.stock_items REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__queue_inventory_update('current_stock');

--
-- Name: coffee_option_groups _900_live_cache_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_delete AFTER DELETE ON app_public.coffee_option_groups REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: coffees _900_live_cache_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_delete AFTER DELETE ON app_public.coffees REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: ingredients _900_live_cache_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_delete AFTER DELETE ON app_public.ingredients REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: option_groups _900_live_cache_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_delete AFTER DELETE ON app_public.option_groups REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: options _900_live_cache_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_delete AFTER DELETE ON app_public.options REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: recipe_lines _900_live_cache_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_delete AFTER DELETE ON app_public.recipe_lines REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: reviews _900_live_cache_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_delete AFTER DELETE ON app_public.reviews REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: roasters _900_live_cache_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_delete AFTER DELETE ON app_public.roasters REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: store_coffee_prices _900_live_cache_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_delete AFTER DELETE ON app_public.store_coffee_prices REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: store_coffees _900_live_cache_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_delete AFTER DELETE ON app_public.store_coffees REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: store_options _900_live_cache_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_delete AFTER DELETE ON app_public.store_options REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: stores _900_live_cache_delete; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_delete AFTER DELETE ON app_public.stores REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: coffee_option_groups _900_live_cache_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_insert AFTER INSERT ON app_public.coffee_option_groups REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: coffees _900_live_cache_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_insert AFTER INSERT ON app_public.coffees REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: ingredients _900_live_cache_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_insert AFTER INSERT ON app_public.ingredients REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: option_groups _900_live_cache_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_insert AFTER INSERT ON app_public.option_groups REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: options _900_live_cache_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_insert AFTER INSERT ON app_public.options REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: recipe_lines _900_live_cache_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_insert AFTER INSERT ON app_public.recipe_lines REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: reviews _900_live_cache_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_insert AFTER INSERT ON app_public.reviews REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: roasters _900_live_cache_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_insert AFTER INSERT ON app_public.roasters REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: store_coffee_prices _900_live_cache_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_insert AFTER INSERT ON app_public.store_coffee_prices REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: store_coffees _900_live_cache_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_insert AFTER INSERT ON app_public.store_coffees REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: store_options _900_live_cache_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_insert AFTER INSERT ON app_public.store_options REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: stores _900_live_cache_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_insert AFTER INSERT ON app_public.stores REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: coffee_option_groups _900_live_cache_truncate; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_truncate AFTER TRUNCATE ON app_public.coffee_option_groups FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: coffees _900_live_cache_truncate; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_truncate AFTER TRUNCATE ON app_public.coffees FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: ingredients _900_live_cache_truncate; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_truncate AFTER TRUNCATE ON app_public.ingredients FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: option_groups _900_live_cache_truncate; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_truncate AFTER TRUNCATE ON app_public.option_groups FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: options _900_live_cache_truncate; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_truncate AFTER TRUNCATE ON app_public.options FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: recipe_lines _900_live_cache_truncate; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_truncate AFTER TRUNCATE ON app_public.recipe_lines FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: reviews _900_live_cache_truncate; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_truncate AFTER TRUNCATE ON app_public.reviews FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: roasters _900_live_cache_truncate; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_truncate AFTER TRUNCATE ON app_public.roasters FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: store_coffee_prices _900_live_cache_truncate; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_truncate AFTER TRUNCATE ON app_public.store_coffee_prices FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: store_coffees _900_live_cache_truncate; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_truncate AFTER TRUNCATE ON app_public.store_coffees FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: store_options _900_live_cache_truncate; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_truncate AFTER TRUNCATE ON app_public.store_options FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: stores _900_live_cache_truncate; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_truncate AFTER TRUNCATE ON app_public.stores FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: coffee_option_groups _900_live_cache_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_update AFTER UPDATE ON app_public.coffee_option_groups REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: coffees _900_live_cache_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_update AFTER UPDATE ON app_public.coffees REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: ingredients _900_live_cache_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_update AFTER UPDATE ON app_public.ingredients REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: option_groups _900_live_cache_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_update AFTER UPDATE ON app_public.option_groups REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: options _900_live_cache_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_update AFTER UPDATE ON app_public.options REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: recipe_lines _900_live_cache_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_update AFTER UPDATE ON app_public.recipe_lines REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: reviews _900_live_cache_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_update AFTER UPDATE ON app_public.reviews REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: roasters _900_live_cache_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_update AFTER UPDATE ON app_public.roasters REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: store_coffee_prices _900_live_cache_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_update AFTER UPDATE ON app_public.store_coffee_prices REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: store_coffees _900_live_cache_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_update AFTER UPDATE ON app_public.store_coffees REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: store_options _900_live_cache_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_update AFTER UPDATE ON app_public.store_options REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: stores _900_live_cache_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_live_cache_update AFTER UPDATE ON app_public.stores REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__announce_public_reads();

--
-- Name: order_items _900_notify; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_notify AFTER INSERT OR DELETE OR UPDATE ON app_public.order_items FOR EACH ROW EXECUTE FUNCTION app_private.tg_order_items__notify();

--
-- Name: orders _900_notify; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_notify AFTER INSERT OR UPDATE ON app_public.orders FOR EACH ROW EXECUTE FUNCTION app_private.tg_orders__notify();

--
-- Name: coffees _900_notify_new; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_notify_new AFTER INSERT ON app_public.coffees FOR EACH ROW EXECUTE FUNCTION app_private.tg_coffees__notify_new();

--
-- Name: coffees _900_public_reads_insert; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_public_reads_insert AFTER INSERT ON app_public.coffees REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_coffees__queue_public_reads();

--
-- Name: notifications _900_publish; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _900_publish AFTER INSERT ON app_public.notifications FOR EACH ROW EXECUTE FUNCTION app_private.tg_notifications__publish();

--
-- Name: coffee_option_groups _950_audit; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _950_audit AFTER INSERT OR DELETE OR UPDATE ON app_public.coffee_option_groups FOR EACH ROW EXECUTE FUNCTION app_private.tg_audit('coffee_id,group_id', '*');

--
-- Name: coffees _950_audit; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _950_audit AFTER INSERT OR DELETE ON app_public.coffees FOR EACH ROW EXECUTE FUNCTION app_private.tg_audit('id', 'id,name,price,available');

--
-- Name: option_groups _950_audit; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _950_audit AFTER INSERT OR DELETE OR UPDATE ON app_public.option_groups FOR EACH ROW EXECUTE FUNCTION app_private.tg_audit('id', '*');

--
-- Name: options _950_audit; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _950_audit AFTER INSERT OR DELETE OR UPDATE ON app_public.options FOR EACH ROW EXECUTE FUNCTION app_private.tg_audit('id', '*');

--
-- Name: order_status_transitions _950_audit; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _950_audit AFTER INSERT OR DELETE OR UPDATE ON app_public.order_status_transitions FOR EACH ROW EXECUTE FUNCTION app_private.tg_audit('from_status,to_status,role', '*');

--
-- Name: store_coffee_prices _950_audit; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _950_audit AFTER INSERT OR DELETE OR UPDATE ON app_public.store_coffee_prices FOR EACH ROW EXECUTE FUNCTION app_private.tg_audit('store_id,coffee_id', '*');

--
-- Name: store_coffees _950_audit; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _950_audit AFTER INSERT OR DELETE OR UPDATE ON app_public.store_coffees FOR EACH ROW EXECUTE FUNCTION app_private.tg_audit('store_id,coffee_id', 'store_id,coffee_id,available');

--
-- Name: store_options _950_audit; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _950_audit AFTER INSERT OR DELETE OR UPDATE ON app_public.store_options FOR EACH ROW EXECUTE FUNCTION app_private.tg_audit('store_id,option_id', '*');

--
-- Name: store_staff _950_audit; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _950_audit AFTER INSERT OR DELETE OR UPDATE ON app_public.store_staff FOR EACH ROW EXECUTE FUNCTION app_private.tg_audit('store_id,staff_id', 'store_id,staff_id');

--
-- Name: stores _950_audit; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _950_audit AFTER INSERT OR DELETE OR UPDATE ON app_public.stores FOR EACH ROW EXECUTE FUNCTION app_private.tg_audit('id', '*');

--
-- Name: stock_items _950_audit_alert_level; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _950_audit_alert_level AFTER UPDATE OF alert_level ON app_public.stock_items FOR EACH ROW EXECUTE FUNCTION app_private.tg_audit('store_id,ingredient_id', 'alert_level');

--
-- Name: coffees _950_audit_update; Type: TRIGGER; Schema: app_public; Owner: -
--

CREATE TRIGGER _950_audit_update AFTER UPDATE OF price, available ON app_public.coffees FOR EACH ROW EXECUTE FUNCTION app_private.tg_audit('id', 'price,available');

--
-- Name: coffee_costs coffee_costs_coffee_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.coffee_costs
    ADD CONSTRAINT coffee_costs_coffee_id_fkey FOREIGN KEY (coffee_id) REFERENCES app_public.coffees(id) ON DELETE CASCADE;

--
-- Name: coffee_costs coffee_costs_supplier_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.coffee_costs
    ADD CONSTRAINT coffee_costs_supplier_id_fkey FOREIGN KEY (supplier_id) REFERENCES app_public.suppliers(id) ON DELETE SET NULL;

--
-- Name: notification_webhooks notification_webhooks_notification_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.notification_webhooks
    ADD CONSTRAINT notification_webhooks_notification_id_fkey FOREIGN KEY (notification_id) REFERENCES app_public.notifications(id) ON DELETE CASCADE;

--
-- Name: order_item_options order_item_options_option_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.order_item_options
    ADD CONSTRAINT order_item_options_option_id_fkey FOREIGN KEY (option_id) REFERENCES app_public.options(id) ON DELETE RESTRICT;

--
-- Name: order_item_options order_item_options_order_id_position_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.order_item_options
    ADD CONSTRAINT order_item_options_order_id_position_fkey FOREIGN KEY (order_id, "position") REFERENCES app_public.order_items(order_id, "position") ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED;

--
-- Name: order_sources order_sources_order_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.order_sources
    ADD CONSTRAINT order_sources_order_id_fkey FOREIGN KEY (order_id) REFERENCES app_public.orders(id) ON DELETE CASCADE;

--
-- Name: payment_deliveries payment_deliveries_store_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.payment_deliveries
    ADD CONSTRAINT payment_deliveries_store_id_fkey FOREIGN KEY (store_id) REFERENCES app_public.stores(id) ON DELETE RESTRICT;

--
-- Name: payment_intents payment_intents_order_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.payment_intents
    ADD CONSTRAINT payment_intents_order_id_fkey FOREIGN KEY (order_id) REFERENCES app_public.orders(id) ON DELETE CASCADE;

--
-- Name: public_read_state public_read_state_store_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.public_read_state
    ADD CONSTRAINT public_read_state_store_id_fkey FOREIGN KEY (store_id) REFERENCES app_public.stores(id) ON DELETE CASCADE;

--
-- Name: refresh_tokens refresh_tokens_account_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.refresh_tokens
    ADD CONSTRAINT refresh_tokens_account_id_fkey FOREIGN KEY (account_id) REFERENCES app_private.accounts(id) ON DELETE CASCADE;

--
-- Name: settings settings_key_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.settings
    ADD CONSTRAINT settings_key_fkey FOREIGN KEY (key) REFERENCES app_private.setting_definitions(key) ON UPDATE RESTRICT ON DELETE RESTRICT;

--
-- Name: stock_reservations stock_reservations_ingredient_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.stock_reservations
    ADD CONSTRAINT stock_reservations_ingredient_id_fkey FOREIGN KEY (ingredient_id) REFERENCES app_public.ingredients(id) ON DELETE CASCADE;

--
-- Name: stock_reservations stock_reservations_order_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.stock_reservations
    ADD CONSTRAINT stock_reservations_order_id_fkey FOREIGN KEY (order_id) REFERENCES app_public.orders(id) ON DELETE CASCADE;

--
-- Name: stock_reservations stock_reservations_store_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.stock_reservations
    ADD CONSTRAINT stock_reservations_store_id_fkey FOREIGN KEY (store_id) REFERENCES app_public.stores(id) ON DELETE CASCADE;

--
-- Name: stock_reserved stock_reserved_ingredient_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.stock_reserved
    ADD CONSTRAINT stock_reserved_ingredient_id_fkey FOREIGN KEY (ingredient_id) REFERENCES app_public.ingredients(id) ON DELETE CASCADE;

--
-- Name: stock_reserved stock_reserved_store_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.stock_reserved
    ADD CONSTRAINT stock_reserved_store_id_fkey FOREIGN KEY (store_id) REFERENCES app_public.stores(id) ON DELETE CASCADE;

--
-- Name: coffee_inventory coffee_inventory_coffee_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.coffee_inventory
    ADD CONSTRAINT coffee_inventory_coffee_id_fkey FOREIGN KEY (coffee_id) REFERENCES app_public.coffees(id) ON DELETE CASCADE;

--
-- Name: coffee_inventory coffee_inventory_store_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.coffee_inventory
    ADD CONSTRAINT coffee_inventory_store_id_fkey FOREIGN KEY (store_id) REFERENCES app_public.stores(id) ON DELETE CASCADE;

--
-- Name: coffee_option_groups coffee_option_groups_coffee_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.coffee_option_groups
    ADD CONSTRAINT coffee_option_groups_coffee_id_fkey FOREIGN KEY (coffee_id) REFERENCES app_public.coffees(id) ON DELETE CASCADE;

--
-- Name: coffee_option_groups coffee_option_groups_group_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.coffee_option_groups
    ADD CONSTRAINT coffee_option_groups_group_id_fkey FOREIGN KEY (group_id) REFERENCES app_public.option_groups(id) ON DELETE CASCADE;

--
-- Name: coffee_price_changes coffee_price_changes_coffee_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.coffee_price_changes
    ADD CONSTRAINT coffee_price_changes_coffee_id_fkey FOREIGN KEY (coffee_id) REFERENCES app_public.coffees(id) ON DELETE CASCADE;

--
-- Name: CONSTRAINT coffee_price_changes_coffee_id_fkey ON coffee_price_changes; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT coffee_price_changes_coffee_id_fkey ON app_public.coffee_price_changes IS '@fieldName coffee
@notNull
@foreignFieldName priceChangeList';

--
-- Name: coffees coffees_roaster_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.coffees
    ADD CONSTRAINT coffees_roaster_id_fkey FOREIGN KEY (roaster_id) REFERENCES app_public.roasters(id) ON DELETE RESTRICT;

--
-- Name: CONSTRAINT coffees_roaster_id_fkey ON coffees; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT coffees_roaster_id_fkey ON app_public.coffees IS '@fieldName roaster
@notNull
@foreignFieldName coffees';

--
-- Name: notifications notifications_customer_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.notifications
    ADD CONSTRAINT notifications_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES app_public.customers(id) ON DELETE CASCADE;

--
-- Name: CONSTRAINT notifications_customer_id_fkey ON notifications; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT notifications_customer_id_fkey ON app_public.notifications IS '@fieldName customer
@notNull
@foreignFieldName notificationList';

--
-- Name: notifications notifications_order_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.notifications
    ADD CONSTRAINT notifications_order_id_fkey FOREIGN KEY (order_id) REFERENCES app_public.orders(id) ON DELETE CASCADE;

--
-- Name: CONSTRAINT notifications_order_id_fkey ON notifications; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT notifications_order_id_fkey ON app_public.notifications IS '@fieldName parentOrder
@foreignFieldName notificationList';

--
-- Name: notifications notifications_store_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.notifications
    ADD CONSTRAINT notifications_store_id_fkey FOREIGN KEY (store_id) REFERENCES app_public.stores(id) ON DELETE RESTRICT;

--
-- Name: CONSTRAINT notifications_store_id_fkey ON notifications; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT notifications_store_id_fkey ON app_public.notifications IS '@fieldName store
@notNull
@foreignFieldName notificationList';

--
-- Name: options options_group_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.options
    ADD CONSTRAINT options_group_id_fkey FOREIGN KEY (group_id) REFERENCES app_public.option_groups(id) ON DELETE CASCADE;

--
-- Name: CONSTRAINT options_group_id_fkey ON options; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT options_group_id_fkey ON app_public.options IS '@fieldName group
@notNull
@foreignFieldName optionList';

--
-- Name: options options_ingredient_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.options
    ADD CONSTRAINT options_ingredient_id_fkey FOREIGN KEY (ingredient_id) REFERENCES app_public.ingredients(id) ON DELETE RESTRICT;

--
-- Name: CONSTRAINT options_ingredient_id_fkey ON options; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT options_ingredient_id_fkey ON app_public.options IS '@fieldName ingredient
@foreignFieldName optionList';

--
-- Name: order_events order_events_order_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.order_events
    ADD CONSTRAINT order_events_order_id_fkey FOREIGN KEY (order_id) REFERENCES app_public.orders(id) ON DELETE CASCADE;

--
-- Name: CONSTRAINT order_events_order_id_fkey ON order_events; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT order_events_order_id_fkey ON app_public.order_events IS '@fieldName parentOrder
@notNull
@foreignFieldName eventList';

--
-- Name: order_events order_events_store_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.order_events
    ADD CONSTRAINT order_events_store_id_fkey FOREIGN KEY (store_id) REFERENCES app_public.stores(id) ON DELETE RESTRICT;

--
-- Name: CONSTRAINT order_events_store_id_fkey ON order_events; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT order_events_store_id_fkey ON app_public.order_events IS '@fieldName store
@notNull
@foreignFieldName orderEventList';

--
-- Name: order_items order_items_coffee_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.order_items
    ADD CONSTRAINT order_items_coffee_id_fkey FOREIGN KEY (coffee_id) REFERENCES app_public.coffees(id) ON DELETE RESTRICT;

--
-- Name: CONSTRAINT order_items_coffee_id_fkey ON order_items; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT order_items_coffee_id_fkey ON app_public.order_items IS '@fieldName coffee
@notNull
@foreignFieldName orderItemList';

--
-- Name: order_items order_items_order_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.order_items
    ADD CONSTRAINT order_items_order_id_fkey FOREIGN KEY (order_id) REFERENCES app_public.orders(id) ON DELETE CASCADE;

--
-- Name: CONSTRAINT order_items_order_id_fkey ON order_items; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT order_items_order_id_fkey ON app_public.order_items IS '@fieldName parentOrder
@notNull
@foreignSimpleFieldName items
@behavior -connection +list';

--
-- Name: orders orders_barista_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.orders
    ADD CONSTRAINT orders_barista_id_fkey FOREIGN KEY (barista_id) REFERENCES app_public.baristas(id) ON DELETE SET NULL;

--
-- Name: CONSTRAINT orders_barista_id_fkey ON orders; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT orders_barista_id_fkey ON app_public.orders IS '@fieldName barista
@foreignFieldName orderList';

--
-- Name: orders orders_customer_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.orders
    ADD CONSTRAINT orders_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES app_public.customers(id) ON DELETE RESTRICT;

--
-- Name: CONSTRAINT orders_customer_id_fkey ON orders; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT orders_customer_id_fkey ON app_public.orders IS '@fieldName customer
@notNull
@foreignFieldName orderList';

--
-- Name: orders orders_store_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.orders
    ADD CONSTRAINT orders_store_id_fkey FOREIGN KEY (store_id) REFERENCES app_public.stores(id) ON DELETE RESTRICT;

--
-- Name: CONSTRAINT orders_store_id_fkey ON orders; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT orders_store_id_fkey ON app_public.orders IS '@fieldName store
@notNull
@foreignFieldName orderList';

--
-- Name: profiles profiles_customer_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.profiles
    ADD CONSTRAINT profiles_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES app_public.customers(id) ON DELETE CASCADE;

--
-- Name: CONSTRAINT profiles_customer_id_fkey ON profiles; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT profiles_customer_id_fkey ON app_public.profiles IS '@fieldName customer
@foreignFieldName profile';

--
-- Name: recipe_lines recipe_lines_coffee_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.recipe_lines
    ADD CONSTRAINT recipe_lines_coffee_id_fkey FOREIGN KEY (coffee_id) REFERENCES app_public.coffees(id) ON DELETE CASCADE;

--
-- Name: recipe_lines recipe_lines_ingredient_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.recipe_lines
    ADD CONSTRAINT recipe_lines_ingredient_id_fkey FOREIGN KEY (ingredient_id) REFERENCES app_public.ingredients(id) ON DELETE RESTRICT;

--
-- Name: refunds refunds_order_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.refunds
    ADD CONSTRAINT refunds_order_id_fkey FOREIGN KEY (order_id) REFERENCES app_public.orders(id) ON DELETE CASCADE;

--
-- Name: CONSTRAINT refunds_order_id_fkey ON refunds; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT refunds_order_id_fkey ON app_public.refunds IS '@fieldName parentOrder
@notNull
@foreignFieldName refundList';

--
-- Name: refunds refunds_store_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.refunds
    ADD CONSTRAINT refunds_store_id_fkey FOREIGN KEY (store_id) REFERENCES app_public.stores(id) ON DELETE RESTRICT;

--
-- Name: CONSTRAINT refunds_store_id_fkey ON refunds; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT refunds_store_id_fkey ON app_public.refunds IS '@fieldName store
@notNull
@foreignFieldName refundList';

--
-- Name: reviews reviews_coffee_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.reviews
    ADD CONSTRAINT reviews_coffee_id_fkey FOREIGN KEY (coffee_id) REFERENCES app_public.coffees(id) ON DELETE CASCADE;

--
-- Name: CONSTRAINT reviews_coffee_id_fkey ON reviews; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT reviews_coffee_id_fkey ON app_public.reviews IS '@fieldName coffee
@notNull
@foreignFieldName reviewList';

--
-- Name: reviews reviews_customer_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.reviews
    ADD CONSTRAINT reviews_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES app_public.customers(id) ON DELETE SET NULL;

--
-- Name: CONSTRAINT reviews_customer_id_fkey ON reviews; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT reviews_customer_id_fkey ON app_public.reviews IS '@fieldName reviewer';

--
-- Name: stock_items stock_items_ingredient_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.stock_items
    ADD CONSTRAINT stock_items_ingredient_id_fkey FOREIGN KEY (ingredient_id) REFERENCES app_public.ingredients(id) ON DELETE CASCADE;

--
-- Name: CONSTRAINT stock_items_ingredient_id_fkey ON stock_items; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT stock_items_ingredient_id_fkey ON app_public.stock_items IS '@fieldName ingredient
@notNull
@foreignFieldName stockItems';

--
-- Name: stock_items stock_items_store_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.stock_items
    ADD CONSTRAINT stock_items_store_id_fkey FOREIGN KEY (store_id) REFERENCES app_public.stores(id) ON DELETE CASCADE;

--
-- Name: CONSTRAINT stock_items_store_id_fkey ON stock_items; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT stock_items_store_id_fkey ON app_public.stock_items IS '@fieldName store
@notNull
@foreignFieldName stockItemList';

--
-- Name: stock_movements stock_movements_ingredient_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.stock_movements
    ADD CONSTRAINT stock_movements_ingredient_id_fkey FOREIGN KEY (ingredient_id) REFERENCES app_public.ingredients(id) ON DELETE CASCADE;

--
-- Name: CONSTRAINT stock_movements_ingredient_id_fkey ON stock_movements; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT stock_movements_ingredient_id_fkey ON app_public.stock_movements IS '@fieldName ingredient
@notNull
@foreignFieldName movementList';

--
-- Name: stock_movements stock_movements_order_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.stock_movements
    ADD CONSTRAINT stock_movements_order_id_fkey FOREIGN KEY (order_id) REFERENCES app_public.orders(id) ON DELETE SET NULL;

--
-- Name: CONSTRAINT stock_movements_order_id_fkey ON stock_movements; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT stock_movements_order_id_fkey ON app_public.stock_movements IS '@fieldName parentOrder
@foreignFieldName stockMovementList';

--
-- Name: stock_movements stock_movements_store_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.stock_movements
    ADD CONSTRAINT stock_movements_store_id_fkey FOREIGN KEY (store_id) REFERENCES app_public.stores(id) ON DELETE RESTRICT;

--
-- Name: CONSTRAINT stock_movements_store_id_fkey ON stock_movements; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT stock_movements_store_id_fkey ON app_public.stock_movements IS '@fieldName store
@notNull
@foreignFieldName stockMovementList';

--
-- Name: store_coffee_prices store_coffee_prices_coffee_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.store_coffee_prices
    ADD CONSTRAINT store_coffee_prices_coffee_id_fkey FOREIGN KEY (coffee_id) REFERENCES app_public.coffees(id) ON DELETE CASCADE;

--
-- Name: store_coffee_prices store_coffee_prices_store_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.store_coffee_prices
    ADD CONSTRAINT store_coffee_prices_store_id_fkey FOREIGN KEY (store_id) REFERENCES app_public.stores(id) ON DELETE CASCADE;

--
-- Name: store_coffees store_coffees_coffee_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.store_coffees
    ADD CONSTRAINT store_coffees_coffee_id_fkey FOREIGN KEY (coffee_id) REFERENCES app_public.coffees(id) ON DELETE CASCADE;

--
-- Name: CONSTRAINT store_coffees_coffee_id_fkey ON store_coffees; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT store_coffees_coffee_id_fkey ON app_public.store_coffees IS '@fieldName coffee
@notNull
@foreignFieldName storeAvailabilityList';

--
-- Name: store_coffees store_coffees_store_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.store_coffees
    ADD CONSTRAINT store_coffees_store_id_fkey FOREIGN KEY (store_id) REFERENCES app_public.stores(id) ON DELETE CASCADE;

--
-- Name: CONSTRAINT store_coffees_store_id_fkey ON store_coffees; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT store_coffees_store_id_fkey ON app_public.store_coffees IS '@fieldName store
@notNull
@foreignFieldName coffeeAvailabilityList';

--
-- Name: store_options store_options_option_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.store_options
    ADD CONSTRAINT store_options_option_id_fkey FOREIGN KEY (option_id) REFERENCES app_public.options(id) ON DELETE CASCADE;

--
-- Name: store_options store_options_store_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.store_options
    ADD CONSTRAINT store_options_store_id_fkey FOREIGN KEY (store_id) REFERENCES app_public.stores(id) ON DELETE CASCADE;

--
-- Name: store_staff store_staff_staff_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.store_staff
    ADD CONSTRAINT store_staff_staff_id_fkey FOREIGN KEY (staff_id) REFERENCES app_public.baristas(id) ON DELETE CASCADE;

--
-- Name: CONSTRAINT store_staff_staff_id_fkey ON store_staff; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT store_staff_staff_id_fkey ON app_public.store_staff IS '@fieldName staff
@notNull
@foreignFieldName storeList';

--
-- Name: store_staff store_staff_store_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: -
--

ALTER TABLE ONLY app_public.store_staff
    ADD CONSTRAINT store_staff_store_id_fkey FOREIGN KEY (store_id) REFERENCES app_public.stores(id) ON DELETE CASCADE;

--
-- Name: CONSTRAINT store_staff_store_id_fkey ON store_staff; Type: COMMENT; Schema: app_public; Owner: -
--

COMMENT ON CONSTRAINT store_staff_store_id_fkey ON app_public.store_staff IS '@fieldName store
@notNull
@foreignFieldName staffList';

--
-- Name: audit_log; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.audit_log ENABLE ROW LEVEL SECURITY;

--
-- Name: idempotency_keys; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.idempotency_keys ENABLE ROW LEVEL SECURITY;

--
-- Name: baristas; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.baristas ENABLE ROW LEVEL SECURITY;

--
-- Name: coffee_inventory; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.coffee_inventory ENABLE ROW LEVEL SECURITY;

--
-- Name: coffee_option_groups; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.coffee_option_groups ENABLE ROW LEVEL SECURITY;

--
-- Name: coffee_price_changes; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.coffee_price_changes ENABLE ROW LEVEL SECURITY;

--
-- Name: coffees; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.coffees ENABLE ROW LEVEL SECURITY;

--
-- Name: customers; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.customers ENABLE ROW LEVEL SECURITY;

--
-- Name: ingredients; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.ingredients ENABLE ROW LEVEL SECURITY;

--
-- Name: notifications; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.notifications ENABLE ROW LEVEL SECURITY;

--
-- Name: option_groups; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.option_groups ENABLE ROW LEVEL SECURITY;

--
-- Name: options; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.options ENABLE ROW LEVEL SECURITY;

--
-- Name: order_events; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.order_events ENABLE ROW LEVEL SECURITY;

--
-- Name: order_items; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.order_items ENABLE ROW LEVEL SECURITY;

--
-- Name: order_status_transitions; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.order_status_transitions ENABLE ROW LEVEL SECURITY;

--
-- Name: orders; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.orders ENABLE ROW LEVEL SECURITY;

--
-- Name: payment_alerts; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.payment_alerts ENABLE ROW LEVEL SECURITY;

--
-- Name: profiles; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.profiles ENABLE ROW LEVEL SECURITY;

--
-- Name: recipe_lines; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.recipe_lines ENABLE ROW LEVEL SECURITY;

--
-- Name: refunds; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.refunds ENABLE ROW LEVEL SECURITY;

--
-- Name: reviews; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.reviews ENABLE ROW LEVEL SECURITY;

--
-- Name: roasters; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.roasters ENABLE ROW LEVEL SECURITY;

--
-- Name: coffee_price_changes select_admin; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_admin ON app_public.coffee_price_changes FOR SELECT TO cafe_admin USING (( SELECT app_public.is_admin() AS is_admin));

--
-- Name: payment_alerts select_admin; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_admin ON app_public.payment_alerts FOR SELECT TO cafe_admin USING (( SELECT app_public.is_admin() AS is_admin));

--
-- Name: refunds select_admin; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_admin ON app_public.refunds FOR SELECT TO cafe_admin USING (((( SELECT app_public.current_actor() AS current_actor) = 'admin'::text) AND (store_id = ANY (( SELECT app_public.staff_store_ids() AS staff_store_ids)::uuid[]))));

--
-- Name: suppliers select_admin; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_admin ON app_public.suppliers FOR SELECT TO cafe_admin USING (( SELECT app_public.is_admin() AS is_admin));

--
-- Name: coffee_inventory select_all; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_all ON app_public.coffee_inventory FOR SELECT USING (true);

--
-- Name: coffee_option_groups select_all; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_all ON app_public.coffee_option_groups FOR SELECT USING (true);

--
-- Name: coffees select_all; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_all ON app_public.coffees FOR SELECT USING (true);

--
-- Name: ingredients select_all; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_all ON app_public.ingredients FOR SELECT USING (true);

--
-- Name: option_groups select_all; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_all ON app_public.option_groups FOR SELECT USING (true);

--
-- Name: options select_all; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_all ON app_public.options FOR SELECT USING (true);

--
-- Name: recipe_lines select_all; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_all ON app_public.recipe_lines FOR SELECT USING (true);

--
-- Name: reviews select_all; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_all ON app_public.reviews FOR SELECT USING (true);

--
-- Name: roasters select_all; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_all ON app_public.roasters FOR SELECT USING (true);

--
-- Name: store_coffee_prices select_all; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_all ON app_public.store_coffee_prices FOR SELECT USING (true);

--
-- Name: store_coffees select_all; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_all ON app_public.store_coffees FOR SELECT USING (true);

--
-- Name: store_options select_all; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_all ON app_public.store_options FOR SELECT USING (true);

--
-- Name: stores select_open; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_open ON app_public.stores FOR SELECT USING ((is_open OR ( SELECT app_public.is_staff() AS is_staff)));

--
-- Name: customers select_own; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_own ON app_public.customers FOR SELECT TO cafe_customer USING ((id = app_public.current_user_id()));

--
-- Name: notifications select_own; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_own ON app_public.notifications FOR SELECT TO cafe_customer USING ((customer_id = app_public.current_user_id()));

--
-- Name: order_events select_own; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_own ON app_public.order_events FOR SELECT TO cafe_customer USING ((EXISTS ( SELECT 1
   FROM app_public.orders o
  WHERE ((o.id = order_events.order_id) AND (o.customer_id = app_public.current_user_id())))));

--
-- Name: order_items select_own; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_own ON app_public.order_items FOR SELECT TO cafe_customer USING ((EXISTS ( SELECT 1
   FROM app_public.orders o
  WHERE ((o.id = order_items.order_id) AND (o.customer_id = app_public.current_user_id())))));

--
-- Name: orders select_own; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_own ON app_public.orders FOR SELECT TO cafe_customer USING ((customer_id = app_public.current_user_id()));

--
-- Name: profiles select_own; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_own ON app_public.profiles FOR SELECT TO cafe_customer USING ((customer_id = app_public.current_user_id()));

--
-- Name: baristas select_own_orders; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_own_orders ON app_public.baristas FOR SELECT TO cafe_customer USING ((EXISTS ( SELECT 1
   FROM app_public.orders o
  WHERE ((o.barista_id = baristas.id) AND (o.customer_id = app_public.current_user_id())))));

--
-- Name: baristas select_staff; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_staff ON app_public.baristas FOR SELECT TO cafe_barista, cafe_admin, cafe_system USING ((( SELECT app_public.current_actor() AS current_actor) = ANY (ARRAY['barista'::text, 'admin'::text, 'system'::text])));

--
-- Name: customers select_staff; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_staff ON app_public.customers FOR SELECT TO cafe_barista, cafe_admin, cafe_system USING ((( SELECT app_public.current_actor() AS current_actor) = ANY (ARRAY['barista'::text, 'admin'::text, 'system'::text])));

--
-- Name: notifications select_staff; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_staff ON app_public.notifications FOR SELECT TO cafe_barista, cafe_admin USING ((store_id = ANY (( SELECT app_public.staff_store_ids() AS staff_store_ids)::uuid[])));

--
-- Name: order_events select_staff; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_staff ON app_public.order_events FOR SELECT TO cafe_barista, cafe_admin USING ((store_id = ANY (( SELECT app_public.staff_store_ids() AS staff_store_ids)::uuid[])));

--
-- Name: order_items select_staff; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_staff ON app_public.order_items FOR SELECT TO cafe_barista, cafe_admin, cafe_system USING ((EXISTS ( SELECT 1
   FROM app_public.orders o
  WHERE ((o.id = order_items.order_id) AND (o.store_id = ANY (( SELECT app_public.staff_store_ids() AS staff_store_ids)::uuid[]))))));

--
-- Name: order_status_transitions select_staff; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_staff ON app_public.order_status_transitions FOR SELECT TO cafe_barista, cafe_admin USING (( SELECT app_public.is_staff() AS is_staff));

--
-- Name: orders select_staff; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_staff ON app_public.orders FOR SELECT TO cafe_barista, cafe_admin, cafe_system USING ((store_id = ANY (( SELECT app_public.staff_store_ids() AS staff_store_ids)::uuid[])));

--
-- Name: profiles select_staff; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_staff ON app_public.profiles FOR SELECT TO cafe_barista, cafe_admin USING (( SELECT app_public.is_staff() AS is_staff));

--
-- Name: stock_items select_staff; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_staff ON app_public.stock_items FOR SELECT TO cafe_barista, cafe_admin, cafe_system USING ((store_id = ANY (( SELECT app_public.staff_store_ids() AS staff_store_ids)::uuid[])));

--
-- Name: stock_movements select_staff; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_staff ON app_public.stock_movements FOR SELECT TO cafe_barista, cafe_admin USING ((store_id = ANY (( SELECT app_public.staff_store_ids() AS staff_store_ids)::uuid[])));

--
-- Name: store_staff select_staff; Type: POLICY; Schema: app_public; Owner: -
--

CREATE POLICY select_staff ON app_public.store_staff FOR SELECT TO cafe_barista, cafe_admin, cafe_system USING ((( SELECT app_public.is_staff() AS is_staff) OR (( SELECT app_public.current_actor() AS current_actor) = 'system'::text)));

--
-- Name: stock_items; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.stock_items ENABLE ROW LEVEL SECURITY;

--
-- Name: stock_movements; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.stock_movements ENABLE ROW LEVEL SECURITY;

--
-- Name: store_coffee_prices; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.store_coffee_prices ENABLE ROW LEVEL SECURITY;

--
-- Name: store_coffees; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.store_coffees ENABLE ROW LEVEL SECURITY;

--
-- Name: store_options; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.store_options ENABLE ROW LEVEL SECURITY;

--
-- Name: store_staff; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.store_staff ENABLE ROW LEVEL SECURITY;

--
-- Name: stores; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.stores ENABLE ROW LEVEL SECURITY;

--
-- Name: suppliers; Type: ROW SECURITY; Schema: app_public; Owner: -
--

ALTER TABLE app_public.suppliers ENABLE ROW LEVEL SECURITY;

--
-- Name: SCHEMA app_hidden; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA app_hidden TO cafe_anonymous;
GRANT USAGE ON SCHEMA app_hidden TO cafe_customer;
GRANT USAGE ON SCHEMA app_hidden TO cafe_barista;
GRANT USAGE ON SCHEMA app_hidden TO cafe_admin;
GRANT USAGE ON SCHEMA app_hidden TO cafe_system;

--
-- Name: SCHEMA app_private; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA app_private TO cafe_system;

--
-- Name: SCHEMA app_public; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA app_public TO cafe_anonymous;
GRANT USAGE ON SCHEMA app_public TO cafe_customer;
GRANT USAGE ON SCHEMA app_public TO cafe_barista;
GRANT USAGE ON SCHEMA app_public TO cafe_admin;
GRANT USAGE ON SCHEMA app_public TO cafe_system;

--
-- Name: FUNCTION add_staff_account(p_email text, p_name text, p_role text, p_password text, p_source text, p_store_id uuid); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.add_staff_account(p_email text, p_name text, p_role text, p_password text, p_source text, p_store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.add_staff_account(p_email text, p_name text, p_role text, p_password text, p_source text, p_store_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.add_staff_account(p_email text, p_name text, p_role text, p_password text, p_source text, p_store_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.add_staff_account(p_email text, p_name text, p_role text, p_password text, p_source text, p_store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.add_staff_account(p_email text, p_name text, p_role text, p_password text, p_source text, p_store_id uuid) TO cafe_admin;

--
-- Name: FUNCTION assert_can_follow_order(p_id uuid); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.assert_can_follow_order(p_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.assert_can_follow_order(p_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.assert_can_follow_order(p_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.assert_can_follow_order(p_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.assert_can_follow_order(p_id uuid) TO cafe_admin;

--
-- Name: FUNCTION assert_can_follow_queue(p_store_id uuid); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.assert_can_follow_queue(p_store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.assert_can_follow_queue(p_store_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.assert_can_follow_queue(p_store_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.assert_can_follow_queue(p_store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.assert_can_follow_queue(p_store_id uuid) TO cafe_admin;

--
-- Name: FUNCTION assert_password_check_allowed(p_email text, p_source text, p_registration boolean); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.assert_password_check_allowed(p_email text, p_source text, p_registration boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.assert_password_check_allowed(p_email text, p_source text, p_registration boolean) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.assert_password_check_allowed(p_email text, p_source text, p_registration boolean) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.assert_password_check_allowed(p_email text, p_source text, p_registration boolean) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.assert_password_check_allowed(p_email text, p_source text, p_registration boolean) TO cafe_admin;

--
-- Name: FUNCTION audit_log(p_first integer, p_offset integer); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.audit_log(p_first integer, p_offset integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.audit_log(p_first integer, p_offset integer) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.audit_log(p_first integer, p_offset integer) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.audit_log(p_first integer, p_offset integer) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.audit_log(p_first integer, p_offset integer) TO cafe_admin;

--
-- Name: FUNCTION authenticate(p_email text, p_password text, p_source text); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.authenticate(p_email text, p_password text, p_source text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.authenticate(p_email text, p_password text, p_source text) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.authenticate(p_email text, p_password text, p_source text) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.authenticate(p_email text, p_password text, p_source text) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.authenticate(p_email text, p_password text, p_source text) TO cafe_admin;

--
-- Name: FUNCTION change_password(p_old text, p_new text, p_source text); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.change_password(p_old text, p_new text, p_source text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.change_password(p_old text, p_new text, p_source text) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.change_password(p_old text, p_new text, p_source text) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.change_password(p_old text, p_new text, p_source text) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.change_password(p_old text, p_new text, p_source text) TO cafe_admin;

--
-- Name: FUNCTION default_store_id(); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.default_store_id() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.default_store_id() TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.default_store_id() TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.default_store_id() TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.default_store_id() TO cafe_admin;
GRANT ALL ON FUNCTION app_hidden.default_store_id() TO cafe_system;

--
-- Name: FUNCTION disable_account(p_email text); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.disable_account(p_email text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.disable_account(p_email text) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.disable_account(p_email text) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.disable_account(p_email text) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.disable_account(p_email text) TO cafe_admin;

--
-- Name: FUNCTION idempotency_answer(p_key text, p_source text, p_request_hash text); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.idempotency_answer(p_key text, p_source text, p_request_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.idempotency_answer(p_key text, p_source text, p_request_hash text) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.idempotency_answer(p_key text, p_source text, p_request_hash text) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.idempotency_answer(p_key text, p_source text, p_request_hash text) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.idempotency_answer(p_key text, p_source text, p_request_hash text) TO cafe_admin;

--
-- Name: FUNCTION idempotency_claim(p_key text, p_source text, p_request_hash text); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.idempotency_claim(p_key text, p_source text, p_request_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.idempotency_claim(p_key text, p_source text, p_request_hash text) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.idempotency_claim(p_key text, p_source text, p_request_hash text) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.idempotency_claim(p_key text, p_source text, p_request_hash text) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.idempotency_claim(p_key text, p_source text, p_request_hash text) TO cafe_admin;

--
-- Name: FUNCTION idempotency_committed(p_key text, p_source text, p_mutation_result json); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.idempotency_committed(p_key text, p_source text, p_mutation_result json) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.idempotency_committed(p_key text, p_source text, p_mutation_result json) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.idempotency_committed(p_key text, p_source text, p_mutation_result json) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.idempotency_committed(p_key text, p_source text, p_mutation_result json) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.idempotency_committed(p_key text, p_source text, p_mutation_result json) TO cafe_admin;

--
-- Name: FUNCTION idempotency_forget(p_key text, p_source text); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.idempotency_forget(p_key text, p_source text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.idempotency_forget(p_key text, p_source text) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.idempotency_forget(p_key text, p_source text) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.idempotency_forget(p_key text, p_source text) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.idempotency_forget(p_key text, p_source text) TO cafe_admin;

--
-- Name: FUNCTION idempotency_store(p_key text, p_source text, p_response json); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.idempotency_store(p_key text, p_source text, p_response json) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.idempotency_store(p_key text, p_source text, p_response json) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.idempotency_store(p_key text, p_source text, p_response json) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.idempotency_store(p_key text, p_source text, p_response json) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.idempotency_store(p_key text, p_source text, p_response json) TO cafe_admin;

--
-- Name: FUNCTION list_staff(); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.list_staff() FROM PUBLIC;

--
-- Name: FUNCTION logout(p_token text); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.logout(p_token text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.logout(p_token text) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.logout(p_token text) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.logout(p_token text) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.logout(p_token text) TO cafe_admin;

--
-- Name: FUNCTION note_registration_attempt(p_source text); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.note_registration_attempt(p_source text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.note_registration_attempt(p_source text) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.note_registration_attempt(p_source text) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.note_registration_attempt(p_source text) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.note_registration_attempt(p_source text) TO cafe_admin;

--
-- Name: FUNCTION notification_recipient(); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.notification_recipient() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.notification_recipient() TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.notification_recipient() TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.notification_recipient() TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.notification_recipient() TO cafe_admin;

--
-- Name: TABLE coffees; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.coffees TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.coffees TO cafe_customer;
GRANT SELECT ON TABLE app_public.coffees TO cafe_barista;
GRANT SELECT ON TABLE app_public.coffees TO cafe_admin;
GRANT SELECT ON TABLE app_public.coffees TO cafe_system;

--
-- Name: FUNCTION on_sale_at(p_coffee app_public.coffees, p_store_id uuid); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.on_sale_at(p_coffee app_public.coffees, p_store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.on_sale_at(p_coffee app_public.coffees, p_store_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.on_sale_at(p_coffee app_public.coffees, p_store_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.on_sale_at(p_coffee app_public.coffees, p_store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.on_sale_at(p_coffee app_public.coffees, p_store_id uuid) TO cafe_admin;
GRANT ALL ON FUNCTION app_hidden.on_sale_at(p_coffee app_public.coffees, p_store_id uuid) TO cafe_system;

--
-- Name: TABLE orders; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.orders TO cafe_customer;
GRANT SELECT ON TABLE app_public.orders TO cafe_barista;
GRANT SELECT ON TABLE app_public.orders TO cafe_admin;
GRANT SELECT ON TABLE app_public.orders TO cafe_system;
GRANT SELECT ON TABLE app_public.orders TO cafe_anonymous;

--
-- Name: FUNCTION order_for_update(p_id uuid); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.order_for_update(p_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION payment_start(p_order_id uuid); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.payment_start(p_order_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.payment_start(p_order_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.payment_start(p_order_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.payment_start(p_order_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.payment_start(p_order_id uuid) TO cafe_admin;

--
-- Name: FUNCTION recent_revoked_sign_ins(p_seconds integer); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.recent_revoked_sign_ins(p_seconds integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.recent_revoked_sign_ins(p_seconds integer) TO cafe_system;

--
-- Name: FUNCTION record_payment_intent(p_order_id uuid, p_intent_id text, p_amount_minor bigint, p_currency text); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.record_payment_intent(p_order_id uuid, p_intent_id text, p_amount_minor bigint, p_currency text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.record_payment_intent(p_order_id uuid, p_intent_id text, p_amount_minor bigint, p_currency text) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.record_payment_intent(p_order_id uuid, p_intent_id text, p_amount_minor bigint, p_currency text) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.record_payment_intent(p_order_id uuid, p_intent_id text, p_amount_minor bigint, p_currency text) TO cafe_admin;

--
-- Name: FUNCTION refresh_session(p_token text); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.refresh_session(p_token text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.refresh_session(p_token text) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.refresh_session(p_token text) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.refresh_session(p_token text) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.refresh_session(p_token text) TO cafe_admin;

--
-- Name: FUNCTION register(p_email text, p_password text, p_name text, p_source text); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.register(p_email text, p_password text, p_name text, p_source text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.register(p_email text, p_password text, p_name text, p_source text) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.register(p_email text, p_password text, p_name text, p_source text) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.register(p_email text, p_password text, p_name text, p_source text) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.register(p_email text, p_password text, p_name text, p_source text) TO cafe_admin;

--
-- Name: FUNCTION require_admin(); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.require_admin() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.require_admin() TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.require_admin() TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.require_admin() TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.require_admin() TO cafe_admin;
GRANT ALL ON FUNCTION app_hidden.require_admin() TO cafe_system;

--
-- Name: FUNCTION require_signed_in(); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.require_signed_in() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.require_signed_in() TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.require_signed_in() TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.require_signed_in() TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.require_signed_in() TO cafe_admin;
GRANT ALL ON FUNCTION app_hidden.require_signed_in() TO cafe_system;

--
-- Name: FUNCTION require_staff(); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.require_staff() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.require_staff() TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.require_staff() TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.require_staff() TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.require_staff() TO cafe_admin;
GRANT ALL ON FUNCTION app_hidden.require_staff() TO cafe_system;

--
-- Name: FUNCTION require_store_admin(p_store_id uuid); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.require_store_admin(p_store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.require_store_admin(p_store_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.require_store_admin(p_store_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.require_store_admin(p_store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.require_store_admin(p_store_id uuid) TO cafe_admin;
GRANT ALL ON FUNCTION app_hidden.require_store_admin(p_store_id uuid) TO cafe_system;

--
-- Name: FUNCTION require_store_staff(p_store_id uuid); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.require_store_staff(p_store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.require_store_staff(p_store_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.require_store_staff(p_store_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.require_store_staff(p_store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.require_store_staff(p_store_id uuid) TO cafe_admin;
GRANT ALL ON FUNCTION app_hidden.require_store_staff(p_store_id uuid) TO cafe_system;

--
-- Name: FUNCTION sales_report(p_from text, p_to text, p_group_by text, p_max_rows integer, p_store_id uuid); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.sales_report(p_from text, p_to text, p_group_by text, p_max_rows integer, p_store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sales_report(p_from text, p_to text, p_group_by text, p_max_rows integer, p_store_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.sales_report(p_from text, p_to text, p_group_by text, p_max_rows integer, p_store_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.sales_report(p_from text, p_to text, p_group_by text, p_max_rows integer, p_store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.sales_report(p_from text, p_to text, p_group_by text, p_max_rows integer, p_store_id uuid) TO cafe_admin;

--
-- Name: FUNCTION share_rate_usage(p_process text, p_now_ms bigint, p_unknown_percent integer, p_keys text[], p_used integer[], p_demand integer[], p_budgets integer[], p_window_ends bigint[]); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.share_rate_usage(p_process text, p_now_ms bigint, p_unknown_percent integer, p_keys text[], p_used integer[], p_demand integer[], p_budgets integer[], p_window_ends bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.share_rate_usage(p_process text, p_now_ms bigint, p_unknown_percent integer, p_keys text[], p_used integer[], p_demand integer[], p_budgets integer[], p_window_ends bigint[]) TO cafe_system;

--
-- Name: FUNCTION signed_in_as(p_role text); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.signed_in_as(p_role text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.signed_in_as(p_role text) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.signed_in_as(p_role text) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.signed_in_as(p_role text) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.signed_in_as(p_role text) TO cafe_admin;
GRANT ALL ON FUNCTION app_hidden.signed_in_as(p_role text) TO cafe_system;

--
-- Name: FUNCTION staff_is_chain_wide(); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.staff_is_chain_wide() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.staff_is_chain_wide() TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.staff_is_chain_wide() TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.staff_is_chain_wide() TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.staff_is_chain_wide() TO cafe_admin;
GRANT ALL ON FUNCTION app_hidden.staff_is_chain_wide() TO cafe_system;

--
-- Name: FUNCTION store_or_default(p_store_id uuid); Type: ACL; Schema: app_hidden; Owner: -
--

REVOKE ALL ON FUNCTION app_hidden.store_or_default(p_store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.store_or_default(p_store_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_hidden.store_or_default(p_store_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_hidden.store_or_default(p_store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_hidden.store_or_default(p_store_id uuid) TO cafe_admin;
GRANT ALL ON FUNCTION app_hidden.store_or_default(p_store_id uuid) TO cafe_system;

--
-- Name: FUNCTION add_sales(p_stores uuid[], p_hours timestamp with time zone[], p_coffees uuid[], p_sold bigint[]); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.add_sales(p_stores uuid[], p_hours timestamp with time zone[], p_coffees uuid[], p_sold bigint[]) FROM PUBLIC;

--
-- Name: FUNCTION announce_revoked_sign_in(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.announce_revoked_sign_in() FROM PUBLIC;

--
-- Name: FUNCTION apply_role_limits(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.apply_role_limits() FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.apply_role_limits() TO cafe_system;

--
-- Name: FUNCTION assert_login_allowed(p_email text, p_source text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.assert_login_allowed(p_email text, p_source text) FROM PUBLIC;

--
-- Name: FUNCTION assert_registration_allowed(p_source text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.assert_registration_allowed(p_source text) FROM PUBLIC;

--
-- Name: FUNCTION audit_actor(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.audit_actor() FROM PUBLIC;

--
-- Name: FUNCTION audit_ddl(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.audit_ddl() FROM PUBLIC;

--
-- Name: FUNCTION available_stock(p_ingredient_id uuid, p_store_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.available_stock(p_ingredient_id uuid, p_store_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION blocked_source_list(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.blocked_source_list() FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.blocked_source_list() TO cafe_system;

--
-- Name: FUNCTION cafe_time_zone(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.cafe_time_zone() FROM PUBLIC;

--
-- Name: FUNCTION check_new_account(p_email text, p_name text, p_password text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.check_new_account(p_email text, p_name text, p_password text) FROM PUBLIC;

--
-- Name: FUNCTION check_password_strength(p_password text, p_email text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.check_password_strength(p_password text, p_email text) FROM PUBLIC;

--
-- Name: FUNCTION check_price(p_price numeric); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.check_price(p_price numeric) FROM PUBLIC;

--
-- Name: FUNCTION coffee_price_at(p_coffee_id uuid, p_store_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.coffee_price_at(p_coffee_id uuid, p_store_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION currency_exponent(p_currency text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.currency_exponent(p_currency text) FROM PUBLIC;

--
-- Name: FUNCTION ddl_audit_installed(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.ddl_audit_installed() FROM PUBLIC;

--
-- Name: FUNCTION default_options(p_coffee_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.default_options(p_coffee_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION estimate_ready_time(p_items integer, p_store_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.estimate_ready_time(p_items integer, p_store_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION expire_pending_orders(p_limit integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.expire_pending_orders(p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.expire_pending_orders(p_limit integer) TO cafe_system;

--
-- Name: FUNCTION from_minor_units(p_minor bigint, p_currency text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.from_minor_units(p_minor bigint, p_currency text) FROM PUBLIC;

--
-- Name: FUNCTION hash_password(p_password text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.hash_password(p_password text) FROM PUBLIC;

--
-- Name: FUNCTION idempotency_owner(p_source text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.idempotency_owner(p_source text) FROM PUBLIC;

--
-- Name: FUNCTION install_ddl_audit(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.install_ddl_audit() FROM PUBLIC;

--
-- Name: FUNCTION inventory_of(p_coffees uuid[]); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.inventory_of(p_coffees uuid[]) FROM PUBLIC;

--
-- Name: FUNCTION is_source_blocked(p_source text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.is_source_blocked(p_source text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.is_source_blocked(p_source text) TO cafe_system;

--
-- Name: FUNCTION is_unauthenticated_failure(p_code text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.is_unauthenticated_failure(p_code text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.is_unauthenticated_failure(p_code text) TO cafe_system;

--
-- Name: FUNCTION issue_refresh_token(p_account_id uuid, p_family_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.issue_refresh_token(p_account_id uuid, p_family_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION job_counts(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.job_counts() FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.job_counts() TO cafe_system;

--
-- Name: FUNCTION line_usage(p_coffee_id uuid, p_option_ids uuid[]); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.line_usage(p_coffee_id uuid, p_option_ids uuid[]) FROM PUBLIC;

--
-- Name: FUNCTION local_iso(p_at timestamp with time zone, p_zone text, p_hour boolean); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.local_iso(p_at timestamp with time zone, p_zone text, p_hour boolean) FROM PUBLIC;

--
-- Name: FUNCTION log_delivery(p_source text, p_http_status integer, p_outcome text, p_code text, p_reason text, p_dedupe_key text, p_body_sha256 text, p_event text, p_order_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.log_delivery(p_source text, p_http_status integer, p_outcome text, p_code text, p_reason text, p_dedupe_key text, p_body_sha256 text, p_event text, p_order_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.log_delivery(p_source text, p_http_status integer, p_outcome text, p_code text, p_reason text, p_dedupe_key text, p_body_sha256 text, p_event text, p_order_id uuid) TO cafe_system;

--
-- Name: FUNCTION mark_paid(p_order_id uuid, p_method text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.mark_paid(p_order_id uuid, p_method text) FROM PUBLIC;

--
-- Name: FUNCTION note_password_check(p_email text, p_source text, p_ok boolean, p_kind text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.note_password_check(p_email text, p_source text, p_ok boolean, p_kind text) FROM PUBLIC;

--
-- Name: FUNCTION notification_webhook(p_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.notification_webhook(p_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.notification_webhook(p_id uuid) TO cafe_system;

--
-- Name: FUNCTION notification_webhook_delivered(p_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.notification_webhook_delivered(p_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.notification_webhook_delivered(p_id uuid) TO cafe_system;

--
-- Name: FUNCTION notification_webhook_failed(p_id uuid, p_error text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.notification_webhook_failed(p_id uuid, p_error text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.notification_webhook_failed(p_id uuid, p_error text) TO cafe_system;

--
-- Name: TABLE notifications; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.notifications TO cafe_customer;
GRANT SELECT ON TABLE app_public.notifications TO cafe_barista;
GRANT SELECT ON TABLE app_public.notifications TO cafe_admin;
GRANT SELECT ON TABLE app_public.notifications TO cafe_anonymous;

--
-- Name: FUNCTION notify_customer(p_order_id uuid, p_kind text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.notify_customer(p_order_id uuid, p_kind text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.notify_customer(p_order_id uuid, p_kind text) TO cafe_system;

--
-- Name: FUNCTION ops_counts(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.ops_counts() FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.ops_counts() TO cafe_system;

--
-- Name: FUNCTION option_available_at(p_option_id uuid, p_store_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.option_available_at(p_option_id uuid, p_store_id uuid) FROM PUBLIC;

--
-- Name: TABLE stores; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.stores TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.stores TO cafe_customer;
GRANT SELECT ON TABLE app_public.stores TO cafe_barista;
GRANT SELECT ON TABLE app_public.stores TO cafe_admin;
GRANT SELECT ON TABLE app_public.stores TO cafe_system;

--
-- Name: FUNCTION order_line_options(p_coffee app_public.coffees, p_store app_public.stores, p_option_ids jsonb, p_pos integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.order_line_options(p_coffee app_public.coffees, p_store app_public.stores, p_option_ids jsonb, p_pos integer) FROM PUBLIC;

--
-- Name: FUNCTION order_line_usage(p_order_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.order_line_usage(p_order_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION parse_report_time(p_value text, p_zone text, p_name text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.parse_report_time(p_value text, p_zone text, p_name text) FROM PUBLIC;

--
-- Name: FUNCTION payment_intent_canceled(p_intent_id text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.payment_intent_canceled(p_intent_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.payment_intent_canceled(p_intent_id text) TO cafe_system;

--
-- Name: FUNCTION payment_intent_to_cancel(p_intent_id text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.payment_intent_to_cancel(p_intent_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.payment_intent_to_cancel(p_intent_id text) TO cafe_system;

--
-- Name: FUNCTION process_payment_callback(p_source text, p_key text, p_body_sha256 text, p_event text, p_status text, p_order_ref text, p_customer_email text, p_amount numeric, p_items jsonb, p_currency text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.process_payment_callback(p_source text, p_key text, p_body_sha256 text, p_event text, p_status text, p_order_ref text, p_customer_email text, p_amount numeric, p_items jsonb, p_currency text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.process_payment_callback(p_source text, p_key text, p_body_sha256 text, p_event text, p_status text, p_order_ref text, p_customer_email text, p_amount numeric, p_items jsonb, p_currency text) TO cafe_system;

--
-- Name: FUNCTION process_stripe_event(p_source text, p_event_id text, p_body_sha256 text, p_type text, p_action text, p_fields jsonb); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.process_stripe_event(p_source text, p_event_id text, p_body_sha256 text, p_type text, p_action text, p_fields jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.process_stripe_event(p_source text, p_event_id text, p_body_sha256 text, p_type text, p_action text, p_fields jsonb) TO cafe_system;

--
-- Name: FUNCTION purge_failed_deliveries(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.purge_failed_deliveries() FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.purge_failed_deliveries() TO cafe_system;

--
-- Name: FUNCTION purge_idempotency_keys(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.purge_idempotency_keys() FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.purge_idempotency_keys() TO cafe_system;

--
-- Name: FUNCTION purge_sign_in_logs(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.purge_sign_in_logs() FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.purge_sign_in_logs() TO cafe_system;

--
-- Name: FUNCTION raise_alert(p_kind text, p_message text, p_source text, p_order_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.raise_alert(p_kind text, p_message text, p_source text, p_order_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION rank_featured_coffee(p_store_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.rank_featured_coffee(p_store_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION recount_reserved_stock(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.recount_reserved_stock() FROM PUBLIC;

--
-- Name: FUNCTION recount_sales(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.recount_sales() FROM PUBLIC;

--
-- Name: FUNCTION refund_failed(p_id uuid, p_error text, p_permanent boolean); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.refund_failed(p_id uuid, p_error text, p_permanent boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.refund_failed(p_id uuid, p_error text, p_permanent boolean) TO cafe_system;

--
-- Name: FUNCTION refund_payout(p_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.refund_payout(p_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.refund_payout(p_id uuid) TO cafe_system;

--
-- Name: FUNCTION refund_sent(p_id uuid, p_provider_refund_id text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.refund_sent(p_id uuid, p_provider_refund_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.refund_sent(p_id uuid, p_provider_refund_id text) TO cafe_system;

--
-- Name: FUNCTION release_stock(p_order_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.release_stock(p_order_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION request_source(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.request_source() FROM PUBLIC;

--
-- Name: FUNCTION reserved_stock(p_ingredient_id uuid, p_store_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.reserved_stock(p_ingredient_id uuid, p_store_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION return_inventory(p_order_id uuid, p_reason text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.return_inventory(p_order_id uuid, p_reason text) FROM PUBLIC;

--
-- Name: FUNCTION revoke_changed_account(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.revoke_changed_account() FROM PUBLIC;

--
-- Name: FUNCTION revoke_sign_ins(p_account uuid, p_sign_in uuid, p_reason text, p_keep uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.revoke_sign_ins(p_account uuid, p_sign_in uuid, p_reason text, p_keep uuid) FROM PUBLIC;

--
-- Name: FUNCTION role_limit_settings(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.role_limit_settings() FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.role_limit_settings() TO cafe_system;

--
-- Name: FUNCTION sale_counts(p_status app_public.order_status); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.sale_counts(p_status app_public.order_status) FROM PUBLIC;

--
-- Name: FUNCTION sales_hour(p_at timestamp with time zone); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.sales_hour(p_at timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION setting(k text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.setting(k text) FROM PUBLIC;

--
-- Name: FUNCTION source_key(p_source text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.source_key(p_source text) FROM PUBLIC;

--
-- Name: FUNCTION source_limit_factor(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.source_limit_factor() FROM PUBLIC;

--
-- Name: FUNCTION start_preparation(p_order_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.start_preparation(p_order_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.start_preparation(p_order_id uuid) TO cafe_system;

--
-- Name: FUNCTION store_setting(p_store_id uuid, k text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.store_setting(p_store_id uuid, k text) FROM PUBLIC;

--
-- Name: FUNCTION take_inventory(p_order_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.take_inventory(p_order_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.take_inventory(p_order_id uuid) TO cafe_system;

--
-- Name: FUNCTION text_setting(k text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.text_setting(k text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.text_setting(k text) TO cafe_system;

--
-- Name: FUNCTION tg__announce_public_reads(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg__announce_public_reads() FROM PUBLIC;

--
-- Name: FUNCTION tg__count_sales(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg__count_sales() FROM PUBLIC;

--
-- Name: FUNCTION tg__queue_featured(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg__queue_featured() FROM PUBLIC;

--
-- Name: FUNCTION tg__queue_inventory(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg__queue_inventory() FROM PUBLIC;

--
-- Name: FUNCTION tg__queue_inventory_update(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg__queue_inventory_update() FROM PUBLIC;

--
-- Name: FUNCTION tg__store_of_order(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg__store_of_order() FROM PUBLIC;

--
-- Name: FUNCTION tg__timestamps(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg__timestamps() FROM PUBLIC;

--
-- Name: FUNCTION tg__uncount_deleted_order(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg__uncount_deleted_order() FROM PUBLIC;

--
-- Name: FUNCTION tg_audit(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_audit() FROM PUBLIC;

--
-- Name: FUNCTION tg_blocked_sources__notify(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_blocked_sources__notify() FROM PUBLIC;

--
-- Name: FUNCTION tg_coffees__notify_new(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_coffees__notify_new() FROM PUBLIC;

--
-- Name: FUNCTION tg_coffees__queue_public_reads(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_coffees__queue_public_reads() FROM PUBLIC;

--
-- Name: FUNCTION tg_idempotency_keys__limit(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_idempotency_keys__limit() FROM PUBLIC;

--
-- Name: FUNCTION tg_jobs__trace_context(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_jobs__trace_context() FROM PUBLIC;

--
-- Name: FUNCTION tg_notifications__publish(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_notifications__publish() FROM PUBLIC;

--
-- Name: FUNCTION tg_order_items__notify(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_order_items__notify() FROM PUBLIC;

--
-- Name: FUNCTION tg_order_items__reserve_stock(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_order_items__reserve_stock() FROM PUBLIC;

--
-- Name: FUNCTION tg_orders__after_status(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_orders__after_status() FROM PUBLIC;

--
-- Name: FUNCTION tg_orders__cancel_payment_intents(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_orders__cancel_payment_intents() FROM PUBLIC;

--
-- Name: FUNCTION tg_orders__check_transition(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_orders__check_transition() FROM PUBLIC;

--
-- Name: FUNCTION tg_orders__keep_store(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_orders__keep_store() FROM PUBLIC;

--
-- Name: FUNCTION tg_orders__notify(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_orders__notify() FROM PUBLIC;

--
-- Name: FUNCTION tg_orders__notify_customer(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_orders__notify_customer() FROM PUBLIC;

--
-- Name: FUNCTION tg_orders__release_stock(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_orders__release_stock() FROM PUBLIC;

--
-- Name: FUNCTION tg_public_read_changes__announce(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_public_read_changes__announce() FROM PUBLIC;

--
-- Name: FUNCTION tg_refunds__provider(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_refunds__provider() FROM PUBLIC;

--
-- Name: FUNCTION tg_refunds__queue_payout(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_refunds__queue_payout() FROM PUBLIC;

--
-- Name: FUNCTION tg_role_limits__announce(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_role_limits__announce() FROM PUBLIC;

--
-- Name: FUNCTION tg_role_limits__keep(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_role_limits__keep() FROM PUBLIC;

--
-- Name: FUNCTION tg_settings__check(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_settings__check() FROM PUBLIC;

--
-- Name: FUNCTION tg_stores__check(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_stores__check() FROM PUBLIC;

--
-- Name: FUNCTION tg_stores__queue_inventory(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.tg_stores__queue_inventory() FROM PUBLIC;

--
-- Name: FUNCTION to_minor_units(p_amount numeric, p_currency text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.to_minor_units(p_amount numeric, p_currency text) FROM PUBLIC;

--
-- Name: FUNCTION transaction_changed_rows(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.transaction_changed_rows() FROM PUBLIC;

--
-- Name: FUNCTION walk_in_customer_id(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.walk_in_customer_id() FROM PUBLIC;

--
-- Name: FUNCTION worker_heartbeat(p_process text, p_worker_ids text[]); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.worker_heartbeat(p_process text, p_worker_ids text[]) FROM PUBLIC;

--
-- Name: FUNCTION xact_changed_rows_so_far(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.xact_changed_rows_so_far() FROM PUBLIC;

--
-- Name: TABLE options; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.options TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.options TO cafe_customer;
GRANT SELECT ON TABLE app_public.options TO cafe_barista;
GRANT SELECT ON TABLE app_public.options TO cafe_admin;
GRANT SELECT ON TABLE app_public.options TO cafe_system;

--
-- Name: FUNCTION add_option(p_group_id uuid, p_name text, p_price_delta numeric, p_is_default boolean, p_ingredient_id uuid, p_ingredient_amount numeric, p_recipe_factor numeric); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.add_option(p_group_id uuid, p_name text, p_price_delta numeric, p_is_default boolean, p_ingredient_id uuid, p_ingredient_amount numeric, p_recipe_factor numeric) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.add_option(p_group_id uuid, p_name text, p_price_delta numeric, p_is_default boolean, p_ingredient_id uuid, p_ingredient_amount numeric, p_recipe_factor numeric) TO cafe_admin;

--
-- Name: TABLE option_groups; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.option_groups TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.option_groups TO cafe_customer;
GRANT SELECT ON TABLE app_public.option_groups TO cafe_barista;
GRANT SELECT ON TABLE app_public.option_groups TO cafe_admin;
GRANT SELECT ON TABLE app_public.option_groups TO cafe_system;

--
-- Name: FUNCTION add_option_group(p_name text, p_min_selections integer, p_max_selections integer, p_coffee_ids uuid[]); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.add_option_group(p_name text, p_min_selections integer, p_max_selections integer, p_coffee_ids uuid[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.add_option_group(p_name text, p_min_selections integer, p_max_selections integer, p_coffee_ids uuid[]) TO cafe_admin;

--
-- Name: FUNCTION add_store(p_name text, p_time_zone text, p_address text); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.add_store(p_name text, p_time_zone text, p_address text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.add_store(p_name text, p_time_zone text, p_address text) TO cafe_admin;

--
-- Name: FUNCTION assign_staff(p_account_id uuid, p_store_id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.assign_staff(p_account_id uuid, p_store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.assign_staff(p_account_id uuid, p_store_id uuid) TO cafe_admin;

--
-- Name: TABLE baristas; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.baristas TO cafe_customer;
GRANT SELECT ON TABLE app_public.baristas TO cafe_barista;
GRANT SELECT ON TABLE app_public.baristas TO cafe_admin;
GRANT SELECT ON TABLE app_public.baristas TO cafe_system;
GRANT SELECT ON TABLE app_public.baristas TO cafe_anonymous;

--
-- Name: FUNCTION baristas_stores(b app_public.baristas); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.baristas_stores(b app_public.baristas) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.baristas_stores(b app_public.baristas) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.baristas_stores(b app_public.baristas) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.baristas_stores(b app_public.baristas) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.baristas_stores(b app_public.baristas) TO cafe_admin;

--
-- Name: FUNCTION cancel_order(p_id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.cancel_order(p_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.cancel_order(p_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.cancel_order(p_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.cancel_order(p_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.cancel_order(p_id uuid) TO cafe_admin;

--
-- Name: FUNCTION coffee_by_id(id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.coffee_by_id(id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.coffee_by_id(id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.coffee_by_id(id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.coffee_by_id(id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.coffee_by_id(id uuid) TO cafe_admin;

--
-- Name: FUNCTION coffee_list(category app_public.coffee_category); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.coffee_list(category app_public.coffee_category) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.coffee_list(category app_public.coffee_category) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.coffee_list(category app_public.coffee_category) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.coffee_list(category app_public.coffee_category) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.coffee_list(category app_public.coffee_category) TO cafe_admin;

--
-- Name: FUNCTION coffees_available_at(c app_public.coffees, store_id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.coffees_available_at(c app_public.coffees, store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.coffees_available_at(c app_public.coffees, store_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.coffees_available_at(c app_public.coffees, store_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.coffees_available_at(c app_public.coffees, store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.coffees_available_at(c app_public.coffees, store_id uuid) TO cafe_admin;

--
-- Name: FUNCTION coffees_cost(c app_public.coffees); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.coffees_cost(c app_public.coffees) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.coffees_cost(c app_public.coffees) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.coffees_cost(c app_public.coffees) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.coffees_cost(c app_public.coffees) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.coffees_cost(c app_public.coffees) TO cafe_admin;

--
-- Name: TABLE ingredients; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.ingredients TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.ingredients TO cafe_customer;
GRANT SELECT ON TABLE app_public.ingredients TO cafe_barista;
GRANT SELECT ON TABLE app_public.ingredients TO cafe_admin;
GRANT SELECT ON TABLE app_public.ingredients TO cafe_system;

--
-- Name: FUNCTION coffees_ingredients(c app_public.coffees); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.coffees_ingredients(c app_public.coffees) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.coffees_ingredients(c app_public.coffees) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.coffees_ingredients(c app_public.coffees) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.coffees_ingredients(c app_public.coffees) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.coffees_ingredients(c app_public.coffees) TO cafe_admin;

--
-- Name: FUNCTION coffees_inventory(c app_public.coffees, store_id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.coffees_inventory(c app_public.coffees, store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.coffees_inventory(c app_public.coffees, store_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.coffees_inventory(c app_public.coffees, store_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.coffees_inventory(c app_public.coffees, store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.coffees_inventory(c app_public.coffees, store_id uuid) TO cafe_admin;

--
-- Name: FUNCTION coffees_margin(c app_public.coffees); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.coffees_margin(c app_public.coffees) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.coffees_margin(c app_public.coffees) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.coffees_margin(c app_public.coffees) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.coffees_margin(c app_public.coffees) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.coffees_margin(c app_public.coffees) TO cafe_admin;

--
-- Name: FUNCTION coffees_option_groups(c app_public.coffees); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.coffees_option_groups(c app_public.coffees) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.coffees_option_groups(c app_public.coffees) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.coffees_option_groups(c app_public.coffees) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.coffees_option_groups(c app_public.coffees) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.coffees_option_groups(c app_public.coffees) TO cafe_admin;

--
-- Name: TABLE reviews; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.reviews TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.reviews TO cafe_customer;
GRANT SELECT ON TABLE app_public.reviews TO cafe_barista;
GRANT SELECT ON TABLE app_public.reviews TO cafe_admin;
GRANT SELECT ON TABLE app_public.reviews TO cafe_system;

--
-- Name: FUNCTION coffees_reviews(c app_public.coffees, "limit" integer); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.coffees_reviews(c app_public.coffees, "limit" integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.coffees_reviews(c app_public.coffees, "limit" integer) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.coffees_reviews(c app_public.coffees, "limit" integer) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.coffees_reviews(c app_public.coffees, "limit" integer) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.coffees_reviews(c app_public.coffees, "limit" integer) TO cafe_admin;

--
-- Name: FUNCTION coffees_sales_data(c app_public.coffees); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.coffees_sales_data(c app_public.coffees) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.coffees_sales_data(c app_public.coffees) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.coffees_sales_data(c app_public.coffees) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.coffees_sales_data(c app_public.coffees) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.coffees_sales_data(c app_public.coffees) TO cafe_admin;

--
-- Name: FUNCTION coffees_seasonal_ingredients(c app_public.coffees); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.coffees_seasonal_ingredients(c app_public.coffees) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.coffees_seasonal_ingredients(c app_public.coffees) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.coffees_seasonal_ingredients(c app_public.coffees) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.coffees_seasonal_ingredients(c app_public.coffees) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.coffees_seasonal_ingredients(c app_public.coffees) TO cafe_admin;

--
-- Name: FUNCTION coffees_store_price(c app_public.coffees, store_id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.coffees_store_price(c app_public.coffees, store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.coffees_store_price(c app_public.coffees, store_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.coffees_store_price(c app_public.coffees, store_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.coffees_store_price(c app_public.coffees, store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.coffees_store_price(c app_public.coffees, store_id uuid) TO cafe_admin;

--
-- Name: TABLE suppliers; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.suppliers TO cafe_admin;
GRANT SELECT ON TABLE app_public.suppliers TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.suppliers TO cafe_customer;
GRANT SELECT ON TABLE app_public.suppliers TO cafe_barista;

--
-- Name: FUNCTION coffees_supplier(c app_public.coffees); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.coffees_supplier(c app_public.coffees) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.coffees_supplier(c app_public.coffees) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.coffees_supplier(c app_public.coffees) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.coffees_supplier(c app_public.coffees) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.coffees_supplier(c app_public.coffees) TO cafe_admin;

--
-- Name: FUNCTION create_coffee(p_name text, p_price numeric, p_roast app_public.roast_level, p_category app_public.coffee_category, p_roaster_id uuid, p_description text, p_image_url text, p_available boolean, p_limited_time_offer boolean); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.create_coffee(p_name text, p_price numeric, p_roast app_public.roast_level, p_category app_public.coffee_category, p_roaster_id uuid, p_description text, p_image_url text, p_available boolean, p_limited_time_offer boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.create_coffee(p_name text, p_price numeric, p_roast app_public.roast_level, p_category app_public.coffee_category, p_roaster_id uuid, p_description text, p_image_url text, p_available boolean, p_limited_time_offer boolean) TO cafe_admin;

--
-- Name: FUNCTION create_order(p_items jsonb, p_input_notes text, p_coffee_id uuid, p_quantity integer, p_notes text, p_customer_id uuid, p_store_id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.create_order(p_items jsonb, p_input_notes text, p_coffee_id uuid, p_quantity integer, p_notes text, p_customer_id uuid, p_store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.create_order(p_items jsonb, p_input_notes text, p_coffee_id uuid, p_quantity integer, p_notes text, p_customer_id uuid, p_store_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.create_order(p_items jsonb, p_input_notes text, p_coffee_id uuid, p_quantity integer, p_notes text, p_customer_id uuid, p_store_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.create_order(p_items jsonb, p_input_notes text, p_coffee_id uuid, p_quantity integer, p_notes text, p_customer_id uuid, p_store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.create_order(p_items jsonb, p_input_notes text, p_coffee_id uuid, p_quantity integer, p_notes text, p_customer_id uuid, p_store_id uuid) TO cafe_admin;

--
-- Name: FUNCTION current_actor(); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.current_actor() FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.current_actor() TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.current_actor() TO cafe_customer;
GRANT ALL ON FUNCTION app_public.current_actor() TO cafe_barista;
GRANT ALL ON FUNCTION app_public.current_actor() TO cafe_admin;
GRANT ALL ON FUNCTION app_public.current_actor() TO cafe_system;

--
-- Name: TABLE customers; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.customers TO cafe_customer;
GRANT SELECT ON TABLE app_public.customers TO cafe_barista;
GRANT SELECT ON TABLE app_public.customers TO cafe_admin;
GRANT SELECT ON TABLE app_public.customers TO cafe_system;
GRANT SELECT ON TABLE app_public.customers TO cafe_anonymous;

--
-- Name: FUNCTION current_customer(); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.current_customer() FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.current_customer() TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.current_customer() TO cafe_customer;
GRANT ALL ON FUNCTION app_public.current_customer() TO cafe_barista;
GRANT ALL ON FUNCTION app_public.current_customer() TO cafe_admin;

--
-- Name: FUNCTION current_user_id(); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.current_user_id() FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.current_user_id() TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.current_user_id() TO cafe_customer;
GRANT ALL ON FUNCTION app_public.current_user_id() TO cafe_barista;
GRANT ALL ON FUNCTION app_public.current_user_id() TO cafe_admin;
GRANT ALL ON FUNCTION app_public.current_user_id() TO cafe_system;

--
-- Name: FUNCTION customer_by_email(email text); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.customer_by_email(email text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.customer_by_email(email text) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.customer_by_email(email text) TO cafe_admin;

--
-- Name: FUNCTION customers_recent_orders(c app_public.customers, "limit" integer); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.customers_recent_orders(c app_public.customers, "limit" integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.customers_recent_orders(c app_public.customers, "limit" integer) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.customers_recent_orders(c app_public.customers, "limit" integer) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.customers_recent_orders(c app_public.customers, "limit" integer) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.customers_recent_orders(c app_public.customers, "limit" integer) TO cafe_admin;

--
-- Name: FUNCTION featured_coffee(store_id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.featured_coffee(store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.featured_coffee(store_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.featured_coffee(store_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.featured_coffee(store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.featured_coffee(store_id uuid) TO cafe_admin;

--
-- Name: TABLE stock_items; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.stock_items TO cafe_barista;
GRANT SELECT ON TABLE app_public.stock_items TO cafe_admin;
GRANT SELECT ON TABLE app_public.stock_items TO cafe_system;
GRANT SELECT ON TABLE app_public.stock_items TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.stock_items TO cafe_customer;

--
-- Name: FUNCTION ingredients_stock_item(i app_public.ingredients, store_id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.ingredients_stock_item(i app_public.ingredients, store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.ingredients_stock_item(i app_public.ingredients, store_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.ingredients_stock_item(i app_public.ingredients, store_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.ingredients_stock_item(i app_public.ingredients, store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.ingredients_stock_item(i app_public.ingredients, store_id uuid) TO cafe_admin;

--
-- Name: FUNCTION is_admin(); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.is_admin() FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.is_admin() TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.is_admin() TO cafe_customer;
GRANT ALL ON FUNCTION app_public.is_admin() TO cafe_barista;
GRANT ALL ON FUNCTION app_public.is_admin() TO cafe_admin;
GRANT ALL ON FUNCTION app_public.is_admin() TO cafe_system;

--
-- Name: FUNCTION is_staff(); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.is_staff() FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.is_staff() TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.is_staff() TO cafe_customer;
GRANT ALL ON FUNCTION app_public.is_staff() TO cafe_barista;
GRANT ALL ON FUNCTION app_public.is_staff() TO cafe_admin;
GRANT ALL ON FUNCTION app_public.is_staff() TO cafe_system;

--
-- Name: FUNCTION is_store_admin(p_store_id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.is_store_admin(p_store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.is_store_admin(p_store_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.is_store_admin(p_store_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.is_store_admin(p_store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.is_store_admin(p_store_id uuid) TO cafe_admin;
GRANT ALL ON FUNCTION app_public.is_store_admin(p_store_id uuid) TO cafe_system;

--
-- Name: FUNCTION low_stock_items(store_id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.low_stock_items(store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.low_stock_items(store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.low_stock_items(store_id uuid) TO cafe_admin;

--
-- Name: FUNCTION mark_order_paid(p_id uuid, p_method app_public.payment_method); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.mark_order_paid(p_id uuid, p_method app_public.payment_method) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.mark_order_paid(p_id uuid, p_method app_public.payment_method) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.mark_order_paid(p_id uuid, p_method app_public.payment_method) TO cafe_admin;

--
-- Name: FUNCTION menu_items(store_id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.menu_items(store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.menu_items(store_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.menu_items(store_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.menu_items(store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.menu_items(store_id uuid) TO cafe_admin;

--
-- Name: TABLE refunds; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.refunds TO cafe_admin;
GRANT SELECT ON TABLE app_public.refunds TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.refunds TO cafe_customer;
GRANT SELECT ON TABLE app_public.refunds TO cafe_barista;

--
-- Name: FUNCTION open_refunds(); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.open_refunds() FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.open_refunds() TO cafe_admin;

--
-- Name: FUNCTION option_groups_options(g app_public.option_groups); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.option_groups_options(g app_public.option_groups) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.option_groups_options(g app_public.option_groups) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.option_groups_options(g app_public.option_groups) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.option_groups_options(g app_public.option_groups) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.option_groups_options(g app_public.option_groups) TO cafe_admin;

--
-- Name: FUNCTION options_available(o app_public.options, store_id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.options_available(o app_public.options, store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.options_available(o app_public.options, store_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.options_available(o app_public.options, store_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.options_available(o app_public.options, store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.options_available(o app_public.options, store_id uuid) TO cafe_admin;

--
-- Name: FUNCTION options_inventory(o app_public.options, store_id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.options_inventory(o app_public.options, store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.options_inventory(o app_public.options, store_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.options_inventory(o app_public.options, store_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.options_inventory(o app_public.options, store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.options_inventory(o app_public.options, store_id uuid) TO cafe_admin;

--
-- Name: FUNCTION order_by_id(id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.order_by_id(id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.order_by_id(id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.order_by_id(id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.order_by_id(id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.order_by_id(id uuid) TO cafe_admin;

--
-- Name: TABLE order_items; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.order_items TO cafe_customer;
GRANT SELECT ON TABLE app_public.order_items TO cafe_barista;
GRANT SELECT ON TABLE app_public.order_items TO cafe_admin;
GRANT SELECT ON TABLE app_public.order_items TO cafe_system;
GRANT SELECT ON TABLE app_public.order_items TO cafe_anonymous;

--
-- Name: FUNCTION order_items_line_total(oi app_public.order_items); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.order_items_line_total(oi app_public.order_items) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.order_items_line_total(oi app_public.order_items) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.order_items_line_total(oi app_public.order_items) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.order_items_line_total(oi app_public.order_items) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.order_items_line_total(oi app_public.order_items) TO cafe_admin;

--
-- Name: FUNCTION order_items_options(oi app_public.order_items); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.order_items_options(oi app_public.order_items) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.order_items_options(oi app_public.order_items) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.order_items_options(oi app_public.order_items) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.order_items_options(oi app_public.order_items) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.order_items_options(oi app_public.order_items) TO cafe_admin;

--
-- Name: FUNCTION order_status_message(s app_public.order_status); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.order_status_message(s app_public.order_status) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.order_status_message(s app_public.order_status) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.order_status_message(s app_public.order_status) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.order_status_message(s app_public.order_status) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.order_status_message(s app_public.order_status) TO cafe_admin;
GRANT ALL ON FUNCTION app_public.order_status_message(s app_public.order_status) TO cafe_system;

--
-- Name: FUNCTION orders_order(o app_public.orders); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.orders_order(o app_public.orders) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.orders_order(o app_public.orders) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.orders_order(o app_public.orders) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.orders_order(o app_public.orders) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.orders_order(o app_public.orders) TO cafe_admin;

--
-- Name: TABLE payment_alerts; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.payment_alerts TO cafe_admin;
GRANT SELECT ON TABLE app_public.payment_alerts TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.payment_alerts TO cafe_customer;
GRANT SELECT ON TABLE app_public.payment_alerts TO cafe_barista;

--
-- Name: FUNCTION payment_alert_list("limit" integer); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.payment_alert_list("limit" integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.payment_alert_list("limit" integer) TO cafe_admin;

--
-- Name: FUNCTION restock_ingredient(p_ingredient_id uuid, p_amount numeric, p_reason text, p_store_id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.restock_ingredient(p_ingredient_id uuid, p_amount numeric, p_reason text, p_store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.restock_ingredient(p_ingredient_id uuid, p_amount numeric, p_reason text, p_store_id uuid) TO cafe_admin;

--
-- Name: FUNCTION search_coffees(query text, name text); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.search_coffees(query text, name text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.search_coffees(query text, name text) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.search_coffees(query text, name text) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.search_coffees(query text, name text) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.search_coffees(query text, name text) TO cafe_admin;

--
-- Name: FUNCTION search_customers(query text); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.search_customers(query text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.search_customers(query text) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.search_customers(query text) TO cafe_admin;

--
-- Name: FUNCTION seasonal_drinks(store_id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.seasonal_drinks(store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.seasonal_drinks(store_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.seasonal_drinks(store_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.seasonal_drinks(store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.seasonal_drinks(store_id uuid) TO cafe_admin;

--
-- Name: FUNCTION set_coffee_available(p_id uuid, p_available boolean, p_store_id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.set_coffee_available(p_id uuid, p_available boolean, p_store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.set_coffee_available(p_id uuid, p_available boolean, p_store_id uuid) TO cafe_admin;

--
-- Name: FUNCTION set_option_available(p_store_id uuid, p_option_id uuid, p_available boolean); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.set_option_available(p_store_id uuid, p_option_id uuid, p_available boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.set_option_available(p_store_id uuid, p_option_id uuid, p_available boolean) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.set_option_available(p_store_id uuid, p_option_id uuid, p_available boolean) TO cafe_admin;

--
-- Name: FUNCTION set_stock_alert_level(p_ingredient_id uuid, p_alert_level numeric, p_store_id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.set_stock_alert_level(p_ingredient_id uuid, p_alert_level numeric, p_store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.set_stock_alert_level(p_ingredient_id uuid, p_alert_level numeric, p_store_id uuid) TO cafe_admin;

--
-- Name: FUNCTION set_store_price(p_store_id uuid, p_coffee_id uuid, p_price numeric); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.set_store_price(p_store_id uuid, p_coffee_id uuid, p_price numeric) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.set_store_price(p_store_id uuid, p_coffee_id uuid, p_price numeric) TO cafe_admin;

--
-- Name: FUNCTION settle_refund(p_id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.settle_refund(p_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.settle_refund(p_id uuid) TO cafe_admin;

--
-- Name: FUNCTION staff_store_ids(); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.staff_store_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.staff_store_ids() TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.staff_store_ids() TO cafe_customer;
GRANT ALL ON FUNCTION app_public.staff_store_ids() TO cafe_barista;
GRANT ALL ON FUNCTION app_public.staff_store_ids() TO cafe_admin;
GRANT ALL ON FUNCTION app_public.staff_store_ids() TO cafe_system;

--
-- Name: FUNCTION stock_item_by_ingredient_id(ingredient_id uuid, store_id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.stock_item_by_ingredient_id(ingredient_id uuid, store_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.stock_item_by_ingredient_id(ingredient_id uuid, store_id uuid) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.stock_item_by_ingredient_id(ingredient_id uuid, store_id uuid) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.stock_item_by_ingredient_id(ingredient_id uuid, store_id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.stock_item_by_ingredient_id(ingredient_id uuid, store_id uuid) TO cafe_admin;

--
-- Name: FUNCTION store_list(); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.store_list() FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.store_list() TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.store_list() TO cafe_customer;
GRANT ALL ON FUNCTION app_public.store_list() TO cafe_barista;
GRANT ALL ON FUNCTION app_public.store_list() TO cafe_admin;

--
-- Name: FUNCTION update_coffee_price(p_id uuid, p_new_price numeric); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.update_coffee_price(p_id uuid, p_new_price numeric) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.update_coffee_price(p_id uuid, p_new_price numeric) TO cafe_admin;

--
-- Name: FUNCTION update_customer_profile(p_patch jsonb); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.update_customer_profile(p_patch jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.update_customer_profile(p_patch jsonb) TO cafe_anonymous;
GRANT ALL ON FUNCTION app_public.update_customer_profile(p_patch jsonb) TO cafe_customer;
GRANT ALL ON FUNCTION app_public.update_customer_profile(p_patch jsonb) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.update_customer_profile(p_patch jsonb) TO cafe_admin;

--
-- Name: FUNCTION update_order_status(p_id uuid, p_status app_public.order_status); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.update_order_status(p_id uuid, p_status app_public.order_status) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.update_order_status(p_id uuid, p_status app_public.order_status) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.update_order_status(p_id uuid, p_status app_public.order_status) TO cafe_admin;

--
-- Name: FUNCTION update_store(p_id uuid, p_patch jsonb); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.update_store(p_id uuid, p_patch jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.update_store(p_id uuid, p_patch jsonb) TO cafe_admin;

--
-- Name: FUNCTION user_by_id(id uuid); Type: ACL; Schema: app_public; Owner: -
--

REVOKE ALL ON FUNCTION app_public.user_by_id(id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.user_by_id(id uuid) TO cafe_barista;
GRANT ALL ON FUNCTION app_public.user_by_id(id uuid) TO cafe_admin;

--
-- Name: TABLE role_limits; Type: ACL; Schema: app_private; Owner: -
--

GRANT SELECT ON TABLE app_private.role_limits TO cafe_system;

--
-- Name: TABLE coffee_inventory; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.coffee_inventory TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.coffee_inventory TO cafe_customer;
GRANT SELECT ON TABLE app_public.coffee_inventory TO cafe_barista;
GRANT SELECT ON TABLE app_public.coffee_inventory TO cafe_admin;
GRANT SELECT ON TABLE app_public.coffee_inventory TO cafe_system;

--
-- Name: TABLE coffee_option_groups; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.coffee_option_groups TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.coffee_option_groups TO cafe_customer;
GRANT SELECT ON TABLE app_public.coffee_option_groups TO cafe_barista;
GRANT SELECT ON TABLE app_public.coffee_option_groups TO cafe_admin;
GRANT SELECT ON TABLE app_public.coffee_option_groups TO cafe_system;

--
-- Name: TABLE coffee_price_changes; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.coffee_price_changes TO cafe_admin;
GRANT SELECT ON TABLE app_public.coffee_price_changes TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.coffee_price_changes TO cafe_customer;
GRANT SELECT ON TABLE app_public.coffee_price_changes TO cafe_barista;

--
-- Name: TABLE order_events; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.order_events TO cafe_customer;
GRANT SELECT ON TABLE app_public.order_events TO cafe_barista;
GRANT SELECT ON TABLE app_public.order_events TO cafe_admin;
GRANT SELECT ON TABLE app_public.order_events TO cafe_anonymous;

--
-- Name: TABLE order_status_transitions; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.order_status_transitions TO cafe_barista;
GRANT SELECT ON TABLE app_public.order_status_transitions TO cafe_admin;
GRANT SELECT ON TABLE app_public.order_status_transitions TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.order_status_transitions TO cafe_customer;

--
-- Name: TABLE profiles; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.profiles TO cafe_customer;
GRANT SELECT ON TABLE app_public.profiles TO cafe_barista;
GRANT SELECT ON TABLE app_public.profiles TO cafe_admin;
GRANT SELECT ON TABLE app_public.profiles TO cafe_anonymous;

--
-- Name: TABLE recipe_lines; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.recipe_lines TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.recipe_lines TO cafe_customer;
GRANT SELECT ON TABLE app_public.recipe_lines TO cafe_barista;
GRANT SELECT ON TABLE app_public.recipe_lines TO cafe_admin;
GRANT SELECT ON TABLE app_public.recipe_lines TO cafe_system;

--
-- Name: TABLE roasters; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.roasters TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.roasters TO cafe_customer;
GRANT SELECT ON TABLE app_public.roasters TO cafe_barista;
GRANT SELECT ON TABLE app_public.roasters TO cafe_admin;
GRANT SELECT ON TABLE app_public.roasters TO cafe_system;

--
-- Name: TABLE stock_movements; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.stock_movements TO cafe_barista;
GRANT SELECT ON TABLE app_public.stock_movements TO cafe_admin;
GRANT SELECT ON TABLE app_public.stock_movements TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.stock_movements TO cafe_customer;

--
-- Name: TABLE store_coffee_prices; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.store_coffee_prices TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.store_coffee_prices TO cafe_customer;
GRANT SELECT ON TABLE app_public.store_coffee_prices TO cafe_barista;
GRANT SELECT ON TABLE app_public.store_coffee_prices TO cafe_admin;
GRANT SELECT ON TABLE app_public.store_coffee_prices TO cafe_system;

--
-- Name: TABLE store_coffees; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.store_coffees TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.store_coffees TO cafe_customer;
GRANT SELECT ON TABLE app_public.store_coffees TO cafe_barista;
GRANT SELECT ON TABLE app_public.store_coffees TO cafe_admin;
GRANT SELECT ON TABLE app_public.store_coffees TO cafe_system;

--
-- Name: TABLE store_options; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.store_options TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.store_options TO cafe_customer;
GRANT SELECT ON TABLE app_public.store_options TO cafe_barista;
GRANT SELECT ON TABLE app_public.store_options TO cafe_admin;
GRANT SELECT ON TABLE app_public.store_options TO cafe_system;

--
-- Name: TABLE store_staff; Type: ACL; Schema: app_public; Owner: -
--

GRANT SELECT ON TABLE app_public.store_staff TO cafe_anonymous;
GRANT SELECT ON TABLE app_public.store_staff TO cafe_customer;
GRANT SELECT ON TABLE app_public.store_staff TO cafe_barista;
GRANT SELECT ON TABLE app_public.store_staff TO cafe_admin;
GRANT SELECT ON TABLE app_public.store_staff TO cafe_system;

--
-- Name: DEFAULT PRIVILEGES FOR FUNCTIONS; Type: DEFAULT ACL; Schema: -; Owner: -
--

ALTER DEFAULT PRIVILEGES FOR ROLE cafe_owner REVOKE ALL ON FUNCTIONS  FROM PUBLIC;

--
-- PostgreSQL database dump complete
--
