import pg from "pg";
import { logger } from "../logger.ts";

// "Down" and "busy" are different answers. The database is down only when it
// cannot be reached: a connection refused, cut or not made in time, the
// server shutting down. A full pool (every connection in use, requests
// waiting their turn) or a slow statement is "busy": the request is
// refused with SERVICE_BUSY and Retry-After, and nothing is marked down.
// Whether it is down is decided by a probe on a connection of its own,
// never one of the request pool's, so a full pool cannot make it fail.

/** Error codes of a database that is down, restarting or unreachable (node's and Postgres's SQLSTATEs). */
const UNAVAILABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND", "EPIPE", "57P01", "57P02", "57P03", "08006", "08001", "08003"]);

/** pg-pool's error when no connection became free within connectionTimeoutMillis (its queue, not the network). */
const POOL_WAIT_TIMEOUT = "timeout exceeded when trying to connect";
/** Postgres's own "no more connections" (max_connections): reachable, but full. */
const TOO_MANY_CONNECTIONS = "53300";

/** The error of a request that waited DATABASE_POOL_WAIT_MS for a connection without getting one: busy, as pg-pool's own. */
export function poolWaitTimeout(): Error {
  return new Error(POOL_WAIT_TIMEOUT);
}

/**
 * Whether an error says every connection is taken: the request pool stayed
 * full for its whole wait (DATABASE_POOL_WAIT_MS), or the server refused a
 * new connection for having too many. The database answers; it is busy.
 */
export function isDatabaseBusy(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: string; message?: string };
  return code === TOO_MANY_CONNECTIONS || (code === undefined && message === POOL_WAIT_TIMEOUT);
}

/**
 * Whether an error says the database is unavailable (not that a statement
 * failed, nor that it is busy): a connection refused or cut, the server
 * shutting down, or pg's own connection timeout or termination (those carry
 * no code). An error with another code is the statement's own: a statement
 * or lock timeout (57014, 55P03) does not mark the database down.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (isDatabaseBusy(err)) return false;
  const { code, message } = (err ?? {}) as { code?: string; message?: string };
  if (code !== undefined) return UNAVAILABLE_CODES.has(code); // e.g. a statement or lock timeout (57014, 55P03) is not
  return /timeout|terminated|not queryable/i.test(message ?? "");
}

export interface DatabaseHealthOptions {
  /** How often to probe. */
  intervalMs?: number;
  /** How long connecting, or the probe's `select 1`, may take before the connection is given up. */
  timeoutMs?: number;
}

/**
 * Whether the database answers, known without asking it on every request:
 * a probe every few seconds on its own connection (kept open between
 * probes), and one at once when something suggests it went away (suspect()).
 * While it is down, /graphql fails fast instead of waiting on connection
 * timeouts, and the payment route answers 503.
 */
export class DatabaseHealth {
  up = true;
  private readonly connectionString: string;
  private readonly timeoutMs: number;
  private readonly timer: NodeJS.Timeout;
  private client: pg.Client | null = null;
  private probing: Promise<boolean> | null = null;
  private stopped = false;

  constructor(connectionString: string, { intervalMs = 2000, timeoutMs = 5000 }: DatabaseHealthOptions = {}) {
    this.connectionString = connectionString;
    this.timeoutMs = timeoutMs;
    this.timer = setInterval(() => void this.probe(), intervalMs);
    this.timer.unref();
  }

  /** Something failed as if the database were gone (a pooled connection cut, a connection refused): probe now; the probe decides. */
  suspect(): void {
    void this.probe();
  }

  /** Asks the database now, on the probe's own connection (one probe at a time; callers share it). */
  probe(): Promise<boolean> {
    this.probing ??= this.ask().finally(() => {
      this.probing = null;
    });
    return this.probing;
  }

  private async ask(): Promise<boolean> {
    if (this.stopped) return this.up;
    let reachable: boolean;
    try {
      const client = await this.connection();
      await client.query({ text: "select 1", query_timeout: this.timeoutMs } as pg.QueryConfig);
      reachable = true;
    } catch (err) {
      // A connection that failed (or a probe that hung) is dropped; a new one
      // is made next time. The database is down when it cannot be reached;
      // a probe that only ran out of time on a connection that was made
      // leaves the verdict to the next probe's connect.
      this.drop();
      const probeTimedOut = /query read timeout/i.test((err as Error).message ?? "");
      reachable = isDatabaseUnavailable(err) && !probeTimedOut ? false : this.up;
    }
    if (reachable !== this.up) {
      if (reachable) logger.info("database reachable again");
      else logger.warn("database unreachable; answering 503 until it is back");
    }
    this.up = reachable;
    return reachable;
  }

  private async connection(): Promise<pg.Client> {
    if (this.client) return this.client;
    const client = new pg.Client({ connectionString: this.connectionString, connectionTimeoutMillis: this.timeoutMs, keepAlive: true });
    // A cut connection is noticed here (and dropped) rather than thrown as an unhandled 'error' event.
    client.on("error", () => {
      if (this.client === client) this.drop();
      this.suspect();
    });
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
    // The probe's own statements are never the database's busiest; it needs no role but the login's.
    this.client = client;
    return client;
  }

  private drop(): void {
    const client = this.client;
    this.client = null;
    if (client) void client.end().catch(() => {});
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.probing?.catch(() => {});
    this.drop();
  }
}
