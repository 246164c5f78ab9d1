import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import type { Client as WsClient } from "graphql-ws";
import { loadConfig, type Config } from "../../src/config.ts";
import { resolveDatabaseUrls, type DatabaseUrls } from "../../src/db/database.ts";
import { startService, type Service } from "../../src/service.ts";
import { registry } from "../../src/metrics.ts";
import { gql, login, request, wsClient, type DemoAccount, type DemoUser, type GqlOptions, type GraphQLResponse } from "./client.ts";
import { freshDatabase, sandbox, testDatabaseUrl, type DrillDb, type Sandbox } from "./db.ts";
import { createPendingOrders, type PendingOrder } from "./fixtures.ts";
import { SECRETS } from "./paymentProvider.ts";
import { freePort } from "./ports.ts";
import { sleep, waitUntil, within } from "./wait.ts";
import { tempDir } from "./tempDirs.ts";
import { say } from "./figures.ts";

// The service under test: started in this process (startTestService, and
// useTestService for a whole test file), run as a child process like `npm
// start` (ChildService), or run to completion (runMain); stopped, and its
// logs shown when a test fails.

export const ROOT = path.resolve(__dirname, "../..");
export const MAIN = path.join(ROOT, "src", "main.ts");

/** What every service the tests start on the shared test database gets, unless a test says otherwise. */
const TEST_SERVICE_ENV = {
  NODE_ENV: "test",
  HOST: "127.0.0.1",
  DEMO_DATA: "false",
  RUN_WORKER: "false",
  // Tests send bursts from one address; the rate limit has its own test.
  GRAPHQL_RATE_LIMIT: "0",
  // Likewise the share of the password-check queue per source (test/http/sign-in-flood.test.ts tests it).
  PASSWORD_CHECK_PLACES_PER_CALLER: "1000",
  // Likewise the callback route's (test/http/payment-callback.before-io.test.ts tests it).
  CALLBACK_RATE_LIMIT: "1000000",
  // Suites change rows by SQL and read them back at once, before the NOTIFY
  // that empties the live cache may have arrived; test/live-cache.test.ts
  // turns it on and waits for it.
  LIVE_CACHE_MAX_ENTRIES: "0",
  // Where a suite turns it on, a stale answer is recomputed by the next read
  // (test/graphql/live-cache.refresh.test.ts tests the floor).
  LIVE_CACHE_REFRESH_MS: "0",
} as const;

/**
 * With TEST_PGBOUNCER=1 (globalSetup.ts started one): the services' pools
 * through PgBouncer in transaction mode, their LISTEN connection straight to
 * PostgreSQL, as docs/operations.md says to run behind PgBouncer.
 */
export function pgBouncerEnv(): Record<string, string> {
  const url = process.env.CAFE_TEST_PGBOUNCER_URL;
  return url ? { DATABASE_AUTHENTICATOR_URL: url, DATABASE_LISTEN_URL: process.env.CAFE_TEST_LISTEN_URL ?? "", DATABASE_POOL_MODE: "transaction" } : {};
}

// ---------------------------------------------------------------------------
// In this process
// ---------------------------------------------------------------------------

export interface TestService {
  config: Config;
  service: Service;
  url: string;
  wsUrl: string;
  urls: DatabaseUrls;
  /** A pool on the database owner (acts as 'dba'): for arranging and checking rows. */
  db: pg.Pool;
  gql<T = any>(query: string, options?: GqlOptions): Promise<GraphQLResponse<T>>;
  /** A demo user's access token (signed in once per service). */
  token(user: DemoAccount): Promise<string>;
  /** Every demo user's access token. */
  tokens(): Promise<Record<DemoUser, string>>;
  ws(token?: string | null): WsClient;
  stop(): Promise<void>;
}

export function testConfig(env: Record<string, string | undefined> = {}): Config {
  return loadConfig({
    ...process.env,
    ...TEST_SERVICE_ENV,
    ...pgBouncerEnv(),
    DATABASE_URL: testDatabaseUrl(),
    PORT: "0",
    SHUTDOWN_GRACE_MS: "0",
    ...env,
  });
}

export interface StartOptions {
  worker?: boolean;
  env?: Record<string, string | undefined>;
}

/** Starts the real service (HTTP server, PostGraphile, optionally the worker) in this process against the test database. */
export async function startTestService(options: StartOptions = {}): Promise<TestService> {
  const config = testConfig({ RUN_WORKER: options.worker ? "true" : "false", ...options.env });
  const service = await startService(config);
  const port = service.api!.port;
  const url = `http://127.0.0.1:${port}`;
  const urls = await resolveDatabaseUrls(config, testDatabaseUrl());
  const db = new pg.Pool({ connectionString: urls.owner, max: 4 });
  const tokens = new Map<DemoAccount, string>();
  const clients: WsClient[] = [];
  const token = async (user: DemoAccount) => {
    const cached = tokens.get(user);
    if (cached) return cached;
    const fresh = await login(url, user);
    tokens.set(user, fresh);
    return fresh;
  };

  return {
    config,
    service,
    url,
    wsUrl: `ws://127.0.0.1:${port}/graphql`,
    urls,
    db,
    gql: (query, options = {}) => gql(url, query, { timeoutMs: 60_000, ...options }),
    token,
    async tokens() {
      const [alice, bob, barista, admin] = await Promise.all([token("alice"), token("bob"), token("barista"), token("admin")]);
      return { alice, bob, barista, admin };
    },
    ws(wsToken) {
      const { client } = wsClient(url, wsToken);
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

export interface FileServiceOptions extends StartOptions {
  /** Put back what the file may change (db.ts's sandbox). */
  sandbox?: boolean;
  /** Delete the orders made while the file ran (the others stay as they were). */
  deleteNewOrders?: boolean;
  /** The file's own clean-up, after the orders are deleted and the sandbox is restored, before the service stops. */
  cleanup?: (t: TestService) => Promise<void>;
}

/**
 * The service of a whole test file: started before its tests (then what it
 * may change is remembered), and after them the shared database is put
 * back and the service stops. The object is filled in when the service has
 * started.
 */
export function useTestService(options: FileServiceOptions = {}): TestService {
  const t = {} as TestService;
  let box: Sandbox | undefined;
  let ordersAtStart: string[] = [];
  beforeAll(async () => {
    Object.assign(t, await startTestService(options));
    if (options.sandbox) box = await sandbox(t);
    if (options.deleteNewOrders) ordersAtStart = (await t.db.query("select id from app_public.orders")).rows.map((r) => r.id);
  });
  afterAll(async () => {
    if (!t.stop) return;
    try {
      if (options.deleteNewOrders) await t.db.query("delete from app_public.orders where not (id = any($1::uuid[]))", [ordersAtStart]);
      if (box) await box.restore();
      await options.cleanup?.(t);
    } finally {
      await t.stop();
    }
  });
  return t;
}

/**
 * A second service in this process, with its own settings. src/server.ts
 * registers its pool, queue and socket gauges on the process-wide metrics
 * registry at every start, so a second start in one process throws "A
 * metric with the name cafe_db_pool_connections has already been
 * registered"; the first service's gauges are dropped first (for suites
 * that do not read /metrics).
 */
export async function startAnotherService(env: Record<string, string>): Promise<TestService> {
  for (const name of ["cafe_db_pool_connections", "cafe_jobs", "cafe_subscriptions_open"]) registry.removeSingleMetric(name);
  return startTestService({ env });
}

const subscriberOf = (t: TestService) =>
  t.service.api!.subscriber as unknown as {
    listeningTopics: string[];
    chain?: Promise<unknown>;
    client?: { processID?: number; query(text: string): Promise<{ rows: Array<{ c: string }> }> } | null;
    topics: Map<string, Set<unknown>>;
  };

/**
 * Waits until the in-process API LISTENs to every topic (the subscriber has
 * registered it and its LISTEN statement has run), so a change made now
 * cannot slip past a subscription that is still being set up.
 */
export async function listening(t: TestService, topics: string[], timeoutMs = 5000): Promise<void> {
  const subscriber = subscriberOf(t);
  await waitUntil(`LISTEN on ${topics.join(", ")}`, () => topics.every((topic) => subscriber.listeningTopics.includes(topic)), timeoutMs, 10);
  // Statements on the LISTEN connection run one after another on this chain.
  await subscriber.chain;
  await sleep(30);
}

/** The LISTEN channels of the in-process API's own LISTEN connection (pg_listening_channels() is per session). */
export async function listenChannels(t: TestService): Promise<string[] | null> {
  const client = subscriberOf(t).client;
  if (!client) return null;
  const { rows } = await client.query("select pg_listening_channels() as c");
  return rows.map((r) => r.c).sort();
}

/** The backend pid of the in-process API's LISTEN connection. */
export function listenerPid(t: TestService): number | null {
  return subscriberOf(t).client?.processID ?? null;
}

/** Open streams per topic on the in-process API's subscriber (each subscription holds one). */
export function openStreams(t: TestService): number {
  let n = 0;
  for (const set of subscriberOf(t).topics.values()) n += set.size;
  return n;
}

// ---------------------------------------------------------------------------
// As a child process: `node src/main.ts [--api|--worker]`, as npm start
// ---------------------------------------------------------------------------

export type ChildMode = "api" | "worker" | "all";

export interface ChildOptions {
  name: string;
  mode: ChildMode;
  databaseUrl: string;
  port?: number;
  env?: Record<string, string>;
  /** The process's open-file limit (RLIMIT_NOFILE, soft and hard), set by the shell's `ulimit -n` before it runs. */
  fileLimit?: number;
  /** Wait until /readyz answers 200 (API) or the worker beats (worker). Default true. */
  waitReady?: boolean;
  readyTimeoutMs?: number;
}

const children = new Set<ChildService>();

process.once("exit", () => {
  for (const c of children) c.killGroup("SIGKILL");
});

/** Runs a test body; when it throws, prints the last log lines of the given children first. */
export async function withLogsOnFailure<T>(get: () => Array<ChildService | null | undefined>, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    for (const c of get()) {
      if (c) say(`--- ${c.options.name} (pid ${c.proc.pid}, exit ${JSON.stringify(c.exitInfo)}) last log lines:\n${c.tail(60)}`);
    }
    throw e;
  }
}

/** Kills every child still running. */
export async function killAllChildren(): Promise<void> {
  const all = [...children];
  for (const c of all) c.killGroup("SIGKILL");
  await Promise.all(all.map((c) => c.waitExit(5000).catch(() => {})));
}

export class ChildService {
  readonly proc: ChildProcess;
  readonly port: number;
  readonly url: string;
  readonly wsUrl: string;
  readonly logs: string[] = [];
  exitInfo: { code: number | null; signal: NodeJS.Signals | null; at: number } | null = null;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  readonly options: ChildOptions;

  private constructor(options: ChildOptions, port: number) {
    this.options = options;
    this.port = port;
    this.url = `http://127.0.0.1:${port}`;
    this.wsUrl = `ws://127.0.0.1:${port}/graphql`;
    const args = ["src/main.ts", ...(options.mode === "api" ? ["--api"] : options.mode === "worker" ? ["--worker"] : [])];
    const bin = path.join(ROOT, "node_modules", ".bin");
    // As `npm start` runs it: node src/main.ts, no wrapper in between.
    // With a file limit: `sh -c 'ulimit -n N; exec node ...'` (the same process: exec).
    const [command, argv] = options.fileLimit ? ["/bin/sh", ["-c", `ulimit -n ${options.fileLimit} && exec "$0" "$@"`, process.execPath, ...args]] : [process.execPath, args];
    this.proc = spawn(command, argv, {
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
        // A worker-only process serves /metrics there instead (PORT is the API's).
        ...(options.mode === "worker" ? { WORKER_METRICS_PORT: String(port) } : null),
        LOG_LEVEL: "warn",
        DEMO_DATA: "true",
        WEBHOOK_TOKEN: SECRETS.webhookToken,
        SIGNING_SECRET: SECRETS.signingSecret,
        // No JWT_SECRET: like the in-process service on the same database, it
        // reads that database's development secret (src/db/devSecret.ts), so a
        // token from one is good on the other.
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

  /**
   * The API alone (`src/main.ts --api`, as `npm run start:api`) on the
   * shared test database, with the tests' settings (no demo data, no
   * worker, no rate limit) and `env`; started when /readyz answers.
   */
  static startApi(env: Record<string, string> = {}, options: Pick<ChildOptions, "fileLimit"> = {}): Promise<ChildService> {
    return ChildService.start({ name: "api", mode: "api", databaseUrl: testDatabaseUrl(), env: { ...TEST_SERVICE_ENV, ...pgBouncerEnv(), ...env }, readyTimeoutMs: 60_000, ...options });
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
          const { rows } = await db.query("select 1 from app_private.worker_heartbeats where process = $1", [`${os.hostname()}:${pid}`]).catch(() => ({ rows: [] as unknown[] }));
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
    return within(this.exited, timeoutMs, `${this.options.name} did not exit within ${timeoutMs} ms`);
  }

  /** Stops it as an operator would: SIGTERM, then SIGKILL if it is still there after 20 s. */
  async stop(): Promise<void> {
    if (!this.alive) return;
    this.signal("SIGTERM");
    await this.waitExit(20_000).catch(async () => {
      this.killGroup("SIGKILL");
      await this.exited;
    });
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
    const last = this.logs
      .slice(-n)
      .filter((l) => l.startsWith("{"))
      .map((l) => (l.length > 400 ? `${l.slice(0, 400)}...` : l));
    return [...last, ...(plain.length ? ["--- non-JSON output:", ...plain.slice(-80)] : [])].join("\n");
  }
}

/**
 * A drill's own database (made anew before its tests, with `orders` PENDING
 * orders from createPendingOrders) and, after them, every child process
 * killed and the database's pool closed. The objects are filled in before
 * the tests run.
 */
export function useDrillDatabase(name: string, options: { orders?: number; setupTimeoutMs?: number } = {}): { d: DrillDb; orders: PendingOrder[] } {
  const d = {} as DrillDb;
  const orders: PendingOrder[] = [];
  beforeAll(async () => {
    Object.assign(d, await freshDatabase(name));
    if (options.orders !== undefined) orders.push(...(await createPendingOrders(d.db, options.orders)));
  }, options.setupTimeoutMs ?? 60_000);
  afterAll(async () => {
    await killAllChildren();
    await d.close?.();
  });
  return { d, orders };
}

// ---------------------------------------------------------------------------
// Run to completion: `node src/main.ts ...` as `npm start` runs it
// ---------------------------------------------------------------------------

/**
 * Runs the real entry point to completion, in an empty working directory
 * unless told (so a developer's own .env in the project root never leaks
 * in) and with only the variables given (plus PATH and HOME).
 */
export function runMain(args: string[], env: Record<string, string | undefined>, options: { cwd?: string; timeoutMs?: number } = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [MAIN, ...args], {
    cwd: options.cwd ?? tempDir("cfg"),
    encoding: "utf8",
    timeout: options.timeoutMs ?? 60_000,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: "silent", ...env },
  });
}

/** Fails the test when the output carries a stack trace (a JS frame line or a logged `stack`). */
export function expectNoStackTrace(r: SpawnSyncReturns<string>): void {
  expect(`${r.stdout}\n${r.stderr}`).not.toMatch(/^\s+at .+\(?.*:\d+:\d+\)?$|"stack"/m);
}
