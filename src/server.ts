import type http from "node:http";
import express from "express";
import pg from "pg";
import { postgraphile } from "postgraphile";
import { grafserv } from "postgraphile/grafserv/node";
import { MEMORY_BOUNDS, type Config } from "./config.ts";
import { databaseName, type DatabaseUrls } from "./db/database.ts";
import { cachedViewerFrom } from "./auth.ts";
import { makePreset } from "./preset.ts";
import { logger } from "./logger.ts";
import { ReconnectingPgSubscriber } from "./subscriber.ts";
import { followPublicReads, LiveCache } from "./http/liveCache.ts";
import { RevokedSignIns } from "./db/revocations.ts";
import { RoleLimits } from "./db/roleLimits.ts";
import { TableSizes } from "./db/tableSizes.ts";
import { DatabaseHealth } from "./db/dbHealth.ts";
import { openApiPool, openCallbackPool, openSubscriptionPool } from "./db/pool.ts";
import { BlockedSources } from "./payments/blockList.ts";
import { connectionCap, installConnectionLimit, openFileLimit } from "./http/connectionLimit.ts";
import { registerPoolAndQueueMetrics, timePoolWaits } from "./metrics.ts";
import { CALLBACK_PATH, genericProvider } from "./payments/generic.ts";
import { STRIPE_WEBHOOK_PATH, stripeProvider } from "./payments/stripe.ts";
import { deliveryLimiter } from "./payments/delivery.ts";
import { installPaymentAlerts } from "./payments/alerts.ts";
import { installLingeringClose, withBodyLimit } from "./http/bodyLimit.ts";
import { makeCors } from "./http/cors.ts";
import { makeClientAddress } from "./http/clientAddress.ts";
import { makeRateLimiter } from "./http/rateLimiter.ts";
import { shareRateUsage } from "./db/rateUsage.ts";
import { makeFastPath } from "./http/fastPath.ts";
import { makeSecurityHeaders } from "./http/securityHeaders.ts";
import { metricsHandler } from "./http/metricsRoute.ts";
import { ROUTE_ERRORS } from "../common/errorCatalogue.ts";
import { healthHandlers } from "./http/healthRoutes.ts";
import { installHomeRoute } from "./http/homeRoute.ts";
import { installWebSocket } from "./http/websocket.ts";
import { makeRequestPipeline } from "./http/router.ts";
import { closeHttpServer, createHttpServer, listen } from "./http/httpServer.ts";
import { Shutdown } from "./shutdown.ts";
import { refusals } from "./http/refusalLog.ts";
import { requestScope } from "./requestScope.ts";

// The API process: the database's connections and what follows it over
// LISTEN/NOTIFY, PostGraphile served by grafserv, an Express app for the
// other routes (health checks, metrics, the payment callback), all behind
// one HTTP server whose requests go through the pipeline of
// src/http/router.ts; WebSockets on /graphql speak graphql-ws
// (src/http/websocket.ts). Each step below adds its own undo
// (src/shutdown.ts): close() runs them in reverse, the HTTP server's drain
// first.

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
  // Each step adds its own undo as it starts; close() runs them in reverse,
  // and so does a start that fails part way (its LISTEN connection, which
  // would otherwise keep reconnecting, included).
  const shutdown = new Shutdown();
  try {
    return await assembleApi(config, urls, shutdown);
  } catch (e) {
    await shutdown.run().catch(() => {});
    throw e;
  }
}

async function assembleApi(config: Config, urls: DatabaseUrls, shutdown: Shutdown): Promise<ApiServer> {
  // The database: the authenticator's pool and its health, LISTEN/NOTIFY,
  // the sign-ins Postgres revoked (src/db/).
  // Health is probed on a connection of its own: a full pool is busy, not down.
  const health = new DatabaseHealth(urls.authenticator);
  const apiPool = openApiPool(config, urls, health);
  const pool = apiPool.pool;
  timePoolWaits(pool, "api");
  // The health probe stops before the pool ends: an error while it ends starts no probe.
  shutdown.add("API pool and its health probe", async () => {
    apiPool.stop();
    await health.stop();
    await pool.end();
  });
  // LISTEN needs a session of its own: straight to PostgreSQL (DATABASE_LISTEN_URL) when the pool goes through a pooler.
  const subscriber = new ReconnectingPgSubscriber(urls.listen);
  shutdown.add("LISTEN/NOTIFY subscriber", () => subscriber.release());
  // Behind a pooler in transaction mode, the subscriptions' re-reads go straight to PostgreSQL too, prepared.
  const subscriptionPool = openSubscriptionPool(config, urls);
  if (subscriptionPool) {
    timePoolWaits(subscriptionPool, "subscriptions");
    shutdown.add("subscriptions' pool", () => subscriptionPool.end());
  }
  const revokedSignIns = new RevokedSignIns(subscriber, pool, config.JWT_EXPIRES_IN_SECONDS);
  shutdown.add("revoked sign-ins", () => revokedSignIns.stop());
  // Each request role's statement and lock timeouts, as the DBA sets them.
  const roleLimits = new RoleLimits(subscriber, pool);
  shutdown.add("role limits", () => roleLimits.stop());
  // Table sizes, for pricing what a totalCount scans.
  const tableSizes = new TableSizes(pool);
  shutdown.add("table sizes", () => tableSizes.stop());

  // The payment callback's own pool and its block list, in memory.
  const callbackPool = openCallbackPool(config, urls);
  timePoolWaits(callbackPool, "callback");
  shutdown.add("callback pool", () => callbackPool.end());
  const blockedSources = new BlockedSources(callbackPool, subscriber);
  shutdown.add("blocked sources", () => blockedSources.stop());

  // Who calls: the address TRUST_PROXY lets us believe and its source (one
  // definition for every limiter), the bearer token.
  const sources = makeClientAddress(config.TRUST_PROXY, config.TRUSTED_NETWORKS);
  const { trust, clientAddress, sourceOf } = sources;
  const jwtSecrets = [config.JWT_SECRET, ...(config.JWT_SECRET_PREVIOUS ? [config.JWT_SECRET_PREVIOUS] : [])];
  const viewerFrom = cachedViewerFrom(jwtSecrets, revokedSignIns.has, MEMORY_BOUNDS.verifiedTokens);
  const viewerFromConnectionParams = (params: Record<string, unknown> | undefined) => viewerFrom(params?.authorization as string | undefined);

  // The request budget, shared with the other API processes through the database in the background.
  let syncFailedAt = 0;
  const limiter = makeRateLimiter(config, shareRateUsage(pool), (err) => {
    if (Date.now() - syncFailedAt < 60_000) return;
    syncFailedAt = Date.now();
    logger.warn({ err: (err as Error).message }, "sharing the request counts with the other API processes failed; counting alone meanwhile");
  });
  if (limiter) shutdown.add("rate limiter", () => limiter.stop());
  // The CPU of a document not seen before is its caller's to pay, in requests (GRAPHQL_DOCUMENT_WORK_US).
  const chargeWork =
    limiter && config.GRAPHQL_DOCUMENT_WORK_US
      ? (ms: number) => {
          const scope = requestScope.getStore();
          if (scope) scope.newDocument = true;
          limiter.charge((1000 * ms) / config.GRAPHQL_DOCUMENT_WORK_US);
        }
      : undefined;
  // So is the memory a new plan of its operation takes (GRAPHQL_PLAN_BYTES_PER_REQUEST).
  const chargePlanBytes = limiter && config.GRAPHQL_PLAN_BYTES_PER_REQUEST ? (bytes: number) => limiter.charge(bytes / config.GRAPHQL_PLAN_BYTES_PER_REQUEST) : undefined;

  // GraphQL: the preset (src/preset.ts, plugins/) served by grafserv.
  const revocationsCaughtUp = () => revokedSignIns.caughtUp();
  // Watch mode: development only (NODE_ENV=development, `npm start`'s
  // default) with a superuser (DATABASE_URL a superuser's, or the embedded
  // server); tests (NODE_ENV=test) and production never watch.
  // Our own superuser pool (rather than PostGraphile's): it closes idle
  // connections at once (it is used once, to install the watch fixtures) and
  // is ended, quietly, at shutdown.
  const watchPool = config.NODE_ENV === "development" && urls.root ? new pg.Pool({ connectionString: onDatabase(urls.root, databaseName(urls.owner)), max: 1, idleTimeoutMillis: 100 }) : null;
  if (watchPool) {
    watchPool.on("error", (e) => logger.debug({ err: e }, "watch-mode superuser connection closed"));
    shutdown.add("watch-mode pool", () => watchPool.end());
  }
  const watch = watchPool ? { superuserPool: watchPool } : undefined;
  // Public reads answered from memory, emptied by NOTIFY (src/http/liveCache.ts).
  const liveCache = new LiveCache({ maxEntries: config.LIVE_CACHE_MAX_ENTRIES, maxBytes: config.LIVE_CACHE_MAX_BYTES, staleMs: config.LIVE_CACHE_STALE_MS, refreshMs: config.LIVE_CACHE_REFRESH_MS });
  shutdown.add(
    "live cache",
    followPublicReads(liveCache, subscriber, (text, values) => pool.query(text, values)),
  );
  const pgl = postgraphile(
    makePreset({
      config,
      pool,
      subscriptionPool,
      pgSubscriber: subscriber as never,
      viewerFromConnectionParams,
      clientAddress,
      sourceOf,
      revocationsCaughtUp,
      limitsOf: roleLimits.settingsFor,
      tableRows: tableSizes,
      watch,
      liveCache,
      chargeWork,
      chargePlanBytes,
    }),
  );
  shutdown.add("PostGraphile", () => pgl.release());
  const serv = pgl.createServ(grafserv);
  const graphqlHandler = serv.createHandler();

  // Everything else: Express.
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", trust);
  installHomeRoute(app, config);
  app.use((_req, res) => {
    res.status(ROUTE_ERRORS.NOT_FOUND.status).json({ error: { code: "NOT_FOUND", message: "No such route." } });
  });

  // The HTTP server: every request goes through the pipeline's steps
  // (src/http/router.ts), from the connection limit to grafserv.
  const cors = makeCors(config);
  // What the refusal log counted and has not written yet is written at the end.
  shutdown.add("refusal log's counts", () => refusals.flush(true));
  // Answered straight by their handlers: the payment providers (each its
  // own module, src/payments/), health and metrics.
  const metrics = metricsHandler(config);
  // One per-source limit of both payment routes (CALLBACK_RATE_LIMIT).
  const deliveries = deliveryLimiter(config);
  const direct = {
    [CALLBACK_PATH]: genericProvider({ config, pool: callbackPool, health, blocked: blockedSources, limiter: deliveries, sourceOf }),
    ...(config.STRIPE_SECRET_KEY ? { [STRIPE_WEBHOOK_PATH]: stripeProvider({ config, pool: callbackPool, health, limiter: deliveries, sourceOf }) } : null),
    ...Object.fromEntries(Object.entries(healthHandlers(health)).map(([path, handler]) => [path, withBodyLimit(handler)])),
    ...(metrics ? { "/metrics": withBodyLimit(metrics) } : null),
  };
  const pipeline = makeRequestPipeline({
    config,
    sourceOf,
    viewerFrom,
    limiter,
    cors: cors.handler,
    securityHeaders: makeSecurityHeaders(),
    fastPath: makeFastPath({ serv, adHocDocuments: { maxEntries: config.GRAPHQL_DOCUMENT_CACHE_SIZE, maxBytes: config.GRAPHQL_DOCUMENT_CACHE_BYTES }, liveCache, onWork: chargeWork }),
    direct,
    graphqlHandler,
    app,
  });
  // A caller's traceparent decides sampling only from the café's own networks.
  const server = createHttpServer(config, pipeline.handle, (req) => sourceOf(req).trusted);
  installLingeringClose(server);
  const cap = connectionCap(config);
  logger.info({ maxConnections: cap, openFileLimit: openFileLimit() }, "HTTP connections capped");
  installConnectionLimit(server, sources, { perSource: config.HTTP_MAX_CONNECTIONS_PER_SOURCE, trustedFactor: config.TRUSTED_NETWORK_FACTOR, cap });
  // WebSockets on /graphql: graphql-ws.
  const websockets = installWebSocket(server, {
    config,
    serv,
    sourceOf,
    limiter,
    originAllowed: cors.originAllowed,
    viewerFromConnectionParams,
    chargeWork,
    onRevoked: (signInId, then) => revokedSignIns.onRevoked(signInId, then),
  });

  shutdown.add(
    "pool and queue metrics",
    registerPoolAndQueueMetrics(
      pool,
      websockets.sockets,
      () => subscriber.listeningTopics.length,
      () => subscriber.connected,
    ),
  );
  shutdown.add("payment alerts", installPaymentAlerts(subscriber));

  await revokedSignIns.ready;
  await blockedSources.ready;
  await roleLimits.ready;
  await tableSizes.ready;
  // The schema built before the first request: until then grafserv holds
  // requests and the fast path and the live cache would pass them all by.
  // (Watch mode builds in the background, and a failed build there never
  // settles this: not waited for.)
  if (!watch) await serv.getSchema();
  const port = await listen(server, config);
  // The first to undo: stop taking work. WebSockets close; for
  // SHUTDOWN_GRACE_MS requests are still served, with `Connection: close`
  // (a request already on its way over a keep-alive connection is answered,
  // not reset: server.close() drops idle keep-alive sockets at once); then
  // the server closes, and only then what the requests used.
  shutdown.add("HTTP server", async () => {
    pipeline.drain();
    websockets.close();
    if (config.SHUTDOWN_GRACE_MS) await new Promise((r) => setTimeout(r, config.SHUTDOWN_GRACE_MS));
    await closeHttpServer(server);
  });
  logger.info({ port, graphql: `http://localhost:${port}/graphql`, graphiql: config.graphiql ? `http://localhost:${port}/graphiql` : undefined }, "API listening");

  return { server, subscriber, revokedSignIns, roleLimits, tableSizes, pool, callbackPool, health, port, close: () => shutdown.run() };
}

/** `url` with another database. */
function onDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}
