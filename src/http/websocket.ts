import http, { type IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { makeServer as makeGraphQLWSServer, CloseCode } from "graphql-ws";
import type { Payer, RequestBudget } from "./rateLimiter.ts";
import type { Source } from "./clientAddress.ts";
import { makeGraphQLWSConfig } from "postgraphile/grafserv";
import type { GraphQLError } from "postgraphile/graphql";
import type { Config } from "../config.ts";
import type { Viewer } from "../../common/services.ts";
import { codedError } from "../errors.ts";
import { ERROR_STATUS, refusalBody, type ErrorCode } from "../../common/errorCatalogue.ts";
import { MESSAGES_PER_REQUEST, WS_OVERDRAFT } from "../../common/webSocketLimits.ts";
import { logger } from "../logger.ts";
import { graphqlErrors } from "../metrics.ts";
import { pathOf } from "./accessLog.ts";
import { refusedConnection } from "./connectionLimit.ts";
import { refusals } from "./refusalLog.ts";
import { REQUEST_ID_HEADER, requestIdFrom, requestScope } from "../requestScope.ts";

// graphql-ws on /graphql. The token travels in the connection_init payload
// (a bad one closes the socket with 4403). Against abuse: a browser page
// from an Origin outside CORS_ORIGINS (and not this server's own, Ruru's) is
// refused (403 ORIGIN_NOT_ALLOWED); per source, at most
// WS_MAX_SOCKETS_PER_SOURCE sockets (429 TOO_MANY_CONNECTIONS; times
// TRUSTED_NETWORK_FACTOR inside TRUSTED_NETWORKS); every upgrade spends one
// request of the source's budget of the same rate limiter as HTTP, and every
// operation one of the socket's payer's (its sign-in and account once
// connection_init carried a valid token, else its source) (RATE_LIMITED);
// per socket, at most WS_MAX_SUBSCRIPTIONS_PER_SOCKET operations at once
// (TOO_MANY_SUBSCRIPTIONS). An operation runs with its payer in its request
// scope, so that the work it makes (a new document's parse, validation and
// plan: GRAPHQL_DOCUMENT_WORK_US) is charged to them, as over HTTP. Every
// other message a socket sends (connection_init, ping, pong, complete, one
// that does not parse, a protocol ping or pong) costs the same payer
// 1/MESSAGES_PER_REQUEST of a request (common/webSocketLimits.ts); a socket
// whose payer has nothing left for them may overdraw WS_OVERDRAFT of those
// requests (a burst of operations in flight meets RATE_LIMITED, as over
// HTTP), then it is closed
// with 4429 (graphql-ws's code, which its client does not retry). A peer that
// does not answer a ping before the next one is closed, which ends its
// subscriptions and their LISTENs.

export interface WebSocketOptions {
  config: Config;
  serv: Parameters<typeof makeGraphQLWSConfig>[0];
  sourceOf(req: IncomingMessage): Source;
  /** The request budget of /graphql (null: off). */
  limiter: RequestBudget | null;
  /** Whether a request's Origin may open a socket. */
  originAllowed(origin: string | undefined): boolean;
  viewerFromConnectionParams(params: Record<string, unknown> | undefined): Viewer | null;
  /** Charges the operation this runs for the milliseconds of CPU its new document took (GRAPHQL_DOCUMENT_WORK_US; undefined: not charged). */
  chargeWork?: (ms: number) => void;
  /** Calls `then` when the sign-in is revoked; returns the function that stops watching. */
  onRevoked(signInId: string, then: () => void): () => void;
}

export interface WebSocketEndpoint {
  /** Open sockets. */
  sockets(): number;
  /** Closes every socket with a close frame (1001) and stops accepting. */
  close(): void;
}

interface Extra {
  socket: WebSocket;
  request: IncomingMessage;
  /** Its source, from the upgrade request. */
  source: Source;
  viewer?: Viewer | null;
}

/** Who pays for what a socket does: its signed-in viewer once connection_init carried a valid token, else its source. */
const payerOf = (extra: Extra): Payer => ({ source: extra.source, viewer: extra.viewer ?? null });

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
        return { done: false, value: { errors: [codedError("UNAUTHENTICATED", "Your token has expired; sign in again and resubscribe.")] } };
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

/** Answers an upgrade request with an HTTP refusal instead of a socket. */
function refuseUpgrade(
  req: IncomingMessage,
  socket: Duplex,
  source: string,
  code: "ORIGIN_NOT_ALLOWED" | "TOO_MANY_CONNECTIONS" | "RATE_LIMITED",
  message: string,
  headers: Record<string, string> = {},
): void {
  const status = ERROR_STATUS[code];
  graphqlErrors.inc({ code });
  refusals.note(source, code, { method: req.method, route: "/graphql (upgrade)", status });
  const body = JSON.stringify(refusalBody(code, message));
  const head = Object.entries({ connection: "close", "content-type": "application/json; charset=utf-8", "content-length": String(Buffer.byteLength(body)), ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("");
  socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n${head}\r\n${body}`);
  setTimeout(() => socket.destroy(), 1000).unref();
}

/** A page of this very server (Ruru on /graphiql): its Origin names the host it asked for. */
function sameOrigin(req: IncomingMessage): boolean {
  try {
    return new URL(req.headers.origin!).host === req.headers.host;
  } catch {
    return false;
  }
}

export function installWebSocket(server: http.Server, options: WebSocketOptions): WebSocketEndpoint {
  const { config, limiter, sourceOf } = options;
  const wsConfig = makeGraphQLWSConfig(options.serv);
  /**
   * Runs an operation; when its text was new (its parse was charged), the
   * planning of its first run is charged too, as on the HTTP fast path:
   * grafast plans synchronously, before its first await.
   */
  const firstRunCharged = <T>(run: () => T): T => {
    if (!options.chargeWork || !requestScope.getStore()?.newDocument) return run();
    const started = performance.now();
    const running = run();
    options.chargeWork(performance.now() - started);
    return running;
  };
  const wsServer = makeGraphQLWSServer<Record<string, unknown> | undefined, Extra>({
    ...(wsConfig as object),
    execute: (args: any) => firstRunCharged(() => (wsConfig as any).execute(args)),
    // A subscription lives no longer than the token that opened it: at its
    // expiry the stream ends with an UNAUTHENTICATED error.
    async subscribe(args: any) {
      const result = await firstRunCharged(() => (wsConfig as any).subscribe(args));
      const exp = (args.contextValue as { viewer?: Viewer | null } | undefined)?.viewer?.exp;
      return exp && isAsyncIterable(result) ? untilExpiry(result, exp * 1000) : result;
    },
    async onSubscribe(ctx: any, id: string, payload: unknown) {
      const refuse = (code: ErrorCode, message: string) => {
        graphqlErrors.inc({ code });
        return [codedError(code, message)];
      };
      // ctx.subscriptions already holds this operation.
      if (Object.keys(ctx.subscriptions).length > config.WS_MAX_SUBSCRIPTIONS_PER_SOCKET) {
        return refuse("TOO_MANY_SUBSCRIPTIONS", `A socket may run at most ${config.WS_MAX_SUBSCRIPTIONS_PER_SOCKET} operations at once; complete one first.`);
      }
      const payer = payerOf(ctx.extra as Extra);
      if (limiter && !limiter.take(payer)) {
        return refuse("RATE_LIMITED", "Too many requests; slow down.");
      }
      // The work the operation then makes (a document not seen before) is charged to it too.
      const scope = requestScope.getStore();
      if (scope && limiter) scope.payer = payer;
      return (wsConfig as any).onSubscribe(ctx, id, payload);
    },
    onConnect(ctx) {
      try {
        const params = Object.fromEntries(Object.entries(ctx.connectionParams ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
        const viewer = options.viewerFromConnectionParams(params);
        (ctx.extra as Extra).viewer = viewer;
        // A revoked sign-in's socket closes, ending its subscriptions.
        if (viewer) {
          const socket = (ctx.extra as Extra).socket;
          socket.once(
            "close",
            options.onRevoked(viewer.signInId, () => socket.close(CloseCode.Forbidden, "This sign-in has ended; sign in again.")),
          );
        }
        return true;
      } catch {
        return false;
      }
    },
  } as Parameters<typeof makeGraphQLWSServer>[0]);

  const wss = new WebSocketServer({ noServer: true, maxPayload: config.MAX_QUERY_LENGTH * 2 });
  wss.on("connection", (socket: WebSocket, request: IncomingMessage) => {
    const requestId = requestIdFrom(request.headers[REQUEST_ID_HEADER]);
    const opened = Date.now();
    const extra: Extra = { socket, request, source: sourceOf(request) };
    const spend = messageBudget(extra, requestId);
    const closed = wsServer.opened(
      {
        protocol: socket.protocol,
        send: (data) => new Promise<void>((resolve, reject) => socket.send(data, (err) => (err ? reject(err) : resolve()))),
        close: (code, reason) => socket.close(code, reason),
        onMessage: (cb) =>
          socket.on("message", (event) => {
            if (!spend()) return;
            // The socket's request id goes with what its messages log (masked errors).
            requestScope.run({ id: requestId }, async () => {
              try {
                await cb(event.toString());
              } catch (err) {
                socket.close(CloseCode.InternalServerError, (err as Error).message.slice(0, 120));
              }
            });
          }),
      },
      extra,
    );
    // Protocol pings and pongs are messages too (ws answers a ping by itself).
    socket.on("ping", spend);
    // Dead peers: one ping per interval; no pong since the last one, closed.
    let answered = true;
    socket.on("pong", () => {
      answered = true;
      spend();
    });
    const ping = setInterval(() => {
      if (!answered) {
        logger.info({ requestId }, "websocket peer stopped answering pings; closed");
        socket.terminate();
        return;
      }
      answered = false;
      socket.ping();
    }, config.WS_PING_INTERVAL_MS);
    socket.once("close", (code, reason) => {
      clearInterval(ping);
      logger.info({ requestId, route: "/graphql", method: "GET", status: 101, durationMs: Date.now() - opened, closeCode: code }, "websocket closed");
      void closed(code, reason.toString());
    });
  });

  /**
   * The budget of a socket's messages: each one spends its share of a
   * request of the payer's budget (MESSAGES_PER_REQUEST; the first one a
   * whole request, so a socket never talks for free); false once the socket
   * is over its overdraft, and is being closed.
   */
  function messageBudget(extra: Extra, requestId: string): () => boolean {
    let messages = 0;
    let overdrawn = 0;
    let closing = false;
    return () => {
      if (closing) return false;
      if (!limiter || messages++ % MESSAGES_PER_REQUEST !== 0) return true;
      // The overdraft is of one spell out of budget: a long-lived socket is not closed for a few spells over its life.
      if (limiter.take(payerOf(extra))) overdrawn = 0;
      else if (++overdrawn > WS_OVERDRAFT) return close();
      return true;
    };
    function close(): false {
      closing = true;
      graphqlErrors.inc({ code: "RATE_LIMITED" });
      refusals.note(extra.source.key, "RATE_LIMITED", { method: "GET", route: "/graphql (socket)", status: ERROR_STATUS.RATE_LIMITED });
      logger.info({ requestId }, "websocket over its message budget; closed");
      extra.socket.close(CloseCode.TooManyInitialisationRequests, "Too many messages; slow down.");
      // A peer that does not answer the close (and goes on sending) is cut off.
      setTimeout(() => extra.socket.terminate(), 1000).unref();
      return false;
    }
  }

  const socketsBySource = new Map<string, number>();
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // A connection refused for its source's count (src/http/connectionLimit.ts), or another path.
    if (refusedConnection(req.socket) || pathOf(req.url) !== "/graphql") {
      socket.destroy();
      return;
    }
    const from = sourceOf(req);
    if (!options.originAllowed(req.headers.origin) && !sameOrigin(req)) {
      refuseUpgrade(req, socket, from.key, "ORIGIN_NOT_ALLOWED", "This origin may not open a WebSocket here.");
      return;
    }
    const source = from.key;
    const open = socketsBySource.get(source) ?? 0;
    const max = config.WS_MAX_SOCKETS_PER_SOURCE * (from.trusted ? config.TRUSTED_NETWORK_FACTOR : 1);
    if (open >= max) {
      refuseUpgrade(req, socket, source, "TOO_MANY_CONNECTIONS", `At most ${max} WebSockets per source; close one first.`, { "retry-after": "5" });
      return;
    }
    // Counted from now until the TCP connection closes, whatever becomes of the upgrade.
    socketsBySource.set(source, open + 1);
    socket.once("close", () => {
      const n = (socketsBySource.get(source) ?? 1) - 1;
      if (n > 0) socketsBySource.set(source, n);
      else socketsBySource.delete(source);
    });
    // Before connection_init there is no token: the upgrade is the source's.
    if (limiter && !limiter.take({ source: from, viewer: null })) {
      refuseUpgrade(req, socket, source, "RATE_LIMITED", "Too many requests; slow down.", { "retry-after": "1" });
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit("connection", ws, req));
  });

  return {
    sockets: () => wss.clients.size,
    close() {
      for (const client of wss.clients) client.close(1001, "server shutting down");
      wss.close();
    },
  };
}
