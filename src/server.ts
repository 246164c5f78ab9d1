import http, { type IncomingMessage, type ServerResponse } from "node:http";
import express from "express";
import pg from "pg";
import { postgraphile } from "postgraphile";
import { grafserv } from "postgraphile/grafserv/node";
import type { Config } from "./config.ts";
import { databaseName, type DatabaseUrls } from "./db/database.ts";
import { viewerFromAuthorization } from "./auth.ts";
import { makePreset } from "./preset.ts";
import { logger } from "./logger.ts";
import { ReconnectingPgSubscriber } from "./subscriber.ts";
import { RevokedSignIns } from "./db/revocations.ts";
import { RoleLimits } from "./db/roleLimits.ts";
import { TableSizes } from "./db/tableSizes.ts";
import { DatabaseHealth } from "./db/dbHealth.ts";
import { openApiPool, openCallbackPool } from "./db/pool.ts";
import { BlockedSources } from "./payments/blockList.ts";
import { installConnectionLimit, refusedConnection } from "./http/connectionLimit.ts";
import { registerPoolAndQueueMetrics } from "./metrics.ts";
import { CALLBACK_PATH, paymentCallbackRouter } from "./http/paymentCallback.ts";
import { installPaymentAlerts } from "./payments/alerts.ts";
import { declaredLength, installLingeringClose, MAX_BODY_BYTES, noteRequest, refuseTooLarge } from "./http/bodyLimit.ts";
import { makeCors } from "./http/cors.ts";
import { makeClientAddress } from "./http/clientAddress.ts";
import { makeGraphQLRoute, makeRateLimiter } from "./http/graphqlRoute.ts";
import { makeSecurityHeaders } from "./http/securityHeaders.ts";
import { installMetricsRoute } from "./http/metricsRoute.ts";
import { installHealthRoutes } from "./http/healthRoutes.ts";
import { installHomeRoute, isBrowserVisit, redirectToIde } from "./http/homeRoute.ts";
import { installWebSocket } from "./http/websocket.ts";
import { pathOf, trackRequest } from "./http/accessLog.ts";
import { REQUEST_ID_HEADER, requestIdFrom, requestScope, type RequestScope } from "./http/requestScope.ts";

// The HTTP server: /graphql goes through its checks (src/http/graphqlRoute.ts)
// straight to grafserv's node:http adaptor (the fast path), /graphiql to
// grafserv too, everything else to an Express app (health checks, metrics,
// the payment callback). WebSockets on /graphql speak graphql-ws
// (src/http/websocket.ts). Every request gets an id and a line in the access
// log; a body over its limit, a 413 the client can read (src/http/).

/** How often Node looks for requests past their headers or request timeout. */
const CONNECTIONS_CHECKING_INTERVAL_MS = 250;

export interface ApiServer {
  server: http.Server;
  subscriber: ReconnectingPgSubscriber;
  revokedSignIns: RevokedSignIns;
  roleLimits: RoleLimits;
  tableSizes: TableSizes;
  pool: pg.Pool;
  /** The payment callback's own pool. */
  callbackPool: pg.Pool;
  /** Whether the database can be reached (probed on its own connection). */
  health: DatabaseHealth;
  port: number;
  close(): Promise<void>;
}

export async function startApi(config: Config, urls: DatabaseUrls): Promise<ApiServer> {
  if (!config.JWT_SECRET) throw new Error("startApi needs a JWT secret (startService fills in the development one)");
  // The database: the authenticator's pool and its health, LISTEN/NOTIFY,
  // the sign-ins Postgres revoked (src/db/).
  // Health is probed on a connection of its own: a full pool is busy, not down.
  const health = new DatabaseHealth(urls.authenticator);
  const apiPool = openApiPool(config, urls, health);
  const pool = apiPool.pool;
  const subscriber = new ReconnectingPgSubscriber(urls.authenticator);
  const revokedSignIns = new RevokedSignIns(subscriber, pool, config.JWT_EXPIRES_IN_SECONDS);
  // Each request role's statement and lock timeouts, as the DBA sets them.
  const roleLimits = new RoleLimits(subscriber, pool);
  // Table sizes, for pricing what a totalCount scans.
  const tableSizes = new TableSizes(pool);

  // The payment callback's own pool and its block list, in memory.
  const callbackPool = openCallbackPool(config, urls);
  const blockedSources = new BlockedSources(callbackPool, subscriber);

  // Who calls: the address TRUST_PROXY lets us believe and its source (one
  // definition for every limiter), the bearer token.
  const sources = makeClientAddress(config.TRUST_PROXY, config.TRUSTED_NETWORKS);
  const { trust, clientAddress, sourceOf } = sources;
  const viewerFrom = (authorization: string | string[] | undefined) => viewerFromAuthorization(config.JWT_SECRET, authorization, revokedSignIns.has);
  const viewerFromConnectionParams = (params: Record<string, unknown> | undefined) => viewerFrom(params?.authorization as string | undefined);

  // GraphQL: the preset (src/preset.ts, plugins/) served by grafserv.
  const revocationsCaughtUp = () => revokedSignIns.caughtUp();
  // Watch mode: development only (NODE_ENV=development, `npm start`'s
  // default) with a superuser (DATABASE_URL a superuser's, or the embedded
  // server); tests (NODE_ENV=test) and production never watch.
  // Our own superuser pool (rather than PostGraphile's): it closes idle
  // connections at once (it is used once, to install the watch fixtures) and
  // is ended, quietly, at shutdown.
  const watchPool =
    config.NODE_ENV === "development" && urls.root ? new pg.Pool({ connectionString: onDatabase(urls.root, databaseName(urls.owner)), max: 1, idleTimeoutMillis: 100 }) : null;
  watchPool?.on("error", (e) => logger.debug({ err: e }, "watch-mode superuser connection closed"));
  const watch = watchPool ? { superuserPool: watchPool } : undefined;
  const pgl = postgraphile(makePreset({ config, pool, pgSubscriber: subscriber as never, viewerFromConnectionParams, clientAddress, sourceOf, revocationsCaughtUp, limitsOf: roleLimits.settingsFor, tableRows: tableSizes, watch }));
  const serv = pgl.createServ(grafserv);
  const graphqlHandler = serv.createHandler();

  // Everything else: Express.
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", trust);
  app.use(paymentCallbackRouter({ config, pool: callbackPool, health, blocked: blockedSources, sourceOf }));
  installHealthRoutes(app, health);
  installMetricsRoute(app, config);
  installHomeRoute(app, config);
  app.use((_req, res) => {
    res.status(404).json({ error: { code: "NOT_FOUND", message: "No such route." } });
  });

  // The HTTP server: /graphql's checks, the other routes' headers and body limit.
  const securityHeaders = makeSecurityHeaders();
  const cors = makeCors(config);
  const limiter = makeRateLimiter(config);
  const graphqlRoute = makeGraphQLRoute({
    config,
    limiter,
    sourceOf,
    viewerFrom,
    cors: cors.handler,
    headers: securityHeaders.api,
    next: (req, res) => graphqlHandler(req, res, () => app(req, res)),
  });

  let draining = false;
  const route = (req: IncomingMessage, res: ServerResponse, path: string) => {
    if (draining) res.setHeader("connection", "close");
    if (path === "/graphql") return config.graphiql && isBrowserVisit(req) ? redirectToIde(res) : graphqlRoute(req, res);
    // The payment callback reads (and logs) its own body, up to its own limit.
    const tooLarge = path !== CALLBACK_PATH && declaredLength(req) > MAX_BODY_BYTES;
    const headers = path === "/graphiql" || path.startsWith("/ruru-static") ? securityHeaders.ide : securityHeaders.page;
    headers(req, res, () => (tooLarge ? refuseTooLarge(res, MAX_BODY_BYTES, "rest") : graphqlHandler(req, res, () => app(req, res))));
  };
  // Slow clients may not hold connections for ever (slow-loris): the headers
  // and the whole request must arrive in time. Node checks these every
  // connectionsCheckingInterval (30 s by default, which let requests live
  // 33-38 s against 15 s / 30 s); checked every 250 ms they hold to within
  // a second.
  const timeouts = {
    headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
    connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
  };
  const server = http.createServer(timeouts, (req, res) => {
    // A connection refused for its source's count gets nothing more.
    if (refusedConnection(req.socket)) return;
    // The caller's id (made safe) or a new one: echoed, logged, and carried
    // by every log line written while serving the request.
    const scope: RequestScope = { id: requestIdFrom(req.headers[REQUEST_ID_HEADER]) };
    res.setHeader(REQUEST_ID_HEADER, scope.id);
    const path = pathOf(req.url);
    noteRequest(req);
    trackRequest(req, res, path, scope);
    requestScope.run(scope, route, req, res, path);
  });
  installLingeringClose(server);
  installConnectionLimit(server, sources, config.HTTP_MAX_CONNECTIONS_PER_SOURCE, config.TRUSTED_NETWORK_FACTOR);
  // WebSockets on /graphql: graphql-ws.
  const websockets = installWebSocket(server, {
    config,
    serv,
    sourceOf,
    limiter,
    originAllowed: cors.originAllowed,
    viewerFromConnectionParams,
    onRevoked: (signInId, then) => revokedSignIns.onRevoked(signInId, then),
  });

  const unregisterMetrics = registerPoolAndQueueMetrics(pool, websockets.sockets, () => subscriber.listeningTopics.length);
  const stopPaymentAlerts = installPaymentAlerts(subscriber);

  await revokedSignIns.ready;
  await blockedSources.ready;
  await roleLimits.ready;
  await tableSizes.ready;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.PORT, config.HOST, () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.PORT;
  logger.info({ port, graphql: `http://localhost:${port}/graphql`, graphiql: config.graphiql ? `http://localhost:${port}/graphiql` : undefined }, "API listening");

  let closing: Promise<void> | null = null;
  return {
    server,
    subscriber,
    revokedSignIns,
    roleLimits,
    tableSizes,
    pool,
    callbackPool,
    health,
    port,
    close() {
      closing ??= (async () => {
        draining = true;
        websockets.close();
        // Keep serving briefly, answering with `Connection: close`: a request
        // already on its way over a keep-alive connection is answered, not
        // reset (server.close() drops idle keep-alive sockets at once).
        if (config.SHUTDOWN_GRACE_MS) await new Promise((r) => setTimeout(r, config.SHUTDOWN_GRACE_MS));
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
          setTimeout(() => server.closeAllConnections(), 5_000).unref();
        });
        await stopPaymentAlerts();
        await blockedSources.stop();
        await pgl.release();
        await watchPool?.end();
        revokedSignIns.stop();
        roleLimits.stop();
        tableSizes.stop();
        subscriber.release();
        await health.stop();
        apiPool.stop();
        limiter?.stop();
        unregisterMetrics();
        await pool.end();
        await callbackPool.end();
      })();
      return closing;
    },
  };
}

/** `url` with another database. */
function onDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}
