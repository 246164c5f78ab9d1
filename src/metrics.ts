import { readFileSync } from "node:fs";
import path from "node:path";
import client from "prom-client";
import type pg from "pg";
import { cacheStats } from "../common/boundedCache.ts";
import { asSystem } from "./db/asSystem.ts";

// Prometheus metrics (GET /metrics). Labels are bounded: an operation is
// named by its trusted document's operation name, every ad-hoc document is
// `adhoc`, so a client cannot grow the label set; routes, tasks and pools
// are fixed lists. ops/grafana/cafe-api.json graphs them and
// ops/prometheus/alerts.yml alerts on them.

export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

/** The trusted documents' operations (name -> query, mutation or subscription): contract/trusted-documents.json. */
const KNOWN_OPERATIONS: ReadonlyMap<string, string> = (() => {
  const operations = new Map<string, string>();
  try {
    const documents: Record<string, string> = JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../contract/trusted-documents.json"), "utf8"));
    for (const text of Object.values(documents)) {
      for (const m of text.matchAll(/^\s*(query|mutation|subscription)\s+(\w+)/gm)) operations.set(m[2]!, m[1]!);
    }
  } catch {
    // no manifest: every operation is "adhoc"
  }
  return operations;
})();

/**
 * An operation's label: its name when it ran a trusted document (the
 * request's scope knows its id; a WebSocket operation has no scope, and
 * is named when its name is a trusted one), else `adhoc`.
 */
export function operationLabel(name: string | null | undefined, scope: { documentId?: string } | undefined): string {
  if (!name || !KNOWN_OPERATIONS.has(name)) return "adhoc";
  return !scope || scope.documentId ? name : "adhoc";
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

/** Latency buckets (seconds) shared by the request, operation and pool histograms. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const STATUS_CLASSES = ["2xx", "3xx", "4xx", "5xx"] as const;

export const httpDuration = new client.Histogram({
  name: "cafe_http_request_duration_seconds",
  help: "HTTP requests answered, by route and status class, with their duration (headers in to answer out).",
  labelNames: ["route", "status_class"] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});
/** One observe function per route and status class (labels hashed once). */
const httpObservers = new Map<string, (seconds: number) => void>();
for (const route of Object.keys(ROUTE_STATUSES)) {
  for (const statusClass of STATUS_CLASSES) {
    httpDuration.zero({ route, status_class: statusClass });
    const child = httpDuration.labels({ route, status_class: statusClass });
    httpObservers.set(`${statusClass[0]} ${route}`, (s) => child.observe(s));
  }
}
/** Observes one request's duration (`route` a routeLabel). */
export function observeRequest(route: string, status: number, seconds: number): void {
  httpObservers.get(`${Math.trunc(status / 100)} ${route}`)?.(seconds);
}

export const poolWait = new client.Histogram({
  name: "cafe_db_pool_wait_seconds",
  help: "Time a checkout waited for a pool connection (0 when one was idle), by pool: api (DATABASE_POOL_SIZE), callback (CALLBACK_POOL_SIZE), subscriptions (DATABASE_SUBSCRIPTION_POOL_SIZE, transaction mode only).",
  labelNames: ["pool"] as const,
  buckets: [0, ...LATENCY_BUCKETS],
  registers: [registry],
});
for (const pool of ["api", "callback"]) poolWait.zero({ pool });

/**
 * Times every checkout of `pool` into cafe_db_pool_wait_seconds{pool=name}
 * (pool.query() goes through pool.connect() too).
 */
export function timePoolWaits(pool: pg.Pool, name: "api" | "callback" | "subscriptions"): void {
  const observe = poolWait.labels({ pool: name });
  const connect = pool.connect.bind(pool) as (cb?: unknown) => unknown;
  pool.connect = function (cb?: (err: Error | undefined, client?: pg.PoolClient, done?: (release?: unknown) => void) => void) {
    const started = performance.now();
    if (cb) {
      return void connect((err: Error | undefined, client: pg.PoolClient, done: (release?: unknown) => void) => {
        observe.observe((performance.now() - started) / 1000);
        cb(err, client, done);
      });
    }
    return (connect() as Promise<pg.PoolClient>).finally(() => observe.observe((performance.now() - started) / 1000));
  } as typeof pool.connect;
}

/** Job timing: every task of src/worker/tasks/index.ts is zeroed there. */
export const jobQueueWait = new client.Histogram({
  name: "cafe_job_queue_wait_seconds",
  help: "Time a graphile-worker job waited from when it could run (run_at) until a worker took it, by task.",
  labelNames: ["task"] as const,
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [registry],
});
export const jobRunTime = new client.Histogram({
  name: "cafe_job_run_seconds",
  help: "Time a graphile-worker job ran, by task and outcome (success, failure).",
  labelNames: ["task", "outcome"] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});
export function zeroJobMetrics(tasks: readonly string[]): void {
  for (const task of tasks) {
    jobQueueWait.zero({ task });
    for (const outcome of ["success", "failure"]) jobRunTime.zero({ task, outcome });
  }
}

export const callbackToPreparing = new client.Histogram({
  name: "cafe_order_paid_to_preparing_seconds",
  help: "Time from a payment (the callback's transaction, which queues start_preparation) to the order's PREPARING.",
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
  registers: [registry],
});

/**
 * What a worker-only process serves (src/worker/metricsListener.ts): the
 * process's own (memory, CPU, event loop) and the jobs'. The API's families
 * (requests, pools, subscriptions, LISTEN) are an API process's: a worker's
 * zeros would only mislead (cafe_listen_connected at 0 would page), and the
 * database-wide gauges (cafe_jobs, cafe_workers) come from the API.
 */
export function workerRegistry(): client.Registry {
  const worker = new client.Registry();
  const jobs: ReadonlySet<string> = new Set(["cafe_job_queue_wait_seconds", "cafe_job_run_seconds", "cafe_order_paid_to_preparing_seconds"]);
  for (const { name } of registry.getMetricsAsArray()) {
    const metric = registry.getSingleMetric(name);
    if (metric && (!name.startsWith("cafe_") || jobs.has(name))) worker.registerMetric(metric);
  }
  return worker;
}

export const listenLag = new client.Histogram({
  name: "cafe_listen_lag_seconds",
  help: "Time from a NOTIFY (a probe sent every few seconds) to its delivery on this process's LISTEN connection.",
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});

export const graphqlOperations = new client.Histogram({
  name: "cafe_graphql_operation_duration_seconds",
  help: "GraphQL operations by name and type, with their duration.",
  labelNames: ["operation", "type"] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [registry],
});
for (const [operation, type] of KNOWN_OPERATIONS) graphqlOperations.zero({ operation, type });
for (const type of ["query", "mutation", "subscription"]) graphqlOperations.zero({ operation: "adhoc", type });

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
export const liveCacheEvents = { hits: 0, stale: 0, misses: 0, coalesced: 0, invalidations: 0 };

for (const [name, help, key] of [
  ["cafe_live_cache_hits_total", "Public reads answered from the live cache.", "hits"],
  ["cafe_live_cache_stale_total", "Public reads answered a stale answer (an inventory it shows changed) while the same key was recomputed (LIVE_CACHE_STALE_MS).", "stale"],
  ["cafe_live_cache_misses_total", "Public reads the live cache did not hold (answered by the database, then kept).", "misses"],
  ["cafe_live_cache_coalesced_total", "Public reads that waited for the same key's answer being computed (one miss per key).", "coalesced"],
  ["cafe_live_cache_invalidations_total", "Changes the live cache heard (each drops the answers made of what changed) and times it was emptied (a reconnection).", "invalidations"],
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
  listening(): boolean;
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

/** app_private.ops_counts(), read once per scrape for every gauge below. */
let opsCounts: { at: number; rows: Promise<Map<string, number>> } | null = null;
function readOpsCounts(): Promise<Map<string, number>> | null {
  const first = sources.values().next().value as Source | undefined;
  if (!first) return null;
  if (!opsCounts || performance.now() - opsCounts.at > 500) {
    const rows = asSystem(first.pool, async (c) => (await c.query<{ metric: string; value: number }>("select * from app_private.ops_counts()")).rows).then(
      (r) => new Map(r.map((x) => [x.metric, Number(x.value)])),
    );
    opsCounts = { at: performance.now(), rows };
  }
  return opsCounts.rows;
}
for (const [name, help, labelName, values] of [
  [
    "cafe_workers",
    "graphile-worker workers by state: alive (beat within worker_dead_after_seconds) or dead (their jobs are being released).",
    "state",
    { alive: "workers_alive", dead: "workers_dead" },
  ],
  [
    "cafe_notification_webhooks",
    "Customer notification webhooks: pending (not delivered yet) and gave_up (after notify_webhook_max_attempts).",
    "state",
    { pending: "webhooks_pending", gave_up: "webhooks_gave_up" },
  ],
  ["cafe_refunds_open", "Refunds owed and not settled yet.", null, { "": "refunds_open" }],
  ["cafe_refund_oldest_open_seconds", "Age of the oldest refund not settled yet (0 when none).", null, { "": "refund_oldest_open_seconds" }],
] as const) {
  new client.Gauge({
    name,
    help,
    labelNames: labelName ? [labelName] : [],
    registers: [registry],
    async collect() {
      try {
        const counts = await readOpsCounts();
        if (!counts) return;
        for (const [label, metric] of Object.entries(values)) {
          if (labelName) this.set({ [labelName]: label }, counts.get(metric) ?? 0);
          else this.set(counts.get(metric) ?? 0);
        }
      } catch {
        // the database is down: leave the last values
      }
    },
  });
}

/** Payment alerts announced (app_private.raise_alert, src/payments/alerts.ts). */
export const paymentAlerts = new client.Counter({
  name: "cafe_payment_alerts_total",
  help: "Payment alerts raised (bursts, authentication failures, amounts: app_private.alert_rules), as this process heard them.",
  registers: [registry],
});

new client.Gauge({
  name: "cafe_listen_connected",
  help: "1 while this process's LISTEN/NOTIFY connection is up (subscriptions, revocations and the live cache depend on it), else 0.",
  registers: [registry],
  collect() {
    let up = 1;
    for (const s of sources) if (!s.listening()) up = 0;
    this.set(sources.size ? up : 0);
  },
});

/** Counts this server in the gauges; returns the function that stops counting it. */
export function registerPoolAndQueueMetrics(pool: pg.Pool, sockets: () => number, topics: () => number, listening: () => boolean = () => true): () => void {
  const source = { pool, sockets, topics, listening };
  sources.add(source);
  return () => sources.delete(source);
}
