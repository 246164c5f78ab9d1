--! Previous: sha1:5e200fcc974b765cb6694ec27fe8c9d5667e3ef5
--! Hash: sha1:da399bdc3e07e12ec2003dba128c8ca7643d74f2
--! Message: literal search terms, RLS decides what connections show

-- 000006: search terms are literal text (a % or _ is not a wildcard); the
-- generated admin connections answer every role with what RLS lets it see
-- (possibly nothing) instead of a permission error.

create or replace function app_public.search_coffees(query text default null, name text default null) returns setof app_public.coffees
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

-- Every table of app_public has RLS with policies per role; the grant only
-- lets a query run, the policies decide which rows it sees.
grant select on all tables in schema app_public to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;
