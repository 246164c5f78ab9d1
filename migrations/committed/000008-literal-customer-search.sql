--! Previous: sha1:32062a1c06ebc9f05c457f7d17c7163604a18ad8
--! Hash: sha1:69864068e10a7b736ea8dfb04b3591a0f50c723e
--! Message: literal customer search

-- 000008: customer search takes its text literally too (% and _ are not
-- wildcards).

create or replace function app_public.search_customers(query text) returns setof app_public.customers
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
