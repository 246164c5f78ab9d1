import pg from "pg";
import type { Config } from "../config.ts";
import type { DatabaseUrls } from "./database.ts";
import { logger } from "../logger.ts";

/** The API's pool: the authenticator (who may only SET ROLE to the request roles), DATABASE_POOL_SIZE connections. */
export function openApiPool(config: Config, urls: DatabaseUrls): pg.Pool {
  const pool = new pg.Pool({ connectionString: urls.authenticator, max: config.DATABASE_POOL_SIZE, connectionTimeoutMillis: 5_000 });
  pool.on("error", (err) => logger.warn({ err: err.message }, "idle database connection failed"));
  return pool;
}

/**
 * The payment callback's own pool (CALLBACK_POOL_SIZE connections), apart
 * from the API's: a flood of callbacks waits for these, never for the
 * connections /graphql needs.
 */
export function openCallbackPool(config: Config, urls: DatabaseUrls): pg.Pool {
  // Copies of one delivery queue on its key's lock, each holding a connection:
  // the provider's bursts wait longer here than requests do on the API's pool.
  const pool = new pg.Pool({ connectionString: urls.authenticator, max: config.CALLBACK_POOL_SIZE, connectionTimeoutMillis: 20_000 });
  pool.on("error", (err) => logger.warn({ err: err.message }, "idle database connection of the payment callback failed"));
  return pool;
}
