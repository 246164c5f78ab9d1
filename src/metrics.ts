import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import client from "prom-client";
import type pg from "pg";
import { cacheStats } from "../common/boundedCache.ts";
import { asSystem } from "./db/asSystem.ts";

// Prometheus metrics (GET /metrics). Labels are bounded: operation names
// outside the contract's documents count as "other", so a client cannot
// grow the label set.

export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

/** The contract's operations (name -> query, mutation or subscription). */
const KNOWN_OPERATIONS: ReadonlyMap<string, string> = (() => {
  const operations = new Map<string, string>();
  try {
    const dir = path.resolve(import.meta.dirname, "../contract/operations");
    for (const f of readdirSync(dir)) {
      for (const m of readFileSync(path.join(dir, f), "utf8").matchAll(/^\s*(query|mutation|subscription)\s+(\w+)/gm)) operations.set(m[2]!, m[1]!);
    }
  } catch {
    // no contract folder: every operation is "other"
  }
  return operations;
})();

export function operationLabel(name: string | null | undefined): string {
  return name && KNOWN_OPERATIONS.has(name) ? name : name ? "other" : "anonymous";
}

/** The routes the request counter names (any other path is "other"), with the statuses each may answer: all start at 0. */
const ROUTE_STATUSES: Readonly<Record<string, readonly number[]>> = {
  "/graphql": [200, 400, 401, 405, 413, 415, 429, 503],
  "/graphiql": [200],
  "/healthz": [200],
  "/readyz": [200, 503],
  "/metrics": [200, 401, 404],
  "/orders/payment-callback": [200, 400, 401, 405, 413, 415, 422, 429, 500, 503],
  other: [404, 413],
};
const ROUTES: ReadonlySet<string> = new Set(Object.keys(ROUTE_STATUSES).filter((r) => r !== "other"));

/** A request's path as the bounded label of the request counter and the access log. */
export function routeLabel(path: string): string {
  return ROUTES.has(path) ? path : "other";
}

// Counted per request in a plain Map (prom-client hashes the labels of every
// inc(): a few microseconds on the hot path), handed to the counter when
// /metrics is read.
const pendingRequests = new Map<string, { route: string; status: string; count: number }>();

export const httpRequests = new client.Counter({
  name: "cafe_http_requests_total",
  help: "HTTP requests by route and status.",
  labelNames: ["route", "status"] as const,
  registers: [registry],
  collect() {
    for (const p of pendingRequests.values()) {
      if (p.count) this.inc({ route: p.route, status: p.status }, p.count);
      p.count = 0;
    }
  },
});
for (const [route, statuses] of Object.entries(ROUTE_STATUSES)) for (const status of statuses) httpRequests.inc({ route, status: String(status) }, 0);

/** One more request answered on `route` (a routeLabel) with `status`. */
export function countRequest(route: string, status: number): void {
  const key = `${status} ${route}`;
  const p = pendingRequests.get(key);
  if (p) p.count++;
  else pendingRequests.set(key, { route, status: String(status), count: 1 });
}

export const graphqlOperations = new client.Histogram({
  name: "cafe_graphql_operation_duration_seconds",
  help: "GraphQL operations by name and type, with their duration.",
  labelNames: ["operation", "type"] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [registry],
});
for (const [operation, type] of KNOWN_OPERATIONS) graphqlOperations.zero({ operation, type });

/** Records one operation's duration (the labels are checked once per pair: both are bounded). */
const operationObservers = new Map<string, (seconds: number) => void>();
export function observeOperation(operation: string, type: string, seconds: number): void {
  const key = `${type} ${operation}`;
  let observe = operationObservers.get(key);
  if (!observe) operationObservers.set(key, (observe = graphqlOperations.labels({ operation, type }).observe));
  observe(seconds);
}

// Their label values start at 0 where they are counted: src/errors.ts
// (ERROR_CODES of common/errorCatalogue.ts), src/payments/generic.ts (CALLBACK_OUTCOMES), src/payments/stripe.ts (STRIPE_OUTCOMES).
export const graphqlErrors = new client.Counter({
  name: "cafe_graphql_errors_total",
  help: "GraphQL errors by extensions.code.",
  labelNames: ["code"] as const,
  registers: [registry],
});

/** Requests /graphql served on its fast path (src/http/fastPath.ts), by kind of document; the rest went through grafserv. */
export const fastPathRequests = new client.Counter({
  name: "cafe_graphql_fast_path_requests_total",
  help: "GraphQL requests over HTTP served by the fast path, by document (trusted or ad_hoc).",
  labelNames: ["document"] as const,
  registers: [registry],
});
for (const document of ["trusted", "ad_hoc"]) fastPathRequests.inc({ document }, 0);
export const fastPathTrusted = fastPathRequests.labels({ document: "trusted" });
export const fastPathAdHoc = fastPathRequests.labels({ document: "ad_hoc" });

/** Ad-hoc document texts the fast path holds (at most GRAPHQL_DOCUMENT_CACHE_SIZE per schema). */
export const fastPathDocuments = new client.Gauge({
  name: "cafe_graphql_fast_path_ad_hoc_documents",
  help: "Ad-hoc document texts the fast path holds, parsed and validated, for the current schema.",
  registers: [registry],
});

export const paymentCallbacks = new client.Counter({
  name: "cafe_payment_callbacks_total",
  help: "Payment callbacks by outcome (processed, duplicate, ignored, or the error code).",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

export const stripeWebhooks = new client.Counter({
  name: "cafe_stripe_webhooks_total",
  help: "Stripe webhook deliveries by outcome (processed, duplicate, ignored, refused, or the route's error code).",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

/** The live cache's events (src/http/liveCache.ts), counted in plain numbers on the hot path. */
export const liveCacheEvents = { hits: 0, misses: 0, invalidations: 0 };

for (const [name, help, key] of [
  ["cafe_live_cache_hits_total", "Public reads answered from the live cache.", "hits"],
  ["cafe_live_cache_misses_total", "Public reads the live cache did not hold (answered by the database, then kept).", "misses"],
  ["cafe_live_cache_invalidations_total", "Times the live cache was emptied (a NOTIFY of a change, a reconnection).", "invalidations"],
] as const) {
  let reported = 0;
  new client.Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.inc(liveCacheEvents[key] - reported);
      reported = liveCacheEvents[key];
    },
  });
}

// The bounded caches (common/boundedCache.ts): every map callers fill, by name.
for (const [name, help, key] of [
  ["cafe_cache_entries", "Entries held by each bounded cache (common/boundedCache.ts), by cache name.", "entries"],
  ["cafe_cache_bytes", "Bytes (estimated) held by each bounded cache, by cache name.", "bytes"],
] as const) {
  new client.Gauge({
    name,
    help,
    labelNames: ["cache"] as const,
    registers: [registry],
    collect() {
      for (const s of cacheStats()) this.set({ cache: s.name }, s[key]);
    },
  });
}
const reportedEvictions = new Map<string, number>();
new client.Counter({
  name: "cafe_cache_evictions_total",
  help: "Entries each bounded cache dropped to stay within its bounds (least recently used first), by cache name.",
  labelNames: ["cache"] as const,
  registers: [registry],
  collect() {
    for (const s of cacheStats()) {
      this.inc({ cache: s.name }, s.evictions - (reportedEvictions.get(s.name) ?? 0));
      reportedEvictions.set(s.name, s.evictions);
    }
  },
});

interface Source {
  pool: pg.Pool;
  sockets(): number;
  topics(): number;
}

/** The API servers of this process (tests start several): gauges add them up. */
const sources = new Set<Source>();

new client.Gauge({
  name: "cafe_db_pool_connections",
  help: "The API pool's connections by state.",
  labelNames: ["state"] as const,
  registers: [registry],
  collect() {
    let total = 0,
      idle = 0,
      waiting = 0;
    for (const { pool } of sources) {
      total += pool.totalCount;
      idle += pool.idleCount;
      waiting += pool.waitingCount;
    }
    this.set({ state: "total" }, total);
    this.set({ state: "idle" }, idle);
    this.set({ state: "waiting" }, waiting);
  },
});

new client.Gauge({
  name: "cafe_subscriptions_open",
  help: "Open WebSocket connections, and LISTEN topics with at least one subscriber.",
  labelNames: ["kind"] as const,
  registers: [registry],
  collect() {
    let sockets = 0,
      topics = 0;
    for (const s of sources) {
      sockets += s.sockets();
      topics += s.topics();
    }
    this.set({ kind: "sockets" }, sockets);
    this.set({ kind: "topics" }, topics);
  },
});

new client.Gauge({
  name: "cafe_jobs",
  help: "graphile-worker jobs: queued (runnable), locked (running), failed (with errors, waiting to retry or given up).",
  labelNames: ["state"] as const,
  registers: [registry],
  async collect() {
    const first = sources.values().next().value as Source | undefined;
    if (!first) return;
    try {
      const rows = await asSystem(first.pool, async (c) => (await c.query("select * from app_private.job_counts()")).rows);
      for (const r of rows) this.set({ state: r.state }, Number(r.count));
    } catch {
      // the database is down: leave the last values
    }
  },
});

/** Counts this server in the gauges; returns the function that stops counting it. */
export function registerPoolAndQueueMetrics(pool: pg.Pool, sockets: () => number, topics: () => number): () => void {
  const source = { pool, sockets, topics };
  sources.add(source);
  return () => sources.delete(source);
}
