import { spawn, type ChildProcess } from "node:child_process";
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { createClient, type Client as WsClient } from "graphql-ws";
import WebSocket from "ws";
import { loadConfig } from "../../src/config.ts";
import { dropDatabase, prepareDatabase, resolveDatabaseUrls, type DatabaseUrls } from "../../src/db/database.ts";
import { liftOpenOrderCaps } from "./testDatabase.ts";

// Shared tools of the drills (test/drills/): own databases on the test
// server, the service run as child processes (node src/main.ts), signed
// payment callbacks, raw HTTP that reports resets and timeouts as data, and
// checks of what a payment must have caused (exactly once).

export const ROOT = path.resolve(__dirname, "../..");
/** DRILLS_LONG=1: the long forms (minutes); default: the short forms for CI. */
export const LONG = process.env.DRILLS_LONG === "1";

const CONFIG = loadConfig({ ...process.env, NODE_ENV: "test" });
export const SECRETS = {
  webhookToken: CONFIG.WEBHOOK_TOKEN,
  signingSecret: CONFIG.SIGNING_SECRET,
  jwtSecret: CONFIG.JWT_SECRET,
} as const;

export const CALLBACK_PATH = "/orders/payment-callback";

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
export const rnd = (min: number, max: number) => min + Math.random() * (max - min);
export function shuffle<T>(xs: T[]): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** Prints one line a drill reports (jest shows console.log with its origin). */
export function report(drill: string, figures: Record<string, unknown>): void {
  const line = Object.entries(figures)
    .map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : String(v)}`)
    .join(" ");
  console.log(`[drill ${drill}] ${line}`);
}

// ---------------------------------------------------------------------------
// Databases
// ---------------------------------------------------------------------------

/** A superuser URL on the server the tests use (TEST_DATABASE_URL, or the embedded test server), database `name`. */
export function serverUrl(name = "postgres"): string {
  const base =
    process.env.DRILL_DATABASE_URL ?? process.env.CAFE_TEST_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const u = new URL(base);
  u.pathname = `/${name}`;
  return u.toString();
}

export interface DrillDb {
  name: string;
  /** Superuser URL of this database (what the children get as DATABASE_URL). */
  url: string;
  urls: DatabaseUrls;
  /** Superuser pool on this database: arranging and checking rows (acts as 'dba'). */
  db: pg.Pool;
  close(): Promise<void>;
}

/** Drops and recreates database `name` with the migrations and the demo data, like `npm start` does. */
export async function freshDatabase(name: string, opts: { demoData?: boolean } = {}): Promise<DrillDb> {
  const url = serverUrl(name);
  const config = loadConfig({ ...process.env, NODE_ENV: "test", DATABASE_URL: url });
  const urls = await resolveDatabaseUrls(config, url);
  if (!urls.root) throw new Error(`${url} is not a superuser URL: the drills create their own databases`);
  await dropDatabase(urls.root, name);
  await prepareDatabase(urls, config, { demoData: opts.demoData ?? true });
  await liftOpenOrderCaps(url);
  const db = new pg.Pool({ connectionString: url, max: 4 });
  db.on("error", () => {});
  return {
    name,
    url,
    urls,
    db,
    async close() {
      await db.end().catch(() => {});
    },
  };
}

/** Connections to a database right now (pg_stat_activity), by application or state. */
export async function connectionCount(db: pg.Pool, database: string): Promise<number> {
  const { rows } = await db.query("select count(*)::int as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()", [database]);
  return rows[0].n;
}

// ---------------------------------------------------------------------------
// Child processes: `node src/main.ts [--api|--worker]`, as npm start
// ---------------------------------------------------------------------------

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

export type ChildMode = "api" | "worker" | "all";

export interface ChildOptions {
  name: string;
  mode: ChildMode;
  databaseUrl: string;
  port?: number;
  env?: Record<string, string>;
  /** Wait until /readyz answers 200 (API) or the worker beats (worker). Default true. */
  waitReady?: boolean;
  readyTimeoutMs?: number;
}

const children = new Set<ChildService>();

function killAllSync() {
  for (const c of children) c.killGroup("SIGKILL");
}
process.once("exit", killAllSync);

/** Runs a drill body; when it throws, prints the last log lines of the given children first. */
export async function withLogsOnFailure<T>(get: () => Array<ChildService | null | undefined>, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    for (const c of get()) {
      if (c) console.log(`--- ${c.options.name} (pid ${c.proc.pid}, exit ${JSON.stringify(c.exitInfo)}) last log lines:\n${c.tail(60)}`);
    }
    throw e;
  }
}

/** Kills every child still running (afterAll of each drill). */
export async function killAllChildren(): Promise<void> {
  const all = [...children];
  for (const c of all) c.killGroup("SIGKILL");
  await Promise.all(all.map((c) => c.waitExit(5000).catch(() => {})));
}

export class ChildService {
  readonly proc: ChildProcess;
  readonly port: number;
  readonly url: string;
  readonly logs: string[] = [];
  exitInfo: { code: number | null; signal: NodeJS.Signals | null; at: number } | null = null;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  readonly options: ChildOptions;

  private constructor(options: ChildOptions, port: number) {
    this.options = options;
    this.port = port;
    this.url = `http://127.0.0.1:${port}`;
    const args = ["src/main.ts", ...(options.mode === "api" ? ["--api"] : options.mode === "worker" ? ["--worker"] : [])];
    const bin = path.join(ROOT, "node_modules", ".bin");
    // As `npm start` runs it: node src/main.ts, no wrapper in between.
    this.proc = spawn(process.execPath, args, {
      cwd: ROOT,
      detached: true, // its own process group: a SIGKILL reaches the service
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        PATH: `${bin}:${process.env.PATH ?? ""}`,
        NODE_OPTIONS: "",
        NODE_ENV: "test",
        DATABASE_URL: options.databaseUrl,
        HOST: "127.0.0.1",
        PORT: String(port),
        LOG_LEVEL: "warn",
        DEMO_DATA: "true",
        WEBHOOK_TOKEN: SECRETS.webhookToken,
        SIGNING_SECRET: SECRETS.signingSecret,
        JWT_SECRET: SECRETS.jwtSecret,
        ...options.env,
      },
    });
    const keep = (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (!line.trim()) continue;
        this.logs.push(line);
        if (this.logs.length > 2000) this.logs.splice(0, 500);
      }
    };
    this.proc.stdout!.on("data", keep);
    this.proc.stderr!.on("data", keep);
    this.exited = new Promise((resolve) => {
      this.proc.once("exit", (code, signal) => {
        this.exitInfo = { code, signal, at: Date.now() };
        children.delete(this);
        resolve({ code, signal });
      });
    });
    children.add(this);
  }

  static async start(options: ChildOptions): Promise<ChildService> {
    const port = options.port ?? (await freePort());
    const child = new ChildService(options, port);
    if (options.waitReady ?? true) await child.waitReady(options.readyTimeoutMs ?? 40_000);
    return child;
  }

  get alive(): boolean {
    return this.exitInfo === null;
  }

  /** The service's own process (the spawned node itself). */
  innerPid(): number | undefined {
    return this.proc.pid;
  }

  /** Resident memory of the service process, in MiB (from /proc). */
  rssMb(): number | undefined {
    const pid = this.innerPid();
    if (!pid) return undefined;
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      return m ? Number(m[1]) / 1024 : undefined;
    } catch {
      return undefined;
    }
  }

  async waitReady(timeoutMs: number, db?: pg.Pool): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.alive) throw new Error(`${this.options.name} exited while starting (${JSON.stringify(this.exitInfo)}):\n${this.tail()}`);
      if (this.options.mode === "worker") {
        const pid = this.innerPid();
        if (pid && db) {
          const { rows } = await db
            .query("select 1 from app_private.worker_heartbeats where process = $1", [`${os.hostname()}:${pid}`])
            .catch(() => ({ rows: [] as unknown[] }));
          if (rows.length) return;
        } else if (pid && !db) {
          // Nothing to ask: give it the time a start takes here.
          await sleep(2500);
          return;
        }
      } else {
        const r = await request(`${this.url}/readyz`, { timeoutMs: 1000 }).catch(() => null);
        if (r?.status === 200) return;
      }
      await sleep(150);
    }
    throw new Error(`${this.options.name} not ready after ${timeoutMs} ms:\n${this.tail()}`);
  }

  /** SIGKILL (or another signal) to the whole process group (the service). */
  killGroup(signal: NodeJS.Signals = "SIGKILL"): void {
    if (!this.alive || !this.proc.pid) return;
    try {
      process.kill(-this.proc.pid, signal);
    } catch {
      // already gone
    }
  }

  /** A signal to the service process, as `kill <pid>` would send. */
  signal(signal: NodeJS.Signals): void {
    if (this.alive) this.proc.kill(signal);
  }

  async waitExit(timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${this.options.name} did not exit within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Log lines at or above pino level `min` (40 warn, 50 error, 60 fatal). */
  logsAtLeast(min: number): string[] {
    return this.logs.filter((l) => {
      try {
        return JSON.parse(l).level >= min;
      } catch {
        return /error|exception/i.test(l);
      }
    });
  }

  /** The last log lines (JSON lines cut short), with every non-JSON line (crash traces) of the whole run. */
  tail(n = 40): string {
    const plain = this.logs.filter((l) => !l.startsWith("{") && !/^The GRAPHILE_ENV/.test(l));
    const last = this.logs.slice(-n).filter((l) => l.startsWith("{")).map((l) => (l.length > 400 ? `${l.slice(0, 400)}...` : l));
    return [...last, ...(plain.length ? ["--- non-JSON output:", ...plain.slice(-80)] : [])].join("\n");
  }
}

// ---------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
  ms: number;
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
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString("utf8");
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, ms: Date.now() - started });
      });
      res.on("error", (e) => {
        clearTimeout(timer);
        reject(e);
      });
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

/** `sha256=<hex HMAC-SHA256 of the bytes>`. */
export function signature(body: string | Buffer, secret: string = SECRETS.signingSecret): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/** The headers the provider sends with a body. */
export function callbackHeaders(body: string | Buffer, extra: Record<string, string> = {}): Record<string, string> {
  return {
    "content-type": "application/json",
    authorization: `Bearer ${SECRETS.webhookToken}`,
    "x-signature": signature(body),
    ...extra,
  };
}

/** One signed delivery. */
export function postCallback(baseUrl: string, body: string | Buffer, opts: { headers?: Record<string, string>; timeoutMs?: number } = {}) {
  return request(`${baseUrl}${CALLBACK_PATH}`, { method: "POST", headers: opts.headers ?? callbackHeaders(body), body, timeoutMs: opts.timeoutMs ?? 15_000 });
}

export interface GqlResult {
  status: number;
  body: { data?: any; errors?: Array<{ message: string; extensions?: Record<string, any>; path?: unknown[] }>; extensions?: any };
  ms: number;
}

export async function gql(
  baseUrl: string,
  query: string,
  opts: { variables?: Record<string, unknown>; token?: string | null; operationName?: string; timeoutMs?: number; agent?: http.Agent | false } = {},
): Promise<GqlResult> {
  const r = await request(`${baseUrl}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}) },
    body: JSON.stringify({ query, variables: opts.variables, operationName: opts.operationName }),
    timeoutMs: opts.timeoutMs,
    agent: opts.agent,
  });
  if (r.json === undefined) throw new Error(`non-JSON answer ${r.status}: ${r.text.slice(0, 200)}`);
  return { status: r.status, body: r.json, ms: r.ms };
}

export const DEMO_USERS = {
  alice: { email: "alice@example.com", id: "00000000-0000-4000-8000-00000000a11c" },
  bob: { email: "bob@example.com", id: "00000000-0000-4000-8000-000000000b0b" },
  barista: { email: "barista@example.com", id: "00000000-0000-4000-8000-0000000ba415" },
  admin: { email: "admin@example.com", id: "00000000-0000-4000-8000-0000000ad314" },
} as const;
export type DemoName = keyof typeof DEMO_USERS;

export async function login(baseUrl: string, who: DemoName): Promise<string> {
  const r = await gql(baseUrl, "mutation($e: String!, $p: String!) { login(email: $e, password: $p) { token } }", {
    variables: { e: DEMO_USERS[who].email, p: "coffee" },
  });
  const token = r.body.data?.login?.token;
  if (!token) throw new Error(`login as ${who} failed: ${JSON.stringify(r.body)}`);
  return token;
}

/** A graphql-ws client that records how its socket closed. */
export function wsClient(baseUrl: string, token?: string | null) {
  const closes: Array<{ code: number; reason: string; wasClean: boolean }> = [];
  const client: WsClient = createClient({
    url: `${baseUrl.replace(/^http/, "ws")}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: true,
    on: {
      closed: (e: any) => closes.push({ code: e?.code, reason: String(e?.reason ?? ""), wasClean: Boolean(e?.wasClean) }),
    },
  });
  return { client, closes };
}

// ---------------------------------------------------------------------------
// Orders and payments
// ---------------------------------------------------------------------------

export interface PendingOrder {
  id: string;
  customerId: string;
  email: string;
  total: string;
  lines: Array<{ coffeeId: string; name: string; quantity: number }>;
}

/** Coffees with a recipe whose ingredients are plentiful in the demo stock. */
export const PLENTIFUL_COFFEES = [
  "40000000-0000-4000-8000-000000000001", // House Espresso: beans
  "40000000-0000-4000-8000-000000000002", // Ristretto: beans
  "40000000-0000-4000-8000-000000000008", // Batch Brew: filter beans
  "40000000-0000-4000-8000-000000000003", // Caffè Latte: beans, milk
  "40000000-0000-4000-8000-000000000005", // Cappuccino: beans, milk
];

/** `n` PENDING orders made through create_order (as 'dba'), for alice and bob, one or two lines each. */
export async function createPendingOrders(db: pg.Pool, n: number, coffees: string[] = PLENTIFUL_COFFEES): Promise<PendingOrder[]> {
  const { rows: names } = await db.query<{ id: string; name: string }>("select id, name from app_public.coffees where id = any($1::uuid[])", [coffees]);
  const nameOf = new Map(names.map((r) => [r.id, r.name]));
  const { rows: emails } = await db.query<{ id: string; email: string }>("select id, email::text from app_private.accounts");
  const emailOf = new Map(emails.map((r) => [r.id, r.email]));
  const customers = [DEMO_USERS.alice.id, DEMO_USERS.bob.id];
  const orders: PendingOrder[] = [];
  for (let i = 0; i < n; i++) {
    const lineCount = 1 + (i % 2);
    const lines = Array.from({ length: lineCount }, (_, k) => ({ coffeeId: coffees[(i + k * 2) % coffees.length]!, quantity: 1 + ((i + k) % 2) }));
    const customerId = customers[i % customers.length]!;
    const { rows } = await db.query<{ id: string; total: string }>(
      "select (o).id, (o).total::text from (select app_public.create_order(p_items := $1::jsonb, p_customer_id := $2) as o) x",
      [JSON.stringify(lines.map((l) => ({ coffee_id: l.coffeeId, quantity: l.quantity }))), customerId],
    );
    orders.push({
      id: rows[0]!.id,
      customerId,
      email: emailOf.get(customerId)!,
      total: rows[0]!.total,
      lines: lines.map((l) => ({ ...l, name: nameOf.get(l.coffeeId)! })),
    });
  }
  return orders;
}

export type KeyKind = "event" | "idem" | "none";

/** A valid payment body for an order: shape A (event/data) or B (order_id/status/items). */
export function paymentBody(order: PendingOrder, shape: "A" | "B", key: KeyKind, keyValue = `${key}-${order.id}`, extra: Record<string, unknown> = {}): string {
  const keyField = key === "event" ? { event_id: keyValue } : key === "idem" ? { idempotency_key: keyValue } : {};
  if (shape === "A") {
    return JSON.stringify({ event: "payment.completed", data: { amount: Number(order.total), customer: order.email, order_id: order.id }, ...keyField, ...extra });
  }
  return JSON.stringify({
    order_id: order.id,
    status: "paid",
    amount: order.total,
    // products by id or by name (any case), in any order
    items: order.lines.map((l, i) => ({ product: i % 2 ? l.name.toUpperCase() : l.coffeeId, quantity: l.quantity })).reverse(),
    ...keyField,
    ...extra,
  });
}

/** Runs `fn` over `items` with at most `concurrency` at once. */
export async function mapLimit<T, R>(items: T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await fn(items[i]!, i);
      }
    }),
  );
  return results;
}

// ---------------------------------------------------------------------------
// What a payment must have caused
// ---------------------------------------------------------------------------

export const PAID_OR_LATER = ["PAID", "PREPARING", "BREWING", "READY", "COMPLETED"];

export interface OrderEffects {
  id: string;
  status: string;
  paidTransitions: number;
  notifications: number;
  inventoryTaken: boolean;
  /** ingredient -> delta of its 'order paid' movements (a second movement for an ingredient shows as a count > 1). */
  movements: Array<{ ingredient: string; count: number; delta: number }>;
  expected: Array<{ ingredient: string; amount: number }>;
}

export async function orderEffects(db: pg.Pool, ids: string[]): Promise<Map<string, OrderEffects>> {
  const { rows } = await db.query(
    `select o.id, o.status::text as status, o.inventory_taken_at is not null as inventory_taken,
            (select count(*)::int from app_public.order_events e where e.order_id = o.id and e.to_status = 'PAID') as paid_transitions,
            (select count(*)::int from app_public.notifications n where n.order_id = o.id and n.kind = 'payment_received') as notifications,
            coalesce((select json_agg(json_build_object('ingredient', m.ingredient_id, 'count', m.n, 'delta', m.delta) order by m.ingredient_id)
                        from (select ingredient_id, count(*)::int as n, sum(delta)::float8 as delta from app_public.stock_movements
                               where order_id = o.id and reason = 'order paid' group by ingredient_id) m), '[]') as movements,
            coalesce((select json_agg(json_build_object('ingredient', x.ingredient_id, 'amount', x.amount) order by x.ingredient_id)
                        from (select rl.ingredient_id, sum(oi.quantity * rl.quantity)::float8 as amount
                                from app_public.order_items oi
                                join app_public.recipe_lines rl on rl.coffee_id = oi.coffee_id
                                join app_public.stock_items s on s.ingredient_id = rl.ingredient_id
                               where oi.order_id = o.id group by rl.ingredient_id) x), '[]') as expected
       from app_public.orders o where o.id = any($1::uuid[])`,
    [ids],
  );
  return new Map(
    rows.map((r) => [
      r.id,
      { id: r.id, status: r.status, paidTransitions: r.paid_transitions, notifications: r.notifications, inventoryTaken: r.inventory_taken, movements: r.movements, expected: r.expected },
    ]),
  );
}

/** What is wrong with a paid order's effects (empty: paid once, notified once, stock taken once). `settled`: jobs have run. */
export function effectProblems(e: OrderEffects | undefined, settled: boolean): string[] {
  if (!e) return ["order missing"];
  const p: string[] = [];
  if (!PAID_OR_LATER.includes(e.status)) p.push(`status ${e.status}`);
  if (e.paidTransitions !== 1) p.push(`${e.paidTransitions} PENDING->PAID transitions`);
  if (e.notifications > 1) p.push(`${e.notifications} notifications`);
  for (const m of e.movements) if (m.count !== 1) p.push(`ingredient ${m.ingredient} moved ${m.count} times`);
  if (settled) {
    if (e.status === "PAID") p.push("still PAID (not PREPARING)");
    if (e.notifications !== 1) p.push(`${e.notifications} notifications`);
    const got = e.movements.map((m) => `${m.ingredient}:${-m.delta}`).join(",");
    const want = e.expected.map((x) => `${x.ingredient}:${x.amount}`).join(",");
    if (got !== want) p.push(`stock movements ${got || "(none)"} instead of ${want}`);
  }
  return [...new Set(p)];
}

export async function jobCounts(db: pg.Pool): Promise<{ total: number; locked: number; failed: number }> {
  const { rows } = await db.query(
    "select count(*)::int as total, count(*) filter (where locked_at is not null)::int as locked, count(*) filter (where last_error is not null)::int as failed from graphile_worker.jobs",
  );
  return rows[0];
}
