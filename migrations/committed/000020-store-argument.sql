--! Previous: sha1:e5f1c4f1c71723434b66d8228ff6be7b4e3f6a49
--! Hash: sha1:987b657af623c7644523ff81d3b4d4240d49017c
--! Message: store-argument

--------------------------------------------------------------------------------
-- The nearest enclosing storeId argument (sections as in 000002-stores.sql:
-- 010 stores)
--
-- menuItems(storeId: B) { inventory } answered each coffee's inventory for
-- the request's store (the header, else the default), not B: the nested
-- field has no storeId of its own. When every root field of an operation
-- names the same store, the API sets it as cafe.store_argument
-- (plugins/RequestStorePlugin.ts), and an argument naming no store means it
-- before the X-Store-Id header. It is taken as the root field took it (that
-- field refuses a store that does not exist; staff may read a closed one).
--------------------------------------------------------------------------------

create or replace function app_hidden.store_or_default(p_store_id uuid) returns uuid
language plpgsql stable security definer set search_path = pg_catalog as $$
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
$$;
comment on function app_hidden.store_or_default(uuid) is 'The store an argument names; when it names none, the store every root field of the operation named (cafe.store_argument), else the request''s store (cafe.store_id, from X-Store-Id: refused when unknown or closed), else the default store.';
