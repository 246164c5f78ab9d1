import type { IncomingMessage, ServerResponse } from "node:http";
import type { Config } from "../config.ts";
import type { Viewer } from "../../common/services.ts";
import { VIEWER } from "./viewer.ts";
import { RateLimiter, RequestBudget } from "./rateLimiter.ts";
import type { Source } from "./clientAddress.ts";
import { closeAfter413, declaredLength, MAX_BODY_BYTES, refuseTooLarge, sendRefusal } from "./bodyLimit.ts";

// /graphql over HTTP, the hot path, before grafserv: security headers, CORS
// (browsers only), the body limit, the bearer token (a bad or expired one is
// a 401, never a silent downgrade to anonymous), the rate limit (charged to
// the token's sign-in and account, or to the source when there is none: a
// bad token's 401 spends its source's budget too). The database's health is
// not asked here: a request that needs no SQL (the trusted `Ping`,
// `{ __typename }`) answers whatever the database does; one that needs it
// fails fast while the database is down (src/db/pool.ts) and is answered 503
// SERVICE_UNAVAILABLE, or 503 SERVICE_BUSY when the pool stayed full
// (common/errorCatalogue.ts).

type AuthedRequest = IncomingMessage & { [VIEWER]?: Viewer | null };
type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/** A sustained rate with a burst on top, per payer (GRAPHQL_RATE_LIMIT 0: off). Shared by HTTP and WebSockets. */
export function makeRateLimiter(config: Config): RequestBudget | null {
  return config.GRAPHQL_RATE_LIMIT
    ? new RequestBudget(new RateLimiter(config.GRAPHQL_RATE_BURST, 1000 * Math.max(1, Math.round(config.GRAPHQL_RATE_BURST / config.GRAPHQL_RATE_LIMIT))), {
        trustedFactor: config.TRUSTED_NETWORK_FACTOR,
        accountFactor: config.GRAPHQL_RATE_ACCOUNT_FACTOR,
      })
    : null;
}

export interface GraphQLRouteOptions {
  config: Config;
  limiter: RequestBudget | null;
  sourceOf(req: IncomingMessage): Source;
  /** Verifies an Authorization header (null: anonymous); throws AuthError for a bad, expired or revoked token. */
  viewerFrom(authorization: string | string[] | undefined): Viewer | null;
  cors: Middleware;
  /** /graphql's security headers, worked out once. */
  headers: ReadonlyArray<[string, string | string[]]>;
  /** The fast path (src/http/fastPath.ts), which hands grafserv what it does not serve. */
  next(req: IncomingMessage, res: ServerResponse): void;
}

export function makeGraphQLRoute({ limiter, sourceOf, viewerFrom, cors, headers, next }: GraphQLRouteOptions) {
  const rateLimited = (res: ServerResponse) => {
    res.setHeader("retry-after", "1");
    sendRefusal(res, "RATE_LIMITED", "Too many requests; slow down.");
  };
  const limited = (req: AuthedRequest, res: ServerResponse) => {
    const length = declaredLength(req);
    if (length > MAX_BODY_BYTES) return refuseTooLarge(res, MAX_BODY_BYTES, "graphql");
    if (Number.isNaN(length) && req.headers["transfer-encoding"] !== undefined) closeAfter413(res);
    let viewer: Viewer | null;
    try {
      viewer = viewerFrom(req.headers.authorization);
    } catch (e) {
      if (limiter && !limiter.take({ source: sourceOf(req), viewer: null })) return rateLimited(res);
      const message = e instanceof Error && e.message ? e.message : "Your token is not valid.";
      res.setHeader("www-authenticate", 'Bearer realm="cafe-api"');
      sendRefusal(res, "UNAUTHENTICATED", message);
      return;
    }
    if (limiter && !limiter.take({ source: sourceOf(req), viewer })) return rateLimited(res);
    req[VIEWER] = viewer;
    next(req, res);
  };
  return (req: AuthedRequest, res: ServerResponse) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    // CORS concerns browsers, which always send Origin on a cross-origin
    // request (and on every preflight); the answer varies by it either way.
    if (req.headers.origin === undefined && req.method !== "OPTIONS") {
      res.setHeader("vary", "Origin");
      limited(req, res);
    } else cors(req, res, () => limited(req, res));
  };
}
