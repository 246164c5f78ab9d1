--! Previous: sha1:d54f949ee7a4fb6cdc23e5f1df6ff423be6a96d3
--! Hash: sha1:10f6d4a7cc79bafac03477dd0bbb413390c422b8
--! Message: unpaid orders expire, paid in one place

-- 000016: hardening the order and payment paths against a hostile public.
--
-- 1. Nobody holds stock without paying: an order made by createOrder gets a
--    deadline (orders.expires_at, from pending_order_expiry_seconds as it is
--    then); past it, a PENDING order is cancelled by the worker's sweep
--    (app_private.expire_pending_orders, as cafe_system), which gives its
--    stock back and notifies its subscribers through the usual triggers. A
--    customer holds at most max_open_orders_per_customer unpaid orders and
--    max_open_cups_per_customer unpaid cups of their own (TOO_MANY_OPEN_ORDERS).
-- 2. A payment without an amount never pays; which status means "paid" is
--    decided by the callback route alone (p_event = 'payment.completed').
-- 3. Deliveries refused before authentication (401, 413) do not count
--    towards the provider's burst alert, a blocked source's are not written
--    at all, and failed deliveries are purged after failed_delivery_retention_days.
-- 4. A payment in another currency than the café's (setting `currency`) is
--    refused: 422 CURRENCY_MISMATCH.
-- 5. A refund owed records what was paid and the order's total; more than
--    the total is flagged and raises a refund_above_total alert.

--------------------------------------------------------------------------------
-- Settings (a text value for the currency)
--------------------------------------------------------------------------------

alter table app_private.settings add column if not exists text_value text;
alter table app_private.settings alter column value drop not null;
alter table app_private.settings drop constraint if exists settings_one_value;
alter table app_private.settings add constraint settings_one_value check (num_nonnulls(value, text_value) = 1);

insert into app_private.settings (key, value, text_value, description) values
  ('pending_order_expiry_seconds', 600, null, 'An unpaid order made after a change expires this long after it was made (its expires_at); the worker then cancels it and its stock is free again.'),
  ('max_open_orders_per_customer', 5, null, 'Most unpaid (PENDING) orders a customer may hold that they made themselves; orders staff make at the till do not count.'),
  ('max_open_cups_per_customer', 40, null, 'Most cups in a customer''s own unpaid orders, the new one included.'),
  ('failed_delivery_retention_days', 30, null, 'Refused payment deliveries (outcome rejected) older than this are deleted by the worker (hourly).'),
  ('currency', null, 'EUR', 'The café''s currency (ISO 4217): a payment callback that names another is refused (422 CURRENCY_MISMATCH).')
on conflict (key) do nothing;

drop function if exists app_private.text_setting(text);
create function app_private.text_setting(k text) returns text
language sql stable as $$
  select text_value from app_private.settings where key = k;
$$;
grant execute on function app_private.text_setting(text) to cafe_system;

--------------------------------------------------------------------------------
-- 1. Unpaid orders expire; per-customer caps
--------------------------------------------------------------------------------

alter table app_public.orders add column if not exists expires_at timestamptz;
comment on column app_public.orders.expires_at is 'When this order, if still unpaid (PENDING), is cancelled and its stock freed. Set when it is made; null: it does not expire.';
create index if not exists orders_expiry_idx on app_public.orders (expires_at) where status = 'PENDING' and expires_at is not null;
-- Counting a customer's own open orders (createOrder's caps).
create index if not exists orders_open_by_creator_idx on app_public.orders (customer_id) where status = 'PENDING';

-- Unpaid orders customers and staff made before this migration get their
-- deadline from now (orders a DBA inserted, with no creator, are left as
-- they are).
update app_public.orders
   set expires_at = now() + make_interval(secs => coalesce(app_private.setting('pending_order_expiry_seconds'), 600))
 where status = 'PENDING' and expires_at is null and created_by is not null;

-- Expiry is the system's move.
insert into app_public.order_status_transitions (from_status, to_status, role)
values ('PENDING', 'CANCELLED', 'system') on conflict do nothing;

-- Cancels PENDING orders past their deadline, at most p_limit a call, and
-- returns how many. Called by each worker process every second, as
-- cafe_system (several may share the work: rows locked by another are
-- skipped). SECURITY DEFINER changes the user, not the `role` setting, so
-- the move is the system's and order_status_transitions decides it; the
-- usual triggers free the stock and notify subscribers.
create or replace function app_private.expire_pending_orders(p_limit integer default 500) returns integer
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  n integer;
begin
  with due as (
    select o.id from app_public.orders o
     where o.status = 'PENDING' and o.expires_at <= now()
     order by o.expires_at
     limit greatest(p_limit, 1)
     for update skip locked
  )
  update app_public.orders o set status = 'CANCELLED'
    from due where o.id = due.id;
  get diagnostics n = row_count;
  return n;
end;
$$;
comment on function app_private.expire_pending_orders(integer) is 'Cancels unpaid orders past their expires_at (as the calling role: cafe_system for the worker); returns how many.';
grant execute on function app_private.expire_pending_orders(integer) to cafe_system;

create or replace function app_public.create_order(
  p_items jsonb default null,
  p_input_notes text default null,
  p_coffee_id uuid default null,
  p_quantity integer default null,
  p_notes text default null,
  p_customer_id uuid default null
) returns app_public.orders
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  actor text := app_public.current_actor();
  v_customer_id uuid;
  v_lines jsonb;
  v_notes text;
  v_order app_public.orders;
  v_max_qty integer := app_private.setting('max_quantity_per_line');
  v_max_lines integer := app_private.setting('max_lines_per_order');
  v_max_open integer := app_private.setting('max_open_orders_per_customer');
  v_max_open_cups integer := app_private.setting('max_open_cups_per_customer');
  v_expiry numeric := app_private.setting('pending_order_expiry_seconds');
  v_open integer;
  v_open_cups integer;
  line jsonb;
  v_coffee app_public.coffees;
  v_qty integer;
  v_pos integer := 0;
  v_total numeric(10,2) := 0;
  v_cups integer := 0;
  shortage record;
  v_items jsonb := '[]';
  v_ready timestamptz;
begin
  perform app_hidden.require_signed_in();

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

  -- Validate every line against the menu, at today's prices.
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
    if not v_coffee.available then
      raise exception '% is not on sale.', v_coffee.name using errcode = 'CT003';
    end if;
    v_items := v_items || jsonb_build_object('position', v_pos, 'coffee_id', v_coffee.id, 'quantity', v_qty,
      'unit_price', v_coffee.price, 'special_instructions', nullif(line ->> 'special_instructions', ''));
    v_total := v_total + v_qty * v_coffee.price;
    v_cups := v_cups + v_qty;
  end loop;

  -- A customer's own unpaid orders are capped, in number and in cups (the
  -- new order included). Only orders they made themselves count: orders
  -- staff make at the till (for a walk-in or a named customer) are
  -- supervised, and counting them would let the till block a customer's
  -- app. One customer's orders are checked one at a time (concurrent
  -- requests cannot both slip under the cap).
  if actor = 'customer' then
    perform pg_advisory_xact_lock(hashtextextended('open-orders:' || v_customer_id::text, 0));
    select count(distinct o.id), coalesce(sum(oi.quantity), 0)
      into v_open, v_open_cups
      from app_public.orders o
      left join app_public.order_items oi on oi.order_id = o.id
     where o.customer_id = v_customer_id and o.status = 'PENDING' and o.created_by = v_customer_id;
    if v_open + 1 > v_max_open then
      raise exception 'You have % unpaid orders; pay or cancel one first (at most %).', v_open, v_max_open
        using errcode = 'CT011', detail = json_build_object('open_orders', v_open, 'max_open_orders', v_max_open)::text;
    end if;
    if v_open_cups + v_cups > v_max_open_cups then
      raise exception 'Your unpaid orders would hold % cups; at most % (pay or cancel one first).', v_open_cups + v_cups, v_max_open_cups
        using errcode = 'CT011', detail = json_build_object('open_cups', v_open_cups, 'max_open_cups', v_max_open_cups)::text;
    end if;
  end if;

  v_ready := app_private.estimate_ready_time(v_cups);

  -- Stock. Lock the stock rows this order needs (in a fixed order: no
  -- deadlocks; a concurrent order waits here until the other commits), then
  -- insert the order: its lines add what they need to what open orders hold
  -- (app_private.stock_reserved, by trigger), and refuse it when that is
  -- more than the shelf holds; the exception rolls everything back.
  perform 1 from app_public.stock_items s
   where s.ingredient_id in (
     select rl.ingredient_id from jsonb_array_elements(v_items) l
     join app_public.recipe_lines rl on rl.coffee_id = (l ->> 'coffee_id')::uuid)
   order by s.ingredient_id for update;
  insert into app_public.orders (customer_id, notes, total, estimated_ready_time, created_by, expires_at)
  values (v_customer_id, nullif(v_notes, ''), v_total, v_ready, app_public.current_user_id(),
          now() + make_interval(secs => coalesce(v_expiry, 600)))
  returning * into v_order;
  insert into app_public.order_items (order_id, position, coffee_id, quantity, unit_price, special_instructions)
  select v_order.id, (l ->> 'position')::integer, (l ->> 'coffee_id')::uuid, (l ->> 'quantity')::integer,
         (l ->> 'unit_price')::numeric, l ->> 'special_instructions'
  from jsonb_array_elements(v_items) l;
  select i.name as ingredient, c.name as coffee into shortage
  from app_private.stock_reservations n
  join app_public.stock_items s on s.ingredient_id = n.ingredient_id
  join app_private.stock_reserved r on r.ingredient_id = n.ingredient_id
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
  return v_order;
end;
$$;

--------------------------------------------------------------------------------
-- 3. The delivery log: what a stranger can make us write
--------------------------------------------------------------------------------

-- Refused before we knew who was calling (wrong token or signature, or a
-- body too large to read): counted towards the block of that source, never
-- towards the provider's burst alert; not written at all once the source
-- is blocked.
create or replace function app_private.is_unauthenticated_failure(p_code text) returns boolean
language sql immutable as $$
  select coalesce(p_code in ('UNAUTHORIZED', 'BAD_SIGNATURE', 'PAYLOAD_TOO_LARGE'), false);
$$;
grant execute on function app_private.is_unauthenticated_failure(text) to cafe_system;

create index if not exists payment_deliveries_rejected_idx on app_private.payment_deliveries (received_at) where outcome = 'rejected';

create or replace function app_private.log_delivery(
  p_source text, p_http_status integer, p_outcome text, p_code text, p_reason text,
  p_dedupe_key text default null, p_body_sha256 text default null, p_event text default null, p_order_id uuid default null
) returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  rule app_private.alert_rules;
  n integer;
  unauthenticated boolean := app_private.is_unauthenticated_failure(p_code);
begin
  -- A blocked source's failures are answered 429 and counted in memory by
  -- the route; none is written (the route does not call this for them; this
  -- holds for any other caller too).
  if unauthenticated and app_private.is_source_blocked(p_source) then
    return;
  end if;

  insert into app_private.payment_deliveries (source, http_status, outcome, code, reason, dedupe_key, body_sha256, event, order_id)
  values (p_source, p_http_status, p_outcome, p_code, left(p_reason, 500), p_dedupe_key, p_body_sha256, left(p_event, 100), p_order_id);

  -- Repeated failures before authentication from one source: alert, then
  -- block it (one at a time per source, so concurrent failures alert once).
  if unauthenticated then
    perform pg_advisory_xact_lock(hashtextextended('auth-failures:' || p_source, 0));
    select * into rule from app_private.alert_rules where kind = 'auth_failures';
    select count(*) into n from app_private.payment_deliveries
     where source = p_source and code in ('UNAUTHORIZED', 'BAD_SIGNATURE', 'PAYLOAD_TOO_LARGE')
       and received_at > now() - make_interval(secs => rule.window_seconds);
    if n > rule.threshold and not app_private.is_source_blocked(p_source) then
      insert into app_private.blocked_sources (source, blocked_until, reason)
      values (p_source, now() + make_interval(secs => rule.block_seconds), n || ' authentication failures')
      on conflict (source) do update set blocked_until = excluded.blocked_until, reason = excluded.reason;
      perform app_private.raise_alert('auth_failures',
        format('%s failed authentications from %s in %s s; blocked for %s s.', n, p_source, rule.window_seconds, rule.block_seconds),
        p_source, null);
    end if;
    -- Not the provider's doing: no burst alert.
    return;
  end if;

  -- A burst of the provider's deliveries (authenticated, all sources): one
  -- alert a window.
  select * into rule from app_private.alert_rules where kind = 'burst';
  select count(*) into n from app_private.payment_deliveries
   where received_at > now() - make_interval(secs => rule.window_seconds)
     and not app_private.is_unauthenticated_failure(code);
  if n > rule.threshold then
    insert into app_private.alert_windows (kind, window_start)
    values ('burst', date_bin(make_interval(secs => rule.window_seconds), now(), timestamptz 'epoch'))
    on conflict do nothing;
    if found then
      perform app_private.raise_alert('burst', format('More than %s authenticated callbacks in %s s.', rule.threshold, rule.window_seconds), p_source, null);
    end if;
  end if;
end;
$$;

update app_private.alert_rules set description = 'More authenticated callbacks than this from all sources in the window (refusals before authentication do not count).'
 where kind = 'burst';
update app_private.alert_rules set description = 'Failures before authentication (401, 413) from one source in the window; the source is then blocked for block_seconds, and its failures are no longer written.'
 where kind = 'auth_failures';

-- Refused deliveries older than failed_delivery_retention_days go; run
-- hourly by the worker (crontab task purge_failed_deliveries). Returns how
-- many rows it deleted.
create or replace function app_private.purge_failed_deliveries() returns integer
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  n integer;
begin
  delete from app_private.payment_deliveries
   where outcome = 'rejected'
     and received_at < now() - make_interval(days => coalesce(app_private.setting('failed_delivery_retention_days'), 30)::integer);
  get diagnostics n = row_count;
  return n;
end;
$$;
grant execute on function app_private.purge_failed_deliveries() to cafe_system;

--------------------------------------------------------------------------------
-- 4, 5. Currency; refunds record what was paid
--------------------------------------------------------------------------------

insert into app_private.alert_rules (kind, threshold, window_seconds, block_seconds, description) values
  ('currency_mismatch', 0, 60, 0, 'A payment in another currency than the café''s (settings.currency).'),
  ('refund_above_total', 0, 60, 0, 'A refund owed for more than the order''s total: check with the provider before settling it.')
on conflict (kind) do nothing;

alter table app_public.refunds add column if not exists paid_amount numeric(10,2);
alter table app_public.refunds add column if not exists order_total numeric(10,2);
alter table app_public.refunds add column if not exists above_order_total boolean not null default false;
comment on column app_public.refunds.paid_amount is 'What the payment said was paid (for a payment to an order that could not take it).';
comment on column app_public.refunds.order_total is 'The order''s total when the refund was recorded.';
comment on column app_public.refunds.above_order_total is 'More was paid than the order''s total: check with the provider before settling.';

drop function if exists app_private.process_payment_callback(text, text, text, text, text, text, text, numeric, jsonb);
create or replace function app_private.process_payment_callback(
  p_source text,
  p_key text,
  p_body_sha256 text,
  p_event text,            -- 'payment.completed' when the route decided this is a payment (either shape); else what was sent
  p_status text,           -- shape B's status as sent (null for shape A); logged only
  p_order_ref text,        -- order_id as sent (may be malformed), or null
  p_customer_email text,   -- shape A's data.customer
  p_amount numeric,
  p_items jsonb,           -- shape B's items [{product, quantity}]
  p_currency text default null  -- upper-case ISO 4217 code, or null when none was sent
) returns app_private.callback_result
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  known app_private.processed_payment_keys;
  v_order app_public.orders;
  v_order_id uuid;
  v_matches integer;
  v_customer_email text;
  v_currency text := upper(app_private.text_setting('currency'));
  result app_private.callback_result;
begin
  -- Copies of one delivery, on any process, queue here.
  perform pg_advisory_xact_lock(hashtextextended(p_key, 0));
  select * into known from app_private.processed_payment_keys where key = p_key;
  if known.key is not null then
    if known.body_sha256 <> p_body_sha256 then
      perform app_private.raise_alert('duplicate_key_different_body',
        format('Key %s arrived again with a different body.', p_key), p_source, known.order_id);
    end if;
    result := row(200, 'duplicate', null, 'Already processed.', known.order_id);
    perform app_private.log_delivery(p_source, 200, 'duplicate', null, null, p_key, p_body_sha256, p_event, known.order_id);
    return result;
  end if;

  -- Whether this is a payment is the route's decision (exact comparison, in
  -- src/payments/schema.ts); here it is only read, never re-derived.
  if p_event is distinct from 'payment.completed' then
    -- Logged, not recorded as processed: the key stays free for the event
    -- that pays (providers may reuse one key across a payment's events).
    result := row(200, 'ignored', null, 'Not a completed payment: recorded, nothing done.', null);
    perform app_private.log_delivery(p_source, 200, 'ignored', null,
      result.message || coalesce(format(' (status %s)', left(p_status, 50)), ''), p_key, p_body_sha256, p_event, null);
    return result;
  end if;

  -- A payment without an amount (or, in shape B, without items) never pays.
  if p_amount is null or p_amount <= 0 or (p_status is not null and (p_items is null or jsonb_typeof(p_items) <> 'array' or jsonb_array_length(p_items) = 0)) then
    result := row(400, null, 'VALIDATION_FAILED', 'A payment needs a positive amount (and, with a status, its items).', null);
    perform app_private.log_delivery(p_source, 400, 'rejected', result.code, result.message, p_key, p_body_sha256, p_event, null);
    return result;
  end if;

  -- Which order.
  if p_order_ref is not null then
    if p_order_ref ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
      v_order_id := p_order_ref::uuid;
    end if;
    select * into v_order from app_public.orders where id = v_order_id for update;
    if v_order.id is not null and p_customer_email is not null then
      select a.email::text into v_customer_email from app_private.accounts a where a.id = v_order.customer_id;
      if v_customer_email is null or lower(v_customer_email) <> lower(p_customer_email) then
        v_order := null;
      end if;
    end if;
  else
    select count(*), min(o.id::text)::uuid into v_matches, v_order_id
    from app_public.orders o join app_private.accounts a on a.id = o.customer_id
    where a.email operator(public.=) p_customer_email::public.citext and o.status = 'PENDING' and o.total = p_amount;
    if v_matches > 1 then
      result := row(422, null, 'AMBIGUOUS_ORDER', format('%s pending orders of that customer have that amount; send order_id.', v_matches), null);
    elsif v_matches = 1 then
      select * into v_order from app_public.orders where id = v_order_id for update;
    end if;
  end if;

  if result.code is null and v_order.id is null then
    result := row(422, null, 'ORDER_NOT_FOUND', 'No such order (for that customer).', null);
  end if;

  -- Past its deadline, an unpaid order is cancelled now if the sweep has not
  -- reached it yet (this function runs as cafe_system: the system's move).
  if result.code is null and v_order.status = 'PENDING' and v_order.expires_at <= now() then
    update app_public.orders set status = 'CANCELLED' where id = v_order.id;
    select * into v_order from app_public.orders where id = v_order.id;
  end if;

  if result.code is null and p_currency is not null and p_currency is distinct from v_currency then
    result := row(422, null, 'CURRENCY_MISMATCH', format('The payment is in %s; this café takes %s.', left(p_currency, 3), v_currency), v_order.id);
    perform app_private.raise_alert('currency_mismatch',
      format('Payment of %s %s for order %s; the café takes %s.', p_amount, left(p_currency, 3), v_order.id, v_currency), p_source, v_order.id);
  end if;

  if result.code is null and v_order.status <> 'PENDING' then
    result := row(422, null, 'ORDER_NOT_PAYABLE', format('The order is %s, not PENDING.', v_order.status), v_order.id);
    if v_order.status = 'CANCELLED' then
      -- What was paid is owed back; more than the order's total is flagged.
      insert into app_public.refunds (order_id, amount, reason, source_key, paid_amount, order_total, above_order_total)
      values (v_order.id, p_amount, 'payment received for a cancelled order', p_key, p_amount, v_order.total, p_amount > v_order.total)
      on conflict (source_key) do nothing;
      if found then
        perform app_private.raise_alert('refund_needed',
          format('Payment of %s for cancelled order %s: refund it.', p_amount, v_order.id), p_source, v_order.id);
        if p_amount > v_order.total then
          perform app_private.raise_alert('refund_above_total',
            format('Payment of %s for cancelled order %s, whose total is %s: check with the provider before refunding.', p_amount, v_order.id, v_order.total),
            p_source, v_order.id);
        end if;
      end if;
    elsif v_order.paid_at is not null then
      -- Paid already (by the till or another event): money may have been taken twice.
      perform app_private.raise_alert('multiple_payments',
        format('Another payment for order %s, already paid (%s) and now %s.', v_order.id, coalesce(v_order.payment_method, 'unknown'), v_order.status),
        p_source, v_order.id);
    end if;
  end if;

  if result.code is null and p_amount <> v_order.total then
    result := row(422, null, 'AMOUNT_MISMATCH', format('The amount %s is not the order''s total %s.', p_amount, v_order.total), v_order.id);
    perform app_private.raise_alert('amount_mismatch',
      format('Payment of %s for order %s, whose total is %s.', p_amount, v_order.id, v_order.total), p_source, v_order.id);
  end if;

  if result.code is null and p_items is not null then
    -- Quantities summed per coffee, in any order; product is an id or a name.
    if exists (
      with sent as (
        select c.id as coffee_id, sum((i ->> 'quantity')::integer) as quantity, count(*) filter (where c.id is null) as unknown
        from jsonb_array_elements(p_items) i
        left join app_public.coffees c
          on (i ->> 'product') ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' and c.id::text = lower(i ->> 'product')
          or lower(c.name) = lower(i ->> 'product')
        group by c.id
      ), ordered as (
        select coffee_id, sum(quantity) as quantity from app_public.order_items where order_id = v_order.id group by coffee_id
      )
      select 1 from sent full join ordered using (coffee_id)
      where sent.coffee_id is null or ordered.coffee_id is null or sent.quantity <> ordered.quantity
    ) then
      result := row(422, null, 'ITEMS_MISMATCH', 'The items do not match the order''s lines.', v_order.id);
    end if;
  end if;

  if result.code is not null then
    perform app_private.log_delivery(p_source, result.http_status, 'rejected', result.code, result.message, p_key, p_body_sha256, p_event, result.order_id);
    return result;
  end if;

  perform app_private.mark_paid(v_order.id, 'provider');
  insert into app_private.processed_payment_keys (key, body_sha256, order_id, outcome) values (p_key, p_body_sha256, v_order.id, 'processed');
  result := row(200, 'processed', null, 'Payment recorded.', v_order.id);
  perform app_private.log_delivery(p_source, 200, 'processed', null, null, p_key, p_body_sha256, p_event, v_order.id);
  return result;
end;
$$;
grant execute on function
  app_private.process_payment_callback(text, text, text, text, text, text, text, numeric, jsonb, text)
to cafe_system;
