import type { Config } from "./config.ts";
import { logger, prettyLines } from "./logger.ts";
import { CALLBACK_PATH } from "./payments/generic.ts";

// What `npm start` says once it is ready: where to go (GraphQL, Ruru, the
// payment callback, health) and, where the demo café is loaded, whom to sign
// in as. On a terminal a short block of text; otherwise one JSON log line
// with the same facts.

export interface BannerFacts {
  /** The API's port (null: this process runs only the worker). */
  port: number | null;
  worker: boolean;
  /** A worker-only process's /metrics port (null: none). */
  workerMetricsPort?: number | null;
  demoAccounts: Array<{ email: string; role: string }>;
}

export function bannerUrls(config: Config, port: number): Record<string, string> {
  const base = `http://localhost:${port}`;
  return {
    graphql: `${base}/graphql`,
    ...(config.graphiql ? { graphiql: `${base}/graphiql` } : {}),
    paymentCallback: `${base}${CALLBACK_PATH}`,
    health: `${base}/healthz`,
  };
}

export function bannerText(config: Config, facts: BannerFacts): string {
  const lines = ["", "  Café API is ready" + (facts.port === null ? " (worker only)" : facts.worker ? "" : " (API only)"), ""];
  if (facts.port !== null) {
    const urls = bannerUrls(config, facts.port);
    const label: Record<string, string> = { graphql: "GraphQL", graphiql: "Ruru (GraphiQL)", paymentCallback: "Payment callback", health: "Health" };
    for (const [key, url] of Object.entries(urls)) lines.push(`  ${label[key]!.padEnd(18)} ${url}`);
    lines.push("");
  }
  if (facts.workerMetricsPort) lines.push(`  ${"Metrics".padEnd(18)} http://localhost:${facts.workerMetricsPort}/metrics`, "");
  if (facts.demoAccounts.length) {
    lines.push("  Demo accounts (password: coffee)");
    for (const a of facts.demoAccounts) lines.push(`    ${a.email.padEnd(22)} ${a.role}`);
    lines.push("");
  }
  return lines.join("\n") + "\n";
}

export function printBanner(config: Config, facts: BannerFacts): void {
  if (prettyLines()) process.stdout.write(bannerText(config, facts));
  else
    logger.info(
      {
        ...(facts.port !== null ? { urls: bannerUrls(config, facts.port) } : {}),
        ...(facts.workerMetricsPort ? { urls: { metrics: `http://localhost:${facts.workerMetricsPort}/metrics` } } : {}),
        ...(facts.demoAccounts.length ? { demoAccounts: facts.demoAccounts.map((a) => ({ ...a, password: "coffee" })) } : {}),
      },
      "ready",
    );
}
