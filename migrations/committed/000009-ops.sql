--! Previous: sha1:d248d9d6bf28147f31876f36d1129bca1c3cb7f1
--! Hash: sha1:cefce7f5a1f4e14446b010ddf564fbfb05eeac41
--! Message: ops

--------------------------------------------------------------------------------
-- 900 operations: the trace a job carries, the counts /metrics reads
--------------------------------------------------------------------------------

-- A job queued in a traced transaction carries its trace: the API
-- sets `cafe.traceparent` (a W3C traceparent) in the transaction while
-- tracing is on (src/tracing.ts), and every job graphile_worker.add_job
-- inserts then gets it in its payload as `traceparent`; the worker runs the
-- job as a child of that trace and sends it on with its webhook. Without the
-- setting (tracing off, a DBA's session) the payload is left as it is. One
-- trigger on graphile-worker's jobs table covers every function that queues
-- a job (mark_paid, the notification trigger, a webhook's retry), whoever
-- defines it next.
create or replace function app_private.tg_jobs__trace_context() returns trigger
language plpgsql set search_path = pg_catalog as $$
declare
  v_traceparent text := current_setting('cafe.traceparent', true);
begin
  if v_traceparent ~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' and json_typeof(new.payload) = 'object' then
    new.payload := (new.payload::jsonb || jsonb_build_object('traceparent', v_traceparent))::json;
  end if;
  return new;
end;
$$;
comment on function app_private.tg_jobs__trace_context() is 'Adds the transaction''s cafe.traceparent (set by the API while tracing is on) to the payload of each job it queues.';

drop trigger if exists _100_trace_context on graphile_worker._private_jobs;
create trigger _100_trace_context before insert on graphile_worker._private_jobs
  for each row execute function app_private.tg_jobs__trace_context();

-- What /metrics reads besides the job counts (src/metrics.ts), one row per
-- gauge: workers alive and dead (by heartbeat, worker_dead_after_seconds),
-- notification webhooks waiting and given up, refunds owed and the oldest
-- one's age in seconds. Counts, no rows' contents.
create or replace function app_private.ops_counts() returns table (metric text, value double precision)
language sql stable security definer set search_path = pg_catalog as $$
  select 'workers_alive', count(*)::float8 from app_private.worker_heartbeats
   where last_seen > now() - make_interval(secs => app_private.setting('worker_dead_after_seconds'))
  union all
  select 'workers_dead', count(*)::float8 from app_private.worker_heartbeats
   where last_seen <= now() - make_interval(secs => app_private.setting('worker_dead_after_seconds'))
  union all
  select 'webhooks_pending', count(*)::float8 from app_private.notification_webhooks where delivered_at is null and gave_up_at is null
  union all
  select 'webhooks_gave_up', count(*)::float8 from app_private.notification_webhooks where gave_up_at is not null
  union all
  select 'refunds_open', count(*)::float8 from app_public.refunds where settled_at is null
  union all
  select 'refund_oldest_open_seconds', coalesce(extract(epoch from now() - min(created_at)), 0)::float8 from app_public.refunds where settled_at is null;
$$;
comment on function app_private.ops_counts() is 'Gauges for /metrics: workers alive and dead, notification webhooks pending and given up, refunds open and the oldest one''s age.';
grant execute on function app_private.ops_counts() to cafe_system;
