import type { IncomingMessage, ServerResponse } from "node:http";
import type { Config } from "../config.ts";
import type { Registry } from "prom-client";
import { registry } from "../metrics.ts";
import { bearerToken, sameSecret } from "../bearer.ts";
import { ROUTE_ERRORS } from "../../common/errorCatalogue.ts";
import { sendJson } from "../payments/delivery.ts";

// GET /metrics (Prometheus). With METRICS_TOKEN set, only for a scraper
// that sends it as a bearer token; in production, off (404) without one, so
// no deployment shows its traffic to the world by default. The router
// (src/http/router.ts) calls the handler straight; a worker-only process
// serves it with the worker's metrics on its own port
// (src/worker/metricsListener.ts).

/** The /metrics handler for `metrics` (the process's registry), or null when /metrics is off. */
export function metricsHandler(config: Config, metrics: Registry = registry): ((req: IncomingMessage, res: ServerResponse) => void) | null {
  const token = config.METRICS_TOKEN;
  if (!config.METRICS || (config.isProduction && !token)) return null;
  return (req, res) => {
    if (token) {
      const given = bearerToken(req.headers.authorization);
      if (given === undefined || !sameSecret(given, token)) {
        res.setHeader("www-authenticate", 'Bearer realm="metrics"');
        return sendJson(res, ROUTE_ERRORS.UNAUTHORIZED.status, { error: { code: "UNAUTHORIZED", message: "A valid Authorization: Bearer <metrics token> is required." } });
      }
    }
    void metrics.metrics().then(
      (text) => {
        res.setHeader("content-type", metrics.contentType);
        res.end(text);
      },
      () => {
        res.statusCode = 500;
        res.end();
      },
    );
  };
}
