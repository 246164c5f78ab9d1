import { ConfigError, loadConfig, type Config } from "./config.ts";
import { prepareDatabase, resetDatabase, resolveDatabaseUrls, startEmbeddedPostgres, type EmbeddedServer } from "./db/database.ts";
import { developmentJwtSecret, developmentSecretFile } from "./db/devSecret.ts";
import { logger, setLogFormat } from "./logger.ts";
import { printBanner } from "./banner.ts";
import { stopTracing } from "./tracing.ts";
import { startApi, type ApiServer } from "./server.ts";
import { startWorker, type WorkerHandle } from "./worker/worker.ts";

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
  /** The demo accounts in the database (demo data on), for the banner. */
  demoAccounts: Array<{ email: string; role: string }>;
  stop(): Promise<void>;
}

export async function startService(config: Config, argv: readonly string[] = []): Promise<Service> {
  const only = argv.includes("--api") ? "api" : argv.includes("--worker") ? "worker" : null;
  const reset = argv.includes("--reset");
  if (reset && config.isProduction && !argv.includes("--force")) {
    throw new ConfigError("npm run db:reset drops the database: refused when NODE_ENV=production (run `npm run db:reset -- --force` to mean it)");
  }
  let embedded: EmbeddedServer | null = null;
  let databaseUrl = config.DATABASE_URL;
  if (!databaseUrl) {
    // Its own process group: a Ctrl-C reaches the service, which stops the
    // database after draining (stop() below), not both at once.
    embedded = await startEmbeddedPostgres(config, { ownProcessGroup: true });
    databaseUrl = embedded.url.replace(/\/postgres$/, "/cafe");
  }
  const urls = await resolveDatabaseUrls(config, databaseUrl);
  if (reset) await resetDatabase(urls);
  const { demoAccounts } = await prepareDatabase(urls, config, { demoData: config.demoData });
  if (argv.some((a) => ONE_SHOT.includes(a))) {
    await embedded?.stop();
    return { config, api: null, worker: null, demoAccounts, stop: async () => {} };
  }
  if (!config.JWT_SECRET) {
    // Outside production (loadConfig requires it there): this data directory's own random secret.
    config.JWT_SECRET = developmentJwtSecret(config);
    logger.info({ file: developmentSecretFile(config) }, "JWT_SECRET unset: using this data directory's development secret");
  }
  const api = only !== "worker" && config.RUN_API ? await startApi(config, urls) : null;
  const worker = only !== "api" && config.RUN_WORKER ? await startWorker(config, urls) : null;
  let stopping: Promise<void> | null = null;
  return {
    config,
    api,
    worker,
    demoAccounts,
    stop() {
      stopping ??= (async () => {
        await api?.close();
        await worker?.stop();
        await embedded?.stop();
      })();
      return stopping;
    },
  };
}

/** The program (src/main.ts runs it once the .env file is read and tracing, if asked for, started). */
export async function main(envFile: string | null): Promise<void> {
  // A library's stray promise (e.g. graphile-worker completing jobs while the
  // database is down) must not take the API down with it; the worker is
  // supervised and restarts itself.
  process.on("unhandledRejection", (reason) => {
    logger.error({ err: reason instanceof Error ? reason.message : String(reason) }, "unhandled rejection (kept running)");
  });
  // Every variable validated (a ConfigError here or later in start-up ends
  // the process with its message).
  const config = loadConfig();
  logger.level = config.LOG_LEVEL;
  setLogFormat(config.LOG_FORMAT);
  if (envFile) logger.info({ envFile }, "read variables from the .env file (the real environment wins)");
  const service = await startService(config, process.argv.slice(2));
  if (process.argv.some((a) => ONE_SHOT.includes(a))) return;
  printBanner(config, { port: service.api?.port ?? null, worker: service.worker !== null, demoAccounts: service.demoAccounts });
  // SIGTERM (a supervisor), SIGINT (Ctrl-C) and SIGHUP (the terminal closed)
  // each stop the service and then its embedded database, which would
  // otherwise outlive this process in its own process group. A second
  // signal (Ctrl-C reaches every process of the group, the launcher relays
  // it too) changes nothing.
  let signalled = false;
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    process.on(signal, () => {
      if (signalled) return;
      signalled = true;
      logger.info({ signal }, "shutting down");
      const force = setTimeout(() => {
        logger.error("shutdown took too long; exiting");
        process.exit(1);
      }, 25_000);
      force.unref();
      service
        .stop()
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
}
