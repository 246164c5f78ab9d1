import type { IncomingMessage, ServerResponse } from "node:http";
import type { Config } from "../config.ts";
import { logger } from "../logger.ts";
import { workerRegistry } from "../metrics.ts";
import { withBodyLimit } from "../http/bodyLimit.ts";
import { closeHttpServer, createHttpServer, listen } from "../http/httpServer.ts";
import { metricsHandler } from "../http/metricsRoute.ts";
import { sendJson } from "../payments/delivery.ts";
import { ROUTE_ERRORS } from "../../common/errorCatalogue.ts";

// A worker-only process (`npm run start:worker`) has no API, so nothing
// served its jobs' histograms. This listener serves GET /metrics on
// WORKER_METRICS_PORT, with the API's handler and its rules (METRICS,
// METRICS_TOKEN; in production off without a token), over the worker's
// registry (src/metrics.ts); every other path is 404.

export interface WorkerMetricsListener {
  port: number;
  close(): Promise<void>;
}

/** Starts the listener, or returns null when there is none (WORKER_METRICS_PORT=0, or /metrics off). */
export async function startWorkerMetrics(config: Config): Promise<WorkerMetricsListener | null> {
  const handler = config.WORKER_METRICS_PORT ? metricsHandler(config, workerRegistry()) : null;
  if (!handler) return null;
  const metrics = withBodyLimit(handler);
  const server = createHttpServer(config, (req: IncomingMessage, res: ServerResponse) => {
    if ((req.url ?? "/").split("?")[0] === "/metrics") return metrics(req, res);
    sendJson(res, ROUTE_ERRORS.NOT_FOUND.status, { error: { code: "NOT_FOUND", message: "No such route (this process runs the worker: only /metrics)." } });
  });
  const port = await listen(server, config, "WORKER_METRICS_PORT");
  logger.info({ port, metrics: `http://localhost:${port}/metrics` }, "worker metrics listening");
  return { port, close: () => closeHttpServer(server) };
}
