import type { IncomingMessage, ServerResponse } from "node:http";
import type { DatabaseHealth } from "../db/dbHealth.ts";
import { sendJson } from "../payments/delivery.ts";

// GET /healthz: the process answers. GET /readyz: and the database too
// (asked now on the probe's own connection, not the last ping's answer and
// never through the request pool): 503 only while it cannot be reached; a
// full pool is busy, not down, and /readyz still answers ready. The router
// (src/http/router.ts) calls these straight.

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export function healthHandlers(health: DatabaseHealth): Record<"/healthz" | "/readyz", Handler> {
  return {
    "/healthz": (_req, res) => sendJson(res, 200, { status: "ok" }),
    "/readyz": (_req, res) => {
      void health.probe().then(
        (up) => (up ? sendJson(res, 200, { status: "ready", database: "up" }) : sendJson(res, 503, { status: "unavailable", database: "down" })),
        () => sendJson(res, 503, { status: "unavailable", database: "down" }),
      );
    },
  };
}
