import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { ConfigError, type Config } from "../config.ts";
import { refusedConnection } from "./connectionLimit.ts";
import { noteRequest } from "./bodyLimit.ts";
import { pathOf, trackRequest } from "./accessLog.ts";
import { REQUEST_ID_HEADER, requestIdFrom, requestScope, type RequestScope } from "./requestScope.ts";

/**
 * How often Node looks for requests past their headers or request timeout.
 * Slow clients may not hold connections for ever (slow-loris): the headers
 * and the whole request must arrive in time. Node's default (30 s) let
 * requests live 33-38 s against 15 s / 30 s; checked every 250 ms they hold
 * to within a second.
 */
const CONNECTIONS_CHECKING_INTERVAL_MS = 250;

/** At shutdown, connections still open this long after server.close() (a request that never ends) are cut. */
const FORCE_CLOSE_AFTER_MS = 5_000;

/**
 * The node:http server: every request gets an id (the caller's, made safe,
 * or a new one: echoed, logged, and carried by every log line written while
 * serving it) and a line in the access log, then goes to `route`.
 */
export function createHttpServer(config: Config, route: (req: IncomingMessage, res: ServerResponse, path: string) => void): http.Server {
  const timeouts = {
    headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
    connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
  };
  return http.createServer(timeouts, (req, res) => {
    // A connection refused for its source's count gets nothing more.
    if (refusedConnection(req.socket)) return;
    const scope: RequestScope = { id: requestIdFrom(req.headers[REQUEST_ID_HEADER]) };
    res.setHeader(REQUEST_ID_HEADER, scope.id);
    const path = pathOf(req.url);
    noteRequest(req);
    trackRequest(req, res, path, scope);
    requestScope.run(scope, route, req, res, path);
  });
}

/** Listens on config's PORT and HOST; resolves with the port (PORT=0 picks one). A port in use is a one-line ConfigError naming PORT. */
export async function listen(server: http.Server, config: Config): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EADDRINUSE") reject(new ConfigError(`PORT ${config.PORT} on ${config.HOST} is in use (another instance is running?): stop it or set PORT to a free port.`));
      else if (err.code === "EACCES") reject(new ConfigError(`PORT ${config.PORT} on ${config.HOST} may not be used by this user: set PORT to 1024 or above.`));
      else reject(err);
    });
    server.listen(config.PORT, config.HOST, () => resolve());
  });
  const address = server.address();
  return typeof address === "object" && address ? address.port : config.PORT;
}

/** Stops accepting connections and waits for the open ones: idle keep-alive ones close at once, any left after FORCE_CLOSE_AFTER_MS are cut. */
export function closeHttpServer(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), FORCE_CLOSE_AFTER_MS).unref();
  });
}
