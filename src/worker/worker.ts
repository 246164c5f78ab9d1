import { EventEmitter } from "node:events";
import os from "node:os";
import pg from "pg";
import { Logger, run, type Runner, type WorkerEvents } from "graphile-worker";
import type { Config } from "../config.ts";
import type { DatabaseUrls } from "../db/database.ts";
import { graphileLogFactory, logger } from "../logger.ts";
import { asSystem } from "../db/asSystem.ts";
import { crontab, taskList } from "./tasks/index.ts";
import { notification__send_webhook } from "./tasks/notification__send_webhook.ts";

// graphile-worker in this process: jobs are rows in the same database, added
// in the same transaction as the payment that causes them. Each process
// beats a heartbeat for its workers; a beat also releases jobs held by
// workers that died (SIGKILL, crash), so a paid order is prepared within
// seconds of a restart instead of after the four-hour lock timeout.
//
// Each process also sweeps unpaid orders past their deadline every second
// (app_private.expire_pending_orders, as cafe_system). A sweep rather than a
// delayed job per order: no job row for each of a flood of unpaid orders, a
// DBA's change of an order's expires_at is honoured as it stands, orders
// whose deadline passed while no worker ran go at the first sweep, and it
// costs one index scan a second (orders_expiry_idx). A payment that arrives
// between the deadline and the sweep expires the order itself.

export interface WorkerHandle {
  runner: Runner;
  stop(): Promise<void>;
}

/** Well under app_private.settings worker_dead_after_seconds (5): a live worker misses two beats before it could be taken for dead. */
const HEARTBEAT_MS = 2_000;
const EXPIRY_SWEEP_MS = 1_000;

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

  const processName = `${os.hostname()}:${process.pid}`;
  const beat = async () => {
    try {
      const { rows } = await pool.query<{ released: string[] }>("select app_private.worker_heartbeat($1, $2) as released", [processName, [...workerIds]]);
      const released = rows[0]?.released ?? [];
      if (released.length) logger.warn({ workers: released }, "released the jobs of dead workers");
    } catch (err) {
      logger.warn({ err: (err as Error).message }, "worker heartbeat failed");
    }
  };

  const options = {
    pgPool: pool,
    taskList: { ...taskList, notification__send_webhook: notification__send_webhook(config) },
    concurrency: config.WORKER_CONCURRENCY,
    noHandleSignals: true,
    pollInterval: 1000,
    events,
    crontab,
    logger: workerLogger,
  };
  let stopped = false;
  let runner = await run(options);
  // Supervision: if the runner ends on its own (e.g. the database went away
  // under it), start a new one once the database answers again.
  const supervise = (current: Runner) => {
    current.promise.then(
      () => restart(current, null),
      (err: unknown) => restart(current, err),
    );
  };
  const restart = async (current: Runner, err: unknown) => {
    if (stopped || current !== runner) return;
    logger.warn({ err: err instanceof Error ? err.message : err }, "worker stopped unexpectedly; restarting");
    for (let delay = 1000; !stopped; delay = Math.min(delay * 2, 15_000)) {
      await new Promise((r) => setTimeout(r, delay));
      try {
        runner = await run(options);
        supervise(runner);
        logger.info("worker restarted");
        return;
      } catch (e) {
        logger.warn({ err: (e as Error).message }, "worker restart failed; retrying");
      }
    }
  };
  supervise(runner);
  await beat();
  const timer = setInterval(beat, HEARTBEAT_MS);
  timer.unref();
  let sweeping = false;
  const sweep = async () => {
    if (sweeping) return; // one sweep at a time in this process
    sweeping = true;
    try {
      const n = await asSystem(pool, async (c) => (await c.query<{ n: number }>("select app_private.expire_pending_orders() as n")).rows[0]!.n);
      if (n) logger.info({ expired: n }, "cancelled unpaid orders past their deadline");
    } catch (err) {
      logger.warn({ err: (err as Error).message }, "expiry sweep failed");
    } finally {
      sweeping = false;
    }
  };
  const sweeper = setInterval(sweep, EXPIRY_SWEEP_MS);
  sweeper.unref();
  logger.info({ concurrency: config.WORKER_CONCURRENCY, tasks: Object.keys(taskList) }, "worker started");

  let stopping: Promise<void> | null = null;
  return {
    get runner() {
      return runner;
    },
    stop() {
      stopping ??= (async () => {
        stopped = true;
        clearInterval(timer);
        clearInterval(sweeper);
        for (const giveUpAt = Date.now() + 5_000; sweeping && Date.now() < giveUpAt; ) await new Promise((r) => setTimeout(r, 20));
        // Running jobs finish; queued ones stay for the next worker; any job
        // still locked by this process's workers is released for a retry.
        await runner.stop().catch((err: unknown) => logger.warn({ err: (err as Error).message }, "worker stop failed"));
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
