--! Previous: sha1:dd4b44d8a045eb59b5efc9feed3a61ff91c2af1e
--! Hash: sha1:31a98d6424c6d7433fe595eb3f5684607d287dd6
--! Message: inventory-set-based

--------------------------------------------------------------------------------
-- Coffee.inventory recounted in one set-based statement (sections as in
-- 000005-live-reads.sql: 905 live reads)
--
-- 000018's inventory_of() called line_usage() once per store and coffee: at
-- COMMIT of every order, for every coffee using an ingredient the order
-- reserved (espresso beans: nearly all), 174 ms for the bench's 200 coffees
-- and 2 stores, under the order's stock row locks (bench S3 at 1x: 0 orders
-- answered in 1.5 s). The same figures now come from one statement (10 ms):
-- the recipe scaled by the default options' factors plus their added
-- amounts. Defaults never swap (a swap is relative to the group's default).
--------------------------------------------------------------------------------

create or replace function app_private.inventory_of(p_coffees uuid[]) returns table (store_id uuid, coffee_id uuid, servings integer)
language sql stable security definer set search_path = pg_catalog as $$
  with c as (
    select distinct x.id from unnest(p_coffees) x(id)
  ), defaults as (
    select cg.coffee_id, o.ingredient_id, o.ingredient_amount, o.recipe_factor
    from c join app_public.coffee_option_groups cg on cg.coffee_id = c.id
    join app_public.options o on o.group_id = cg.group_id and o.is_default
  ), factor as (
    select d.coffee_id, round(exp(sum(ln(d.recipe_factor))), 6) as f from defaults d where d.recipe_factor is not null group by d.coffee_id
  ), usage as (
    select u.coffee_id, u.ingredient_id, sum(u.amount) as amount
    from (
      select rl.coffee_id, rl.ingredient_id, rl.quantity * coalesce(f.f, 1) as amount
      from c join app_public.recipe_lines rl on rl.coffee_id = c.id
      left join factor f on f.coffee_id = rl.coffee_id
      union all
      select d.coffee_id, d.ingredient_id, d.ingredient_amount from defaults d where d.ingredient_amount is not null
    ) u
    group by u.coffee_id, u.ingredient_id
  )
  select st.id, c.id,
         case when count(u.ingredient_id) = 0 then null
           else greatest(0, min(floor(coalesce(s.current_stock - coalesce(r.amount, 0), 1e9) / u.amount)))::integer
         end
  from app_public.stores st
  cross join c
  left join usage u on u.coffee_id = c.id
  left join app_public.stock_items s on s.store_id = st.id and s.ingredient_id = u.ingredient_id
  left join app_private.stock_reserved r on r.store_id = st.id and r.ingredient_id = u.ingredient_id
  group by st.id, c.id;
$$;
