--! Previous: sha1:2d83829c6bfe6e950a4e53e7f842be33779f4c93
--! Hash: sha1:385f0644fa5f5dffa39b565fecc8acabb490dd01
--! Message: policy helpers in plpgsql

-- The questions every row-level policy asks, kept plannable once per
-- connection: app_hidden.signed_in_as, app_hidden.staff_is_chain_wide and
-- app_public.staff_store_ids were SQL functions with SECURITY DEFINER and
-- their own search_path, which PostgreSQL cannot inline, so it planned
-- their bodies again in every statement that asked them (0.44 ms a call;
-- a barista's queue delivery asked staff_store_ids three times). As
-- PL/pgSQL they keep their plans for the session (0.11 ms a call). The
-- rules are the same, word for word.

create or replace function app_hidden.signed_in_as(p_role text) returns text
language plpgsql stable security definer set search_path = pg_catalog as $$
declare
  v_claim text := nullif(current_setting('jwt.claims.user_id', true), '');
begin
  if v_claim is null or v_claim !~* '^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$' then
    return 'anonymous';
  end if;
  perform 1 from app_private.accounts a where a.id = v_claim::uuid and a.role = p_role and a.disabled_at is null;
  return case when found then p_role else 'anonymous' end;
end;
$$;

create or replace function app_hidden.staff_is_chain_wide() returns boolean
language plpgsql stable security definer set search_path = pg_catalog as $$
begin
  return coalesce((select b.chain_wide from app_public.baristas b where b.id = app_public.current_user_id()), false);
end;
$$;

create or replace function app_public.staff_store_ids() returns uuid[]
language plpgsql stable security definer set search_path = pg_catalog as $$
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
