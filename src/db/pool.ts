import pg from "pg";
import type { Config } from "../config.ts";
import type { DatabaseUrls } from "./database.ts";
import { isDatabaseBusy, type DatabaseHealth } from "./dbHealth.ts";
import { logger } from "../logger.ts";

// The API's pool: the authenticator (who may only SET ROLE to the request
// roles), DATABASE_POOL_SIZE connections. A request that finds them all in
// use waits its turn for at most DATABASE_POOL_WAIT_MS, then is refused as
// busy (SERVICE_BUSY, src/errors.ts). A saturated pool is reported by one
// warning line per SATURATION_LOG_INTERVAL_MS, with counts, not a line per
// request.

/** At most one "pool saturated" line per this interval. */
export const SATURATION_LOG_INTERVAL_MS = 10_000;

/** Connection errors that stand for a database that is down (set while the probe says so). */
class DatabaseDownError extends Error {
  code = "08001";
  constructor() {
    super("The database is unavailable.");
  }
}

export interface ApiPool {
  pool: pg.Pool;
  /** Stops the saturation report. */
  stop(): void;
}

/**
 * A client that sends every statement unnamed. PostGraphile's pg adaptor
 * names the statements it sends (a prepared statement per query shape, kept
 * per connection); behind a pooler in transaction mode the next
 * transaction may run on another server connection, where that name means
 * nothing (PgBouncer 1.18, Debian 12's, cannot carry prepared statements
 * across). Unnamed, each statement is parsed where it runs.
 */
class UnnamedStatementsClient extends pg.Client {}
UnnamedStatementsClient.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
  const named = config !== null && typeof config === "object" && typeof (config as { name?: unknown }).name === "string" && typeof (config as { submit?: unknown }).submit !== "function";
  // pg.Client's own query, looked up at each call: what wraps it later
  // (tracing's instrumentation, the tests' SQL recorder) sees these statements too.
  const query = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown;
  return query.call(this, named ? { ...(config as object), name: undefined } : config, ...rest);
} as typeof pg.Client.prototype.query;

/** The client class of the pools on DATABASE_AUTHENTICATOR_URL (DATABASE_POOL_MODE). */
export function clientFor(config: Pick<Config, "DATABASE_POOL_MODE">): typeof pg.Client {
  return config.DATABASE_POOL_MODE === "transaction" ? UnnamedStatementsClient : pg.Client;
}

export function openApiPool(config: Config, urls: DatabaseUrls, health: DatabaseHealth): ApiPool {
  const pool = new pg.Pool({
    connectionString: urls.authenticator,
    max: config.DATABASE_POOL_SIZE,
    connectionTimeoutMillis: config.DATABASE_POOL_WAIT_MS,
    Client: clientFor(config),
  });
  pool.on("error", (err) => {
    // An idle connection was cut: maybe the database went away; the probe decides.
    logger.warn({ err: err.message }, "idle database connection failed");
    health.suspect();
  });

  // Counted between two saturation lines.
  let waited = 0;
  let refused = 0;
  let mostWaiting = 0;
  const connect = pool.connect.bind(pool) as (cb?: unknown) => unknown;
  // pool.query() goes through pool.connect() too, so this sees every checkout.
  pool.connect = function (this: pg.Pool, cb?: (err: Error | undefined, client?: pg.PoolClient, done?: (release?: unknown) => void) => void) {
    if (!health.up) {
      // Fail at once rather than wait for connection timeouts while the probe says down.
      const err = new DatabaseDownError();
      if (cb) return void process.nextTick(cb, err);
      return Promise.reject(err);
    }
    if (pool.totalCount >= config.DATABASE_POOL_SIZE && pool.idleCount === 0) {
      waited++;
      mostWaiting = Math.max(mostWaiting, pool.waitingCount + 1);
    }
    const counted = (err: unknown) => {
      if (isDatabaseBusy(err)) refused++;
    };
    if (cb) {
      return void connect((err: Error | undefined, client: pg.PoolClient, done: (release?: unknown) => void) => {
        if (err) counted(err);
        cb(err, client, done);
      });
    }
    return (connect() as Promise<pg.PoolClient>).catch((err: unknown) => {
      counted(err);
      throw err;
    });
  } as typeof pool.connect;

  const timer = setInterval(() => {
    if (waited === 0 && refused === 0) return;
    logger.warn(
      { poolSize: config.DATABASE_POOL_SIZE, waited, mostWaiting, refusedBusy: refused, intervalMs: SATURATION_LOG_INTERVAL_MS },
      "database pool saturated: requests waited for a connection",
    );
    waited = refused = mostWaiting = 0;
  }, SATURATION_LOG_INTERVAL_MS);
  timer.unref();
  return { pool, stop: () => clearInterval(timer) };
}

/**
 * The payment callback's own pool (CALLBACK_POOL_SIZE connections), apart
 * from the API's: a flood of callbacks waits for these, never for the
 * connections /graphql needs.
 */
export function openCallbackPool(config: Config, urls: DatabaseUrls): pg.Pool {
  // Copies of one delivery queue on its key's lock, each holding a connection:
  // the provider's bursts wait longer here than requests do on the API's pool.
  const pool = new pg.Pool({ connectionString: urls.authenticator, max: config.CALLBACK_POOL_SIZE, connectionTimeoutMillis: 20_000, Client: clientFor(config) });
  pool.on("error", (err) => logger.warn({ err: err.message }, "idle database connection of the payment callback failed"));
  return pool;
}

/**
 * Behind a pooler in transaction mode (DATABASE_POOL_MODE=transaction), the
 * subscriptions' re-reads of each event get their own few connections
 * straight to PostgreSQL (DATABASE_LISTEN_URL, DATABASE_SUBSCRIPTION_POOL_SIZE),
 * as the LISTEN connection does. These are the same statements every event
 * (an order's queue step read for each dashboard, its barista for each
 * customer): here they stay prepared per connection instead of being planned
 * anew through the pooler, and each takes no round trip through it. Null in
 * session mode (the API's pool keeps prepared statements) or when the size is 0.
 */
export function openSubscriptionPool(config: Pick<Config, "DATABASE_POOL_MODE" | "DATABASE_SUBSCRIPTION_POOL_SIZE" | "DATABASE_POOL_WAIT_MS">, urls: DatabaseUrls): pg.Pool | null {
  if (config.DATABASE_POOL_MODE !== "transaction" || config.DATABASE_SUBSCRIPTION_POOL_SIZE === 0) return null;
  const pool = new pg.Pool({ connectionString: urls.listen, max: config.DATABASE_SUBSCRIPTION_POOL_SIZE, connectionTimeoutMillis: config.DATABASE_POOL_WAIT_MS });
  pool.on("error", (err) => logger.warn({ err: err.message }, "idle database connection of the subscriptions' re-reads failed"));
  return pool;
}
