import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { ConfigError, type Config } from "../config.ts";

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
 * A caller's trace headers, before anything reads them (the tracing SDK's
 * HTTP instrumentation reads them in http.Server.prototype.emit, which this
 * class's emit runs before): `traceparent` (which decides whether the
 * request is sampled) only from a caller `traceFrom` trusts
 * (TRUSTED_NETWORKS), `tracestate` and `baggage` from nobody.
 */
class TraceFilteringServer extends http.Server {
  traceFrom: (req: IncomingMessage) => boolean = () => false;
  override emit(event: string | symbol, ...args: any[]): boolean {
    if (event === "request") {
      const headers = (args[0] as IncomingMessage).headers;
      delete headers.tracestate;
      delete headers.baggage;
      if (headers.traceparent !== undefined && !this.traceFrom(args[0])) delete headers.traceparent;
    }
    return super.emit(event as string, ...args);
  }
}

/**
 * The node:http server, with its timeouts; every request goes to `handle`
 * (src/http/router.ts's pipeline). `traceFrom`: whose `traceparent` is
 * believed (TraceFilteringServer); none when not given.
 */
export function createHttpServer(config: Config, handle: (req: IncomingMessage, res: ServerResponse) => void, traceFrom?: (req: IncomingMessage) => boolean): http.Server {
  const timeouts = {
    headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
    connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
  };
  const server = new TraceFilteringServer(timeouts, handle);
  if (traceFrom) server.traceFrom = traceFrom;
  return server;
}

/**
 * Listens on config's PORT (or the port variable named) and HOST; resolves
 * with the port (0 picks one). A port in use is a one-line ConfigError
 * naming its variable.
 */
export async function listen(server: http.Server, config: Config, variable: "PORT" | "WORKER_METRICS_PORT" = "PORT"): Promise<number> {
  const port = config[variable];
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EADDRINUSE") reject(new ConfigError(`${variable} ${port} on ${config.HOST} is in use (another instance is running?): stop it or set ${variable} to a free port.`));
      else if (err.code === "EACCES") reject(new ConfigError(`${variable} ${port} on ${config.HOST} may not be used by this user: set ${variable} to 1024 or above.`));
      else reject(err);
    });
    server.listen(port, config.HOST, () => resolve());
  });
  const address = server.address();
  return typeof address === "object" && address ? address.port : port;
}

/** Stops accepting connections and waits for the open ones: idle keep-alive ones close at once, any left after FORCE_CLOSE_AFTER_MS are cut. */
export function closeHttpServer(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), FORCE_CLOSE_AFTER_MS).unref();
  });
}
