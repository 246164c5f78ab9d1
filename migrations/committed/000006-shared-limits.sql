--! Previous: sha1:cb4cb621c0d217bb971754d13f50d79325170d91
--! Hash: sha1:1905bae6fe798ba476d72802f370e4ddb421710e
--! Message: shared-limits

-- Request limits shared by the API processes (src/http/rateLimiter.ts,
-- src/db/rateUsage.ts, docs/security.md "Limits over several processes").
-- Each process answers from memory; in the background, every
-- RATE_LIMIT_SYNC_MS, it writes its counts here and is granted how far it
-- may go on for each key (its ceiling) out of what the others have not
-- taken: the ceilings of all processes never add up to more than the
-- budget.

--------------------------------------------------------------------------------
-- 265 request counts shared by the API processes
--------------------------------------------------------------------------------

-- One row per payer key and process: what that process counted in its
-- current window for the key, and the ceiling it was granted. Unlogged:
-- counts a few seconds old matter to nobody after a crash, and no WAL is
-- written for them. The row with key '' is the process's heartbeat.
create unlogged table app_private.rate_usage (
  key text not null,
  process text not null,
  used integer not null check (used >= 0),
  budget integer not null check (budget >= 0),
  ceiling integer not null check (ceiling >= 0),
  -- When the process's window for the key ends (its heartbeat: when it counts as gone), in ms since the epoch.
  window_end_ms bigint not null,
  primary key (key, process)
);
comment on table app_private.rate_usage is 'Request counts of each API process per payer key in its current window, and how far each may go: N processes give a payer one budget.';

-- Writes one process's counts and grants it, per key, its ceiling: its own
-- count plus its share of what is free. Free is the budget less the others'
-- ceilings (or counts, when higher) and a reserve for each live process
-- that holds no row for the key yet (it may spend its "unknown key"
-- allowance, p_unknown_percent of the budget split among the live
-- processes, before it asks); shared among the processes holding the key.
-- Keys are taken one process at a time, in key order.
create function app_hidden.share_rate_usage(p_process text, p_now_ms bigint, p_unknown_percent integer, p_keys text[], p_used integer[], p_budgets integer[], p_window_ends bigint[])
returns table (key text, ceiling integer, live integer)
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_live integer;
  v_others integer;
  v_holders integer;
  v_free integer;
  r record;
begin
  insert into app_private.rate_usage as u (key, process, used, budget, ceiling, window_end_ms) values ('', p_process, 0, 0, 0, p_now_ms + 2000)
    on conflict on constraint rate_usage_pkey do update set window_end_ms = excluded.window_end_ms;
  delete from app_private.rate_usage u where u.window_end_ms < p_now_ms - 10000;
  select count(*) into v_live from app_private.rate_usage u where u.key = '' and u.window_end_ms > p_now_ms;
  live := v_live;
  perform pg_advisory_xact_lock(hashtextextended('rate_usage:' || k, 0)) from unnest(p_keys) as k order by k;
  for r in select * from unnest(p_keys, p_used, p_budgets, p_window_ends) as t(k, used, budget, window_end) loop
    select coalesce(sum(greatest(u.used, u.ceiling)), 0), count(*) into v_others, v_holders
      from app_private.rate_usage u
     where u.key = r.k and u.process <> p_process and u.window_end_ms > p_now_ms;
    v_free := greatest(r.budget - r.used - v_others - greatest(v_live - 1 - v_holders, 0) * greatest(1, r.budget * p_unknown_percent / 100 / v_live), 0);
    key := r.k;
    ceiling := r.used + v_free / (v_holders + 1);
    insert into app_private.rate_usage as u (key, process, used, budget, ceiling, window_end_ms) values (r.k, p_process, r.used, r.budget, ceiling, r.window_end)
      on conflict on constraint rate_usage_pkey do update set used = excluded.used, budget = excluded.budget, ceiling = excluded.ceiling, window_end_ms = excluded.window_end_ms;
    return next;
  end loop;
  if cardinality(p_keys) = 0 then
    key := '';
    ceiling := 0;
    return next;
  end if;
end;
$$;
comment on function app_hidden.share_rate_usage(text, bigint, integer, text[], integer[], integer[], bigint[]) is 'One API process''s request counts in; how far it may go on for each key, and how many processes are live, out.';
grant execute on function app_hidden.share_rate_usage(text, bigint, integer, text[], integer[], integer[], bigint[]) to cafe_system;
