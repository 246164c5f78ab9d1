import { GraphQLError } from "postgraphile/graphql";
import { SafeError } from "postgraphile/grafast";
import { ERROR_CATALOGUE, ERROR_STATUS, RETRY_AFTER_SECONDS, type ErrorCode } from "../common/errorCatalogue.ts";

/**
 * An answer whose every error is "busy" or "down" and whose data is nothing
 * (null, or every root field null) was not served at all: its HTTP status is
 * 503 with Retry-After, as when the route refuses it itself. Found with a
 * byte search first, so other answers pay almost nothing.
 */
const CAPACITY_CODES = new Set<string>(Object.keys(RETRY_AFTER_SECONDS));
const CAPACITY_MARKERS = [...CAPACITY_CODES].map((code) => Buffer.from(`"${code}"`));

function capacityRefusal(body: { data?: unknown; errors?: ErrorLike[] }): keyof typeof RETRY_AFTER_SECONDS | null {
  if (!Array.isArray(body.errors) || body.errors.length === 0) return null;
  const codes = new Set(body.errors.map((e) => String(e.extensions?.code ?? "")));
  if (![...codes].every((c) => CAPACITY_CODES.has(c))) return null;
  const data = body.data;
  if (data !== null && data !== undefined && (typeof data !== "object" || Object.values(data).some((v) => v !== null))) return null;
  return codes.has("SERVICE_UNAVAILABLE") ? "SERVICE_UNAVAILABLE" : "SERVICE_BUSY";
}

/**
 * Every refusal carries `extensions.code`, also those grafserv answers
 * itself before execution (parse and validation errors, a mutation over
 * GET, an unsupported body). Execution errors get theirs in src/errors.ts;
 * this only parses answers that are errors alone (`{"errors":...}` with no
 * data, or an HTTP status of 400 or more), so the happy path pays nothing.
 */
const STATUS_CODES: Record<number, ErrorCode> = Object.fromEntries(
  (["METHOD_NOT_ALLOWED", "NOT_ACCEPTABLE", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"] as const).map((code) => [ERROR_CATALOGUE[code].status, code]),
);

interface ErrorLike {
  message?: string;
  extensions?: Record<string, unknown>;
}

/** grafserv's answer when JSON.parse of the body (or of a GET's variables/extensions) throws. */
const JSON_PARSE_FAILED = /^Parsing failed/;

function withCodes(errors: ErrorLike[], status: number, method: string): ErrorLike[] {
  return errors.map((e) => {
    if (e.extensions?.code) return e;
    let message = e.message ?? "Bad request.";
    let code: ErrorCode = STATUS_CODES[status] ?? (/^Syntax Error/.test(message) ? "GRAPHQL_PARSE_FAILED" : "GRAPHQL_VALIDATION_FAILED");
    if (JSON_PARSE_FAILED.test(message)) {
      code = "INVALID_JSON";
      message = method === "GET" ? "The variables or extensions parameter is not valid JSON." : "The request body is not valid JSON.";
    }
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

/**
 * Gives every error of an answer's body its code (withCodes) and, when the
 * answer is only "busy" or "down", makes it a 503 with Retry-After: the
 * status to send and the Retry-After header, if any. Changes `body.errors`.
 * grafserv's answers get this below; src/http/fastPath.ts calls it itself.
 */
export function finishErrors(body: { data?: unknown; errors?: ErrorLike[] }, statusCode: number, method: string): { statusCode: number; retryAfter?: string } {
  if (!Array.isArray(body.errors)) return { statusCode };
  body.errors = withCodes(body.errors, statusCode, method);
  const code = capacityRefusal(body);
  return code ? { statusCode: ERROR_STATUS[code], retryAfter: String(RETRY_AFTER_SECONDS[code]) } : { statusCode };
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
      async processRequest(next, event) {
        const method = event.requestDigest.method;
        const result = await next();
        if (!result) return result;
        const errorsOnly = result.type === "buffer" && result.buffer.subarray(0, 10).toString("latin1") === '{"errors":';
        const capacity = result.type === "buffer" && CAPACITY_MARKERS.some((m) => result.buffer.includes(m));
        if (result.statusCode < 400 && !errorsOnly && !capacity) return result;
        try {
          const body = result.type === "buffer" ? JSON.parse(result.buffer.toString("utf8")) : result.type === "json" ? (result.json as { errors?: ErrorLike[] } | null) : null;
          if (body && Array.isArray(body.errors)) {
            const { statusCode, retryAfter } = finishErrors(body, result.statusCode, method);
            result.statusCode = statusCode;
            if (retryAfter) result.headers["retry-after"] = retryAfter;
            if (result.type === "buffer") {
              result.buffer = Buffer.from(JSON.stringify(body), "utf8");
              for (const h of Object.keys(result.headers)) if (h.toLowerCase() === "content-length") delete result.headers[h];
            }
          }
        } catch {
          // not JSON (e.g. an HTML page): leave it
        }
        return result;
      },
    },
  },
};
