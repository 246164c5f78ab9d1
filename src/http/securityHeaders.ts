import type { IncomingMessage, ServerResponse } from "node:http";
import helmet from "helmet";

// Security headers everywhere (helmet); Ruru (an HTML page with inline
// scripts) gets no CSP, the JSON API the strictest one.

type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

export interface SecurityHeaders {
  /** The other routes: helmet's defaults. */
  page: Middleware;
  /** Ruru (/graphiql and its static files): no CSP. */
  ide: Middleware;
  /** /graphql's headers, worked out once: set them directly on every answer (the hot path). */
  api: ReadonlyArray<[string, string | string[]]>;
}

export function makeSecurityHeaders(): SecurityHeaders {
  return {
    page: helmet({ crossOriginEmbedderPolicy: false }),
    ide: helmet({ contentSecurityPolicy: false, crossOriginEmbedderPolicy: false }),
    // /graphql answers JSON, never a page: the strictest CSP (nothing loads,
    // nothing frames it) and none of the headers that only concern HTML or
    // old browsers (prefetch, IE downloads, Flash policies, agent clusters).
    // They do not depend on the request.
    api: headersOf(
      helmet({
        contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
        crossOriginEmbedderPolicy: false,
        originAgentCluster: false,
        xDnsPrefetchControl: false,
        xDownloadOptions: false,
        xPermittedCrossDomainPolicies: false,
        xFrameOptions: { action: "deny" },
      }),
    ),
  };
}

/**
 * The headers a response-independent middleware (helmet) sets, captured once
 * against a recording response.
 */
function headersOf(middleware: Middleware): Array<[string, string | string[]]> {
  const headers: Array<[string, string | string[]]> = [];
  let called = false;
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers.push([name, typeof value === "number" ? String(value) : (value as string | string[])]);
      return recorder;
    },
    removeHeader() {},
    getHeader() {
      return undefined;
    },
    hasHeader() {
      return false;
    },
  };
  middleware({ headers: {}, method: "POST", url: "/graphql" } as IncomingMessage, recorder as unknown as ServerResponse, (err) => {
    if (err) throw err;
    called = true;
  });
  if (!called || headers.length === 0) throw new Error("helmet did not set its headers synchronously");
  return headers;
}
