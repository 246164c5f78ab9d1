import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { loadConfig } from "../../src/config.ts";
import { databaseName, dropDatabase, prepareDatabase, resolveDatabaseUrls, ROOT_DIR, startEmbeddedPostgres, type DatabaseUrls } from "../../src/db/database.ts";
import { DEMO } from "./client.ts";
import { LISTEN_PROBE_SQL } from "../../src/subscriber.ts";
import { freePort } from "./ports.ts";
import { waitUntil } from "./wait.ts";

// The tests' databases: the shared test database (made once by
// globalSetup.ts), the drills' own databases on the same server, direct
// connections as the owner or as the request roles, the SQL the API sends,
// and putting the shared database back as a file found it.

// ---------------------------------------------------------------------------
// Making databases
// ---------------------------------------------------------------------------

/** The embedded test server's folder (kept between runs). */
const TEST_EMBEDDED_DIR = path.join(ROOT_DIR, ".data", "test-pg");

/**
 * The embedded test server's port: TEST_EMBEDDED_PG_PORT where set; else
 * the port of a server still running on `dataDir` (an earlier run's, killed
 * before it could stop it: the folder is locked to it); else a port free
 * right now, so that two checkouts can test at once.
 */
export async function embeddedTestPort(env: NodeJS.ProcessEnv = process.env, dataDir = TEST_EMBEDDED_DIR): Promise<number> {
  if (env.TEST_EMBEDDED_PG_PORT) return Number(env.TEST_EMBEDDED_PG_PORT);
  return runningPort(dataDir) ?? (await freePort());
}

/** The port of the postmaster running on `dataDir` (line 4 of its postmaster.pid), if one runs. */
function runningPort(dataDir: string): number | null {
  try {
    const [pid, , , port] = readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n");
    process.kill(Number(pid), 0);
    return Number(port) || null;
  } catch {
    return null;
  }
}

/**
 * The test database: on TEST_DATABASE_URL (a superuser URL; its database is
 * dropped and created anew) where set, else on an embedded PostgreSQL kept
 * in .data/test-pg, on embeddedTestPort().
 */
export async function createTestDatabase(): Promise<{ url: string; urls: DatabaseUrls; stop(): Promise<void> }> {
  let url = process.env.TEST_DATABASE_URL;
  let stop = async () => {};
  if (!url) {
    const embedded = await startEmbeddedPostgres({ EMBEDDED_PG_DIR: TEST_EMBEDDED_DIR, EMBEDDED_PG_PORT: await embeddedTestPort() });
    url = embedded.url.replace(/\/postgres$/, "/cafe_test");
    stop = embedded.stop;
  }
  const { urls } = await recreateDatabase(url, databaseName(url), "TEST_DATABASE_URL must name a superuser (the tests create roles and drop the test database)", {
    configUrl: undefined,
  });
  return { url, urls, stop };
}

/** Drops database `name` at `url` and makes it anew with the migrations and the demo data, like `npm start` does, caps lifted. */
async function recreateDatabase(url: string, name: string, notSuperuser: string, opts: { demoData?: boolean; configUrl?: string | undefined } = {}) {
  const config = loadConfig({ ...process.env, NODE_ENV: "test", DATABASE_URL: "configUrl" in opts ? opts.configUrl : url });
  const urls = await resolveDatabaseUrls(config, url);
  if (!urls.root) throw new Error(notSuperuser);
  await dropDatabase(urls.root, name);
  await prepareDatabase(urls, config, { demoData: opts.demoData ?? true });
  await liftOpenOrderCaps(url);
  return { urls };
}

/**
 * The suites place many unpaid orders as alice and bob (and accounts they
 * have just made), and sign the demo accounts in many times from 127.0.0.1;
 * the caps on a customer's unpaid orders and cups, on their share (and
 * their source's) of an ingredient's stock, the wait of new accounts for
 * scarce stock, and the caps on successful sign-ins per account and per
 * source are lifted for them. test/sql/unpaid-orders.test.ts,
 * test/sql/fair-stock.test.ts, test/sql/fair-stock.sources.test.ts and
 * test/sql/sign-in-budget.test.ts set the values they test.
 */
export async function liftOpenOrderCaps(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      `update app_private.settings
          set value = case when key like 'max_stock_share_percent%' then 100 when key in ('stock_share_cooldown_seconds', 'new_account_scarce_stock_seconds') then 0 else 1000000 end
        where key in ('max_open_orders_per_customer', 'max_open_cups_per_customer', 'max_stock_share_percent', 'max_stock_share_percent_per_source',
                      'stock_share_cooldown_seconds', 'new_account_scarce_stock_seconds', 'login_max_successes_per_account', 'login_max_successes_per_source')`,
    );
  } finally {
    await client.end();
  }
}

/** The shared test database (a superuser URL), as globalSetup.ts made it. */
export function testDatabaseUrl(): string {
  const url = process.env.CAFE_TEST_DATABASE_URL;
  if (!url) throw new Error("CAFE_TEST_DATABASE_URL is not set: run the tests through jest (globalSetup prepares the database)");
  return url;
}

/** A superuser URL on the server the tests use (TEST_DATABASE_URL, or the embedded test server), database `name`. */
export function serverUrl(name = "postgres"): string {
  const base = process.env.DRILL_DATABASE_URL ?? process.env.CAFE_TEST_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
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

/** A database of its own on the test server (a drill's): dropped and made anew with the migrations and (by default) the demo data. */
export async function freshDatabase(name: string, opts: { demoData?: boolean } = {}): Promise<DrillDb> {
  const url = serverUrl(name);
  const { urls } = await recreateDatabase(url, name, `${url} is not a superuser URL: the drills create their own databases`, opts);
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

// ---------------------------------------------------------------------------
// Looking at a database
// ---------------------------------------------------------------------------

/** Connections to a database right now (pg_stat_activity). */
export async function connectionCount(db: pg.Pool, database: string): Promise<number> {
  const { rows } = await db.query("select count(*)::int as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()", [database]);
  return rows[0].n;
}

export async function jobCounts(db: pg.Pool): Promise<{ total: number; locked: number; failed: number }> {
  const { rows } = await db.query(
    "select count(*)::int as total, count(*) filter (where locked_at is not null)::int as locked, count(*) filter (where last_error is not null)::int as failed from graphile_worker.jobs",
  );
  return rows[0];
}

/**
 * Waits until some backend on the test database has LISTENed to `topic` as
 * its latest statement: how a test knows that another process's
 * subscription is live. Needs a superuser to see other roles' statements.
 */
export async function waitForListen(topic: string, options: { excludePids?: number[]; timeoutMs?: number } = {}): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  try {
    await waitUntil(
      `a LISTEN on ${topic}`,
      async () =>
        (
          await client.query("select 1 from pg_stat_activity where datname = current_database() and state = 'idle' and query = $1 and pid <> all($2::int[])", [
            `listen ${pg.escapeIdentifier(topic)}`,
            options.excludePids ?? [],
          ])
        ).rowCount! > 0,
      timeoutMs,
      20,
    );
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------
// Connections as the request roles
// ---------------------------------------------------------------------------

/** Where the tests' services live: their owner pool and the database URLs (a TestService). */
export interface Owned {
  db: pg.Pool;
  urls: DatabaseUrls;
}

/** A client connected as the server's login role, which may SET ROLE to each request role. */
export async function requestRoleClient(t: Owned): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: t.urls.authenticator });
  await client.connect();
  return client;
}

/**
 * A pool on the login role the API itself uses (cafe_authenticator), which
 * may SET ROLE to the request roles. The owner (t.db) may not: it is not a
 * member of them, by design.
 */
export function requestRolePool(t: Owned): pg.Pool {
  return new pg.Pool({ connectionString: t.urls.authenticator, max: 2 });
}

export type RequestRole = "cafe_anonymous" | "cafe_customer" | "cafe_barista" | "cafe_admin" | "cafe_system";

/**
 * Runs one statement as a request role with a user id claim, the way the API
 * does (SET LOCAL ROLE + jwt.claims.user_id), in a transaction that is
 * rolled back. Resolves with the rows, or with the Postgres error.
 */
export async function sqlAs(
  pool: pg.Pool,
  role: RequestRole,
  userId: string | null,
  text: string,
  values: unknown[] = [],
): Promise<{ rows: any[]; error?: undefined } | { rows?: undefined; error: { code: string; message: string } }> {
  const client = await pool.connect();
  try {
    await client.query("begin");
    await client.query(`set local role ${role}`);
    if (userId) await client.query("select set_config('jwt.claims.user_id', $1, true)", [userId]);
    try {
      const { rows } = await client.query(text, values);
      return { rows };
    } catch (e) {
      const err = e as { code: string; message: string };
      return { error: { code: err.code, message: err.message } };
    }
  } finally {
    await client.query("rollback").catch(() => {});
    client.release();
  }
}

/** Runs `fn` as the owner in a transaction that is always rolled back; returns the SQL error it raised, if any. */
export async function tryInRollback(t: Owned, fn: (c: pg.PoolClient) => Promise<unknown>): Promise<{ code?: string; message?: string } | null> {
  const c = await t.db.connect();
  try {
    await c.query("begin");
    try {
      await fn(c);
      return null;
    } catch (e: any) {
      return { code: e.code, message: e.message };
    }
  } finally {
    await c.query("rollback").catch(() => undefined);
    c.release();
  }
}

// ---------------------------------------------------------------------------
// The SQL the API sends
// ---------------------------------------------------------------------------

/** The statement's first words, without leading comments and blanks, lower-cased. */
function head(text: string): string {
  return text
    .replace(/^(\s|--[^\n]*\n|\/\*[\s\S]*?\*\/)+/, "")
    .slice(0, 80)
    .toLowerCase();
}

function textOf(arg: unknown): string | undefined {
  if (typeof arg === "string") return arg;
  if (arg && typeof arg === "object" && typeof (arg as { text?: unknown }).text === "string") return (arg as { text: string }).text;
  return undefined;
}

/** Transaction wrapping and role/claim settings: not "work". */
const OVERHEAD = /^(begin|commit|start transaction)\b|^select\s+set_config\(/;
/** The API's health ping (src/db/dbHealth.ts), every 2 s on the same pool: never caused by a request. */
const HEALTH_PING = /^select 1;?\s*$/;
/** The periodic read of table sizes (src/db/tableSizes.ts), not caused by any request. */
const TABLE_SIZES = /^(with t as \(\s*)?select (c\.oid, )?n\.nspname \|\| '\.' \|\| c\.relname as name/;

/**
 * The processes' own periodic statements, never caused by a request: the
 * health ping, the table sizes, the LISTEN probe and the shared rate-limit sync.
 */
export function isBackgroundStatement(text: string): boolean {
  const h = head(text);
  return HEALTH_PING.test(h) || TABLE_SIZES.test(h) || text === LISTEN_PROBE_SQL || /app_hidden\.share_rate_usage\(/.test(h);
}

/**
 * Counts the statements the API's login role sends while recording (the
 * server runs in this process, so pg.Client.prototype.query sees every
 * statement): every statement except begin/commit/set_config (and the
 * periodic health ping, table sizes and LISTEN probe). LISTEN statements of the subscription connection
 * count too.
 */
export class SqlRecorder {
  private readonly original = pg.Client.prototype.query;
  private current: string[] | null = null;
  private installed = false;

  private readonly user: string;
  constructor(user: string) {
    this.user = user;
  }

  install(): void {
    if (this.installed) return;
    this.installed = true;
    const original = this.original;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the patched query needs both this recorder and the client it is called on
    const self = this;
    pg.Client.prototype.query = function (this: pg.Client & { user?: string }, ...args: unknown[]) {
      const text = textOf(args[0]);
      if (self.current && text !== undefined && this.user === self.user) {
        const h = head(text);
        if (!OVERHEAD.test(h) && !isBackgroundStatement(text)) self.current.push(text.replace(/\s+/g, " ").slice(0, 160));
      }
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof pg.Client.prototype.query;
  }

  uninstall(): void {
    if (!this.installed) return;
    pg.Client.prototype.query = this.original;
    this.installed = false;
  }

  /** Runs `fn` and returns its result with the statements sent meanwhile (and for `settleMs` after). */
  async record<T>(fn: () => Promise<T>, settleMs = 50): Promise<{ result: T; statements: string[] }> {
    if (this.current) throw new Error("already recording");
    const statements: string[] = [];
    this.current = statements;
    try {
      const result = await fn();
      if (settleMs) await new Promise((r) => setTimeout(r, settleMs));
      return { result, statements };
    } finally {
      this.current = null;
    }
  }
}

// ---------------------------------------------------------------------------
// Putting the shared test database back
// ---------------------------------------------------------------------------

export type Sandbox = Awaited<ReturnType<typeof sandbox>>;

/**
 * Remembers what a test file may change in the shared test database (test
 * files run one after another on one database) and puts it back: orders
 * and coffees made since are deleted, demo customers' names, points and
 * profiles and any stock rows touched are restored.
 */
export async function sandbox(t: Owned) {
  const { rows: orders } = await t.db.query("select id from app_public.orders");
  const { rows: coffees } = await t.db.query("select id from app_public.coffees");
  const { rows: customers } = await t.db.query(
    `select c.id, c.name, c.points, p.customer_id is not null as has_profile, p.username::text, p.avatar
       from app_public.customers c left join app_public.profiles p on p.customer_id = c.id where c.id = any($1)`,
    [[DEMO.alice.id, DEMO.bob.id]],
  );
  const { rows: stock } = await t.db.query("select store_id, ingredient_id, current_stock, alert_level from app_public.stock_items");
  const orderIds = orders.map((r) => r.id);
  const coffeeIds = coffees.map((r) => r.id);
  return {
    async restore() {
      await t.db.query("delete from app_public.orders where not (id = any($1::uuid[]))", [orderIds]);
      await t.db.query("delete from app_public.coffees where not (id = any($1::uuid[]))", [coffeeIds]);
      for (const c of customers) {
        await t.db.query("update app_public.customers set name = $2, points = $3 where id = $1", [c.id, c.name, c.points]);
        if (c.has_profile)
          await t.db.query(
            "insert into app_public.profiles (customer_id, username, avatar) values ($1, $2, $3) on conflict (customer_id) do update set username = excluded.username, avatar = excluded.avatar",
            [c.id, c.username, c.avatar],
          );
        else await t.db.query("delete from app_public.profiles where customer_id = $1", [c.id]);
      }
      for (const s of stock) {
        await t.db.query(
          "update app_public.stock_items set current_stock = $2, alert_level = $3 where ingredient_id = $1 and store_id = $4 and (current_stock, alert_level) is distinct from ($2::numeric, $3::numeric)",
          [s.ingredient_id, s.current_stock, s.alert_level, s.store_id],
        );
      }
    },
  };
}
