import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import express from "express";
import helmet from "helmet";
import cors from "cors";
import { RateLimiterMemory } from "rate-limiter-flexible";
import proxyaddr from "proxy-addr";
import pg from "pg";
import { WebSocketServer } from "ws";
import { makeServer as makeGraphQLWSServer, CloseCode } from "graphql-ws";
import { postgraphile } from "postgraphile";
import { GraphQLError } from "postgraphile/graphql";
import { grafserv } from "postgraphile/grafserv/node";
import { makeGraphQLWSConfig } from "postgraphile/grafserv";
import type { Config } from "./config.ts";
import type { DatabaseUrls } from "./database.ts";
import { viewerFromAuthorization, type Viewer } from "./auth.ts";
import { makePreset, VIEWER } from "./graphile.config.ts";
import { logger } from "./logger.ts";
import { ReconnectingPgSubscriber } from "./subscriber.ts";
import { DatabaseHealth } from "./dbHealth.ts";
import { httpRequests, registerPoolAndQueueMetrics, registry } from "./metrics.ts";
import { paymentCallbackRouter } from "./payments/callbackRoute.ts";

// The HTTP server: /graphql and /graphiql go straight to grafserv's node:http
// adaptor (the fast path), everything else to an Express app (health checks,
// the payment callback). WebSockets on /graphql speak graphql-ws.

export interface ApiServer {
  server: http.Server;
  subscriber: ReconnectingPgSubscriber;
  pool: pg.Pool;
  port: number;
  close(): Promise<void>;
}

type AuthedRequest = IncomingMessage & { [VIEWER]?: Viewer | null };

/** TRUST_PROXY for proxy-addr: which hops' X-Forwarded-For to believe. */
function trustProxyList(value: string): string[] | ((addr: string, i: number) => boolean) {
  if (value === "false" || value === "") return [];
  if (value === "true") return () => true;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    return (_addr, i) => i < hops;
  }
  return value.split(",").map((v) => v.trim());
}

/** TRUST_PROXY as Express understands it: false, true, a hop count, or addresses. */
function trustProxySetting(value: string): boolean | number | string {
  if (value === "false" || value === "") return false;
  if (value === "true") return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(payload) });
  res.end(payload);
}

/** Also grafserv's maxRequestLength (src/graphile.config.ts). */
export const MAX_GRAPHQL_BODY = 100_000;

const ROUTES = new Set(["/graphql", "/graphiql", "/healthz", "/readyz", "/metrics", "/orders/payment-callback"]);

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

function isAsyncIterable(x: unknown): x is AsyncIterable<unknown> {
  return typeof x === "object" && x !== null && Symbol.asyncIterator in x;
}

const EXPIRED = Symbol("expired");

/**
 * Ends a subscription's stream with an UNAUTHENTICATED error at its token's
 * expiry. A plain iterator, not an async generator: a generator suspended on
 * `await` would only act on return() after the next event, keeping the
 * LISTEN topic of an unsubscribed client alive until then.
 */
function untilExpiry<T>(iterable: AsyncIterable<T>, expiresAtMs: number): AsyncIterableIterator<T | { errors: GraphQLError[] }> {
  const iterator = iterable[Symbol.asyncIterator]();
  let timer: NodeJS.Timeout | undefined;
  let finished = false;
  const expired = new Promise<typeof EXPIRED>((resolve) => {
    timer = setTimeout(() => resolve(EXPIRED), Math.max(0, expiresAtMs - Date.now()));
  });
  const finish = async () => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    await iterator.return?.();
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      if (finished) return { done: true, value: undefined };
      const next = await Promise.race([iterator.next(), expired]);
      if (next === EXPIRED) {
        await finish();
        return {
          done: false,
          value: { errors: [new GraphQLError("Your token has expired; sign in again and resubscribe.", { extensions: { code: "UNAUTHENTICATED" } })] },
        };
      }
      if (next.done) await finish();
      return next;
    },
    async return() {
      await finish();
      return { done: true, value: undefined };
    },
    async throw(error?: unknown) {
      await finish();
      throw error;
    },
  };
}

export async function startApi(config: Config, urls: DatabaseUrls): Promise<ApiServer> {
  const pool = new pg.Pool({ connectionString: urls.authenticator, max: config.DATABASE_POOL_SIZE, connectionTimeoutMillis: 5_000 });
  pool.on("error", (err) => logger.warn({ err: err.message }, "idle database connection failed"));
  const health = new DatabaseHealth(pool);

  const viewerFromConnectionParams = (params: Record<string, unknown> | undefined) =>
    viewerFromAuthorization(config.JWT_SECRET, params?.authorization as string | undefined);
  const trustList = trustProxyList(config.TRUST_PROXY);
  const trust = typeof trustList === "function" ? trustList : proxyaddr.compile(trustList);
  const clientAddress = (req: IncomingMessage) => proxyaddr(req as Parameters<typeof proxyaddr>[0], trust);
  const subscriber = new ReconnectingPgSubscriber(urls.authenticator);
  const preset = makePreset({ config, pool, pgSubscriber: subscriber as never, viewerFromConnectionParams, clientAddress });
  const pgl = postgraphile(preset);
  const serv = pgl.createServ(grafserv);
  const graphqlHandler = serv.createHandler();

  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", trustProxySetting(config.TRUST_PROXY));
  app.use(paymentCallbackRouter(config, pool, health));
  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", async (_req, res) => {
    if (await health.probe()) res.json({ status: "ready", database: "up" });
    else res.status(503).json({ status: "unavailable", database: "down" });
  });
  if (config.METRICS) {
    app.get("/metrics", async (_req, res) => {
      res.setHeader("content-type", registry.contentType);
      res.send(await registry.metrics());
    });
  }
  app.use((_req, res) => {
    res.status(404).json({ error: { code: "NOT_FOUND", message: "No such route." } });
  });

  // Security headers everywhere; Ruru (an HTML page with inline scripts) gets
  // no CSP, the JSON API the strictest one.
  const secureHeaders = helmet({ crossOriginEmbedderPolicy: false });
  const ideHeaders = helmet({ contentSecurityPolicy: false, crossOriginEmbedderPolicy: false });
  // /graphql answers JSON, never a page: the strictest CSP (nothing loads,
  // nothing frames it) and none of the headers that only concern HTML or
  // old browsers (prefetch, IE downloads, Flash policies, agent clusters).
  // They do not depend on the request: worked out once, then set directly
  // on every /graphql answer (the hot path).
  const apiHeaders = headersOf(
    helmet({
      contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
      crossOriginEmbedderPolicy: false,
      originAgentCluster: false,
      xDnsPrefetchControl: false,
      xDownloadOptions: false,
      xPermittedCrossDomainPolicies: false,
      xFrameOptions: { action: "deny" },
    }),
  );
  const origins = config.CORS_ORIGINS.split(",").map((o) => o.trim()).filter(Boolean);
  const corsHandler = cors({
    origin: origins.includes("*") ? true : origins,
    methods: ["GET", "POST", "OPTIONS"],
    allowedHeaders: ["content-type", "authorization", "accept"],
    maxAge: 600,
  });
  // Per source: a sustained rate with a burst on top (0 turns it off).
  const limiter = config.GRAPHQL_RATE_LIMIT
    ? new RateLimiterMemory({ points: config.GRAPHQL_RATE_BURST, duration: Math.max(1, Math.round(config.GRAPHQL_RATE_BURST / config.GRAPHQL_RATE_LIMIT)) })
    : null;

  const handleGraphQL = (req: AuthedRequest, res: ServerResponse) => {
    if (Number(req.headers["content-length"] ?? 0) > MAX_GRAPHQL_BODY) {
      res.setHeader("connection", "close");
      sendJson(res, 413, { errors: [{ message: `The request body may have at most ${MAX_GRAPHQL_BODY} bytes.`, extensions: { code: "PAYLOAD_TOO_LARGE" } }] });
      return;
    }
    if (!health.up) {
      res.setHeader("retry-after", "2");
      sendJson(res, 503, { errors: [{ message: "The database is unavailable; try again shortly.", extensions: { code: "SERVICE_UNAVAILABLE" } }] });
      return;
    }
    // Verify the token before grafserv: a bad or expired token is a 401,
    // never a silent downgrade to anonymous.
    try {
      req[VIEWER] = viewerFromAuthorization(config.JWT_SECRET, req.headers.authorization);
    } catch (e) {
      const message = e instanceof Error && e.message ? e.message : "Your token is not valid.";
      res.setHeader("www-authenticate", 'Bearer realm="cafe-api"');
      sendJson(res, 401, { errors: [{ message, extensions: { code: "UNAUTHENTICATED" } }] });
      return;
    }
    graphqlHandler(req, res, () => app(req, res));
  };

  let draining = false;
  const server = http.createServer((req: AuthedRequest, res) => {
    const path = pathOf(req);
    if (draining) res.setHeader("connection", "close");
    res.once("finish", () => httpRequests.inc({ route: ROUTES.has(path) ? path : "other", status: String(res.statusCode) }));
    if (path !== "/graphql") {
      const headers = path === "/graphiql" || path.startsWith("/ruru-static") ? ideHeaders : secureHeaders;
      headers(req, res, () => graphqlHandler(req, res, () => app(req, res)));
      return;
    }
    for (const [name, value] of apiHeaders) res.setHeader(name, value);
    const limited = () => {
      if (!limiter) return handleGraphQL(req, res);
      limiter.consume(clientAddress(req)).then(
        () => handleGraphQL(req, res),
        () => {
          res.setHeader("retry-after", "1");
          sendJson(res, 429, { errors: [{ message: "Too many requests; slow down.", extensions: { code: "RATE_LIMITED" } }] });
        },
      );
    };
    // CORS concerns browsers, which always send Origin on a cross-origin
    // request (and on every preflight); the answer varies by it either way.
    if (req.headers.origin === undefined && req.method !== "OPTIONS") {
      res.setHeader("vary", "Origin");
      limited();
    } else corsHandler(req, res, limited);
  });

  // graphql-ws on /graphql: the token travels in the connection_init payload;
  // a bad one closes the socket with 4403.
  const wsConfig = makeGraphQLWSConfig(serv);
  const wsServer = makeGraphQLWSServer<Record<string, unknown> | undefined, { socket: unknown; request: IncomingMessage; viewer?: Viewer | null }>({
    ...(wsConfig as object),
    // A subscription lives no longer than the token that opened it: at its
    // expiry the stream ends with an UNAUTHENTICATED error.
    async subscribe(args: any) {
      const result = await (wsConfig as any).subscribe(args);
      const exp = (args.contextValue as { viewer?: Viewer | null } | undefined)?.viewer?.exp;
      return exp && isAsyncIterable(result) ? untilExpiry(result, exp * 1000) : result;
    },
    onConnect(ctx) {
      try {
        const params = Object.fromEntries(Object.entries(ctx.connectionParams ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
        (ctx.extra as { viewer?: Viewer | null }).viewer = viewerFromConnectionParams(params);
        return true;
      } catch {
        return false;
      }
    },
  } as Parameters<typeof makeGraphQLWSServer>[0]);
  const wss = new WebSocketServer({ noServer: true, maxPayload: config.MAX_QUERY_LENGTH * 2 });
  wss.on("connection", (socket, request) => {
    const closed = wsServer.opened(
      {
        protocol: socket.protocol,
        send: (data) => new Promise<void>((resolve, reject) => socket.send(data, (err) => (err ? reject(err) : resolve()))),
        close: (code, reason) => socket.close(code, reason),
        onMessage: (cb) =>
          socket.on("message", async (event) => {
            try {
              await cb(event.toString());
            } catch (err) {
              socket.close(CloseCode.InternalServerError, (err as Error).message.slice(0, 120));
            }
          }),
      },
      { socket, request },
    );
    const ping = setInterval(() => socket.ping(), 15_000);
    socket.once("close", (code, reason) => {
      clearInterval(ping);
      closed(code, reason.toString());
    });
  });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (pathOf(req) !== "/graphql") {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit("connection", ws, req));
  });

  const unregisterMetrics = registerPoolAndQueueMetrics(pool, () => wss.clients.size, () => subscriber.listeningTopics.length);

  // Payment alerts are rows for admins and warnings in the log.
  const alerts = subscriber.subscribe("payment_alert");
  void (async () => {
    for await (const payload of alerts) {
      try {
        logger.warn({ alert: JSON.parse(payload) }, "payment alert");
      } catch {
        logger.warn({ alert: payload }, "payment alert");
      }
    }
  })();

  // Slow clients may not hold connections for ever (slow-loris).
  server.headersTimeout = 15_000;
  server.requestTimeout = 30_000;

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
    pool,
    port,
    close() {
      closing ??= (async () => {
        draining = true;
        for (const client of wss.clients) client.close(1001, "server shutting down");
        // Keep serving briefly, answering with `Connection: close`: a request
        // already on its way over a keep-alive connection is answered, not
        // reset (server.close() drops idle keep-alive sockets at once).
        if (config.SHUTDOWN_GRACE_MS) await new Promise((r) => setTimeout(r, config.SHUTDOWN_GRACE_MS));
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
          setTimeout(() => server.closeAllConnections(), 5_000).unref();
        });
        wss.close();
        await alerts.return?.();
        await pgl.release();
        subscriber.release();
        health.stop();
        unregisterMetrics();
        await pool.end();
      })();
      return closing;
    },
  };
}

/**
 * The headers a response-independent middleware (helmet) sets, captured once
 * against a recording response.
 */
function headersOf(middleware: (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void): Array<[string, string | string[]]> {
  const headers: Array<[string, string | string[]]> = [];
  let called = false;
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers.push([name, typeof value === "number" ? String(value) : (value as string | string[])]);
      return recorder;
    },
    removeHeader() {},
    getHeader() {
      return undefined;
    },
    hasHeader() {
      return false;
    },
  };
  middleware({ headers: {}, method: "POST", url: "/graphql" } as IncomingMessage, recorder as unknown as ServerResponse, (err) => {
    if (err) throw err;
    called = true;
  });
  if (!called || headers.length === 0) throw new Error("helmet did not set its headers synchronously");
  return headers;
}
