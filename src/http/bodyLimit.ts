import type http from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { ERROR_STATUS, refusalBody, type ErrorCode } from "../../common/errorCatalogue.ts";
import { refusedFor } from "../requestScope.ts";

// Bodies over a route's limit are answered 413 with `Connection: close`,
// and the client must be able to read that answer. Node closes such a
// connection as soon as the answer is written (socket.destroySoon()); the
// rest of the body, still arriving, then meets a closed socket: the kernel
// answers it with a reset, and a client still sending sees EPIPE or
// ECONNRESET instead of our 413. So every connection the server closes
// closes the way Apache's "lingering close" does: send the answer and a
// FIN, keep reading (and discarding) what the client still sends, and close
// once the request's body is all in (or the client closes), or after
// LINGER_MAX_BYTES or LINGER_MAX_MS.

/** The body limit of /graphql and of every route but the payment callback (also grafserv's maxRequestLength). */
export const MAX_BODY_BYTES = 100_000;
/** What a closing connection may still send us before it is cut. */
export const LINGER_MAX_BYTES = 8 * 1024 * 1024;
export const LINGER_MAX_MS = 10_000;

/** Closes once our answer is out. */
function destroyWhenSent(socket: Socket): void {
  if (socket.writableFinished) socket.destroy();
  else socket.once("finish", () => socket.destroy());
}

const CURRENT_REQUEST = Symbol("currentRequest");
type ServerSocket = Socket & { [CURRENT_REQUEST]?: IncomingMessage };

/** Notes the request a connection serves (the one whose body a lingering close waits for). */
export function noteRequest(req: IncomingMessage): void {
  (req.socket as ServerSocket)[CURRENT_REQUEST] = req;
}

function lingeringDestroySoon(this: ServerSocket): void {
  if (this.destroyed) return;
  if (this.writable) this.end();
  const req = this[CURRENT_REQUEST];
  // The client is done sending.
  if (this.readableEnded || !req || req.complete) return destroyWhenSent(this);
  req.once("end", () => destroyWhenSent(this));
  const fromByte = this.bytesRead;
  const until = Date.now() + LINGER_MAX_MS;
  const watch = setInterval(() => {
    if (this.bytesRead - fromByte > LINGER_MAX_BYTES || Date.now() > until) this.destroy();
  }, 50);
  this.once("end", () => destroyWhenSent(this));
  this.once("close", () => clearInterval(watch));
}

/** Every connection of `server` that it closes lingers (see above). */
export function installLingeringClose(server: http.Server): void {
  server.on("connection", (socket: ServerSocket) => {
    socket.destroySoon = lingeringDestroySoon;
  });
}

/** The body size a request declares (NaN: none declared, e.g. chunked). */
export function declaredLength(req: IncomingMessage): number {
  const value = req.headers["content-length"];
  return value === undefined ? NaN : Number(value);
}

/** Sends a JSON answer. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(payload) });
  res.end(payload);
}

/** A GraphQL refusal answered before grafserv, with its code's HTTP status (common/errorCatalogue.ts). */
export function sendRefusal(res: ServerResponse, code: ErrorCode, message: string): void {
  refusedFor(code);
  sendJson(res, ERROR_STATUS[code] ?? 400, refusalBody(code, message));
}

/** 413 in the route's error shape; the connection then closes (lingering). */
export function refuseTooLarge(res: ServerResponse, limit: number, shape: "graphql" | "rest"): void {
  const message = `The request body may have at most ${limit} bytes.`;
  res.setHeader("connection", "close");
  if (shape === "graphql") sendRefusal(res, "PAYLOAD_TOO_LARGE", message);
  else sendJson(res, ERROR_STATUS.PAYLOAD_TOO_LARGE, { error: { code: "PAYLOAD_TOO_LARGE", message } });
}

/**
 * A body sent without a length (chunked) is counted by its reader (grafserv,
 * the callback route) as it arrives; when that reader answers 413, close
 * the connection too rather than read the rest of an unbounded body.
 */
export function closeAfter413(res: ServerResponse): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
    if (status === 413) this.setHeader("connection", "close");
    return (writeHead as (...args: unknown[]) => ServerResponse).call(this, status, ...rest);
  } as typeof res.writeHead;
}

/**
 * A route that reads no body (health, metrics): a body declared over
 * MAX_BODY_BYTES is refused 413 before the handler, as on every other route
 * but /graphql's and the payment providers' (which limit their own).
 */
export function withBodyLimit(handler: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => (declaredLength(req) > MAX_BODY_BYTES ? refuseTooLarge(res, MAX_BODY_BYTES, "rest") : handler(req, res));
}
