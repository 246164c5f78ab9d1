import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import client from "prom-client";
import type pg from "pg";
import { asSystem } from "./asSystem.ts";

// Prometheus metrics (GET /metrics). Labels are bounded: operation names
// outside the contract's documents count as "other", so a client cannot
// grow the label set.

export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

const KNOWN_OPERATIONS: ReadonlySet<string> = (() => {
  const names = new Set<string>();
  try {
    const dir = path.resolve(__dirname, "../contract/operations");
    for (const f of readdirSync(dir)) {
      for (const m of readFileSync(path.join(dir, f), "utf8").matchAll(/^\s*(?:query|mutation|subscription)\s+(\w+)/gm)) names.add(m[1]!);
    }
  } catch {
    // no contract folder: every operation is "other"
  }
  return names;
})();

export function operationLabel(name: string | null | undefined): string {
  return name && KNOWN_OPERATIONS.has(name) ? name : name ? "other" : "anonymous";
}

export const httpRequests = new client.Counter({
  name: "cafe_http_requests_total",
  help: "HTTP requests by route and status.",
  labelNames: ["route", "status"] as const,
  registers: [registry],
});

export const graphqlOperations = new client.Histogram({
  name: "cafe_graphql_operation_duration_seconds",
  help: "GraphQL operations by name and type, with their duration.",
  labelNames: ["operation", "type"] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [registry],
});

export const graphqlErrors = new client.Counter({
  name: "cafe_graphql_errors_total",
  help: "GraphQL errors by extensions.code.",
  labelNames: ["code"] as const,
  registers: [registry],
});

export const paymentCallbacks = new client.Counter({
  name: "cafe_payment_callbacks_total",
  help: "Payment callbacks by outcome (processed, duplicate, ignored, or the error code).",
  labelNames: ["outcome"] as const,
  registers: [registry],
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
    let total = 0, idle = 0, waiting = 0;
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
    let sockets = 0, topics = 0;
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
