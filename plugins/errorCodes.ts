/**
 * Every refusal carries `extensions.code`, also those grafserv answers
 * itself before execution (parse and validation errors, a mutation over
 * GET, an unsupported body). Execution errors get theirs in src/errors.ts;
 * this only parses answers that are errors alone (`{"errors":...}` with no
 * data, or an HTTP status of 400 or more), so the happy path pays nothing.
 */
const STATUS_CODES: Record<number, string> = {
  405: "METHOD_NOT_ALLOWED",
  406: "NOT_ACCEPTABLE",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
};

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

export const ErrorCodesPlugin: GraphileConfig.Plugin = {
  name: "ErrorCodesPlugin",
  version: "1.0.0",
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
