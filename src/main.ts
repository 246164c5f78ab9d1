import "./envDefaults.ts";
import { ConfigError, loadConfig, type Config } from "./config.ts";
import { prepareDatabase, resolveDatabaseUrls, startEmbeddedPostgres, type EmbeddedServer } from "./database.ts";
import { logger } from "./logger.ts";
import { startApi, type ApiServer } from "./server.ts";
import { startWorker, type WorkerHandle } from "./worker.ts";

// `npm start`: prepare the database, then serve the API and run the worker in
// this process. `--api` or `--worker` runs one of them (to scale out);
// `--migrate-only` prepares the database and exits.

export interface Service {
  config: Config;
  api: ApiServer | null;
  worker: WorkerHandle | null;
  stop(): Promise<void>;
}

export async function startService(config: Config, argv: readonly string[] = []): Promise<Service> {
  const only = argv.includes("--api") ? "api" : argv.includes("--worker") ? "worker" : null;
  let embedded: EmbeddedServer | null = null;
  let databaseUrl = config.DATABASE_URL;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres(config);
    databaseUrl = embedded.url.replace(/\/postgres$/, "/cafe");
  }
  const urls = await resolveDatabaseUrls(config, databaseUrl);
  await prepareDatabase(urls, config, { demoData: config.demoData });
  if (argv.includes("--migrate-only")) {
    await embedded?.stop();
    return { config, api: null, worker: null, stop: async () => {} };
  }
  const api = only !== "worker" && config.RUN_API ? await startApi(config, urls) : null;
  const worker = only !== "api" && config.RUN_WORKER ? await startWorker(config, urls) : null;
  let stopping: Promise<void> | null = null;
  return {
    config,
    api,
    worker,
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

async function main() {
  const major = Number(process.versions.node.split(".")[0]);
  if (major < 22) {
    console.error(`Node.js ${process.versions.node} is too old: the service needs Node >= 22.18. Run it through npm (npm start), which uses the project's own Node from node_modules/.bin.`);
    process.exit(1);
  }
  // A library's stray promise (e.g. graphile-worker completing jobs while the
  // database is down) must not take the API down with it; the worker is
  // supervised and restarts itself.
  process.on("unhandledRejection", (reason) => {
    logger.error({ err: reason instanceof Error ? reason.message : String(reason) }, "unhandled rejection (kept running)");
  });
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(1);
    }
    throw e;
  }
  const service = await startService(config, process.argv.slice(2));
  if (process.argv.includes("--migrate-only")) return;
  let signalled = false;
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      if (signalled) return;
      signalled = true;
      logger.info({ signal }, "shutting down");
      const force = setTimeout(() => {
        logger.error("shutdown took too long; exiting");
        process.exit(1);
      }, 25_000);
      force.unref();
      service.stop().then(
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

if (require.main === module) {
  main().catch((err) => {
    logger.fatal({ err }, "failed to start");
    process.exit(1);
  });
}
