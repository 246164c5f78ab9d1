--! Previous: sha1:1905bae6fe798ba476d72802f370e4ddb421710e
--! Hash: sha1:d248d9d6bf28147f31876f36d1129bca1c3cb7f1

--------------------------------------------------------------------------------
-- 907 login roles a deployment owns
--
-- The login roles may carry a prefix per deployment (DATABASE_ROLE_PREFIX,
-- src/db/database.ts: `<prefix>cafe_owner`, `<prefix>cafe_authenticator`):
-- login roles belong to the whole server, and two deployments on one server
-- must not share them. So no SQL names them: who is logged in is told
-- apart by what each role is, the owner of this database (the worker) or
-- not (the API's authenticator, for the payment callback).
--------------------------------------------------------------------------------

-- Who made the change: the signed-in account (e-mail and role) for GraphQL;
-- the payment callback or the worker (both act as cafe_system: the callback
-- logs in as the API's authenticator, the worker as the database's owner);
-- else the database user of a DBA's own session.
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
    return case when session_user::text = (select pg_get_userbyid(d.datdba)::text from pg_database d where d.datname = current_database())
                then 'worker (cafe_system)' else 'payment callback (cafe_system)' end;
  elsif v_role is not null then
    return session_user::text || ' as ' || v_role;
  end if;
  return session_user::text;
end;
$$;
