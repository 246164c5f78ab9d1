--! Previous: sha1:d957a13f0b4a330972f655c351c80456e0af3e38
--! Hash: sha1:6188c0256b911a8ffee7d07c28d68cec01312805
--! Message: job counts for metrics

-- 000004: job queue figures for /metrics (the request roles cannot read
-- graphile_worker's tables).

create or replace function app_private.job_counts() returns table (state text, count bigint)
language plpgsql stable security definer set search_path = pg_catalog as $$
begin
  return query
    select 'queued'::text, count(*) from graphile_worker.jobs j where j.locked_at is null and j.run_at <= now() and j.attempts < j.max_attempts
    union all
    select 'locked'::text, count(*) from graphile_worker.jobs j where j.locked_at is not null
    union all
    select 'failed'::text, count(*) from graphile_worker.jobs j where j.last_error is not null;
end;
$$;
grant execute on function app_private.job_counts() to cafe_system;
