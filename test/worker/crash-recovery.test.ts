import { useTestService } from "../support/service.ts";
import { sleep } from "../support/wait.ts";

// Crashed workers: the jobs a worker held when it was
// killed with SIGKILL run again within 10 s. What a killed
// worker leaves in the database is a job locked by it and a heartbeat that
// stops; a live worker (this file's, in this process) notices the silence
// at its next beat, unlocks the job and runs it.

const t = useTestService({ worker: true });
const DEAD = "worker-killed-by-sigkill";

test("a job locked by a worker that stopped beating is run again within 10 s", async () => {
  // Due later, so that no live worker takes it before the killed one has it.
  const { rows } = await t.db.query<{ id: string }>("select id from graphile_worker.add_job('purge_idempotency_keys', '{}'::json, run_at => now() + interval '1 hour', max_attempts => 1)");
  const jobId = rows[0]!.id;
  try {
    // The killed worker: it had just taken the job (due now) and had just beaten.
    const taken = await t.db.query("update graphile_worker._private_jobs set locked_by = $2, locked_at = now(), run_at = now() where id = $1 and locked_at is null", [jobId, DEAD]);
    expect(taken.rowCount).toBe(1);
    await t.db.query("insert into app_private.worker_heartbeats (worker_id, process, last_seen) values ($1, 'elsewhere:1', now()) on conflict (worker_id) do update set last_seen = now()", [DEAD]);
    const killedAt = Date.now();
    let ranAfterMs = -1;
    while (Date.now() - killedAt < 20_000) {
      const { rows: job } = await t.db.query("select locked_by, attempts from graphile_worker._private_jobs where id = $1", [jobId]);
      if (!job.length || (job[0].locked_by !== DEAD && job[0].attempts > 0)) {
        ranAfterMs = Date.now() - killedAt;
        break;
      }
      await sleep(100);
    }
    expect(ranAfterMs).toBeGreaterThan(0);
    expect(ranAfterMs).toBeLessThan(10_000);
  } finally {
    await t.db.query("delete from graphile_worker._private_jobs where id = $1", [jobId]);
    await t.db.query("delete from app_private.worker_heartbeats where worker_id = $1", [DEAD]);
  }
}, 40_000);
