import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { createClient, type Client as WsClient } from "graphql-ws";
import WebSocket from "ws";
import { loadConfig, type Config } from "../../src/config.ts";
import { resolveDatabaseUrls, type DatabaseUrls } from "../../src/db/database.ts";
import { startService, type Service } from "../../src/main.ts";
import { CONTRACT_DIR } from "./contract.ts";

// Starts the real service (HTTP server, PostGraphile, optionally the worker)
// in this process against the test database, and talks to it over real
// HTTP and WebSockets.

export const DEMO = {
  password: "coffee",
  alice: { email: "alice@example.com", id: "00000000-0000-4000-8000-00000000a11c" },
  bob: { email: "bob@example.com", id: "00000000-0000-4000-8000-000000000b0b" },
  barista: { email: "barista@example.com", id: "00000000-0000-4000-8000-0000000ba415" },
  admin: { email: "admin@example.com", id: "00000000-0000-4000-8000-0000000ad314" },
  walkInId: "00000000-0000-4000-8000-00000000da1c",
  alicePendingOrder: "00000000-0000-4000-8000-0000000a0001",
  alicePreparingOrder: "00000000-0000-4000-8000-0000000a0002",
  bobPendingOrder: "00000000-0000-4000-8000-0000000b0001",
} as const;

export type DemoUser = "alice" | "bob" | "barista" | "admin";

export interface GraphQLResponse<T = any> {
  status: number;
  body: { data?: T; errors?: Array<{ message: string; path?: unknown[]; extensions?: Record<string, any> }>; extensions?: Record<string, any> };
}

export interface TestService {
  config: Config;
  service: Service;
  url: string;
  wsUrl: string;
  urls: DatabaseUrls;
  /** A pool on the database owner (acts as 'dba'): for arranging and checking rows. */
  db: pg.Pool;
  gql<T = any>(query: string, options?: { variables?: Record<string, unknown>; token?: string | null; operationName?: string }): Promise<GraphQLResponse<T>>;
  token(user: DemoUser): Promise<string>;
  ws(token?: string | null): WsClient;
  stop(): Promise<void>;
}

export function testDatabaseUrl(): string {
  const url = process.env.CAFE_TEST_DATABASE_URL;
  if (!url) throw new Error("CAFE_TEST_DATABASE_URL is not set: run the tests through jest (globalSetup prepares the database)");
  return url;
}

export function testConfig(env: Record<string, string | undefined> = {}): Config {
  return loadConfig({
    ...process.env,
    NODE_ENV: "test",
    DATABASE_URL: testDatabaseUrl(),
    HOST: "127.0.0.1",
    PORT: "0",
    DEMO_DATA: "false",
    RUN_WORKER: "false",
    // Tests send bursts from one address; the rate limit has its own test.
    GRAPHQL_RATE_LIMIT: "0",
    SHUTDOWN_GRACE_MS: "0",
    ...env,
  });
}

export async function startTestService(options: { worker?: boolean; env?: Record<string, string | undefined> } = {}): Promise<TestService> {
  const config = testConfig({ RUN_WORKER: options.worker ? "true" : "false", ...options.env });
  const service = await startService(config);
  const port = service.api!.port;
  const url = `http://127.0.0.1:${port}`;
  const urls = await resolveDatabaseUrls(config, testDatabaseUrl());
  const db = new pg.Pool({ connectionString: urls.owner, max: 4 });
  const tokens = new Map<DemoUser, string>();
  const clients: WsClient[] = [];

  const gql: TestService["gql"] = async (query, { variables, token, operationName } = {}) => {
    const res = await fetch(`${url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables, operationName }),
    });
    const text = await res.text();
    let body: GraphQLResponse["body"];
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`non-JSON answer (${res.status}): ${text.slice(0, 200)}`);
    }
    return { status: res.status, body };
  };

  return {
    config,
    service,
    url,
    wsUrl: `ws://127.0.0.1:${port}/graphql`,
    urls,
    db,
    gql,
    async token(user) {
      const cached = tokens.get(user);
      if (cached) return cached;
      const r = await gql(`mutation($e: String!, $p: String!) { login(email: $e, password: $p) { token } }`, {
        variables: { e: DEMO[user].email, p: DEMO.password },
      });
      const token = r.body.data?.login?.token;
      if (!token) throw new Error(`login as ${user} failed: ${JSON.stringify(r.body)}`);
      tokens.set(user, token);
      return token;
    },
    ws(token) {
      const client = createClient({
        url: `ws://127.0.0.1:${port}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: token ? { authorization: `Bearer ${token}` } : {},
        retryAttempts: 0,
        lazy: true,
      });
      clients.push(client);
      return client;
    },
    async stop() {
      for (const c of clients) await c.dispose();
      await db.end();
      await service.stop();
    },
  };
}

/** The text of a client's operations file in the project's contract copy. */
export function operationsOf(client: "admin" | "barista" | "kiosk" | "mobile" | "pos"): string {
  return readFileSync(path.join(CONTRACT_DIR, "operations", `${client}.graphql`), "utf8");
}

/** Collects what a subscription delivers, until `count` results arrive or the timeout passes. */
export function subscribe<T = any>(client: WsClient, query: string, variables: Record<string, unknown> = {}, operationName?: string) {
  const results: Array<{ data?: T; errors?: any[] }> = [];
  let error: unknown;
  let completed = false;
  const waiters: Array<() => void> = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  const dispose = client.subscribe<T>(
    { query, variables, operationName },
    {
      next: (r) => {
        results.push(r as any);
        wake();
      },
      error: (e) => {
        error = e;
        wake();
      },
      complete: () => {
        completed = true;
        wake();
      },
    },
  );
  return {
    results,
    get error() {
      return error;
    },
    get completed() {
      return completed;
    },
    async waitFor(count: number, timeoutMs = 5000): Promise<Array<{ data?: T; errors?: any[] }>> {
      const deadline = Date.now() + timeoutMs;
      while (results.length < count && !error && !completed && Date.now() < deadline) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return results;
    },
    dispose,
  };
}

/** The text of a dashboard's documents beyond the contract (documents/, README "The café's day"). */
export function documentsOf(client: "admin" | "barista"): string {
  return readFileSync(path.join(CONTRACT_DIR, "..", "documents", `${client}.graphql`), "utf8");
}
