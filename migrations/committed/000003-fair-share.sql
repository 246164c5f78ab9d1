--! Previous: sha1:d21993d730cebb96f7b4e9766e4642bf11ba1820
--! Hash: sha1:3ea2b4836e0b661f00336377daa47f7b44ed503e
--! Message: fair-share

-- Fair share of what callers fill: a password check's limits are
-- asked before its turn, idempotency keys are stored only for effects and
-- bounded per account and source, and scarce stock is shared per source and
-- kept from brand-new accounts. Sections are numbered as the baseline's
-- (000001-baseline.sql) they belong to.

--------------------------------------------------------------------------------
-- 220 sign-in limits: asked before a password check's turn
--------------------------------------------------------------------------------

-- Raises 'CT004' (RATE_LIMITED) when one more registration from p_source
-- (a source_key) would pass registration_max_per_source within
-- registration_window_seconds. Records nothing.
create function app_private.assert_registration_allowed(p_source text) returns void
language plpgsql stable security definer set search_path = pg_catalog as $$
begin
  if (select count(*) from app_private.registration_attempts
       where source = p_source and attempted_at > now() - make_interval(secs => app_private.setting('registration_window_seconds')))
     >= app_private.setting('registration_max_per_source') * app_private.source_limit_factor() then
    raise exception 'Too many registrations from your address; try again later.' using errcode = 'CT004';
  end if;
end;
$$;

create or replace function app_hidden.note_registration_attempt(p_source text) returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  p_source := app_private.source_key(p_source);
  -- One registration of a source at a time (until its transaction ends):
  -- concurrent tries are counted one after the other.
  perform pg_advisory_xact_lock(hashtextextended('registration source:' || p_source, 0));
  perform app_private.assert_registration_allowed(p_source);
  insert into app_private.registration_attempts (source) values (p_source);
end;
$$;

-- Asked by the API before a password check waits for its turn in the
-- process's queue (src/passwordChecks.ts): a caller its own limits refuse
-- ('CT004') never takes a place there, so a locked-out source cannot crowd
-- out others. The same limits as the check itself (assert_login_allowed, and
-- for a registration assert_registration_allowed); p_email null is the
-- signed-in account (a password change, a new staff account). Records
-- nothing: the check records its attempt, under its locks.
create function app_hidden.assert_password_check_allowed(p_email text, p_source text, p_registration boolean default false) returns void
language plpgsql stable security definer set search_path = pg_catalog as $$
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
grant execute on function app_hidden.assert_password_check_allowed(text,text,boolean) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

--------------------------------------------------------------------------------
-- 110 settings: idempotency keys per owner and window
--------------------------------------------------------------------------------

insert into app_private.setting_definitions (key, kind, min_value, max_value) values
  ('idempotency_keys_per_owner', 'integer', 1, 1000000),
  ('idempotency_key_window_seconds', 'integer', 60, 604800);
insert into app_private.settings (key, value, text_value, description) values
  ('idempotency_keys_per_owner', '600', NULL, 'Idempotency-Keys one owner (a signed-in account; before sign-in, a source, TRUSTED_NETWORK_FACTOR times more inside TRUSTED_NETWORKS) may store within idempotency_key_window_seconds; a mutation with one more new key is refused IDEMPOTENCY_KEY_LIMIT. Only keys of mutations that changed something are stored.'),
  ('idempotency_key_window_seconds', '3600', NULL, 'The window of idempotency_keys_per_owner.');

--------------------------------------------------------------------------------
-- 470 idempotency keys: bounded per owner
--------------------------------------------------------------------------------

-- The owner's keys in the window (idempotency_claim counts them).
create index idempotency_keys_owner_created_idx on app_private.idempotency_keys (owner, created_at);

-- Rows inserted, updated or deleted since this transaction claimed its
-- Idempotency-Key, the claim aside (pg_stat_xact_user_tables counts them as
-- they happen, in subtransactions too): 0 when a mutation changed nothing (a
-- refusal, a logout with an unknown token), whose key is then not stored.
-- On PostgreSQL 15 and later those counters also hold earlier transactions
-- of the same connection not yet flushed to the statistics (a pooled
-- connection's last second), so the count is taken relative to the figure
-- the claim noted (app_private.tg_idempotency_keys__limit, the claim's
-- BEFORE INSERT trigger), which stays put while this transaction runs.
create function app_private.xact_changed_rows_so_far() returns bigint
language sql stable security definer set search_path = pg_catalog as $$
  select coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::bigint
    from pg_catalog.pg_stat_xact_user_tables
   where relid <> 'app_private.idempotency_keys'::regclass;
$$;

create function app_private.transaction_changed_rows() returns bigint
language sql stable security definer set search_path = pg_catalog as $$
  select app_private.xact_changed_rows_so_far() - coalesce(nullif(current_setting('cafe.changed_rows_at_claim', true), '')::bigint, 0);
$$;

-- A new key is refused ('CT012', IDEMPOTENCY_KEY_LIMIT) when its owner
-- already stored idempotency_keys_per_owner keys (times the source's factor
-- before sign-in) within idempotency_key_window_seconds: the rows one caller
-- can make are bounded. A key already stored (a retry: the claim's
-- INSERT ... ON CONFLICT proposes it again) is never refused by it.
create function app_private.tg_idempotency_keys__limit() returns trigger
language plpgsql security definer set search_path = pg_catalog as $$
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
create trigger _100_limit before insert on app_private.idempotency_keys
  for each row execute function app_private.tg_idempotency_keys__limit();

--------------------------------------------------------------------------------
-- 480 idempotency keys: answers, only for effects
--------------------------------------------------------------------------------

-- Deletes the claim this transaction made: a refused mutation (or one that
-- changed nothing) stores no key, so what a caller can store is bounded by
-- what it may change (and by idempotency_keys_per_owner).
create function app_hidden.idempotency_forget(p_key text, p_source text) returns void
language sql volatile security definer set search_path = pg_catalog as $$
  delete from app_private.idempotency_keys
   where owner = app_private.idempotency_owner(p_source) and key = p_key and status = 'claimed';
$$;
grant execute on function app_hidden.idempotency_forget(text,text) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

-- Marks the key this transaction claimed as committed with the mutation's
-- effects (called just before its COMMIT), with what the mutation returned.
-- A mutation that changed nothing (transaction_changed_rows() = 0) stores
-- nothing: its claim is deleted, and the result is false (no answer to
-- write; a retry runs again, harmlessly).
drop function app_hidden.idempotency_committed(text,text,json);
create function app_hidden.idempotency_committed(p_key text, p_source text, p_mutation_result json) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog as $$
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
grant execute on function app_hidden.idempotency_committed(text,text,json) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

-- As the baseline's; a claim whose mutation changed nothing is deleted
-- instead of answered (answered in its own transaction: no payload read).
create or replace function app_hidden.idempotency_store(p_key text, p_source text, p_response json) returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
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
