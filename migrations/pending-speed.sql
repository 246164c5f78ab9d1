-- Pending SQL from the `speed` branch (not run by anything: the lead folds it
-- into the migrations). Same behaviour, less work per payment callback (S4).
--
-- app_private.log_delivery: every authenticated callback counted every
-- delivery of the last window_seconds (60) to decide on the burst alert: an
-- O(rate x window) scan per callback, 1-2.5 ms of PostgreSQL at 7,000 rows in
-- the window (--quick's S4), more in the full run. Now: nothing once this
-- window's alert exists (one index probe of alert_windows), else at most
-- threshold + 1 rows (0.2 ms). The alert is still raised once a window, when
-- more than `threshold` authenticated deliveries arrived in the last
-- window_seconds. Signature, grants and the rest of the body unchanged
-- (copied from 000001-baseline.sql).

create or replace function app_private.log_delivery(
  p_source text, p_http_status integer, p_outcome text, p_code text, p_reason text,
  p_dedupe_key text default null, p_body_sha256 text default null, p_event text default null, p_order_id uuid default null
) returns void
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  rule app_private.alert_rules;
  n integer;
  v_window timestamptz;
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
  -- alert a window. Once this window's alert is out there is nothing to
  -- count, and before it counting past the threshold tells nothing more:
  -- at most threshold + 1 rows are read, not the whole window's (which
  -- grows with the rate: 26,000 rows at 440 callbacks/s).
  select * into rule from app_private.alert_rules where kind = 'burst';
  v_window := date_bin(make_interval(secs => rule.window_seconds), now(), timestamptz 'epoch');
  if exists (select 1 from app_private.alert_windows w where w.kind = 'burst' and w.window_start = v_window) then
    return;
  end if;
  select count(*) into n from (
    select 1 from app_private.payment_deliveries
     where received_at > now() - make_interval(secs => rule.window_seconds)
       and not app_private.is_unauthenticated_failure(code)
     limit rule.threshold + 1) recent;
  if n > rule.threshold then
    insert into app_private.alert_windows (kind, window_start)
    values ('burst', v_window)
    on conflict do nothing;
    if found then
      perform app_private.raise_alert('burst', format('More than %s authenticated callbacks in %s s.', rule.threshold, rule.window_seconds), p_source, null);
    end if;
  end if;
end;
$$;

