import type { IncomingMessage, ServerResponse } from "node:http";
import { accessLogger, logger } from "../logger.ts";
import { countRequest, observeRequest, routeLabel } from "../metrics.ts";
import type { RequestScope } from "../requestScope.ts";
import { refusals } from "./refusalLog.ts";
import { traceId } from "../tracing.ts";

// One JSON line per HTTP request (pino, as every other line; pino-http
// would add a child logger and serializers per request on the hot path):
// method, route (the bounded label of the metrics), status, duration, the
// GraphQL operation's name when there is one, the request id and, while
// tracing is on, the trace id (src/tracing.ts). The
// request counter of /metrics is kept at the same moment. A 5xx answer is
// not routine: a 503 (busy, down, refused for a while) is logged at warn,
// any other 5xx at error, so LOG_LEVEL=warn still shows them.
//
// A refusal (a 4xx, a 503, or an answer the request's scope says was
// refused: a GraphQL refusal answered 200) writes no line of its own: it is
// counted by source and reason (src/http/refusalLog.ts), one line per
// interval. Successes and other failures keep their lines.

/** Whether an answer refused the request (counted, not logged one by one). */
export function isRefusal(status: number, scope: RequestScope): boolean {
  return (status >= 400 && status < 500) || status === 503 || (status < 400 && scope.refusal !== undefined);
}

export function pathOf(url = "/"): string {
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

export function trackRequest(req: IncomingMessage, res: ServerResponse, path: string, scope: RequestScope, sourceOf: (req: IncomingMessage) => { key: string }): void {
  const started = performance.now();
  // Read now, in the request's context (the close event comes outside it).
  const trace = traceId();
  res.once("close", () => {
    const route = routeLabel(path);
    const finished = res.writableFinished;
    const durationMs = performance.now() - started;
    if (finished) {
      countRequest(route, res.statusCode);
      observeRequest(route, res.statusCode, durationMs / 1000);
    }
    if (finished && isRefusal(res.statusCode, scope)) {
      const reason = scope.refusal ?? (res.statusCode >= 400 ? scope.errorCode : undefined) ?? String(res.statusCode);
      refusals.note(sourceOf(req).key, reason, { method: req.method, route, status: res.statusCode });
      return;
    }
    const level = res.statusCode >= 500 ? (res.statusCode === 503 ? "warn" : "error") : "info";
    if (!logger.isLevelEnabled(level)) return;
    accessLogger[level](
      {
        requestId: scope.id,
        method: req.method,
        route,
        status: res.statusCode,
        durationMs: Math.round(durationMs * 100) / 100,
        operationName: scope.operationName,
        traceId: trace,
        ...(finished ? null : { aborted: true }),
      },
      "request",
    );
  });
}
