import pg from "pg";
import { run, type Runner } from "graphile-worker";
import type { Config } from "./config.ts";
import type { DatabaseUrls } from "./database.ts";
import { logger } from "./logger.ts";
import { taskList } from "./tasks/index.ts";

// graphile-worker in this process: jobs are rows in the same database, added
// in the same transaction as the payment that causes them.

export interface WorkerHandle {
  runner: Runner;
  stop(): Promise<void>;
}

export async function startWorker(config: Config, urls: DatabaseUrls): Promise<WorkerHandle> {
  const pool = new pg.Pool({ connectionString: urls.owner, max: config.WORKER_CONCURRENCY + 2 });
  pool.on("error", (err) => logger.warn({ err }, "worker: idle database connection failed"));
  pool.on("connect", (client) => client.on("error", (err) => logger.warn({ err }, "worker: database connection failed")));
  const runner = await run({
    pgPool: pool,
    taskList,
    concurrency: config.WORKER_CONCURRENCY,
    noHandleSignals: true,
    pollInterval: 1000,
  });
  logger.info({ concurrency: config.WORKER_CONCURRENCY, tasks: Object.keys(taskList) }, "worker started");
  let stopping: Promise<void> | null = null;
  return {
    runner,
    stop() {
      stopping ??= (async () => {
        await runner.stop();
        await pool.end();
      })();
      return stopping;
    },
  };
}
