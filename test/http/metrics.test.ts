import { readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { loadConfig } from "../../src/config.ts";
import { metricsHandler } from "../../src/http/metricsRoute.ts";
import { startWorkerMetrics } from "../../src/worker/metricsListener.ts";
import { operationsOf } from "../support/contract.ts";
import { testDatabaseUrl } from "../support/db.ts";
import { freePort } from "../support/ports.ts";
import { ChildService, useTestService, withLogsOnFailure } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";

// GET /metrics: every labelled family the docs name starts with its
// known label values at 0 (a dashboard's rate() sees a series before its
// first event), and who may read it: open outside production unless
// METRICS_TOKEN is set; in production only with the token, off without one.
// A worker-only process (`--worker`) serves its own /metrics on
// WORKER_METRICS_PORT, with the same rules: the jobs' histograms and the
// process's metrics, none of the API's.

const doc = (page: string) => readFileSync(path.resolve(__dirname, "../../docs", page), "utf8");
const TOKEN = "metrics-scraper-token-0123456789";

const t = useTestService();
const production = {
  NODE_ENV: "production",
  JWT_SECRET: "a-production-jwt-secret-of-at-least-32-chars",
  WEBHOOK_TOKEN: "a-production-webhook-token",
  SIGNING_SECRET: "a-production-signing-secret",
  DATABASE_ROLE_PASSWORD: "a-production-role-password",
};
/** Every sample of a scrape, as `name{labels}` -> value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const i = line.lastIndexOf(" ");
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

/** The section of a docs page under `## title`. */
function section(page: string, title: string): string {
  const text = doc(page);
  const start = text.indexOf(`## ${title}\n`);
  expect(start).toBeGreaterThan(-1);
  const end = text.indexOf("\n## ", start + 3);
  return text.slice(start, end === -1 ? undefined : end);
}

test("before any traffic, every documented label value is there at 0: GraphQL error codes, callback outcomes, requests by route and status, contract operations", async () => {
  const scrape = samples(await (await fetch(`${t.url}/metrics`)).text());
  const missing = (names: string[]) => names.filter((n) => scrape.get(n) !== 0);

  // docs/errors.md: the GraphQL table's codes (the first column).
  const graphqlTable = section("errors.md", "GraphQL (`/graphql`, over HTTP and WebSocket)")
    .split("\n")
    .filter((l) => /^\| `[A-Z_]+`/.test(l));
  const codes = graphqlTable.map((row) => /^\| `([A-Z_]+)`/.exec(row)![1]!);
  expect(codes.length).toBeGreaterThan(10);
  expect(missing(codes.map((c) => `cafe_graphql_errors_total{code="${c}"}`))).toEqual([]);

  // docs/payments.md: the table of answers; docs/errors.md: the callback's refusals.
  const table = doc("payments.md")
    .split("\n")
    .filter((l) => /^\| \d{3}/.test(l));
  const refusals = section("errors.md", "Payment callback (`POST /orders/payment-callback`)")
    .split("\n")
    .filter((l) => /^\| `[A-Z_]+`/.test(l));
  const outcomes = [...table.flatMap((row) => [...row.split("|")[1]!.matchAll(/"status":"(\w+)"/g)].map((m) => m[1]!)), ...refusals.map((row) => /^\| `([A-Z_]+)`/.exec(row)![1]!)];
  expect(outcomes).toEqual(expect.arrayContaining(["processed", "duplicate", "ignored", "PAYLOAD_TOO_LARGE", "AMBIGUOUS_ORDER", "SERVICE_UNAVAILABLE"]));
  expect(missing(outcomes.map((o) => `cafe_payment_callbacks_total{outcome="${o}"}`))).toEqual([]);

  // Requests: each route with the statuses it answers.
  expect(
    missing([
      ...[200, 400, 401, 413, 429, 503].map((s) => `cafe_http_requests_total{route="/graphql",status="${s}"}`),
      ...[200, 400, 401, 413, 415, 422, 429, 503].map((s) => `cafe_http_requests_total{route="/orders/payment-callback",status="${s}"}`),
      `cafe_http_requests_total{route="/readyz",status="503"}`,
      `cafe_http_requests_total{route="other",status="404"}`,
    ]),
  ).toEqual([]);

  // Operation durations: every operation of the contract's documents.
  const operations = (["admin", "barista", "kiosk", "mobile", "pos"] as const).flatMap((client) =>
    [...operationsOf(client).matchAll(/^(query|mutation|subscription) (\w+)/gm)].map((m) => `cafe_graphql_operation_duration_seconds_count{operation="${m[2]}",type="${m[1]}"}`),
  );
  expect(operations.length).toBeGreaterThan(15);
  expect(missing(operations)).toEqual([]);
});

test("outside production, /metrics is open (as before)", async () => {
  const res = await fetch(`${t.url}/metrics`);
  expect(res.status).toBe(200);
  expect(await res.text()).toMatch(/^# HELP /m);
});

describe("METRICS_TOKEN", () => {
  /** The metrics route as the service installs it, with these settings, on a real HTTP server. */
  async function metricsServer(env: Record<string, string>) {
    const config = loadConfig({ DATABASE_URL: testDatabaseUrl(), ...env });
    const handler = metricsHandler(config);
    const server = http.createServer((req, res) => {
      if (handler && req.url === "/metrics") return handler(req, res);
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/metrics`;
    const get = (authorization?: string) => fetch(url, { headers: authorization ? { authorization } : {} }).then((r) => r.status);
    return { get, close: () => new Promise<void>((r) => server.close(() => r())) };
  }

  test("in production without METRICS_TOKEN, /metrics is off (404), even with some bearer token", async () => {
    const s = await metricsServer(production);
    try {
      expect(await s.get()).toBe(404);
      expect(await s.get(`Bearer ${TOKEN}`)).toBe(404);
    } finally {
      await s.close();
    }
  });

  test("in production with METRICS_TOKEN, only `Authorization: Bearer <METRICS_TOKEN>` reads it", async () => {
    const s = await metricsServer({ ...production, METRICS_TOKEN: TOKEN });
    try {
      expect(await s.get()).toBe(401);
      expect(await s.get(`Bearer ${TOKEN}x`)).toBe(401);
      expect(await s.get(`Bearer ${TOKEN.slice(0, -1)}`)).toBe(401);
      expect(await s.get(`Basic ${TOKEN}`)).toBe(401);
      expect(await s.get(`Bearer ${TOKEN}`)).toBe(200);
      expect(await s.get(`bearer ${TOKEN}`)).toBe(200);
    } finally {
      await s.close();
    }
  });

  test("outside production, a METRICS_TOKEN is required once set", async () => {
    const s = await metricsServer({ NODE_ENV: "development", METRICS_TOKEN: TOKEN });
    try {
      expect(await s.get()).toBe(401);
      expect(await s.get(`Bearer ${TOKEN}`)).toBe(200);
    } finally {
      await s.close();
    }
  });

  test("a METRICS_TOKEN shorter than 16 characters stops the configuration", () => {
    expect(() => loadConfig({ METRICS_TOKEN: "short" })).toThrow(/METRICS_TOKEN/);
  });
});

describe("a worker-only process", () => {
  test("serves /metrics on WORKER_METRICS_PORT: the jobs' histograms, counted as jobs run, the process's metrics, none of the API's; METRICS_TOKEN applies; every other path 404", async () => {
    const worker = await ChildService.start({ name: "worker", mode: "worker", databaseUrl: testDatabaseUrl(), env: { DEMO_DATA: "false", METRICS_TOKEN: TOKEN }, waitReady: false });
    try {
      await withLogsOnFailure(
        () => [worker],
        async () => {
          const scrape = async () => {
            const res = await fetch(`${worker.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
            expect(res.status).toBe(200);
            return samples(await res.text());
          };
          await waitUntil(
            "the worker's /metrics",
            () =>
              fetch(`${worker.url}/metrics`).then(
                (r) => r.status === 401,
                () => false,
              ),
            60_000,
          );
          expect((await fetch(`${worker.url}/healthz`)).status).toBe(404);

          const task = "purge_idempotency_keys";
          const runs = `cafe_job_run_seconds_count{task="${task}",outcome="success"}`;
          const waits = `cafe_job_queue_wait_seconds_count{task="${task}"}`;
          const before = await scrape();
          expect(before.get(runs)).toBe(0);
          expect(before.get(waits)).toBe(0);
          expect(before.has("cafe_order_paid_to_preparing_seconds_count")).toBe(true);
          expect(before.has("process_resident_memory_bytes")).toBe(true);
          // The API's families are an API process's: a worker's zeros would mislead (and LISTEN at 0 would page).
          const names = [...before.keys()].map((k) => k.split("{")[0]!);
          expect(names.filter((n) => /^cafe_(http|graphql|db_pool|listen|subscriptions|live_cache|payment|stripe|jobs$|workers$)/.test(n))).toEqual([]);

          await t.db.query("select graphile_worker.add_job($1, '{}'::json)", [task]);
          await waitUntil("the job counted", async () => ((await scrape()).get(runs) ?? 0) >= 1, 30_000);
          expect((await scrape()).get(waits)).toBeGreaterThanOrEqual(1);
        },
      );
    } finally {
      await worker.stop();
    }
    // Stopped with the worker.
    await expect(fetch(`${worker.url}/metrics`)).rejects.toThrow();
  }, 120_000);

  test("no listener with WORKER_METRICS_PORT=0, with METRICS=false, or in production without METRICS_TOKEN; a port in use names WORKER_METRICS_PORT", async () => {
    const config = (env: Record<string, string>) => loadConfig({ DATABASE_URL: testDatabaseUrl(), HOST: "127.0.0.1", ...env });
    expect(await startWorkerMetrics(config({ WORKER_METRICS_PORT: "0" }))).toBeNull();
    expect(await startWorkerMetrics(config({ METRICS: "false" }))).toBeNull();
    expect(await startWorkerMetrics(config(production))).toBeNull();

    const port = await freePort();
    const first = await startWorkerMetrics(config({ WORKER_METRICS_PORT: String(port) }));
    try {
      expect(first?.port).toBe(port);
      await expect(startWorkerMetrics(config({ WORKER_METRICS_PORT: String(port) }))).rejects.toThrow(new RegExp(`^WORKER_METRICS_PORT ${port} on 127.0.0.1 is in use`));
    } finally {
      await first?.close();
    }
  });
});
