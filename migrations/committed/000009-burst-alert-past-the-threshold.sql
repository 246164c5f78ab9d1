--! Previous: sha1:69864068e10a7b736ea8dfb04b3591a0f50c723e
--! Hash: sha1:c328d45ac661b83f6bb0cc9bd296d4c31dc5b0a3
--! Message: burst alert past the threshold

-- 000009: a burst alert fires once the window holds more deliveries than
-- the threshold, however concurrent deliveries step past the exact count.

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

  -- Repeated authentication failures from one source: alert, then block it.
  if p_code in ('UNAUTHORIZED', 'BAD_SIGNATURE') then
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
  if n > rule.threshold and not exists (
    select 1 from app_public.payment_alerts where kind = 'burst' and created_at > now() - make_interval(secs => rule.window_seconds)
  ) then
    perform app_private.raise_alert('burst', format('More than %s callbacks in %s s.', rule.threshold, rule.window_seconds), p_source, null);
  end if;
end;
$$;
