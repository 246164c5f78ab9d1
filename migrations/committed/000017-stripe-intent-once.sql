--! Previous: sha1:c2a1ec2710d79b2ef533b24d5fff94982e983103
--! Hash: sha1:3f89eb7173a77a579e9eb74de61b294f4db6b99f
--! Message: stripe-intent-once

--------------------------------------------------------------------------------
-- Stripe's events: one payment per intent at any timing; an event missing a
-- field is refused 2xx (sections as in 000004-stripe.sql)
--
-- Two payment_intent.succeeded events of one intent with different event
-- ids, processed at the same moment, each saw the intent unpaid (the check
-- ran before the other committed): the first paid the order, the second
-- found it PAID and owed a refund to that same intent (10 of 10). Events of
-- one intent now queue on a lock of the intent before that check.
-- A verified event without a field its action needs (a payment without
-- currency) failed inside the transaction (a NOT NULL column) and was
-- answered 500, retried by Stripe for days; the route now names what is
-- missing (action `incomplete`) and it is refused 2xx with an alert,
-- recorded, nothing paid.
--------------------------------------------------------------------------------

--------------------------------------------------------------------------------
-- 1020 settings and alert rules of provider payments
--------------------------------------------------------------------------------

insert into app_private.alert_rules (kind, threshold, window_seconds, block_seconds, description) values
  ('stripe_event_incomplete', '0', '60', '0', 'A verified Stripe event without a field its action needs (e.g. a payment without currency): refused, nothing done; check the payment in the Stripe dashboard.')
on conflict (kind) do nothing;

--------------------------------------------------------------------------------
-- 1060 Stripe's webhook events
--------------------------------------------------------------------------------

-- 000004's function, with the intent's lock before a payment's check, the
-- `incomplete` action, and a refusal's code and message in the delivery log.
create or replace function app_private.process_stripe_event(p_source text, p_event_id text, p_body_sha256 text, p_type text, p_action text, p_fields jsonb)
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
    -- One intent pays once, whatever the event (a copy, another event id,
    -- events out of order) and whenever it arrives: events of one intent
    -- queue here, so the next one's check below sees the first's effect.
    if v_intent_id is not null then
      perform pg_advisory_xact_lock(hashtextextended('stripe_intent:' || v_intent_id, 0));
    end if;
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
  elsif p_action = 'incomplete' then
    -- A verified event without a field its action needs (p_fields.missing,
    -- named by the route as Stripe names them): a business refusal, never
    -- a failure Stripe retries for days. Nothing is paid or settled.
    perform app_private.raise_alert('stripe_event_incomplete',
      format('Stripe event %s (%s, payment %s) lacks %s: nothing was done. Check it in the Stripe dashboard.',
             p_event_id, left(p_type, 100), coalesce(v_intent_id, 'unknown'), left(p_fields ->> 'missing', 200)),
      p_source, v_order_id);
    result := row(200, 'refused', 'VALIDATION_FAILED', format('The event lacks %s.', left(p_fields ->> 'missing', 200)), v_order_id);
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
  perform app_private.log_delivery(p_source, 200, result.status, result.code, case when result.code is not null then result.message end, v_key, p_body_sha256, p_type, result.order_id);
  return result;
end;
$$;
