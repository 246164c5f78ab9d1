import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";

// What a request's log lines share: its id (the caller's X-Request-Id, made
// safe, or a new UUID) and, once known, its GraphQL operation's name. Held
// in an AsyncLocalStorage so code far from the request (maskError, a
// plugin) logs it without having it passed down.

/** Who a /graphql request (or WebSocket operation) is charged to (src/http/rateLimiter.ts). */
export interface Payer {
  source: { key: string; trusted: boolean };
  /** The verified token's sign-in and account (null: anonymous, or before sign-in). */
  viewer: { signInId: string; userId: string } | null;
}

export interface RequestScope {
  readonly id: string;
  operationName?: string;
  /** The trusted document's id, when the request sent one (by id or by its text). */
  documentId?: string;
  /** Why the request was refused (an error code, a route's own reason), once known: its access log counts it (src/http/refusalLog.ts) instead of a line. */
  refusal?: string;
  /** The code of the first GraphQL error of its answer (src/errors.ts), if any: an answer of 4xx is counted under it. */
  errorCode?: string;
  /** Who pays for it, once /graphql's rate limit has charged them: the work it makes is charged to them too. */
  payer?: Payer;
  /** Whether its document's text was new (its parse was charged): a socket's operation then pays for its first run's planning too. */
  newDocument?: boolean;
}

export const requestScope = new AsyncLocalStorage<RequestScope>();

export const REQUEST_ID_HEADER = "x-request-id";
export const REQUEST_ID_MAX_LENGTH = 128;

/**
 * The caller's X-Request-Id restricted to a safe charset (no newlines,
 * quotes or spaces: it goes into log lines and a response header) and to
 * REQUEST_ID_MAX_LENGTH characters; a new UUID when none is left.
 */
export function requestIdFrom(header: string | string[] | undefined): string {
  const given = Array.isArray(header) ? header[0] : header;
  if (given) {
    const safe = given.replace(/[^A-Za-z0-9._:/+=@-]/g, "").slice(0, REQUEST_ID_MAX_LENGTH);
    if (safe) return safe;
  }
  return randomUUID();
}

/** Records why the request this code runs for is refused (the first reason given stands). */
export function refusedFor(reason: string): void {
  const scope = requestScope.getStore();
  if (scope && scope.refusal === undefined) scope.refusal = reason;
}

/** The id of the request this code runs for, if any. */
export function currentRequestId(): string | undefined {
  return requestScope.getStore()?.id;
}
