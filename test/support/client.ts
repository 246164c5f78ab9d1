import { createHash } from "node:crypto";
import http from "node:http";
import { createClient, type Client as WsClient } from "graphql-ws";
import WebSocket from "ws";

// A client of the API: raw HTTP that reports resets and timeouts as data,
// GraphQL over HTTP, the demo accounts and signing in as them, graphql-ws
// and subscriptions, and checks of what came back.

// ---------------------------------------------------------------------------
// The demo accounts (data/demo.sql)
// ---------------------------------------------------------------------------

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
  /** The demo chain's second store, its barista and its manager (an admin of Ribeira only). */
  ribeiraBarista: { email: "ribeira.barista@example.com", id: "00000000-0000-4000-8000-0000000ba417" },
  ribeiraManager: { email: "ribeira.manager@example.com", id: "00000000-0000-4000-8000-0000000ad315" },
  stores: { baixa: "5707e000-0000-4000-8000-000000000001", ribeira: "5707e000-0000-4000-8000-000000000002" },
} as const;

export type DemoUser = "alice" | "bob" | "barista" | "admin";
/** Every demo account, the second store's staff included. */
export type DemoAccount = DemoUser | "ribeiraBarista" | "ribeiraManager";
export type Caller = "anonymous" | DemoUser;
export const CALLERS: Caller[] = ["anonymous", "alice", "bob", "barista", "admin"];

/** How a refresh token or a trusted document is stored: hex SHA-256 of its text. */
export const sha256Hex = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

// ---------------------------------------------------------------------------
// Raw HTTP
// ---------------------------------------------------------------------------

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
  ms: number;
}

/** Reads a whole answer: its text, its JSON (undefined when it is not JSON) and the time since `started`. */
export function readResponse(res: http.IncomingMessage, started: number): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on("data", (c: Buffer) => chunks.push(c));
    res.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let json: any;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, ms: Date.now() - started });
    });
    res.on("error", reject);
  });
}

/** An HTTP request on a fresh connection; rejects with the socket's error code (ECONNRESET, ECONNREFUSED, TIMEOUT). */
export function request(
  url: string,
  opts: { method?: string; headers?: Record<string, string | string[]>; body?: string | Buffer; timeoutMs?: number; agent?: http.Agent | false } = {},
): Promise<RawResponse> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? (opts.body !== undefined ? "POST" : "GET"), headers: opts.headers, agent: opts.agent ?? false });
    const timer = setTimeout(() => {
      const e = new Error(`no answer within ${opts.timeoutMs} ms`) as Error & { code: string };
      e.code = "TIMEOUT";
      req.destroy(e);
    }, opts.timeoutMs ?? 15_000);
    req.on("response", (res) => {
      readResponse(res, started).then(
        (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        (e) => {
          clearTimeout(timer);
          reject(e);
        },
      );
    });
    req.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end(opts.body);
  });
}

export function errorCode(e: unknown): string {
  const err = e as { code?: string; message?: string };
  return err?.code ?? err?.message ?? String(e);
}

// ---------------------------------------------------------------------------
// GraphQL over HTTP
// ---------------------------------------------------------------------------

export interface GraphQLResponse<T = any> {
  status: number;
  body: { data?: T; errors?: Array<{ message: string; path?: unknown[]; extensions?: Record<string, any> }>; extensions?: Record<string, any> };
  /** How long the answer took (gql sets it). */
  ms?: number;
}

export interface GqlOptions {
  variables?: Record<string, unknown>;
  token?: string | null;
  operationName?: string;
  timeoutMs?: number;
  agent?: http.Agent | false;
  /** More request headers (e.g. `idempotency-key`). */
  headers?: Record<string, string>;
}

/** A GraphQL POST to the API at `baseUrl`; throws on an answer that is not JSON. */
export async function gql<T = any>(baseUrl: string, query: string, opts: GqlOptions = {}): Promise<GraphQLResponse<T> & { ms: number }> {
  const r = await request(`${baseUrl}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}), ...opts.headers },
    body: JSON.stringify({ query, variables: opts.variables, operationName: opts.operationName }),
    timeoutMs: opts.timeoutMs,
    agent: opts.agent,
  });
  if (r.json === undefined) throw new Error(`non-JSON answer ${r.status}: ${r.text.slice(0, 200)}`);
  return { status: r.status, body: r.json, ms: r.ms };
}

/** Signs in as a demo user; the access token. */
export async function login(baseUrl: string, who: DemoAccount): Promise<string> {
  const r = await gql(baseUrl, "mutation($e: String!, $p: String!) { login(email: $e, password: $p) { token } }", {
    variables: { e: DEMO[who].email, p: DEMO.password },
  });
  const token = r.body.data?.login?.token;
  if (!token) throw new Error(`login as ${who} failed: ${JSON.stringify(r.body)}`);
  return token;
}

// ---------------------------------------------------------------------------
// Sending as someone
// ---------------------------------------------------------------------------

/** Something that sends GraphQL as a demo user: a TestService (service.ts). */
export interface Api {
  gql<T = any>(query: string, options?: GqlOptions): Promise<GraphQLResponse<T>>;
  token(user: DemoUser): Promise<string>;
}

export async function tokenOf(t: Api, who: Caller): Promise<string | null> {
  return who === "anonymous" ? null : t.token(who);
}

/** Sends a query as someone. */
export async function gqlAs<T = any>(t: Api, who: Caller, query: string, variables?: Record<string, unknown>, operationName?: string) {
  return t.gql<T>(query, { token: await tokenOf(t, who), variables, operationName });
}

// ---------------------------------------------------------------------------
// What came back
// ---------------------------------------------------------------------------

/** Asserts a 200 answer without errors and returns its data. */
export function ok<T = any>(r: GraphQLResponse<T>): T {
  expect({ status: r.status, errors: r.body.errors }).toEqual({ status: 200, errors: undefined });
  expect(r.body.data).toBeTruthy();
  return r.body.data as T;
}

/** The one error of a refused operation, with its code; data carries nothing. */
export function expectRefused(r: GraphQLResponse, code: string): Record<string, any> {
  const summary = { code: r.body.errors?.[0]?.extensions?.code, errors: r.body.errors?.length ?? 0, data: r.body.data };
  const expected: Record<string, unknown> = { code, errors: 1 };
  // A non-null mutation field that failed nulls the whole data (or leaves it out).
  expect({ code: summary.code, errors: summary.errors }).toEqual(expected);
  const data = r.body.data;
  if (data) for (const v of Object.values(data)) expect(v).toBeNull();
  return r.body.errors![0]!;
}

/** The extensions.code of every error of an answer. */
export function codes(r: Pick<GraphQLResponse, "body">): string[] {
  return (r.body.errors ?? []).map((e) => e.extensions?.code);
}

/** A readable summary of an answer's errors (for expectations that should show what came back). */
export function errorSummary(r: Pick<GraphQLResponse, "body">): Array<{ code: unknown; message: string; path?: unknown }> {
  return (r.body.errors ?? []).map((e) => ({ code: e.extensions?.code, message: e.message, path: e.path }));
}

// ---------------------------------------------------------------------------
// graphql-ws
// ---------------------------------------------------------------------------

/** A graphql-ws client (lazy, no retries) on the API at `baseUrl` (http:// or ws://), which records how its socket closed. */
export function wsClient(baseUrl: string, token?: string | null, params: Record<string, string> = {}) {
  const closes: Array<{ code: number; reason: string; wasClean: boolean }> = [];
  const client: WsClient = createClient({
    url: `${baseUrl.replace(/^http/, "ws").replace(/\/graphql$/, "")}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { ...params, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    retryAttempts: 0,
    lazy: true,
    on: {
      closed: (e: any) => closes.push({ code: e?.code, reason: String(e?.reason ?? ""), wasClean: Boolean(e?.wasClean) }),
    },
  });
  return { client, closes };
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

/**
 * Waits until a subscription (from subscribe) has `count` results, an error
 * or its completion, polling briefly: unlike its own waitFor, this leaves no
 * timer running once it returns.
 */
export async function settled(sub: { results: unknown[]; error: unknown; completed: boolean }, count = 1, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (sub.results.length < count && !sub.error && !sub.completed && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Every error a subscription produced: in `next` payloads or as the `error` message. */
export function errorsOf(sub: { results: Array<{ errors?: any[] }>; error: unknown }): any[] {
  const fromNext = sub.results.flatMap((r) => r.errors ?? []);
  const e = sub.error as any;
  const fromError = Array.isArray(e) ? e : e ? [e] : [];
  return [...fromNext, ...fromError];
}
