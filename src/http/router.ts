import type { IncomingMessage, ServerResponse } from "node:http";
import type { Config } from "../config.ts";
import type { Viewer } from "../../common/services.ts";
import { REQUEST_ID_HEADER, requestIdFrom, requestScope, type RequestScope } from "../requestScope.ts";
import { refusedConnection } from "./connectionLimit.ts";
import { pathOf, trackRequest } from "./accessLog.ts";
import { closeAfter413, declaredLength, MAX_BODY_BYTES, noteRequest, refuseTooLarge, sendRefusal } from "./bodyLimit.ts";
import { isBrowserVisit, redirectToIde } from "./homeRoute.ts";
import type { SecurityHeaders } from "./securityHeaders.ts";
import type { RequestBudget } from "./rateLimiter.ts";
import type { Source } from "./clientAddress.ts";
import { VIEWER, type RequestWithViewer } from "./viewer.ts";

// The HTTP request pipeline: every request goes through these steps, in this
// order, each one answering it or handing it to the next:
//
//   1. connection limit  a connection refused for its source's count (src/http/connectionLimit.ts) gets nothing more;
//   2. request id        the caller's X-Request-Id made safe, or a new one: echoed, and carried by every log line written for it;
//   3. access log        one line per request and the request counter (src/http/accessLog.ts);
//   4. routes            /graphql goes on (a browser's visit goes to the IDE); every other route is answered here, with its
//                        security headers: the direct routes straight by their handlers (the payment providers, each
//                        a module of src/payments/ that reads and limits its own body; /healthz, /readyz, /metrics),
//                        the rest with the body limit by grafserv (/graphiql, Ruru's files), then Express (the home
//                        page, 404);
//   5. CORS              browsers only (they always send Origin on a cross-origin request and on every preflight);
//   6. body              over MAX_BODY_BYTES: 413, before a byte of it is read;
//   7. token             a bad, expired or revoked bearer token is a 401 (spending its source's budget), never a silent
//                        downgrade to anonymous;
//   8. rate limit        charged to the token's sign-in and account, or to the source when there is none (src/http/rateLimiter.ts),
//                        and later the CPU of a document not seen before (GRAPHQL_DOCUMENT_WORK_US);
//   9. fast path         trusted and cached documents answered without grafserv's request machinery (src/http/fastPath.ts);
//  10. grafserv          the rest; what it does not serve falls through to Express.
//
// The database's health is not asked on the way: a request that needs no SQL
// answers whatever the database does; one that needs it fails fast while the
// database is down (src/db/pool.ts): 503 SERVICE_UNAVAILABLE, or
// SERVICE_BUSY when the pool stayed full. The steps are chained once, at
// start-up: a request allocates no closure on its way down.

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
/** One step: answers the request, or hands it to `next`. */
export type Step = (req: IncomingMessage, res: ServerResponse, next: Handler) => void;
type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

export interface PipelineParts {
  config: Config;
  sourceOf(req: IncomingMessage): Source;
  /** Verifies an Authorization header (null: anonymous); throws AuthError for a bad, expired or revoked token. */
  viewerFrom(authorization: string | string[] | undefined): Viewer | null;
  /** /graphql's budget (null: GRAPHQL_RATE_LIMIT=0). */
  limiter: RequestBudget | null;
  cors: Middleware;
  securityHeaders: SecurityHeaders;
  fastPath: Step;
  /** Paths answered straight by their handler (the payment providers, health, metrics). */
  direct: Record<string, Handler>;
  /** grafserv's handler, falling through to `next`. */
  graphqlHandler: (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
  /** Everything else: the Express app. */
  app: Handler;
}

/** Chains the steps, each one's `next` being the following one, the last one's `end`. */
function chain(steps: Step[], end: Handler): Handler {
  return steps.reduceRight<Handler>((next, step) => (req, res) => step(req, res, next), end);
}

export function makeRequestPipeline({ config, sourceOf, viewerFrom, limiter, cors, securityHeaders, fastPath, direct, graphqlHandler, app }: PipelineParts) {
  let draining = false;
  const directRoutes = new Map(Object.entries(direct));
  const grafservThenExpress: Handler = (req, res) => graphqlHandler(req, res, () => app(req, res));
  const rateLimited = (res: ServerResponse) => {
    res.setHeader("retry-after", "1");
    sendRefusal(res, "RATE_LIMITED", "Too many requests; slow down.");
  };

  const connectionLimit: Step = (req, res, next) => {
    if (!refusedConnection(req.socket)) next(req, res);
  };

  const requestId: Step = (req, res, next) => {
    const scope: RequestScope = { id: requestIdFrom(req.headers[REQUEST_ID_HEADER]) };
    res.setHeader(REQUEST_ID_HEADER, scope.id);
    requestScope.run(scope, next, req, res);
  };

  const accessLog: Step = (req, res, next) => {
    noteRequest(req);
    trackRequest(req, res, pathOf(req.url), requestScope.getStore()!, sourceOf);
    next(req, res);
  };

  const routes: Step = (req, res, next) => {
    if (draining) res.setHeader("connection", "close");
    const path = pathOf(req.url);
    if (path === "/graphql") {
      if (config.graphiql && isBrowserVisit(req)) return redirectToIde(res);
      for (const [name, value] of securityHeaders.api) res.setHeader(name, value);
      return next(req, res);
    }
    const handler = directRoutes.get(path);
    if (handler) return securityHeaders.page(req, res, () => handler(req, res));
    const tooLarge = declaredLength(req) > MAX_BODY_BYTES;
    const headers = path === "/graphiql" || path.startsWith("/ruru-static") ? securityHeaders.ide : securityHeaders.page;
    headers(req, res, () => (tooLarge ? refuseTooLarge(res, MAX_BODY_BYTES, "rest") : grafservThenExpress(req, res)));
  };

  const corsStep: Step = (req, res, next) => {
    // The answer varies by Origin either way.
    if (req.headers.origin === undefined && req.method !== "OPTIONS") {
      res.setHeader("vary", "Origin");
      next(req, res);
    } else cors(req, res, () => next(req, res));
  };

  const body: Step = (req, res, next) => {
    const length = declaredLength(req);
    if (length > MAX_BODY_BYTES) return refuseTooLarge(res, MAX_BODY_BYTES, "graphql");
    if (Number.isNaN(length) && req.headers["transfer-encoding"] !== undefined) closeAfter413(res);
    next(req, res);
  };

  const token: Step = (req: RequestWithViewer, res, next) => {
    try {
      req[VIEWER] = viewerFrom(req.headers.authorization);
    } catch (e) {
      if (limiter && !limiter.take({ source: sourceOf(req), viewer: null })) return rateLimited(res);
      res.setHeader("www-authenticate", 'Bearer realm="cafe-api"');
      sendRefusal(res, "UNAUTHENTICATED", e instanceof Error && e.message ? e.message : "Your token is not valid.");
      return;
    }
    next(req, res);
  };

  const rateLimit: Step = (req: RequestWithViewer, res, next) => {
    if (!limiter) return next(req, res);
    const payer = { source: sourceOf(req), viewer: req[VIEWER] ?? null };
    if (!limiter.take(payer)) return rateLimited(res);
    // The work the request then makes (a document not seen before) is charged to it too.
    requestScope.getStore()!.payer = payer;
    next(req, res);
  };

  const handle = chain([connectionLimit, requestId, accessLog, routes, corsStep, body, token, rateLimit, fastPath], grafservThenExpress);
  return {
    handle,
    /** From now on, answers close their connection. */
    drain() {
      draining = true;
    },
  };
}
