import { GraphQLError } from "postgraphile/graphql";
import { SafeError } from "postgraphile/grafast";

/**
 * Every `extensions.code` a GraphQL client (HTTP or WebSocket) may meet, and
 * the HTTP status with which this server answers it when the refusal is
 * the whole answer (null: only ever an execution or validation error,
 * whose status is grafserv's). The one
 * list: src/errors.ts maps SQLSTATEs onto it, /metrics counts each code from
 * 0, src/http/ answers its own refusals with these statuses.
 */
export const ERROR_STATUS = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: null,
  BAD_USER_INPUT: 400,
  NOT_FOUND: null,
  INVALID_TRANSITION: null,
  OUT_OF_STOCK: null,
  NOT_AVAILABLE: null,
  CONFLICT: null,
  RATE_LIMITED: 429,
  TOO_MANY_OPEN_ORDERS: null,
  QUERY_TIMEOUT: null,
  SERVICE_UNAVAILABLE: 503,
  INTERNAL_SERVER_ERROR: null,
  GRAPHQL_PARSE_FAILED: null,
  GRAPHQL_VALIDATION_FAILED: null,
  // the limits, checked before any SQL (plugins/queryCost.ts)
  QUERY_TOO_COMPLEX: null,
  QUERY_TOO_DEEP: null,
  TOO_MANY_ALIASES: null,
  TOO_MANY_TOKENS: null,
  QUERY_TOO_LARGE: null,
  INTROSPECTION_LIMIT: null,
  // refusals of the HTTP layer (src/http/, and grafserv's own below)
  PAYLOAD_TOO_LARGE: 413,
  METHOD_NOT_ALLOWED: 405,
  NOT_ACCEPTABLE: 406,
  UNSUPPORTED_MEDIA_TYPE: 415,
  // untrusted documents (plugins/trustedDocuments.ts)
  TRUSTED_DOCUMENT_REQUIRED: 403,
  PERSISTED_DOCUMENT_NOT_FOUND: 400,
  // refusals of the WebSocket layer (src/http/websocket.ts)
  TOO_MANY_SUBSCRIPTIONS: null,
  // idempotent mutations (plugins/idempotency.ts)
  IDEMPOTENCY_KEY_REUSED: null,
  IDEMPOTENCY_KEY_IN_PROGRESS: null,
  TOO_MANY_CONNECTIONS: 429,
  ORIGIN_NOT_ALLOWED: 403,
} as const satisfies Record<string, number | null>;
export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** A GraphQL answer that is one refusal. */
export function refusalBody(code: ErrorCode, message: string) {
  return { errors: [{ message, extensions: { code } }] };
}

/**
 * Every refusal carries `extensions.code`, also those grafserv answers
 * itself before execution (parse and validation errors, a mutation over
 * GET, an unsupported body). Execution errors get theirs in src/errors.ts;
 * this only parses answers that are errors alone (`{"errors":...}` with no
 * data, or an HTTP status of 400 or more), so the happy path pays nothing.
 */
const STATUS_CODES: Record<number, ErrorCode> = Object.fromEntries(
  (["METHOD_NOT_ALLOWED", "NOT_ACCEPTABLE", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"] as const).map((code) => [ERROR_STATUS[code], code]),
);

interface ErrorLike {
  message?: string;
  extensions?: Record<string, unknown>;
}

function withCodes(errors: ErrorLike[], status: number): ErrorLike[] {
  return errors.map((e) => {
    if (e.extensions?.code) return e;
    let message = e.message ?? "Bad request.";
    let code = STATUS_CODES[status] ?? (/^Syntax Error/.test(message) ? "GRAPHQL_PARSE_FAILED" : "GRAPHQL_VALIDATION_FAILED");
    if (/call stack/i.test(message)) {
      message = "The document is nested too deeply.";
      code = "QUERY_TOO_DEEP";
    }
    return { ...e, message, extensions: { ...e.extensions, code } };
  });
}

/**
 * A caller without a token whom Postgres refuses (42501: no EXECUTE grant on
 * a staff function, a row-level security check) is told to sign in:
 * UNAUTHENTICATED, as the functions' own guards answer, not FORBIDDEN.
 */
function signInFirst(result: any): any {
  if (!result || typeof result !== "object" || !Array.isArray(result.errors)) return result;
  let changed = false;
  const errors = result.errors.map((e: GraphQLError) => {
    if ((e.originalError as { code?: string } | undefined)?.code !== "42501") return e;
    changed = true;
    return new GraphQLError("Sign in first.", { nodes: e.nodes, path: e.path, originalError: new SafeError("Sign in first.", { code: "UNAUTHENTICATED" }) });
  });
  return changed ? { ...result, errors } : result;
}

export const ErrorCodesPlugin: GraphileConfig.Plugin = {
  name: "ErrorCodesPlugin",
  version: "1.0.0",
  grafast: {
    middleware: {
      execute(next, event) {
        if ((event.args.contextValue as { viewer?: unknown } | undefined)?.viewer) return next();
        const result = next() as any;
        return (result && typeof result.then === "function" ? result.then(signInFirst) : signInFirst(result)) as any;
      },
    },
  },
  grafserv: {
    middleware: {
      async processRequest(next) {
        const result = await next();
        if (!result) return result;
        const errorsOnly = result.type === "buffer" && result.buffer.subarray(0, 10).toString("latin1") === '{"errors":';
        if (result.statusCode < 400 && !errorsOnly) return result;
        try {
          if (result.type === "buffer") {
            const body = JSON.parse(result.buffer.toString("utf8"));
            if (Array.isArray(body?.errors)) {
              body.errors = withCodes(body.errors, result.statusCode);
              result.buffer = Buffer.from(JSON.stringify(body), "utf8");
              for (const h of Object.keys(result.headers)) if (h.toLowerCase() === "content-length") delete result.headers[h];
            }
          } else if (result.type === "json") {
            const body = result.json as { errors?: ErrorLike[] } | null;
            if (body && Array.isArray(body.errors)) body.errors = withCodes(body.errors, result.statusCode);
          }
        } catch {
          // not JSON (e.g. an HTML page): leave it
        }
        return result;
      },
    },
  },
};
