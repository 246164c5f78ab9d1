import type express from "express";
import type { Config } from "../config.ts";
import { registry } from "../metrics.ts";
import { bearerToken, sameSecret } from "./bearer.ts";
import { ROUTE_ERRORS } from "../../common/errorCatalogue.ts";

// GET /metrics (Prometheus). With METRICS_TOKEN set, only for a scraper
// that sends it as a bearer token; in production, off (404) without one, so
// no deployment shows its traffic to the world by default.

export function installMetricsRoute(app: express.Express, config: Config): void {
  const token = config.METRICS_TOKEN;
  if (!config.METRICS || (config.isProduction && !token)) return;
  app.get("/metrics", async (req, res) => {
    if (token) {
      const given = bearerToken(req.headers.authorization);
      if (given === undefined || !sameSecret(given, token)) {
        res.setHeader("www-authenticate", 'Bearer realm="metrics"');
        res.status(ROUTE_ERRORS.UNAUTHORIZED.status).json({ error: { code: "UNAUTHORIZED", message: "A valid Authorization: Bearer <metrics token> is required." } });
        return;
      }
    }
    res.setHeader("content-type", registry.contentType);
    res.send(await registry.metrics());
  });
}
