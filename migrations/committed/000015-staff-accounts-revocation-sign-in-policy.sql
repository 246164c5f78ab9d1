--! Previous: sha1:2b476c91872011742a83fc68e593382f7e70ef37
--! Hash: sha1:d54f949ee7a4fb6cdc23e5f1df6ff423be6a96d3
--! Message: staff accounts, revocation of access tokens, sign-in policy

-- 000015: staff accounts (added and disabled by an admin or the `npm run cafe`
-- command line), access tokens revoked on every API process (logout, reuse
-- of a refresh token, an account disabled, deleted or its role changed),
-- sign-in lock-out per (account, source) and per source, equal timing for
-- known and unknown e-mails, and a per-source registration throttle.

alter table app_private.accounts add column if not exists disabled_at timestamptz;
comment on column app_private.accounts.disabled_at is 'When the account was disabled: it can no longer sign in, refresh or act.';

delete from app_private.settings where key = 'login_max_failures_per_account';
insert into app_private.settings (key, value, description) values
  ('login_max_failures_per_account_and_source', 5, 'Failed sign-ins for one e-mail from one source within login_window_seconds before that source is refused for that e-mail. Other sources are not affected.'),
  ('password_hash_cost', 10, 'bcrypt cost of stored passwords, and of the dummy hash checked for an unknown e-mail (so both take the same time). Older hashes are upgraded at the next sign-in.'),
  ('registration_max_per_source', 20, 'Registrations tried from one source within registration_window_seconds before further ones are refused.'),
  ('registration_window_seconds', 3600, 'The window (and the wait) of the registration limit.')
on conflict (key) do nothing;
update app_private.settings set description = 'Failed sign-ins from one source (any e-mails) within login_window_seconds before every sign-in from it is refused.'
 where key = 'login_max_failures_per_source';

create index if not exists login_attempts_email_source_idx on app_private.login_attempts (lower(email), source, attempted_at);

--------------------------------------------------------------------------------
-- Passwords
--------------------------------------------------------------------------------

create or replace function app_private.hash_password(p_password text) returns text
language sql volatile security definer set search_path = pg_catalog as $$
  select public.crypt(p_password, public.gen_salt('bf', app_private.setting('password_hash_cost')::integer));
$$;

--------------------------------------------------------------------------------
-- Sign-in lock-out
--------------------------------------------------------------------------------

-- What the limits count per: the client's address, but an IPv6 client's
-- whole /64 (one subscriber's network: rotating addresses inside it must not
-- reset the count); an IPv4-mapped IPv6 address is its IPv4 address.
create or replace function app_private.source_key(p_source text) returns text
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

-- Raises 'CT004' (RATE_LIMITED) while this source has failed too often, for
-- this e-mail or for any. Failures from other sources never count: a
-- stranger guessing the admin's password locks out only themselves.
create or replace function app_private.assert_login_allowed(p_email text, p_source text) returns void
language plpgsql stable security definer set search_path = pg_catalog as $$
declare
  window_start timestamptz := now() - make_interval(secs => app_private.setting('login_window_seconds'));
begin
  if (select count(*) from app_private.login_attempts
       where lower(email) = lower(p_email) and source = p_source and not succeeded and attempted_at > window_start)
     >= app_private.setting('login_max_failures_per_account_and_source')
  or (select count(*) from app_private.login_attempts
       where source = p_source and not succeeded and attempted_at > window_start)
     >= app_private.setting('login_max_failures_per_source') then
    raise exception 'Too many failed sign-ins; try again in % minutes.', ceil(app_private.setting('login_window_seconds') / 60)
      using errcode = 'CT004';
  end if;
end;
$$;

--------------------------------------------------------------------------------
-- Registration throttle
--------------------------------------------------------------------------------

create table if not exists app_private.registration_attempts (
  id bigint generated always as identity primary key,
  source text not null,
  attempted_at timestamptz not null default now()
);
create index if not exists registration_attempts_source_idx on app_private.registration_attempts (source, attempted_at);

-- Called (and committed) before each registration, whatever its outcome: a
-- CONFLICT tells whether an e-mail is registered, so tries count, not
-- successes. Raises 'CT004' (RATE_LIMITED) past the limit.
create or replace function app_hidden.note_registration_attempt(p_source text) returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  p_source := app_private.source_key(p_source);
  if (select count(*) from app_private.registration_attempts
       where source = p_source and attempted_at > now() - make_interval(secs => app_private.setting('registration_window_seconds')))
     >= app_private.setting('registration_max_per_source') then
    raise exception 'Too many registrations from your address; try again later.' using errcode = 'CT004';
  end if;
  insert into app_private.registration_attempts (source) values (p_source);
end;
$$;
grant execute on function app_hidden.note_registration_attempt(text) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- Revoked sign-ins
--------------------------------------------------------------------------------

-- A sign-in is a refresh-token family; its access tokens carry its id (the
-- `sid` claim). Each revoked sign-in is a row here, announced on the
-- `sign_in_revoked` channel; every API process keeps the recent ones in
-- memory and refuses their access tokens.
create table if not exists app_private.revoked_sign_ins (
  sign_in_id uuid primary key,
  account_id uuid not null,
  reason text not null check (reason in ('logout', 'refresh token reused', 'password changed', 'account disabled', 'account deleted', 'role changed')),
  revoked_at timestamptz not null default now()
);
create index if not exists revoked_sign_ins_revoked_at_idx on app_private.revoked_sign_ins (revoked_at);

create or replace function app_private.announce_revoked_sign_in() returns trigger
language plpgsql as $$
begin
  perform pg_notify('sign_in_revoked', json_build_object(
    'sid', new.sign_in_id,
    'at', floor(extract(epoch from new.revoked_at) * 1000)
  )::text);
  return null;
end;
$$;
drop trigger if exists _900_notify on app_private.revoked_sign_ins;
create trigger _900_notify after insert on app_private.revoked_sign_ins
  for each row execute function app_private.announce_revoked_sign_in();

-- Revokes one sign-in (p_sign_in) or every sign-in of an account (but
-- p_keep): its refresh tokens, and, through revoked_sign_ins, its access
-- tokens. Sign-ins whose last token is older than a day (the longest
-- JWT_EXPIRES_IN_SECONDS) have no live access token and are not listed.
create or replace function app_private.revoke_sign_ins(p_account uuid, p_sign_in uuid, p_reason text, p_keep uuid default null) returns integer
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
create or replace function app_private.revoke_changed_account() returns trigger
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
drop trigger if exists _800_revoke_sign_ins on app_private.accounts;
create trigger _800_revoke_sign_ins after update of role, disabled_at on app_private.accounts
  for each row execute function app_private.revoke_changed_account();
-- Before the delete, while the refresh tokens (deleted with it) still say which sign-ins it had.
drop trigger if exists _800_revoke_sign_ins_deleted on app_private.accounts;
create trigger _800_revoke_sign_ins_deleted before delete on app_private.accounts
  for each row execute function app_private.revoke_changed_account();

-- What an API process loads at start-up (and after its LISTEN connection
-- comes back): the sign-ins revoked within the last p_seconds.
create or replace function app_hidden.recent_revoked_sign_ins(p_seconds integer)
returns table (sign_in_id uuid, revoked_at_ms bigint)
language sql stable security definer set search_path = pg_catalog as $$
  select r.sign_in_id, floor(extract(epoch from r.revoked_at) * 1000)::bigint
    from app_private.revoked_sign_ins r
   where r.revoked_at > now() - make_interval(secs => p_seconds);
$$;
grant execute on function app_hidden.recent_revoked_sign_ins(integer) to cafe_system;

--------------------------------------------------------------------------------
-- Sign-in, refresh, logout, password change, registration
--------------------------------------------------------------------------------

do $$
begin
  if not exists (select 1 from pg_attribute where attrelid = 'app_hidden.session'::regclass and attname = 'sign_in_id' and not attisdropped) then
    alter type app_hidden.session add attribute sign_in_id uuid;
  end if;
end;
$$;

-- A new account's e-mail, name and password (register, add_staff_account).
create or replace function app_private.check_new_account(p_email text, p_name text, p_password text) returns void
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

-- Checks a password; the server signs the access token. An unknown e-mail,
-- a disabled account and a wrong password take the same path and the same
-- time: one bcrypt at password_hash_cost (a fresh dummy hash for an unknown
-- e-mail), one check of the limits, one attempt recorded.
create or replace function app_hidden.authenticate(p_email text, p_password text, p_source text default 'unknown') returns app_hidden.session
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
  insert into app_private.login_attempts (email, source, succeeded) values (left(coalesce(p_email, ''), 254), p_source, ok);
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

create or replace function app_hidden.logout(p_token text) returns boolean
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
  update app_private.accounts set password_hash = app_private.hash_password(p_new) where id = account.id;
  -- Every other sign-in ends, access tokens included; this one goes on.
  perform app_private.revoke_sign_ins(account.id, null, 'password changed',
    nullif(current_setting('jwt.claims.sid', true), '')::uuid);
  return true;
end;
$$;

create or replace function app_hidden.register(p_email text, p_password text, p_name text) returns app_hidden.session
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_id uuid;
  v_sign_in uuid := gen_random_uuid();
begin
  perform app_private.check_new_account(p_email, p_name, p_password);
  begin
    insert into app_private.accounts (email, password_hash, role)
    values (lower(p_email), app_private.hash_password(p_password), 'customer')
    returning id into v_id;
  exception when unique_violation then
    raise exception 'That e-mail address is already registered.' using errcode = '23505';
  end;
  insert into app_public.customers (id, name) values (v_id, btrim(p_name));
  insert into app_public.profiles (customer_id) values (v_id);
  return row(v_id, 'customer', app_private.issue_refresh_token(v_id, v_sign_in), v_sign_in)::app_hidden.session;
end;
$$;

--------------------------------------------------------------------------------
-- Staff accounts (admins over GraphQL; operators with `npm run cafe`, as the
-- database owner: current_actor() 'dba')
--------------------------------------------------------------------------------

create or replace function app_hidden.add_staff_account(p_email text, p_name text, p_role text, p_password text) returns uuid
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_id uuid;
begin
  perform app_hidden.require_admin();
  if p_role is null or p_role not in ('barista', 'admin') then
    raise exception 'A staff role is barista or admin.' using errcode = '22023';
  end if;
  perform app_private.check_new_account(p_email, p_name, p_password);
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

-- True when this call disabled the account, false when it already was.
create or replace function app_hidden.disable_account(p_email text) returns boolean
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

create or replace function app_hidden.list_staff()
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

-- Every request role, so that SQL (not a missing grant) answers anonymous
-- callers UNAUTHENTICATED and others FORBIDDEN. list_staff is the command
-- line's (the owner's) only.
grant execute on function app_hidden.add_staff_account(text, text, text, text), app_hidden.disable_account(text)
  to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;
