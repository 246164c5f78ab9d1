--! Previous: sha1:987b657af623c7644523ff81d3b4d4240d49017c
--! Hash: sha1:dd4b44d8a045eb59b5efc9feed3a61ff91c2af1e
--! Message: option-sales

--------------------------------------------------------------------------------
-- salesReport(groupBy: OPTION): the options sold, by name (sections as in
-- 000002-stores.sql: 700 sales)
--
-- The lines' options as ordered (app_private.order_item_options, migration
-- 000018): per option name, the paid orders with it, the cups with it and
-- the money its price deltas took (a negative delta, Small, takes less).
--------------------------------------------------------------------------------

create or replace function app_hidden.sales_report(p_from text, p_to text, p_group_by text, p_max_rows integer, p_store_id uuid default null)
returns table (bucket text, orders integer, cups integer, revenue double precision)
language plpgsql stable security definer set search_path = pg_catalog as $$
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
comment on function app_hidden.sales_report(text, text, text, integer, uuid) is
  'Admins only: paid orders (by payment time, provider or till; orders cancelled after payment left out) from p_from (included) to p_to (excluded), per HOUR or DAY, or per COFFEE, or per OPTION (by name as ordered: cups with it and the money its price deltas took); at most p_max_rows rows. With p_store_id: that store (its admins), in its time zone; without: every store the caller manages (the chain''s admin: the chain), in the chain''s cafe_time_zone.';
grant execute on function app_hidden.sales_report(text,text,text,integer,uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;
