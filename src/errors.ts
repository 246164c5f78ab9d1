import { randomUUID } from "node:crypto";
import { GraphQLError } from "postgraphile/graphql";
import { defaultMaskError } from "postgraphile/grafserv";
import { isSafeError } from "postgraphile/grafast";
import { logger } from "./logger.ts";
import { graphqlErrors } from "./metrics.ts";
import { currentRequestId, requestScope } from "./requestScope.ts";
import { isDatabaseBusy, isDatabaseUnavailable } from "./db/dbHealth.ts";
import { ERROR_CATALOGUE, ERROR_CODES, SQLSTATE_CODES, type ErrorCode, type ErrorEntry } from "../common/errorCatalogue.ts";

for (const code of ERROR_CODES) graphqlErrors.inc({ code }, 0);

/** A refusal with its code, for clients. */
export function codedError(code: ErrorCode, message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code } });
}

// Refusals raised in SQL become stable client codes by their SQLSTATE
// (SQLSTATE_CODES, from the catalogue in common/errorCatalogue.ts); anything
// else is masked: the client gets an id to quote, the log gets the details.

/** Messages of @dataplan/pg's and grafast's SafeErrors about paging arguments. */
const PAGING_REFUSAL = /cursor|'(first|last|offset)'/i;
/** The connection filter's refusals of a `filter` argument's null or empty values (plain Errors, the request's fault). */
const FILTER_REFUSAL = /^(Empty objects|Null literals) are forbidden in filter argument input\.$/;

interface PgLikeError {
  code?: string;
  detail?: string;
  message?: string;
}

/** Errors maskError made: masked (and counted) once, returned as they are when grafserv masks them again. */
const alreadyMasked = new WeakSet<GraphQLError>();

export function maskError(error: GraphQLError): GraphQLError {
  if (alreadyMasked.has(error)) return error;
  const masked = mask(error);
  alreadyMasked.add(masked);
  const code = String(masked.extensions?.code ?? "GRAPHQL_VALIDATION_FAILED");
  graphqlErrors.inc({ code });
  const scope = requestScope.getStore();
  if (scope) scope.errorCode ??= code;
  return masked;
}

function mask(error: GraphQLError): GraphQLError {
  const original = error.originalError as (PgLikeError & { extensions?: Record<string, unknown> }) | undefined;
  if (!original) {
    // A parse or validation error: safe to show; give it a code if it has none.
    if (error.extensions?.code) return error;
    const code = /^Syntax Error/.test(error.message) ? "GRAPHQL_PARSE_FAILED" : "GRAPHQL_VALIDATION_FAILED";
    return new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, path: error.path, extensions: { ...error.extensions, code } });
  }
  const code = original.code ? SQLSTATE_CODES[original.code] : undefined;
  if (code) {
    let details: unknown;
    if ((ERROR_CATALOGUE[code] as ErrorEntry).details && original.detail) {
      try {
        details = JSON.parse(original.detail);
      } catch {
        details = undefined;
      }
    }
    const message =
      original.code === "22P02"
        ? "An argument is malformed (e.g. an id that is not a UUID)."
        : original.code === "22021" || original.code === "22P05"
          ? "An argument contains a character that cannot be stored (e.g. a NUL character)."
          : code === "QUERY_TIMEOUT"
            ? original.code === "55P03"
              ? "The request waited too long for data another request is changing; try again."
              : "The request ran out of time; ask for less, or try again."
            : error.message;
    return new GraphQLError(message, {
      nodes: error.nodes,
      path: error.path,
      originalError: error.originalError,
      extensions: { code, ...(details ? { details } : null) },
    });
  }
  if (isDatabaseBusy(original)) {
    // Every connection stayed in use for DATABASE_POOL_WAIT_MS: busy, not down.
    return new GraphQLError("The service is busy; try again shortly.", {
      nodes: error.nodes,
      path: error.path,
      extensions: { code: "SERVICE_BUSY" },
    });
  }
  if (isDatabaseUnavailable(original)) {
    return new GraphQLError("The database is unavailable; try again shortly.", {
      nodes: error.nodes,
      path: error.path,
      extensions: { code: "SERVICE_UNAVAILABLE" },
    });
  }
  if (isSafeError(original as Error) && !original.extensions?.code && PAGING_REFUSAL.test(original.message ?? "")) {
    // The paging machinery's own refusals (a cursor that is not one of ours,
    // `offset` with `last`, ...): the request's fault.
    return new GraphQLError(original.message!, { nodes: error.nodes, path: error.path, originalError: error.originalError, extensions: { code: "BAD_USER_INPUT" } });
  }
  if (!original.extensions?.code && FILTER_REFUSAL.test(original.message ?? "")) {
    return new GraphQLError(original.message!, { nodes: error.nodes, path: error.path, originalError: error.originalError, extensions: { code: "BAD_USER_INPUT" } });
  }
  if (original instanceof GraphQLError || isSafeError(original as Error)) return defaultMaskError(error); // meant for clients
  const errorId = randomUUID();
  logger.error({ errorId, requestId: currentRequestId(), err: original, path: error.path }, "internal error");
  return new GraphQLError(`An internal error occurred (reference ${errorId}).`, {
    nodes: error.nodes,
    path: error.path,
    extensions: { code: "INTERNAL_SERVER_ERROR", errorId },
  });
}
