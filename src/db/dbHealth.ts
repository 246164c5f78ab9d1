import type pg from "pg";
import { logger } from "../logger.ts";

/** Error codes of a database that is down, restarting or unreachable (node's and Postgres's SQLSTATEs). */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EPIPE",
  "57P01",
  "57P02",
  "57P03",
  "08006",
  "08001",
  "08003",
  "53300",
]);

/**
 * Whether an error says the database is unavailable (not that a statement
 * failed): a connection refused or cut, the server shutting down, or pg's
 * own connection timeout or termination (those carry no code). An error
 * with another code is the statement's own: a statement or lock timeout
 * (57014, 55P03) does not mark the database down.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: string; message?: string };
  if (code !== undefined) return UNAVAILABLE_CODES.has(code); // e.g. a statement or lock timeout (57014, 55P03) is not
  return /timeout|terminated|not queryable/i.test(message ?? "");
}

/**
 * Whether the database answers, known without asking it on every request:
 * a ping every few seconds, and "down" at once when the pool reports a
 * broken connection. While it is down, /graphql and the payment route
 * answer 503 at once instead of waiting on connection timeouts.
 */
export class DatabaseHealth {
  up = true;
  private timer: NodeJS.Timeout;
  private probing = false;

  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool, intervalMs = 2000) {
    this.pool = pool;
    pool.on("error", () => this.markDown());
    this.timer = setInterval(() => void this.probe(), intervalMs);
    this.timer.unref();
  }

  markDown(): void {
    if (this.up) logger.warn("database unreachable; answering 503 until it is back");
    this.up = false;
    void this.probe();
  }

  async probe(): Promise<boolean> {
    if (this.probing) return this.up;
    this.probing = true;
    try {
      await this.pool.query("select 1");
      if (!this.up) logger.info("database reachable again");
      this.up = true;
    } catch {
      this.up = false;
    } finally {
      this.probing = false;
    }
    return this.up;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
