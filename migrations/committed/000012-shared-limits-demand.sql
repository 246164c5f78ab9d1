--! Previous: sha1:7d4c0cb17f5c324558cd0ab60bcafba05b02134b
--! Hash: sha1:9e24e9431e7bd571ce80b92f03f2358719c4ef85
--! Message: shared-limits-demand

--------------------------------------------------------------------------------
-- 265 request counts shared by the API processes: shares by demand
--------------------------------------------------------------------------------

-- Migration 000006 granted a process, at each sync of a key, its count plus
-- an equal part of what the others had not taken. Whoever synced a new key
-- first took nearly the whole budget (the others had no row yet), and each
-- later sync handed back only half of its unused room: a client whose
-- requests a load balancer spreads over the processes got its budget only
-- after several syncs, and a burst shorter than that got 40-60% of it.
--
-- Now what is left of the budget is split by demand: each process sends,
-- per key, the requests it was asked for since its previous sync (refused
-- ones included), and is granted its count plus its part of what nobody has
-- spent yet, in proportion to that demand. A live process that holds no row
-- for the key and has not synced since the key appeared may be about to ask
-- (the same burst reached it): it is counted as asking as much as this one.
-- A process that holds room it does not use while another waits for room
-- (`unmet`) gives it back at its next sync, whether or not it was asked
-- about the key since. The ceilings still never add up to more than the
-- budget.

alter table app_private.rate_usage
  add column demand integer not null default 0 check (demand >= 0),
  add column unmet boolean not null default false,
  add column since timestamptz not null default clock_timestamp(),
  add column synced_at timestamptz not null default clock_timestamp();
comment on column app_private.rate_usage.demand is 'Requests the process was asked for under the key (refused ones included) between its two latest syncs: its weight in the split.';
comment on column app_private.rate_usage.unmet is 'The process was granted less than its part because others hold room: they give their unused room back at their next sync.';
comment on column app_private.rate_usage.since is 'When this row''s window was first sent (a key appears at its first row).';
comment on column app_private.rate_usage.synced_at is 'When the process last sent this row (its heartbeat row: its last sync).';

drop function app_hidden.share_rate_usage(text, bigint, integer, text[], integer[], integer[], bigint[]);

-- One process's counts and demands in; per key, its ceiling and the end of
-- the window it is for (keys not sent are those it gives back), and the
-- number of live processes, out. Keys are taken one process at a time, in
-- key order.
create function app_hidden.share_rate_usage(p_process text, p_now_ms bigint, p_unknown_percent integer, p_keys text[], p_used integer[], p_demand integer[], p_budgets integer[], p_window_ends bigint[])
returns table (key text, ceiling integer, window_end_ms bigint, live integer)
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  v_now timestamptz := clock_timestamp();
  v_live integer;
  v_keys text[];
  r record;
  -- What a process may spend on a key before it first sends it.
  v_allowance integer;
  -- The others holding the key: their counts, what they may spend (their ceilings, or counts when higher), their weights.
  v_others_used integer;
  v_others_hold integer;
  v_others_weight numeric;
  v_appeared timestamptz;
  -- Live processes without a row for the key: not synced since it appeared (may be about to ask), or synced since.
  v_fresh integer;
  v_quiet integer;
  v_weight numeric;
  v_free integer;
  v_part integer;
  v_room integer;
begin
  insert into app_private.rate_usage as u (key, process, used, budget, ceiling, window_end_ms, synced_at) values ('', p_process, 0, 0, 0, p_now_ms + 2000, v_now)
    on conflict on constraint rate_usage_pkey do update set window_end_ms = excluded.window_end_ms, synced_at = excluded.synced_at;
  delete from app_private.rate_usage u where u.window_end_ms < p_now_ms - 10000;
  select count(*) into v_live from app_private.rate_usage u where u.key = '' and u.window_end_ms > p_now_ms;
  live := v_live;
  -- The keys sent, and this process's keys whose unused room another process is waiting for.
  select array_agg(k order by k) into v_keys from (
    select unnest(p_keys) as k
    union
    select u.key from app_private.rate_usage u
     where u.process = p_process and u.key <> '' and u.window_end_ms > p_now_ms and u.ceiling > u.used
       and exists (select from app_private.rate_usage o where o.key = u.key and o.process <> p_process and o.window_end_ms > p_now_ms and o.unmet)
  ) keys;
  perform pg_advisory_xact_lock(hashtextextended('rate_usage:' || k, 0)) from unnest(v_keys) as k order by k;
  for r in
    select t.k, coalesce(s.used, own.used) as used, coalesce(s.demand, 0) as demand, coalesce(s.budget, own.budget) as budget,
           coalesce(s.window_end, own.window_end_ms) as window_end,
           case when own.window_end_ms = coalesce(s.window_end, own.window_end_ms) then own.since end as since
      from unnest(v_keys) as t(k)
      left join unnest(p_keys, p_used, p_demand, p_budgets, p_window_ends) as s(k, used, demand, budget, window_end) on s.k = t.k
      left join app_private.rate_usage own on own.key = t.k and own.process = p_process
     order by t.k
  loop
    v_allowance := greatest(1, r.budget * p_unknown_percent / 100 / v_live);
    select coalesce(sum(o.used), 0), coalesce(sum(greatest(o.used, o.ceiling)), 0), coalesce(sum(o.demand + v_allowance), 0), least(min(o.since), coalesce(r.since, v_now))
      into v_others_used, v_others_hold, v_others_weight, v_appeared
      from app_private.rate_usage o
     where o.key = r.k and o.process <> p_process and o.window_end_ms > p_now_ms;
    select count(*) filter (where h.synced_at < v_appeared), count(*) filter (where h.synced_at >= v_appeared)
      into v_fresh, v_quiet
      from app_private.rate_usage h
     where h.key = '' and h.process <> p_process and h.window_end_ms > p_now_ms
       and not exists (select from app_private.rate_usage o where o.key = r.k and o.process = h.process and o.window_end_ms > p_now_ms);
    -- A process without a row may spend its allowance before it asks: kept for it.
    v_weight := r.demand + v_allowance;
    v_free := greatest(r.budget - r.used - v_others_used - (v_fresh + v_quiet) * v_allowance, 0);
    v_part := floor(v_free * v_weight / (v_weight + v_others_weight + v_fresh * v_weight));
    v_room := greatest(r.budget - r.used - v_others_hold - (v_fresh + v_quiet) * v_allowance, 0);
    key := r.k;
    ceiling := r.used + least(v_part, v_room);
    window_end_ms := r.window_end;
    insert into app_private.rate_usage as u (key, process, used, budget, ceiling, window_end_ms, demand, unmet, since, synced_at)
      values (r.k, p_process, r.used, r.budget, ceiling, r.window_end, r.demand, v_room < v_part, coalesce(r.since, v_now), v_now)
      on conflict on constraint rate_usage_pkey do update set used = excluded.used, budget = excluded.budget, ceiling = excluded.ceiling,
        window_end_ms = excluded.window_end_ms, demand = excluded.demand, unmet = excluded.unmet, since = excluded.since, synced_at = excluded.synced_at;
    return next;
  end loop;
  if coalesce(cardinality(v_keys), 0) = 0 then
    key := '';
    ceiling := 0;
    window_end_ms := 0;
    return next;
  end if;
end;
$$;
comment on function app_hidden.share_rate_usage(text, bigint, integer, text[], integer[], integer[], integer[], bigint[]) is 'One API process''s request counts and demands in; how far it may go on for each key (its part of what is left, by demand), and how many processes are live, out.';
grant execute on function app_hidden.share_rate_usage(text, bigint, integer, text[], integer[], integer[], integer[], bigint[]) to cafe_system;
