import type express from "express";
import type { DatabaseHealth } from "../db/dbHealth.ts";

// GET /healthz: the process answers. GET /readyz: and the database too
// (asked now on the probe's own connection, not the last ping's answer and
// never through the request pool): 503 only while it cannot be reached; a
// full pool is busy, not down, and /readyz still answers ready.

export function installHealthRoutes(app: express.Express, health: DatabaseHealth): void {
  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", async (_req, res) => {
    if (await health.probe()) res.json({ status: "ready", database: "up" });
    else res.status(503).json({ status: "unavailable", database: "down" });
  });
}
