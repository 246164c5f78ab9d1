--! Previous: sha1:a0d496371e19d0b122aac67673ef849a61f56c7b
--! Hash: sha1:2420e73c3cc5386227088cad211a0a0424eafd88
--! Message: inventory and stock sums without re-planning

-- 000014: Coffee.inventory and the stock sums without re-planning per call.
--
-- A SQL function that cannot be inlined (SECURITY DEFINER, SET search_path)
-- is planned again on every call made from inside another function, so
-- Coffee.inventory, which called available_stock -> reserved_stock once per
-- recipe line, spent 1.4 ms a coffee: the kiosk menu of 200 coffees took
-- 280 ms at 10,000 orders. PL/pgSQL keeps its plans for the session; and
-- Coffee.inventory is now one statement per coffee (each ingredient's stock
-- minus what open orders need of it): 50 ms for the 200. Same figures:
-- null without a recipe, ingredients without a stock row never limit.
-- (PostgreSQL cannot inline a scalar function that reads tables, so the
-- menu still pays one statement per coffee.)
drop function if exists app_hidden.stock_available();

create or replace function app_public.coffees_inventory(c app_public.coffees) returns integer
language plpgsql stable security definer set search_path = pg_catalog as $$
begin
  return (
    select case when count(*) = 0 then null
      else greatest(0, min(floor(coalesce(s.current_stock - coalesce(h.amount, 0), 1e9) / rl.quantity)))::integer
    end
    from app_public.recipe_lines rl
    left join app_public.stock_items s on s.ingredient_id = rl.ingredient_id
    left join lateral (
      select sum(oi.quantity * rl2.quantity) as amount
      from app_public.recipe_lines rl2
      join app_public.order_items oi on oi.coffee_id = rl2.coffee_id
      where rl2.ingredient_id = rl.ingredient_id
        and oi.order_id = any (array(select o.id from app_public.orders o
                                    where o.inventory_taken_at is null and o.status not in ('COMPLETED', 'CANCELLED')))
    ) h on true
    where rl.coffee_id = c.id);
end;
$$;

-- The same, for the functions createOrder and the stock checks call.
create or replace function app_private.reserved_stock(p_ingredient_id uuid) returns numeric
language plpgsql stable security definer set search_path = pg_catalog as $$
begin
  return (
    select coalesce(sum(oi.quantity * rl.quantity), 0)
    from app_public.order_items oi
    join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id and rl.ingredient_id = p_ingredient_id
    where oi.order_id = any (array(select o.id from app_public.orders o
                                where o.inventory_taken_at is null and o.status not in ('COMPLETED', 'CANCELLED'))));
end;
$$;

create or replace function app_private.estimate_ready_time(p_items integer) returns timestamptz
language plpgsql stable security definer set search_path = pg_catalog as $$
begin
  return now() + make_interval(secs =>
    app_private.setting('prep_base_seconds')
    + (coalesce((select sum(oi.quantity)
                   from app_public.orders o join app_public.order_items oi on oi.order_id = o.id
                  where o.status in ('PAID', 'PREPARING', 'BREWING')), 0) + p_items)
      * app_private.setting('prep_seconds_per_item')
      / greatest(app_private.setting('prep_parallel_baristas'), 1));
end;
$$;
