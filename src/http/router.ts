import type { IncomingMessage, ServerResponse } from "node:http";
import type { Config } from "../config.ts";
import { declaredLength, MAX_BODY_BYTES, refuseTooLarge } from "./bodyLimit.ts";
import { isBrowserVisit, redirectToIde } from "./homeRoute.ts";
import type { makeSecurityHeaders } from "./securityHeaders.ts";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface RouterParts {
  config: Config;
  /** /graphql's checks, then grafserv (src/http/graphqlRoute.ts). */
  graphqlRoute: Handler;
  /**
   * Paths answered straight by their handler, with the page's security
   * headers: the payment providers' routes (src/payments/: each reads and
   * limits its own body), /healthz, /readyz, /metrics.
   */
  direct: Record<string, Handler>;
  /** grafserv's handler (/graphiql, its static files), falling through to `next`. */
  graphqlHandler: (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
  /** Everything else: the Express app (the home page, 404). */
  app: Handler;
  securityHeaders: ReturnType<typeof makeSecurityHeaders>;
}

/**
 * Which handler answers a request: /graphql through its checks (a browser
 * visit goes to the IDE); the direct routes (payment providers, health,
 * metrics) straight to their handlers; the rest with their security headers
 * and the body limit, to grafserv and then Express. While draining
 * (shutdown), every answer says `Connection: close`.
 */
export function makeRouter({ config, graphqlRoute, direct, graphqlHandler, app, securityHeaders }: RouterParts) {
  let draining = false;
  const routes = new Map(Object.entries(direct));
  const route = (req: IncomingMessage, res: ServerResponse, path: string) => {
    if (draining) res.setHeader("connection", "close");
    if (path === "/graphql") return config.graphiql && isBrowserVisit(req) ? redirectToIde(res) : graphqlRoute(req, res);
    const handler = routes.get(path);
    if (handler) return securityHeaders.page(req, res, () => handler(req, res));
    const tooLarge = declaredLength(req) > MAX_BODY_BYTES;
    const headers = path === "/graphiql" || path.startsWith("/ruru-static") ? securityHeaders.ide : securityHeaders.page;
    headers(req, res, () => (tooLarge ? refuseTooLarge(res, MAX_BODY_BYTES, "rest") : graphqlHandler(req, res, () => app(req, res))));
  };
  return {
    route,
    /** From now on, answers close their connection. */
    drain() {
      draining = true;
    },
  };
}
