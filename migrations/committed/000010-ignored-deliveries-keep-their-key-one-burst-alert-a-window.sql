--! Previous: sha1:c328d45ac661b83f6bb0cc9bd296d4c31dc5b0a3
--! Hash: sha1:0883b702d03aa0f3d12412f92c0048e52d6bc535
--! Message: ignored deliveries keep their key, one burst alert a window

-- 000010: an "ignored" delivery (another event kind, a status other than
-- paid) is logged but does not use up its key, so the paying event with the
-- same key is still processed; burst alerts are claimed once a window.

drop table if exists app_private.alert_windows cascade;
create table app_private.alert_windows (
  kind text not null,
  window_start timestamptz not null,
  primary key (kind, window_start)
);

create or replace function app_private.log_delivery(
  p_source text, p_http_status integer, p_outcome text, p_code text, p_reason text,
  p_dedupe_key text default null, p_body_sha256 text default null, p_event text default null, p_order_id uuid default null
) returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  rule app_private.alert_rules;
  n integer;
begin
  insert into app_private.payment_deliveries (source, http_status, outcome, code, reason, dedupe_key, body_sha256, event, order_id)
  values (p_source, p_http_status, p_outcome, p_code, left(p_reason, 500), p_dedupe_key, p_body_sha256, left(p_event, 100), p_order_id);

  -- Repeated authentication failures from one source: alert, then block it
  -- (one at a time per source, so concurrent failures alert once).
  if p_code in ('UNAUTHORIZED', 'BAD_SIGNATURE') then
    perform pg_advisory_xact_lock(hashtextextended('auth-failures:' || p_source, 0));
    select * into rule from app_private.alert_rules where kind = 'auth_failures';
    select count(*) into n from app_private.payment_deliveries
     where source = p_source and code in ('UNAUTHORIZED', 'BAD_SIGNATURE')
       and received_at > now() - make_interval(secs => rule.window_seconds);
    if n > rule.threshold and not app_private.is_source_blocked(p_source) then
      insert into app_private.blocked_sources (source, blocked_until, reason)
      values (p_source, now() + make_interval(secs => rule.block_seconds), n || ' authentication failures')
      on conflict (source) do update set blocked_until = excluded.blocked_until, reason = excluded.reason;
      perform app_private.raise_alert('auth_failures',
        format('%s failed authentications from %s in %s s; blocked for %s s.', n, p_source, rule.window_seconds, rule.block_seconds),
        p_source, null);
    end if;
  end if;

  -- A burst of deliveries (all sources): one alert a window.
  select * into rule from app_private.alert_rules where kind = 'burst';
  select count(*) into n from app_private.payment_deliveries where received_at > now() - make_interval(secs => rule.window_seconds);
  if n > rule.threshold then
    -- One alert a window, even when concurrent deliveries all cross the
    -- threshold: the first to claim the window raises it.
    insert into app_private.alert_windows (kind, window_start)
    values ('burst', date_bin(make_interval(secs => rule.window_seconds), now(), timestamptz 'epoch'))
    on conflict do nothing;
    if found then
      perform app_private.raise_alert('burst', format('More than %s callbacks in %s s.', rule.threshold, rule.window_seconds), p_source, null);
    end if;
  end if;
end;
$$;

create or replace function app_private.process_payment_callback(
  p_source text,
  p_key text,
  p_body_sha256 text,
  p_event text,            -- shape A's event, or 'payment.completed' for shape B
  p_status text,           -- shape B's status (null for shape A)
  p_order_ref text,        -- order_id as sent (may be malformed), or null
  p_customer_email text,   -- shape A's data.customer
  p_amount numeric,
  p_items jsonb            -- shape B's items [{product, quantity}]
) returns app_private.callback_result
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  known app_private.processed_payment_keys;
  v_order app_public.orders;
  v_order_id uuid;
  v_matches integer;
  v_customer_email text;
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

  if p_event is distinct from 'payment.completed' or (p_status is not null and lower(p_status) <> 'paid') then
    -- Logged, not recorded as processed: the key stays free for the event
    -- that pays (providers may reuse one key across a payment's events).
    result := row(200, 'ignored', null, 'Not a completed payment: recorded, nothing done.', null);
    perform app_private.log_delivery(p_source, 200, 'ignored', null, result.message, p_key, p_body_sha256, p_event, null);
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

  if result.code is null and v_order.status <> 'PENDING' then
    result := row(422, null, 'ORDER_NOT_PAYABLE', format('The order is %s, not PENDING.', v_order.status), v_order.id);
    if v_order.status = 'CANCELLED' then
      insert into app_public.refunds (order_id, amount, reason, source_key)
      values (v_order.id, p_amount, 'payment received for a cancelled order', p_key)
      on conflict (source_key) do nothing;
      perform app_private.raise_alert('refund_needed',
        format('Payment of %s for cancelled order %s: refund it.', p_amount, v_order.id), p_source, v_order.id);
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
