import { EventEmitter } from "node:events";
import pg from "pg";
import { Logger, type Runner, type WorkerEvents } from "graphile-worker";
import type { Config } from "../config.ts";
import type { DatabaseUrls } from "../db/database.ts";
import { graphileLogFactory, logger } from "../logger.ts";
import { crontab, taskList } from "./tasks/index.ts";
import { notification__send_webhook } from "./tasks/notification__send_webhook.ts";
import { payment_intent__cancel } from "./tasks/payment_intent__cancel.ts";
import { refund__pay } from "./tasks/refund__pay.ts";
import { makeStripeClient } from "../payments/stripeClient.ts";
import { supervisedRunner } from "./supervise.ts";
import { observedTasks } from "./job.ts";
import { startHeartbeat } from "./heartbeat.ts";
import { startExpirySweep } from "./expirySweep.ts";

// graphile-worker in this process: jobs are rows in the same database, added
// in the same transaction as the payment that causes them. Around the
// runner: its supervision (supervise.ts: restarted if it ends on its own),
// the heartbeat that releases the jobs of dead workers (heartbeat.ts), and
// the sweep of unpaid orders past their deadline (expirySweep.ts).

export interface WorkerHandle {
  runner: Runner;
  stop(): Promise<void>;
}

const workerLogger = new Logger(graphileLogFactory("graphile-worker"));

export async function startWorker(config: Config, urls: DatabaseUrls): Promise<WorkerHandle> {
  const pool = new pg.Pool({ connectionString: urls.owner, max: config.WORKER_CONCURRENCY + 2 });
  pool.on("error", (err) => logger.warn({ err }, "worker: idle database connection failed"));
  pool.on("connect", (client) => client.on("error", (err) => logger.warn({ err }, "worker: database connection failed")));

  const workerIds = new Set<string>();
  const events: WorkerEvents = new EventEmitter() as WorkerEvents;
  const everyWorkerId = new Set<string>();
  events.on("worker:create", ({ worker }) => {
    workerIds.add(worker.workerId);
    everyWorkerId.add(worker.workerId);
  });
  events.on("worker:release", ({ worker }) => workerIds.delete(worker.workerId));

  const stripe = makeStripeClient(config);
  const supervisor = await supervisedRunner({
    pgPool: pool,
    taskList: observedTasks({
      ...taskList,
      notification__send_webhook: notification__send_webhook(config),
      payment_intent__cancel: payment_intent__cancel(stripe),
      refund__pay: refund__pay(stripe),
    }),
    concurrency: config.WORKER_CONCURRENCY,
    noHandleSignals: true,
    pollInterval: 1000,
    events,
    crontab,
    logger: workerLogger,
  });
  const stopHeartbeat = await startHeartbeat(pool, workerIds);
  const stopSweep = startExpirySweep(pool);
  logger.info({ concurrency: config.WORKER_CONCURRENCY, tasks: Object.keys(taskList) }, "worker started");

  let stopping: Promise<void> | null = null;
  return {
    get runner() {
      return supervisor.runner;
    },
    stop() {
      stopping ??= (async () => {
        supervisor.halt();
        stopHeartbeat();
        await stopSweep();
        // Running jobs finish; queued ones stay for the next worker; any job
        // still locked by this process's workers is released for a retry.
        await supervisor.stop();
        await pool
          .query("select graphile_worker.force_unlock_workers($1::text[])", [[...everyWorkerId]])
          .catch((err: unknown) => logger.warn({ err: (err as Error).message }, "could not release this process's jobs"));
        await pool.query("delete from app_private.worker_heartbeats where worker_id = any($1::text[])", [[...everyWorkerId]]).catch(() => {});
        await pool.end();
      })();
      return stopping;
    },
  };
}
