--! Previous: sha1:bc554dc22aa0d482e17deb066239df6911bf2998
--! Hash: sha1:d957a13f0b4a330972f655c351c80456e0af3e38
--! Message: release jobs of dead workers

-- 000003: dead workers' jobs are released within seconds, not after
-- graphile-worker's four-hour lock timeout.

drop table if exists app_private.worker_heartbeats cascade;
create table app_private.worker_heartbeats (
  worker_id text primary key,
  process text not null,
  last_seen timestamptz not null default now()
);

insert into app_private.settings (key, value, description) values
  ('worker_dead_after_seconds', 30, 'A worker silent this long is dead: its jobs are unlocked for others to run.')
on conflict (key) do nothing;

-- Called by every worker process every few seconds: records its workers as
-- alive, then unlocks jobs held by workers that stopped beating (or never
-- beat and have held a job for too long). Returns the workers released.
create or replace function app_private.worker_heartbeat(p_process text, p_worker_ids text[]) returns text[]
language plpgsql volatile security definer set search_path = pg_catalog as $$
declare
  dead_after interval := make_interval(secs => app_private.setting('worker_dead_after_seconds'));
  dead text[];
begin
  insert into app_private.worker_heartbeats (worker_id, process, last_seen)
  select unnest(p_worker_ids), p_process, now()
  on conflict (worker_id) do update set last_seen = now(), process = excluded.process;

  select array_agg(distinct j.locked_by) into dead
  from graphile_worker.jobs j
  where j.locked_by is not null
    and j.locked_at < now() - dead_after
    and not exists (
      select 1 from app_private.worker_heartbeats h
      where h.worker_id = j.locked_by and h.last_seen > now() - dead_after);
  if dead is not null then
    perform graphile_worker.force_unlock_workers(dead);
  end if;
  delete from app_private.worker_heartbeats where last_seen < now() - dead_after * 10;
  return coalesce(dead, '{}');
end;
$$;
