import type { IncomingMessage, ServerResponse } from "node:http";
import type express from "express";
import type { Config } from "../config.ts";
import { CALLBACK_PATH } from "../payments/generic.ts";
import { STRIPE_WEBHOOK_PATH } from "../payments/stripe.ts";

// The obvious URLs: GET / names the service's URLs (a short HTML page for a
// browser, JSON otherwise), and a browser opening /graphql (GET, accepting
// text/html, no query string) is sent to Ruru on /graphiql when it is on.

/** What GET / names: path -> what it is. */
function links(config: Config): Array<[string, string]> {
  return [
    ["/graphql", "GraphQL over HTTP (POST, or GET for queries) and graphql-ws"],
    ...(config.graphiql ? [["/graphiql", "Ruru, the GraphQL IDE"] as [string, string]] : []),
    [CALLBACK_PATH, "the payment provider's signed callbacks (POST)"],
    ...(config.STRIPE_SECRET_KEY ? [[STRIPE_WEBHOOK_PATH, "Stripe's signed webhooks (POST)"] as [string, string]] : []),
    ["/healthz", "liveness"],
    ["/readyz", "readiness (the database)"],
  ];
}

export function installHomeRoute(app: express.Express, config: Config): void {
  const list = links(config);
  const json = { service: "cafe-api", graphql: "/graphql", graphiql: config.graphiql ? "/graphiql" : null, links: Object.fromEntries(list) };
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Café API</title></head>
<body><h1>Café API</h1>
<p>A café's ordering service: GraphQL, live subscriptions, signed payment callbacks.</p>
<ul>
${list.map(([path, what]) => `<li><a href="${path}"><code>${path}</code></a>: ${what}</li>`).join("\n")}
</ul>
</body></html>
`;
  app.get("/", (req, res) => {
    res.vary("Accept");
    if (req.accepts(["application/json", "text/html"]) === "text/html") res.type("html").send(html);
    else res.json(json);
  });
}

/** A browser opening /graphql: GET, text/html acceptable, no query string (so not a GraphQL-over-GET request). */
export function isBrowserVisit(req: IncomingMessage): boolean {
  return req.method === "GET" && !req.url?.includes("?") && /\btext\/html\b/.test(req.headers.accept ?? "");
}

export function redirectToIde(res: ServerResponse): void {
  res.writeHead(302, { location: "/graphiql", "content-length": 0 });
  res.end();
}
