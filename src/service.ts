import { ConfigError, loadConfig, type Config } from "./config.ts";
import { EMBEDDED_DATABASE, prepareDatabase, resetDatabase, resolveDatabaseUrls, startEmbeddedPostgres } from "./db/database.ts";
import { developmentJwtSecret, developmentSecretFile } from "./db/devSecret.ts";
import { logger, setLogFormat } from "./logger.ts";
import { printBanner } from "./banner.ts";
import { stopTracing } from "./tracing.ts";
import { startApi, type ApiServer } from "./server.ts";
import { startWorker, type WorkerHandle } from "./worker/worker.ts";
import { startWorkerMetrics, type WorkerMetricsListener } from "./worker/metricsListener.ts";
import { Lifecycle, StartupStopped } from "./shutdown.ts";

// The service (`npm start`, through src/main.ts): prepare the database, then serve the API and run the worker in
// this process. `--api` or `--worker` runs one of them (to scale out);
// `--migrate-only` prepares the database and exits; `--reset` (npm run
// db:reset) drops the database first, refused in production without --force.

/** Arguments that prepare the database and exit. */
const ONE_SHOT = ["--migrate-only", "--reset"];

export interface Service {
  config: Config;
  api: ApiServer | null;
  worker: WorkerHandle | null;
  /** A worker-only process's /metrics listener (WORKER_METRICS_PORT). */
  workerMetrics: WorkerMetricsListener | null;
  /** The demo accounts in the database (demo data on), for the banner. */
  demoAccounts: Array<{ email: string; role: string }>;
  stop(): Promise<void>;
}

/**
 * Starts the service, each step through `lifecycle` (src/shutdown.ts): a stop
 * asked at any moment (main()'s signal handlers) stops what has started so
 * far, the embedded PostgreSQL included, and start-up goes no further.
 */
export async function startService(config: Config, argv: readonly string[] = [], lifecycle = new Lifecycle()): Promise<Service> {
  const only = argv.includes("--api") ? "api" : argv.includes("--worker") ? "worker" : null;
  const reset = argv.includes("--reset");
  if (reset && config.isProduction && !argv.includes("--force")) {
    throw new ConfigError("npm run db:reset drops the database: refused when NODE_ENV=production (run `npm run db:reset -- --force` to mean it)");
  }
  let databaseUrl = config.DATABASE_URL;
  if (!databaseUrl) {
    // Its own process group: a Ctrl-C reaches the service, which stops the
    // database after draining (stop() below), not both at once.
    const embedded = await lifecycle.step(
      "embedded PostgreSQL",
      () => startEmbeddedPostgres(config, { ownProcessGroup: true }),
      (server) => server.stop(),
    );
    databaseUrl = embedded.url.replace(/\/postgres$/, `/${EMBEDDED_DATABASE}`);
  }
  const urls = await lifecycle.step("database URLs", () => resolveDatabaseUrls(config, databaseUrl));
  if (reset) await lifecycle.step("reset", () => resetDatabase(urls));
  const resetRolePasswords = argv.includes("--reset-role-passwords");
  const { demoAccounts } = await lifecycle.step("migrations", () => prepareDatabase(urls, config, { demoData: config.demoData, resetRolePasswords }));
  if (argv.some((a) => ONE_SHOT.includes(a))) {
    await lifecycle.stop();
    return { config, api: null, worker: null, workerMetrics: null, demoAccounts, stop: async () => {} };
  }
  if (!config.JWT_SECRET) {
    // Outside production (loadConfig requires it there): this data directory's own random secret.
    config.JWT_SECRET = developmentJwtSecret(config);
    logger.info({ file: developmentSecretFile(config) }, "JWT_SECRET unset: using this data directory's development secret");
  }
  const api =
    only !== "worker" && config.RUN_API
      ? await lifecycle.step(
          "API",
          () => startApi(config, urls),
          (a) => a.close(),
        )
      : null;
  const worker =
    only !== "api" && config.RUN_WORKER
      ? await lifecycle.step(
          "worker",
          () => startWorker(config, urls),
          (w) => w.stop(),
        )
      : null;
  // Without the API, nothing else serves /metrics: the worker's own listener.
  const workerMetrics =
    worker && !api
      ? await lifecycle.step(
          "worker metrics",
          () => startWorkerMetrics(config),
          (m) => m?.close(),
        )
      : null;
  return { config, api, worker, workerMetrics, demoAccounts, stop: () => lifecycle.stop() };
}

/**
 * The program (src/main.ts runs it once the .env file is read and tracing,
 * if asked for, started; `takeOverSignals` removes main.ts's own handlers,
 * which until now ended the process at once: nothing had started).
 */
export async function main(envFile: string | null, takeOverSignals: () => void = () => {}): Promise<void> {
  // Signals first: a stop at any moment of start-up (the first run's
  // initialisation, the migrations, the API listening while the worker
  // starts) stops what has started, the embedded PostgreSQL included, and
  // exits 0. SIGTERM (a supervisor), SIGINT (Ctrl-C) and SIGHUP (the
  // terminal closed); a second signal (Ctrl-C reaches every process of the
  // group, the launcher relays it too) changes nothing.
  const lifecycle = new Lifecycle();
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    process.on(signal, () => {
      if (lifecycle.stopping) return;
      logger.info({ signal }, "shutting down");
      const force = setTimeout(() => {
        logger.error("shutdown took too long; exiting");
        process.exit(1);
      }, 25_000);
      force.unref();
      lifecycle
        .stop(signal)
        .then(stopTracing)
        .then(
          () => {
            logger.info("stopped");
            process.exit(0);
          },
          (err) => {
            logger.error({ err }, "shutdown failed");
            process.exit(1);
          },
        );
    });
  }
  takeOverSignals();
  // A library's stray promise (e.g. graphile-worker completing jobs while the
  // database is down) must not take the API down with it; the worker is
  // supervised and restarts itself.
  process.on("unhandledRejection", (reason) => {
    logger.error({ err: reason instanceof Error ? reason.message : String(reason) }, "unhandled rejection (kept running)");
  });
  // Every variable validated (a ConfigError here or later in start-up stops
  // what has started and ends the process with its message).
  const config = loadConfig();
  logger.level = config.LOG_LEVEL;
  setLogFormat(config.LOG_FORMAT);
  if (envFile) logger.info({ envFile }, "read variables from the .env file (the real environment wins)");
  let service: Service;
  try {
    service = await startService(config, process.argv.slice(2), lifecycle);
  } catch (err) {
    if (err instanceof StartupStopped) return; // the signal handler stops what started and exits
    await lifecycle.stop("a failed start-up");
    throw err;
  }
  if (process.argv.some((a) => ONE_SHOT.includes(a))) return;
  printBanner(config, { port: service.api?.port ?? null, worker: service.worker !== null, workerMetricsPort: service.workerMetrics?.port ?? null, demoAccounts: service.demoAccounts });
}
