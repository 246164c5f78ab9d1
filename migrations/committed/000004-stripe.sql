--! Previous: sha1:3ea2b4836e0b661f00336377daa47f7b44ed503e
--! Hash: sha1:34747be257cb0ee4a82ffa2bfc260dcc19837063
--! Message: stripe

-- Payments through Stripe (docs/payments.md): the PaymentIntents an order is
-- paid with, Stripe's webhook events mapped onto what the service already
-- does (one transaction each), refunds paid back through Stripe's Refunds API
-- by a job, and the alerts a person must see. Sections as in the baseline.

--------------------------------------------------------------------------------
-- 1010 currencies: minor units
--------------------------------------------------------------------------------

-- Stripe counts amounts in a currency's smallest unit: cents for EUR, yen for
-- JPY (zero-decimal), fils for KWD (three decimals).
create function app_private.currency_exponent(p_currency text) returns integer
language sql immutable set search_path = pg_catalog as $$
  select case
    when upper(p_currency) in ('BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF') then 0
    when upper(p_currency) in ('BHD', 'JOD', 'KWD', 'OMR', 'TND') then 3
    else 2
  end;
$$;
comment on function app_private.currency_exponent(text) is 'Decimals of a currency''s minor unit as Stripe counts them (0 for JPY and the other zero-decimal currencies, 3 for KWD, 2 otherwise).';

create function app_private.to_minor_units(p_amount numeric, p_currency text) returns bigint
language sql immutable set search_path = pg_catalog as $$
  select round(p_amount * power(10::numeric, app_private.currency_exponent(p_currency)))::bigint;
$$;

create function app_private.from_minor_units(p_minor bigint, p_currency text) returns numeric
language sql immutable set search_path = pg_catalog as $$
  select p_minor::numeric / power(10::numeric, app_private.currency_exponent(p_currency));
$$;

--------------------------------------------------------------------------------
-- 1020 settings and alert rules of provider payments
--------------------------------------------------------------------------------

insert into app_private.setting_definitions (key, kind, min_value, max_value) values
  ('refund_backoff_base_seconds', 'numeric', 0.1, 3600),
  ('refund_backoff_max_seconds', 'numeric', 0.1, 86400);

insert into app_private.settings (key, value, text_value, description) values
  ('refund_backoff_base_seconds', '30', NULL, 'Wait before the first retry of a refund the provider''s API did not take (an error, a timeout); it doubles with each failed attempt.'),
  ('refund_backoff_max_seconds', '3600', NULL, 'Longest wait between two attempts of a refund through the provider''s API (attempts go on until it is taken, or settled by hand).');

insert into app_private.alert_rules (kind, threshold, window_seconds, block_seconds, description) values
  ('unknown_order', '0', '60', '0', 'A provider payment for an order the service does not know: refund it from the provider''s dashboard.'),
  ('payment_dispute', '0', '60', '0', 'A customer disputed a payment with their bank (Stripe charge.dispute.created): answer it in the provider''s dashboard.'),
  ('refund_failed', '0', '60', '0', 'The provider refused a refund (or reported it failed): pay it another way, then settle it by hand.'),
  ('refund_failing', '0', '86400', '0', 'A refund owed for longer than window_seconds whose latest attempt through the provider''s API failed (one alert per refund).');

--------------------------------------------------------------------------------
-- 1030 payment intents
--------------------------------------------------------------------------------

-- What a customer pays an order with (startPayment makes one; a webhook may
-- name one made elsewhere). Cancelling or expiring the order cancels its
-- intents not yet paid, through a job (payment_intent__cancel).
create table app_private.payment_intents (
  intent_id text primary key,
  provider text not null default 'stripe',
  order_id uuid not null references app_public.orders on delete cascade,
  amount_minor bigint not null check (amount_minor > 0),
  currency text not null,
  created_at timestamptz not null default now(),
  succeeded_at timestamptz,
  canceled_at timestamptz
);
create index payment_intents_order_id_idx on app_private.payment_intents (order_id);
comment on table app_private.payment_intents is 'The provider''s payment intents of each order: made by startPayment (or named by a webhook), paid, cancelled.';

-- What startPayment may charge for an order: the caller must be its own
-- customer or staff (at the till), and the order PENDING and not past its
-- deadline (staff: of a store they work at). Returns the amount in minor units, the café's currency and the
-- intent already made for that amount, if any.
create type app_hidden.payment_start as (
  order_id uuid,
  amount_minor bigint,
  currency text,
  intent_id text
);

create function app_hidden.payment_start(p_order_id uuid) returns app_hidden.payment_start
language plpgsql stable security definer set search_path = pg_catalog as $$
declare
  v_order app_public.orders;
  v_currency text := upper(app_private.text_setting('currency'));
  result app_hidden.payment_start;
begin
  perform app_hidden.require_signed_in();
  select * into v_order from app_public.orders where id = p_order_id;
  -- Someone else's order does not exist, as far as a customer can tell.
  if v_order.id is null or (app_public.current_actor() = 'customer' and v_order.customer_id is distinct from app_public.current_user_id()) then
    raise exception 'No order with id %.', p_order_id using errcode = 'P0002';
  end if;
  if not (app_public.is_staff() or app_public.current_actor() = 'customer') then
    raise exception 'Only the order''s customer or staff may take its payment.' using errcode = '42501';
  end if;
  -- Staff at the till of the order's store (000002-stores.sql): another
  -- store's order is not theirs to see.
  if app_public.is_staff() and not v_order.store_id = any (app_public.staff_store_ids()) then
    raise exception 'No order with id %.', p_order_id using errcode = 'P0002';
  end if;
  if v_order.status <> 'PENDING' or v_order.expires_at <= now() then
    raise exception 'The order is %, so it cannot be paid.', case when v_order.status = 'PENDING' then 'past its deadline' else v_order.status::text end
      using errcode = 'CT001', detail = json_build_object('from', v_order.status, 'to', 'PAID')::text;
  end if;
  if v_order.total <= 0 then
    raise exception 'The order''s total is %: there is nothing to pay.', v_order.total using errcode = '22023';
  end if;
  result.order_id := v_order.id;
  result.amount_minor := app_private.to_minor_units(v_order.total, v_currency);
  result.currency := v_currency;
  select i.intent_id into result.intent_id from app_private.payment_intents i
   where i.order_id = v_order.id and i.amount_minor = result.amount_minor and i.currency = v_currency and i.canceled_at is null
   order by i.created_at desc limit 1;
  return result;
end;
$$;
comment on function app_hidden.payment_start(uuid) is 'startPayment''s rule: the order''s own customer or staff, a PENDING order; what to charge (minor units), and the intent already made for it.';
grant execute on function app_hidden.payment_start(uuid) to cafe_anonymous, cafe_customer, cafe_barista, cafe_admin;

-- Records the intent the provider made for the order (the same rule again:
-- the order may have moved on while the provider answered).
create function app_hidden.record_payment_intent(p_order_id uuid, p_intent_id text, p_amount_minor bigint, p_currency text) returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
begin
  perform app_hidden.payment_start(p_order_id);
  insert into app_private.payment_intents (intent_id, order_id, amount_minor, currency)
  values (left(p_intent_id, 255), p_order_id, p_amount_minor, upper(p_currency))
  on conflict (intent_id) do nothing;
end;
$$;
grant execute on function app_hidden.record_payment_intent(uuid,text,bigint,text) to cafe_customer, cafe_barista, cafe_admin;

-- An order cancelled (by its customer, staff, or expiry): each of its
-- intents not paid is cancelled at the provider by a job, so the customer
-- can no longer pay it.
create function app_private.tg_orders__cancel_payment_intents() returns trigger
language plpgsql security definer set search_path = pg_catalog as $$
begin
  if old.status is distinct from 'CANCELLED' then
    perform graphile_worker.add_job('payment_intent__cancel', json_build_object('intentId', i.intent_id),
      job_key := 'payment_intent__cancel:' || i.intent_id)
      from app_private.payment_intents i
     where i.order_id = new.id and i.succeeded_at is null and i.canceled_at is null;
  end if;
  return null;
end;
$$;

create trigger _550_cancel_payment_intents after update of status on app_public.orders
  for each row when (new.status = 'CANCELLED') execute function app_private.tg_orders__cancel_payment_intents();

-- The job's read: the intent to cancel (null: paid, cancelled already, or gone).
create function app_private.payment_intent_to_cancel(p_intent_id text) returns text
language sql stable security definer set search_path = pg_catalog as $$
  select i.intent_id from app_private.payment_intents i where i.intent_id = p_intent_id and i.succeeded_at is null and i.canceled_at is null;
$$;
grant execute on function app_private.payment_intent_to_cancel(text) to cafe_system;

create function app_private.payment_intent_canceled(p_intent_id text) returns void
language sql volatile security definer set search_path = pg_catalog as $$
  update app_private.payment_intents set canceled_at = coalesce(canceled_at, now()) where intent_id = p_intent_id and succeeded_at is null;
$$;
grant execute on function app_private.payment_intent_canceled(text) to cafe_system;

--------------------------------------------------------------------------------
-- 1040 refunds paid back through the provider
--------------------------------------------------------------------------------

create type app_public.refund_status as enum ('PENDING', 'SENT', 'SUCCEEDED', 'FAILED');
comment on type app_public.refund_status is 'PENDING: owed (being sent to the provider, or to settle by hand); SENT: the provider took it; SUCCEEDED: paid back; FAILED: the provider refused it (settle by hand).';

alter table app_public.refunds
  add column status app_public.refund_status not null default 'PENDING',
  add column provider text,
  add column provider_payment_id text,
  add column provider_refund_id text unique,
  add column currency text,
  add column amount_minor bigint check (amount_minor > 0),
  add column attempts integer not null default 0,
  add column last_error text,
  add column alerted_at timestamptz;
update app_public.refunds set status = 'SUCCEEDED' where settled_at is not null;
comment on column app_public.refunds.status is 'Where the refund stands: PENDING, SENT (taken by the provider), SUCCEEDED (paid back), FAILED (refused by the provider: settle by hand).';
comment on column app_public.refunds.provider is 'stripe when the refund is paid back through the provider''s API (the order was paid through it); null: settled by hand (cash, till).';
comment on column app_public.refunds.provider_payment_id is 'The provider''s payment the refund goes back to (a Stripe PaymentIntent id).';
comment on column app_public.refunds.provider_refund_id is 'The provider''s refund id, once it took the refund.';
comment on column app_public.refunds.currency is 'The currency of amount_minor (the payment''s).';
comment on column app_public.refunds.amount_minor is 'What the provider pays back, in the currency''s minor units.';
comment on column app_public.refunds.attempts is 'Calls of the provider''s Refunds API so far.';
comment on column app_public.refunds.last_error is 'Why the latest attempt failed (null after one succeeded).';
comment on column app_public.refunds.alerted_at is E'@behavior -*';
comment on constraint refunds_provider_refund_id_key on app_public.refunds is E'@behavior -single';
create index refunds_provider_payment_idx on app_public.refunds (provider_payment_id) where provider_payment_id is not null;

-- A refund of an order paid through the provider is paid back through it:
-- the payment it goes back to, its currency and minor units.
create function app_private.tg_refunds__provider() returns trigger
language plpgsql security definer set search_path = pg_catalog as $$
declare
  v_intent app_private.payment_intents;
begin
  if new.provider is null then
    select i.* into v_intent from app_private.payment_intents i join app_public.orders o on o.id = i.order_id
     where i.order_id = new.order_id and i.succeeded_at is not null and o.payment_method = 'provider'
     order by i.succeeded_at desc limit 1;
    if v_intent.intent_id is not null then
      new.provider := v_intent.provider;
      new.provider_payment_id := v_intent.intent_id;
      new.currency := v_intent.currency;
      new.amount_minor := least(app_private.to_minor_units(new.amount, v_intent.currency), v_intent.amount_minor);
    end if;
  end if;
  return new;
end;
$$;

create trigger _100_provider before insert on app_public.refunds
  for each row execute function app_private.tg_refunds__provider();

-- A refund the provider pays back: its job (job_key: one per refund).
create function app_private.tg_refunds__queue_payout() returns trigger
language plpgsql security definer set search_path = pg_catalog as $$
begin
  if new.provider = 'stripe' and new.status = 'PENDING' and new.provider_refund_id is null
     and (tg_op = 'INSERT' or old.provider is distinct from new.provider) then
    perform graphile_worker.add_job('refund__pay', json_build_object('id', new.id), job_key := 'refund__pay:' || new.id);
  end if;
  return null;
end;
$$;

create trigger _500_queue_payout after insert or update of provider on app_public.refunds
  for each row execute function app_private.tg_refunds__queue_payout();

-- Admins of the refund's store settle refunds by hand (cash, till, or one
-- the provider refused): 000002-stores.sql's rule, now also SUCCEEDED.
create or replace function app_public.settle_refund(p_id uuid) returns app_public.refunds
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_refund app_public.refunds;
begin
  perform app_hidden.require_store_admin(null);
  select * into v_refund from app_public.refunds where id = p_id for update;
  if v_refund.id is null or app_public.current_actor() <> 'dba' and not app_public.is_store_admin(v_refund.store_id) then
    raise exception 'No refund with id %.', p_id using errcode = 'P0002';
  end if;
  update app_public.refunds set settled_at = coalesce(settled_at, now()), settled_by = coalesce(settled_by, app_public.current_user_id()), status = 'SUCCEEDED'
   where id = p_id returning * into v_refund;
  return v_refund;
end;
$$;

-- The job's read: what to send (null: nothing to send: taken, settled, refused, or gone).
create function app_private.refund_payout(p_id uuid) returns jsonb
language sql stable security definer set search_path = pg_catalog as $$
  select jsonb_build_object('id', r.id, 'orderId', r.order_id, 'paymentIntent', r.provider_payment_id, 'amount', r.amount_minor, 'currency', lower(r.currency))
    from app_public.refunds r
   where r.id = p_id and r.provider = 'stripe' and r.status = 'PENDING' and r.settled_at is null
     and r.provider_payment_id is not null and r.amount_minor is not null;
$$;
grant execute on function app_private.refund_payout(uuid) to cafe_system;

-- The provider took the refund: SENT, until its webhook settles it.
create function app_private.refund_sent(p_id uuid, p_provider_refund_id text) returns void
language sql volatile security definer set search_path = pg_catalog as $$
  update app_public.refunds
     set status = 'SENT', provider_refund_id = left(p_provider_refund_id, 255), attempts = attempts + 1, last_error = null
   where id = p_id and status = 'PENDING';
$$;
grant execute on function app_private.refund_sent(uuid,text) to cafe_system;

-- An attempt failed. Refused for good (p_permanent: the provider said no):
-- FAILED and an alert. Otherwise the next attempt is queued (same job_key)
-- after refund_backoff_base_seconds * 2^(attempts - 1), at most
-- refund_backoff_max_seconds; a refund owed for longer than the
-- refund_failing rule's window raises one alert. Returns when the next
-- attempt runs (null: none).
create function app_private.refund_failed(p_id uuid, p_error text, p_permanent boolean) returns timestamptz
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_refund app_public.refunds;
  v_after integer;
  v_run_at timestamptz;
begin
  update app_public.refunds
     set attempts = attempts + 1, last_error = left(p_error, 500), status = case when p_permanent then 'FAILED'::app_public.refund_status else status end
   where id = p_id and status = 'PENDING'
  returning * into v_refund;
  if v_refund.id is null then
    return null;
  end if;
  if p_permanent then
    perform app_private.raise_alert('refund_failed',
      format('The provider refused refund %s of %s for order %s: %s. Pay it another way, then settle it.', v_refund.id, v_refund.amount, v_refund.order_id, left(p_error, 200)),
      null, v_refund.order_id);
    return null;
  end if;
  select r.window_seconds into v_after from app_private.alert_rules r where r.kind = 'refund_failing';
  if v_refund.alerted_at is null and v_refund.created_at <= now() - make_interval(secs => v_after) then
    update app_public.refunds set alerted_at = now() where id = p_id;
    perform app_private.raise_alert('refund_failing',
      format('Refund %s of %s for order %s is owed since %s and still failing (%s attempts): %s', v_refund.id, v_refund.amount, v_refund.order_id, v_refund.created_at, v_refund.attempts, left(p_error, 200)),
      null, v_refund.order_id);
  end if;
  v_run_at := now() + make_interval(secs => least(
    app_private.setting('refund_backoff_max_seconds'),
    app_private.setting('refund_backoff_base_seconds') * power(2, least(v_refund.attempts - 1, 30))));
  perform graphile_worker.add_job('refund__pay', json_build_object('id', p_id), job_key := 'refund__pay:' || p_id, run_at := v_run_at);
  return v_run_at;
end;
$$;
grant execute on function app_private.refund_failed(uuid,text,boolean) to cafe_system;

--------------------------------------------------------------------------------
-- 1050 notifications: a payment that failed
--------------------------------------------------------------------------------

create or replace function app_private.notify_customer(p_order_id uuid, p_kind text) returns app_public.notifications
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_notification app_public.notifications;
begin
  insert into app_public.notifications (customer_id, order_id, kind, message)
  select o.customer_id, o.id, p_kind,
         case p_kind when 'payment_received' then format('Thanks! We received %s for your order; it is being prepared.', o.total)
                     when 'ready_for_pickup' then 'Your order is ready for pickup.'
                     when 'refund_owed' then format('Your order was cancelled; %s will be refunded.', o.total)
                     when 'payment_failed' then 'Your payment did not go through; please try again or use another card.'
                     else app_public.order_status_message(o.status) end
  from app_public.orders o where o.id = p_order_id
  on conflict (order_id, kind) do nothing
  returning * into v_notification;
  return v_notification; -- null when it was already sent
end;
$$;

--------------------------------------------------------------------------------
-- 1060 Stripe's webhook events
--------------------------------------------------------------------------------

-- One verified Stripe event, mapped by the route (src/payments/stripe.ts)
-- onto an action, in one transaction. p_fields: intentId, orderRef,
-- amount (minor units), currency, refundRef (our refund id from the
-- refund's metadata), providerRefundId, reason. Deduped by the event id
-- (processed_payment_keys, key `stripe:<event id>`). Every answer is 2xx:
-- a business refusal (unknown order, amount or currency mismatch, an order
-- that cannot take the payment) is `refused` with its code, an alert, and a
-- refund owed when money was taken; only a bad signature (the route) makes
-- Stripe retry.
create function app_private.process_stripe_event(p_source text, p_event_id text, p_body_sha256 text, p_type text, p_action text, p_fields jsonb)
returns app_private.callback_result
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_key text := 'stripe:' || p_event_id;
  known app_private.processed_payment_keys;
  v_intent_id text := p_fields ->> 'intentId';
  v_currency text := upper(p_fields ->> 'currency');
  v_minor bigint := (p_fields ->> 'amount')::bigint;
  v_order app_public.orders;
  v_order_id uuid;
  v_refund app_public.refunds;
  v_settled bigint;
  r app_private.callback_result;
  result app_private.callback_result;
begin
  perform pg_advisory_xact_lock(hashtextextended(v_key, 0));
  select * into known from app_private.processed_payment_keys where key = v_key;
  if known.key is not null then
    if known.body_sha256 <> p_body_sha256 then
      perform app_private.raise_alert('duplicate_key_different_body', format('Key %s arrived again with a different body.', v_key), p_source, known.order_id);
    end if;
    result := row(200, 'duplicate', null, 'Already processed.', known.order_id);
    perform app_private.log_delivery(p_source, 200, 'duplicate', null, null, v_key, p_body_sha256, p_type, known.order_id);
    return result;
  end if;

  if p_fields ->> 'orderRef' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
    v_order_id := (p_fields ->> 'orderRef')::uuid;
  end if;
  if v_order_id is null and v_intent_id is not null then
    select i.order_id into v_order_id from app_private.payment_intents i where i.intent_id = v_intent_id;
  end if;

  if p_action = 'payment' then
    -- One intent pays once, whatever the event (a copy, or events out of order).
    if exists (select 1 from app_private.payment_intents i where i.intent_id = v_intent_id and i.succeeded_at is not null) then
      result := row(200, 'duplicate', null, 'This payment was processed already.', v_order_id);
      perform app_private.log_delivery(p_source, 200, 'duplicate', null, null, v_key, p_body_sha256, p_type, v_order_id);
      return result;
    end if;
    -- Paid: its cancellation (if the order is cancelled now) must not be queued.
    update app_private.payment_intents set succeeded_at = now() where intent_id = v_intent_id;
    -- The same path as the generic callback's (it logs the delivery).
    r := app_private.process_payment_callback(p_source, v_key, p_body_sha256, 'payment.completed', null,
      v_order_id::text, null, app_private.from_minor_units(v_minor, v_currency), null, v_currency);
    if r.order_id is not null and v_intent_id is not null then
      insert into app_private.payment_intents (intent_id, order_id, amount_minor, currency, succeeded_at)
      values (v_intent_id, r.order_id, v_minor, v_currency, now())
      on conflict (intent_id) do update set succeeded_at = coalesce(app_private.payment_intents.succeeded_at, now());
    end if;
    if r.code is null then
      return r;
    end if;
    -- A business refusal: answered 2xx (Stripe must not retry it), recorded
    -- as processed (a copy changes nothing), an alert, and the money taken
    -- owed back.
    insert into app_private.processed_payment_keys (key, body_sha256, order_id, outcome) values (v_key, p_body_sha256, r.order_id, 'refused');
    if r.order_id is null then
      perform app_private.raise_alert('unknown_order',
        format('Stripe payment %s of %s %s names no order of this café (%s): refund it from the Stripe dashboard.', v_intent_id, v_minor, v_currency, coalesce(p_fields ->> 'orderRef', 'no order_id')),
        p_source, null);
    elsif v_intent_id is not null then
      select * into v_order from app_public.orders where id = r.order_id;
      -- A cancelled order's refund was written by process_payment_callback
      -- (source_key); any other refusal owes back what was taken.
      update app_public.refunds set provider = 'stripe', provider_payment_id = v_intent_id, currency = v_currency, amount_minor = v_minor
       where source_key = v_key and provider is null;
      if not found then
        insert into app_public.refunds (order_id, amount, reason, source_key, paid_amount, order_total, above_order_total, provider, provider_payment_id, currency, amount_minor)
        values (r.order_id, app_private.from_minor_units(v_minor, v_currency), format('Stripe payment refused (%s): %s', r.code, r.message), v_key,
                app_private.from_minor_units(v_minor, v_currency), v_order.total, false, 'stripe', v_intent_id, v_currency, v_minor)
        on conflict (source_key) do nothing;
        if found then
          perform app_private.raise_alert('refund_needed',
            format('Stripe payment %s of %s %s for order %s was refused (%s): it is refunded.', v_intent_id, v_minor, v_currency, r.order_id, r.code), p_source, r.order_id);
        end if;
      end if;
    end if;
    return row(200, 'refused', r.code, r.message, r.order_id)::app_private.callback_result;
  end if;

  if p_action = 'payment_failed' then
    select * into v_order from app_public.orders where id = v_order_id;
    if v_order.id is not null and v_order.status = 'PENDING' then
      perform app_private.notify_customer(v_order.id, 'payment_failed');
      result := row(200, 'processed', null, 'The customer is told the payment failed.', v_order.id);
    else
      result := row(200, 'ignored', null, 'No PENDING order for this failed payment.', v_order.id);
    end if;
  elsif p_action = 'refund_settled' then
    if p_fields ->> 'refundRef' is not null or p_fields ->> 'providerRefundId' is not null then
      -- refund.updated: one refund, by our id (its metadata) or the provider's.
      update app_public.refunds
         set status = 'SUCCEEDED', settled_at = coalesce(settled_at, now()), provider_refund_id = coalesce(provider_refund_id, left(p_fields ->> 'providerRefundId', 255)), last_error = null
       where provider = 'stripe' and status <> 'SUCCEEDED'
         and (id::text = p_fields ->> 'refundRef' or provider_refund_id = p_fields ->> 'providerRefundId')
      returning * into v_refund;
      result := row(200, case when v_refund.id is null then 'ignored' else 'processed' end, null, 'Refund settled.', v_refund.order_id);
    else
      -- charge.refunded: the payment's refunds, oldest first, as far as the
      -- amount refunded so far (cumulative) covers them.
      select coalesce(sum(x.amount_minor), 0) into v_settled from app_public.refunds x
       where x.provider_payment_id = v_intent_id and x.provider = 'stripe' and x.status = 'SUCCEEDED';
      for v_refund in
        select * from app_public.refunds x where x.provider_payment_id = v_intent_id and x.provider = 'stripe' and x.status <> 'SUCCEEDED'
         order by x.created_at, x.id for update
      loop
        exit when v_settled + v_refund.amount_minor > v_minor;
        v_settled := v_settled + v_refund.amount_minor;
        update app_public.refunds set status = 'SUCCEEDED', settled_at = coalesce(settled_at, now()), last_error = null where id = v_refund.id;
        v_order_id := v_refund.order_id;
      end loop;
      result := row(200, 'processed', null, 'Refunds settled.', v_order_id);
    end if;
  elsif p_action = 'refund_failed' then
    update app_public.refunds
       set status = 'FAILED', last_error = left(coalesce(p_fields ->> 'reason', 'refund failed'), 500)
     where provider = 'stripe' and status in ('PENDING', 'SENT')
       and (id::text = p_fields ->> 'refundRef' or provider_refund_id = p_fields ->> 'providerRefundId')
    returning * into v_refund;
    if v_refund.id is not null then
      perform app_private.raise_alert('refund_failed',
        format('Stripe reports refund %s of %s for order %s failed (%s): pay it another way, then settle it.', v_refund.id, v_refund.amount, v_refund.order_id, coalesce(p_fields ->> 'reason', 'no reason given')),
        p_source, v_refund.order_id);
    end if;
    result := row(200, case when v_refund.id is null then 'ignored' else 'processed' end, null, 'Refund failed.', v_refund.order_id);
  elsif p_action = 'dispute' then
    perform app_private.raise_alert('payment_dispute',
      format('Dispute on Stripe payment %s (order %s): %s %s, reason %s. Answer it in the Stripe dashboard.',
             coalesce(v_intent_id, 'unknown'), coalesce(v_order_id::text, 'unknown'), v_minor, v_currency, coalesce(p_fields ->> 'reason', 'none given')),
      p_source, v_order_id);
    result := row(200, 'processed', null, 'Alert raised.', v_order_id);
  else
    -- Any other event: acknowledged, nothing done (not recorded as processed).
    result := row(200, 'ignored', null, 'Not an event this service acts on.', null);
    perform app_private.log_delivery(p_source, 200, 'ignored', null, result.message, v_key, p_body_sha256, p_type, null);
    return result;
  end if;

  insert into app_private.processed_payment_keys (key, body_sha256, order_id, outcome) values (v_key, p_body_sha256, result.order_id, result.status);
  perform app_private.log_delivery(p_source, 200, result.status, null, null, v_key, p_body_sha256, p_type, result.order_id);
  return result;
end;
$$;
grant execute on function app_private.process_stripe_event(text,text,text,text,text,jsonb) to cafe_system;
