// S5's floor: graphile-worker (the same version, concurrency, poll interval
// and pool size as the service's worker, src/worker/worker.ts) running a task that
// does nothing. Jobs carrying {t} report when they ran over IPC (for the
// enqueue -> done latency); the others report nothing.
import pg from "pg";
import { Logger, run } from "graphile-worker";
import { runChild, stopOn } from "./child.ts";

async function main() {
  const concurrency = Number(process.env.WORKER_CONCURRENCY ?? 4);
  const pool = new pg.Pool({ connectionString: process.env.BENCH_OWNER_URL, max: concurrency + 2 });
  const runner = await run({
    pgPool: pool,
    // Silent, like the service's worker at LOG_LEVEL=warn (graphile-worker's default logs every job).
    logger: new Logger(() => () => {}),
    concurrency,
    noHandleSignals: true,
    pollInterval: 1000,
    taskList: {
      bench_noop: async (payload) => {
        const t = (payload as { t?: number } | null)?.t;
        if (t !== undefined) process.send?.({ type: "done", t, done: performance.timeOrigin + performance.now() });
      },
    },
  });
  process.send?.({ ready: true, port: 0 });
  stopOn(async () => {
    await runner.stop();
    await pool.end();
  });
}

runChild(main);
