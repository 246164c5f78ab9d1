--! Previous: sha1:496757db0c175fc0bcf338c33658a26baec2e86b
--! Hash: sha1:52d5021f4920647edc06ee28f17a416145fc3fcd
--! Message: sales report rows bounded

-- A report returns at most p_max_rows rows, like any list (the API passes
-- its page size, which the cost plugin prices): a range with more HOUR or
-- DAY buckets than that is refused (22023, BAD_USER_INPUT: ask for a
-- shorter range or a coarser grouping); COFFEE keeps the best-selling
-- p_max_rows.
drop function if exists app_hidden.sales_report(text, text, text);
create function app_hidden.sales_report(p_from text, p_to text, p_group_by text, p_max_rows integer)
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
      group by c.id, c.name
      order by 4 desc, 1
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
        group by 1
      ) b
      order by b.start
      limit p_max_rows;
  else
    raise exception 'groupBy is HOUR, DAY or COFFEE.' using errcode = '22023';
  end if;
end;
$$;
comment on function app_hidden.sales_report(text, text, text, integer) is
  'Admins only: paid orders (by payment time, provider or till; orders cancelled after payment left out) from p_from (included) to p_to (excluded), per HOUR or DAY of the café''s time zone, or per COFFEE; at most p_max_rows rows.';
grant execute on function app_hidden.sales_report(text, text, text, integer) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;
