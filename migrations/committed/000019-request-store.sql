--! Previous: sha1:9f08f8de27813f947e7e6f4ca67f7eb0f7fcd85d
--! Hash: sha1:e5f1c4f1c71723434b66d8228ff6be7b4e3f6a49
--! Message: request-store

--------------------------------------------------------------------------------
-- The store a request is for (sections as in 000002-stores.sql: 010 stores)
--
-- A client names its store once, in the X-Store-Id header (over graphql-ws:
-- connectionParams.storeId); the API sets it as cafe.store_id for the
-- request's transactions (src/requestStore.ts). An argument that names no
-- store now means that store, else the default one: the kiosk's KioskMenu,
-- which has no storeId, sent with X-Store-Id: B is B's menu, prices,
-- availability and inventory. A store the header names that does not exist,
-- is not an id, or is closed is refused (22023: BAD_USER_INPUT), never
-- silently the default. An explicit storeId argument still wins.
--------------------------------------------------------------------------------

create or replace function app_hidden.store_or_default(p_store_id uuid) returns uuid
language plpgsql stable security definer set search_path = pg_catalog as $$
declare
  v_id uuid;
  v_text text;
  v_open boolean;
begin
  if p_store_id is null then
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
$$;
comment on function app_hidden.store_or_default(uuid) is 'The store an argument names; when it names none, the request''s store (cafe.store_id, from X-Store-Id: refused when unknown or closed), else the default store.';
