--! Previous: sha1:cefce7f5a1f4e14446b010ddf564fbfb05eeac41
--! Hash: sha1:7d4c0cb17f5c324558cd0ab60bcafba05b02134b
--! Message: fair-stock

-- Fair stock per source: the share of a scarce ingredient that one source
-- (an address; an IPv6 /64) holds through all its accounts is bounded as
-- one account's is, and a brand-new account reserves no scarce stock. The
-- API passes the request's source (src/http/clientAddress.ts's source key,
-- as app_private.source_key() writes it) in the `cafe.source` setting for
-- signed-in requests; each order records it. Sections are numbered as the
-- baseline's (000001-baseline.sql) they belong to.

--------------------------------------------------------------------------------
-- 030 who is calling: the request's source
--------------------------------------------------------------------------------

-- The source of this request (a source_key), or null outside the API (a
-- DBA's session, the worker) and before sign-in. Clients cannot set it:
-- they send GraphQL, not SQL.
create function app_private.request_source() returns text
language sql stable set search_path = pg_catalog as $$
  select case when coalesce(current_setting('cafe.source', true), '') = '' then null
              else app_private.source_key(current_setting('cafe.source', true)) end;
$$;

--------------------------------------------------------------------------------
-- 110 settings: the share per source, the wait of new accounts
--------------------------------------------------------------------------------

insert into app_private.setting_definitions (key, kind, min_value, max_value) values
  ('max_stock_share_percent_per_source', 'numeric', 1, 100),
  ('new_account_scarce_stock_seconds', 'integer', 0, 604800);
insert into app_private.settings (key, value, text_value, description) values
  ('max_stock_share_percent_per_source', '25', NULL, 'Most of an ingredient''s stock on the shelf (percent) that customers'' own orders placed from one source (an address; an IPv6 /64) may hold together, whichever accounts placed them; TRUSTED_NETWORK_FACTOR times more inside TRUSTED_NETWORKS (100 or more: no bound). Counted as max_stock_share_percent is (open orders, and unpaid ones cancelled within stock_share_cooldown_seconds; an order always may hold one cup). Till orders do not count.'),
  ('new_account_scarce_stock_seconds', '600', NULL, 'For this long after registering, an account may not order an ingredient its order would leave at or below its alert level unreserved (stock at or below the alert level, or its last units when the level is 0): RATE_LIMITED with retry_after_seconds. 0: no wait.');

--------------------------------------------------------------------------------
-- 450 placing an order: which source placed it, the share per source, new accounts
--------------------------------------------------------------------------------

-- Kept apart from app_public.orders: an address is nobody's business in the
-- API. Purged with the sign-in logs (sign_in_log_retention_days) once the
-- order holds no stock.
create table app_private.order_sources (
  order_id uuid primary key references app_public.orders on delete cascade,
  source text not null,
  placed_at timestamptz not null default now()
);
comment on table app_private.order_sources is 'Which source (app_private.source_key: an address, an IPv6 /64) placed each order made through the API; the per-source stock share counts by it.';
create index order_sources_source_idx on app_private.order_sources (source, placed_at);
create index order_sources_placed_at_idx on app_private.order_sources (placed_at);

create or replace function app_public.create_order(
  p_items jsonb default null,
  p_input_notes text default null,
  p_coffee_id uuid default null,
  p_quantity integer default null,
  p_notes text default null,
  p_customer_id uuid default null,
  p_store_id uuid default null
) returns app_public.orders
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  actor text := app_public.current_actor();
  v_store app_public.stores;
  v_customer_id uuid;
  v_lines jsonb;
  v_notes text;
  v_order app_public.orders;
  v_max_qty integer := app_private.setting('max_quantity_per_line');
  v_max_lines integer := app_private.setting('max_lines_per_order');
  v_max_open integer;
  v_max_open_cups integer;
  v_expiry numeric;
  v_share numeric;
  v_cooldown numeric;
  v_open integer;
  v_open_cups integer;
  line jsonb;
  v_coffee app_public.coffees;
  v_qty integer;
  v_pos integer := 0;
  v_total numeric(10,2) := 0;
  v_cups integer := 0;
  shortage record;
  hog record;
  v_items jsonb := '[]';
  v_ready timestamptz;
  v_source text := app_private.request_source();
  v_source_share numeric := app_private.setting('max_stock_share_percent_per_source') * app_private.source_limit_factor();
  v_new_account_seconds integer := app_private.setting('new_account_scarce_stock_seconds');
  v_registered_at timestamptz;
  v_wait integer;
  scarce record;
begin
  perform app_hidden.require_signed_in();

  -- Which store: the one named, else the default one; open; staff sell at
  -- their own stores' tills only.
  select * into v_store from app_public.stores where id = app_hidden.store_or_default(p_store_id);
  if not v_store.is_open then
    raise exception 'The store % is closed.', v_store.name using errcode = 'CT003';
  end if;
  if actor in ('barista', 'admin') then
    perform app_hidden.require_store_staff(v_store.id);
  end if;
  v_max_open := app_private.store_setting(v_store.id, 'max_open_orders_per_customer');
  v_max_open_cups := app_private.store_setting(v_store.id, 'max_open_cups_per_customer');
  v_expiry := app_private.store_setting(v_store.id, 'pending_order_expiry_seconds');
  v_share := app_private.store_setting(v_store.id, 'max_stock_share_percent');
  v_cooldown := app_private.store_setting(v_store.id, 'stock_share_cooldown_seconds');

  -- Exactly one form: `input`, or coffeeId + quantity (+ notes).
  if p_items is not null then
    if p_coffee_id is not null or p_quantity is not null or p_notes is not null then
      raise exception 'Give either input or coffeeId/quantity/notes, not both.' using errcode = '22023';
    end if;
    v_lines := p_items;
    v_notes := p_input_notes;
  else
    if p_coffee_id is null or p_quantity is null then
      raise exception 'Give input, or coffeeId and quantity.' using errcode = '22023';
    end if;
    v_lines := jsonb_build_array(jsonb_build_object('coffee_id', p_coffee_id, 'quantity', p_quantity));
    v_notes := p_notes;
  end if;
  if jsonb_typeof(v_lines) <> 'array' or jsonb_array_length(v_lines) < 1 then
    raise exception 'An order needs at least one item.' using errcode = '22023';
  end if;
  if jsonb_array_length(v_lines) > v_max_lines then
    raise exception 'An order may have at most % items.', v_max_lines using errcode = '22023';
  end if;
  if length(v_notes) > 500 then
    raise exception 'Notes may have at most 500 characters.' using errcode = '22023';
  end if;

  -- Whose order: a customer's own; staff choose, else the walk-in customer.
  if actor = 'customer' then
    if p_customer_id is not null and p_customer_id <> app_public.current_user_id() then
      raise exception 'Customers order for themselves.' using errcode = '42501';
    end if;
    v_customer_id := app_public.current_user_id();
  elsif p_customer_id is not null then
    if not exists (select 1 from app_public.customers where id = p_customer_id) then
      raise exception 'No customer with id %.', p_customer_id using errcode = 'P0002';
    end if;
    v_customer_id := p_customer_id;
  else
    v_customer_id := app_private.walk_in_customer_id();
  end if;

  -- Validate every line against the store's menu, at today's prices.
  for line in select value from jsonb_array_elements(v_lines) loop
    v_pos := v_pos + 1;
    v_qty := (line ->> 'quantity')::integer;
    if v_qty is null or v_qty < 1 or v_qty > v_max_qty then
      raise exception 'Quantity must be between 1 and % (item %).', v_max_qty, v_pos using errcode = '22023';
    end if;
    if length(line ->> 'special_instructions') > 200 then
      raise exception 'Special instructions may have at most 200 characters (item %).', v_pos using errcode = '22023';
    end if;
    select * into v_coffee from app_public.coffees where id = (line ->> 'coffee_id')::uuid;
    if v_coffee.id is null then
      raise exception 'No coffee with id % (item %).', line ->> 'coffee_id', v_pos using errcode = 'P0002';
    end if;
    if not app_hidden.on_sale_at(v_coffee, v_store.id) then
      raise exception '% is not on sale.', v_coffee.name using errcode = 'CT003';
    end if;
    v_items := v_items || jsonb_build_object('position', v_pos, 'coffee_id', v_coffee.id, 'quantity', v_qty,
      'unit_price', v_coffee.price, 'special_instructions', nullif(line ->> 'special_instructions', ''));
    v_total := v_total + v_qty * v_coffee.price;
    v_cups := v_cups + v_qty;
  end loop;

  -- A customer's own unpaid orders at this store are capped, in number and
  -- in cups (the new order included), by the store's caps. Only orders they
  -- made themselves count: orders staff make at the till are supervised.
  -- One customer's orders are checked one at a time.
  if actor = 'customer' then
    perform pg_advisory_xact_lock(hashtextextended('open-orders:' || v_customer_id::text, 0));
    select count(distinct o.id), coalesce(sum(oi.quantity), 0)
      into v_open, v_open_cups
      from app_public.orders o
      left join app_public.order_items oi on oi.order_id = o.id
     where o.customer_id = v_customer_id and o.status = 'PENDING' and o.created_by = v_customer_id and o.store_id = v_store.id;
    if v_open + 1 > v_max_open then
      raise exception 'You have % unpaid orders; pay or cancel one first (at most %).', v_open, v_max_open
        using errcode = 'CT011', detail = json_build_object('open_orders', v_open, 'max_open_orders', v_max_open)::text;
    end if;
    if v_open_cups + v_cups > v_max_open_cups then
      raise exception 'Your unpaid orders would hold % cups; at most % (pay or cancel one first).', v_open_cups + v_cups, v_max_open_cups
        using errcode = 'CT011', detail = json_build_object('open_cups', v_open_cups, 'max_open_cups', v_max_open_cups)::text;
    end if;
  end if;

  v_ready := app_private.estimate_ready_time(v_cups, v_store.id);

  -- Stock, at this store. Lock the stock rows this order needs (in a fixed
  -- order: no deadlocks), then insert the order: its lines add what they
  -- need to what open orders hold there (app_private.stock_reserved, by
  -- trigger), and refuse it when that is more than the shelf holds.
  perform 1 from app_public.stock_items s
   where s.store_id = v_store.id and s.ingredient_id in (
     select rl.ingredient_id from jsonb_array_elements(v_items) l
     join app_public.recipe_lines rl on rl.coffee_id = (l ->> 'coffee_id')::uuid)
   order by s.ingredient_id for update;
  insert into app_public.orders (customer_id, notes, total, estimated_ready_time, created_by, expires_at, store_id)
  values (v_customer_id, nullif(v_notes, ''), v_total, v_ready, app_public.current_user_id(),
          now() + make_interval(secs => v_expiry), v_store.id)
  returning * into v_order;
  -- Which source placed it (the per-source share below counts by it).
  if v_source is not null then
    insert into app_private.order_sources (order_id, source) values (v_order.id, v_source);
  end if;
  insert into app_public.order_items (order_id, position, coffee_id, quantity, unit_price, special_instructions)
  select v_order.id, (l ->> 'position')::integer, (l ->> 'coffee_id')::uuid, (l ->> 'quantity')::integer,
         (l ->> 'unit_price')::numeric, l ->> 'special_instructions'
  from jsonb_array_elements(v_items) l;
  select i.name as ingredient, c.name as coffee into shortage
  from app_private.stock_reservations n
  join app_public.stock_items s on s.store_id = n.store_id and s.ingredient_id = n.ingredient_id
  join app_private.stock_reserved r on r.store_id = n.store_id and r.ingredient_id = n.ingredient_id
  join app_public.ingredients i on i.id = n.ingredient_id
  join lateral (
    select min(c.name) as name from app_public.order_items oi
    join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id and rl.ingredient_id = n.ingredient_id
    join app_public.coffees c on c.id = oi.coffee_id
    where oi.order_id = v_order.id
  ) c on true
  where n.order_id = v_order.id and s.current_stock < r.amount
  order by n.ingredient_id
  limit 1;
  if shortage.ingredient is not null then
    raise exception 'Not enough % in stock for %.', shortage.ingredient, shortage.coffee using errcode = 'CT002';
  end if;

  -- A new account (registered less than new_account_scarce_stock_seconds
  -- ago) reserves no scarce stock: an ingredient this order would leave at
  -- or below its alert level unreserved at this store (shelf less what open
  -- orders hold, this one included: low stock, or the last units when the
  -- level is 0). RATE_LIMITED, with the seconds until the account may.
  if actor = 'customer' and v_new_account_seconds > 0 then
    select a.created_at into v_registered_at from app_private.accounts a where a.id = v_customer_id;
    if v_registered_at > now() - make_interval(secs => v_new_account_seconds) then
      select i.name as ingredient into scarce
      from app_private.stock_reservations n
      join app_public.stock_items s on s.store_id = n.store_id and s.ingredient_id = n.ingredient_id
      join app_private.stock_reserved r on r.store_id = n.store_id and r.ingredient_id = n.ingredient_id
      join app_public.ingredients i on i.id = n.ingredient_id
      where n.order_id = v_order.id and s.current_stock - r.amount <= s.alert_level
      order by n.ingredient_id
      limit 1;
      if scarce.ingredient is not null then
        v_wait := greatest(ceil(extract(epoch from v_registered_at + make_interval(secs => v_new_account_seconds) - now())), 1);
        raise exception 'Your account is new: % is scarce, so you may order it in % minutes (or at the counter).', scarce.ingredient, ceil(v_wait / 60.0)
          using errcode = 'CT004', detail = json_build_object('retry_after_seconds', v_wait, 'ingredient', scarce.ingredient,
            'new_account_scarce_stock_seconds', v_new_account_seconds)::text;
      end if;
    end if;
  end if;

  -- Fair share of this store's stock (its max_stock_share_percent and
  -- stock_share_cooldown_seconds): as in the baseline, counted at this store.
  if actor = 'customer' then
    select i.name as ingredient, s.unit, h.held, a.allowed into hog
    from (select n.ingredient_id from app_private.stock_reservations n where n.order_id = v_order.id) mine
    join app_public.stock_items s on s.store_id = v_store.id and s.ingredient_id = mine.ingredient_id
    join app_public.ingredients i on i.id = mine.ingredient_id
    cross join lateral (
      select coalesce((select sum(r.amount) from app_private.stock_reservations r
                        join app_public.orders o on o.id = r.order_id
                       where r.store_id = v_store.id and r.ingredient_id = mine.ingredient_id and o.customer_id = v_customer_id and o.created_by = v_customer_id), 0)
           + coalesce((select sum(oi.quantity * rl.quantity) from app_public.orders o
                        join app_public.order_items oi on oi.order_id = o.id
                        join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id and rl.ingredient_id = mine.ingredient_id
                       where o.customer_id = v_customer_id and o.created_by = v_customer_id and o.store_id = v_store.id
                         and o.status = 'CANCELLED' and o.paid_at is null and o.inventory_taken_at is null
                         and o.updated_at > now() - make_interval(secs => v_cooldown)), 0) as held
    ) h
    cross join lateral (
      select greatest(s.current_stock * v_share / 100,
                      (select max(rl.quantity) from app_public.order_items oi
                        join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id and rl.ingredient_id = mine.ingredient_id
                       where oi.order_id = v_order.id)) as allowed
    ) a
    where h.held > a.allowed
    order by mine.ingredient_id
    limit 1;
    if hog.ingredient is not null then
      raise exception 'Your orders would hold % % of %; one customer may hold at most % (% percent of the stock; cancelled orders count for % minutes).',
        trim_scale(hog.held), hog.unit, hog.ingredient, trim_scale(round(hog.allowed, 3)), trim_scale(v_share),
        ceil(v_cooldown / 60)
        using errcode = 'CT011', detail = json_build_object('ingredient', hog.ingredient, 'held', hog.held, 'max_held', round(hog.allowed, 3),
          'max_stock_share_percent', v_share)::text;
    end if;
  end if;

  -- Fair share per source: what customers' own orders placed from this
  -- order's source (an address, an IPv6 /64), across all their accounts,
  -- hold of an ingredient at this store is bounded as one customer's is,
  -- by max_stock_share_percent_per_source (times TRUSTED_NETWORK_FACTOR
  -- inside TRUSTED_NETWORKS: 100% or more is no bound), counting the same
  -- orders (open, and unpaid ones cancelled within the cool-down). The
  -- stock rows locked above count concurrent orders one after the other.
  if actor = 'customer' and v_source is not null and v_source_share < 100 then
    select i.name as ingredient, s.unit, h.held, a.allowed into hog
    from (select n.ingredient_id from app_private.stock_reservations n where n.order_id = v_order.id) mine
    join app_public.stock_items s on s.store_id = v_store.id and s.ingredient_id = mine.ingredient_id
    join app_public.ingredients i on i.id = mine.ingredient_id
    cross join lateral (
      select coalesce((select sum(r.amount) from app_private.stock_reservations r
                        join app_private.order_sources os on os.order_id = r.order_id
                        join app_public.orders o on o.id = r.order_id
                       where r.store_id = v_store.id and r.ingredient_id = mine.ingredient_id
                         and os.source = v_source and o.created_by = o.customer_id), 0)
           + coalesce((select sum(oi.quantity * rl.quantity) from app_private.order_sources os
                        join app_public.orders o on o.id = os.order_id
                        join app_public.order_items oi on oi.order_id = o.id
                        join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id and rl.ingredient_id = mine.ingredient_id
                       where os.source = v_source and o.created_by = o.customer_id and o.store_id = v_store.id
                         and o.status = 'CANCELLED' and o.paid_at is null and o.inventory_taken_at is null
                         and o.updated_at > now() - make_interval(secs => v_cooldown)), 0) as held
    ) h
    cross join lateral (
      select greatest(s.current_stock * v_source_share / 100,
                      (select max(rl.quantity) from app_public.order_items oi
                        join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id and rl.ingredient_id = mine.ingredient_id
                       where oi.order_id = v_order.id)) as allowed
    ) a
    where h.held > a.allowed
    order by mine.ingredient_id
    limit 1;
    if hog.ingredient is not null then
      raise exception 'Orders from your address would hold % % of %; one address may hold at most % (% percent of the stock; cancelled orders count for % minutes).',
        trim_scale(hog.held), hog.unit, hog.ingredient, trim_scale(round(hog.allowed, 3)), trim_scale(v_source_share),
        ceil(v_cooldown / 60)
        using errcode = 'CT011', detail = json_build_object('ingredient', hog.ingredient, 'held_by_source', hog.held, 'max_held_by_source', round(hog.allowed, 3),
          'max_stock_share_percent_per_source', v_source_share)::text;
    end if;
  end if;
  return v_order;
end;
$$;


--------------------------------------------------------------------------------
-- 720 the worker: upkeep (order sources purged with the sign-in logs)
--------------------------------------------------------------------------------

-- As the baseline's, and the sources of orders placed longer ago than
-- sign_in_log_retention_days that no longer hold stock.
create or replace function app_private.purge_sign_in_logs() returns integer
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  keep interval := make_interval(days => app_private.setting('sign_in_log_retention_days')::integer);
  n integer;
  total integer := 0;
begin
  delete from app_private.login_attempts
   where attempted_at < now() - greatest(keep, make_interval(secs => app_private.setting('login_window_seconds')));
  get diagnostics n = row_count;
  total := total + n;
  delete from app_private.registration_attempts
   where attempted_at < now() - greatest(keep, make_interval(secs => app_private.setting('registration_window_seconds')));
  get diagnostics n = row_count;
  total := total + n;
  delete from app_private.order_sources os
   where os.placed_at < now() - keep
     and not exists (select 1 from app_private.stock_reservations r where r.order_id = os.order_id);
  get diagnostics n = row_count;
  total := total + n;
  delete from app_private.refresh_tokens
   where expires_at < now() - keep or revoked_at < now() - keep;
  get diagnostics n = row_count;
  return total + n;
end;
$$;
