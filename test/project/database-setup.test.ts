import { spawnSync } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { loadConfig } from "../../src/config.ts";
import { dropDatabase, prepareDatabase, resolveDatabaseUrls } from "../../src/db/database.ts";
import { startService } from "../../src/service.ts";
import { testDatabaseUrl } from "../support/db.ts";
import { expectNoStackTrace, ROOT, runMain, testConfig } from "../support/service.ts";
import { tempDir } from "../support/tempDirs.ts";
import { sleep } from "../support/wait.ts";

// Databases the service did not create: one a DBA made beforehand (owned by
// the superuser), one reached without a superuser (the DBA made the roles;
// start-up names a missing grant in one line), and `npm run db:reset`. Each
// case has its own database, cafe_cfg_*, dropped afterwards; the roles are
// the cluster's (shared with every test database): nothing here alters them.

const DEV_ROLE_PASSWORD = loadConfig({}).DATABASE_ROLE_PASSWORD;
const STRONG = {
  JWT_SECRET: "a-production-secret-of-at-least-32-characters!!",
  WEBHOOK_TOKEN: "a-production-webhook-token",
  SIGNING_SECRET: "a-production-signing-secret",
};

function urlFor(database: string, user?: string, password?: string): string {
  const u = new URL(testDatabaseUrl());
  u.pathname = `/${database}`;
  if (user) {
    u.username = user;
    u.password = password ?? DEV_ROLE_PASSWORD;
  }
  return u.toString();
}

const made = new Set<string>();
async function asRoot<T>(database: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: urlFor(database) });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
/** A new, empty database made by the superuser (as `createdb NAME` does): owned by it. */
async function createdb(name: string): Promise<void> {
  made.add(name);
  await asRoot("postgres", async (c) => {
    await c.query(`drop database if exists ${name} with (force)`);
    await c.query(`create database ${name}`);
  });
}
const ownerOf = (name: string) => asRoot("postgres", async (c) => (await c.query("select pg_get_userbyid(datdba) as owner from pg_database where datname = $1", [name])).rows[0]?.owner);
const count = (database: string, sql: string) => asRoot(database, async (c) => Number((await c.query(sql)).rows[0].n));

afterAll(async () => {
  await asRoot("postgres", async (c) => {
    for (const name of made) await c.query(`drop database if exists ${name} with (force)`);
  });
});

test("a database made beforehand by a DBA (owned by the superuser) works with a superuser DATABASE_URL", async () => {
  await createdb("cafe_cfg_premade");
  expect(await ownerOf("cafe_cfg_premade")).toBe("postgres");
  const service = await startService(testConfig({ DATABASE_URL: urlFor("cafe_cfg_premade"), DEMO_DATA: "true" }));
  try {
    const res = await fetch(`http://127.0.0.1:${service.api!.port}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ coffees(first: 1) { name } }" }),
    });
    const body = await res.json();
    expect(body.errors).toBeUndefined();
    expect(body.data.coffees.length).toBe(1);
  } finally {
    await service.stop();
  }
  // Given to the owner role, as if the service had created it.
  expect(await ownerOf("cafe_cfg_premade")).toBe("cafe_owner");
  expect(await count("cafe_cfg_premade", "select count(*) as n from pg_namespace where nspname = 'graphile_worker'")).toBe(1);
});

// graphile-migrate keeps its pool 200 ms after the last use and exits the
// process when one of its connections is terminated then: a database dropped
// with force (or a DBA's pg_terminate_backend) right after start-up's
// migrations ended this test run once. Without the fix, the drop below exits
// this Jest process with "process.exit called with 1" from graphile-migrate.
test("the migrations keep no connection open after them: the database dropped with force at once, this process carries on", async () => {
  const name = "cafe_cfg_dropped_at_once";
  made.add(name);
  const config = loadConfig({ NODE_ENV: "development" });
  const urls = await resolveDatabaseUrls(config, urlFor(name));
  await dropDatabase(urls.root!, name);
  await prepareDatabase(urls, config, { demoData: false });
  await dropDatabase(urls.root!, name);
  await sleep(400);
  expect(await ownerOf(name)).toBeUndefined();
});

describe("without a superuser: start-up names what the DBA has not granted, one line each", () => {
  const ownerUrl = () => urlFor("cafe_cfg_grants", "cafe_owner");
  const migrate = (env: Record<string, string> = {}) => runMain(["--migrate-only"], { DATABASE_URL: ownerUrl(), ...env });

  test("a bare database: CREATE on it and the extensions are missing; granted, start-up works", async () => {
    await createdb("cafe_cfg_grants");
    const bare = migrate();
    expect(bare.status).toBe(1);
    expect(bare.stdout).toBe("");
    expect(bare.stderr.trim().split("\n")).toEqual([
      "cafe_owner lacks CREATE on database cafe_cfg_grants: run `grant create on database cafe_cfg_grants to cafe_owner`",
      "cafe_owner cannot create the extensions pgcrypto, citext, pg_trgm in database cafe_cfg_grants: run `create extension if not exists pgcrypto; create extension if not exists citext; create extension if not exists pg_trgm;` there as a superuser (or `grant create on schema public to cafe_owner`)",
    ]);
    expectNoStackTrace(bare);

    // The DBA creates the extensions: one grant is left, named in one line.
    await asRoot("cafe_cfg_grants", (c) => c.query("create extension pgcrypto; create extension citext; create extension pg_trgm"));
    const one = migrate();
    expect(one.status).toBe(1);
    expect(one.stderr).toBe("cafe_owner lacks CREATE on database cafe_cfg_grants: run `grant create on database cafe_cfg_grants to cafe_owner`\n");
    // Nothing was made before the check.
    expect(await count("cafe_cfg_grants", "select count(*) as n from pg_namespace where nspname in ('app_public', 'graphile_worker', 'graphile_migrate')")).toBe(0);

    // A runtime role that does not exist is named too.
    await asRoot("cafe_cfg_grants", (c) => c.query("grant create on database cafe_cfg_grants to cafe_owner"));
    const noRole = migrate({ DATABASE_AUTHENTICATOR_URL: urlFor("cafe_cfg_grants", "cafe_cfg_nobody") });
    expect(noRole.status).toBe(1);
    expect(noRole.stderr).toBe("role cafe_cfg_nobody does not exist: run `create role cafe_cfg_nobody login noinherit password '...'`\n");

    // With the grants of the README, start-up prepares the database (as cafe_owner, not a superuser).
    const service = await startService(testConfig({ DATABASE_URL: ownerUrl(), DEMO_DATA: "true" }), ["--migrate-only"]);
    await service.stop();
    expect(await count("cafe_cfg_grants", "select count(*) as n from app_public.coffees")).toBeGreaterThan(0);
    expect(await ownerOf("cafe_cfg_grants")).toBe("postgres");
  });
});

test("production: a superuser DATABASE_URL would give cafe_owner the development role password: refused, naming DATABASE_ROLE_PASSWORD", async () => {
  made.add("cafe_cfg_prod");
  const r = runMain([], {
    NODE_ENV: "production",
    DATABASE_URL: urlFor("cafe_cfg_prod"),
    DATABASE_AUTHENTICATOR_URL: urlFor("cafe_cfg_prod", "cafe_authenticator"),
    ...STRONG,
  });
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(/^Invalid configuration:\n {2}DATABASE_ROLE_PASSWORD: the development default may not be used when NODE_ENV=production \(DATABASE_URL is a superuser's/);
  expectNoStackTrace(r);
  expect(await count("postgres", "select count(*) as n from pg_database where datname = 'cafe_cfg_prod'")).toBe(0);
});

describe("npm run db:reset", () => {
  const url = () => urlFor("cafe_cfg_reset");
  const mark = () => asRoot("cafe_cfg_reset", (c) => c.query("create table public.cfg_marker (x int)"));
  const marked = () => count("cafe_cfg_reset", "select count(*) as n from pg_class where relname = 'cfg_marker'");
  const coffees = () => count("cafe_cfg_reset", "select count(*) as n from app_public.coffees");
  const migrations = () => count("cafe_cfg_reset", "select count(*) as n from graphile_migrate.migrations");
  const committed = readdirSync(path.join(ROOT, "migrations", "committed")).filter((f) => f.endsWith(".sql")).length;
  // The production settings a real deployment would give (the role URLs
  // explicit, so the cluster's shared roles keep their password).
  const production = () => ({
    NODE_ENV: "production",
    DATABASE_URL: url(),
    DATABASE_OWNER_URL: urlFor("cafe_cfg_reset", "cafe_owner"),
    DATABASE_AUTHENTICATOR_URL: urlFor("cafe_cfg_reset", "cafe_authenticator"),
    ...STRONG,
  });

  test("the npm script drops and recreates the database, migrates it and loads the demo data", async () => {
    made.add("cafe_cfg_reset");
    const envFile = path.join(tempDir("cfg"), "none.env");
    writeFileSync(envFile, "");
    // Through npm, as a user types it (ENV_FILE: not the developer's own .env).
    const r = spawnSync("npm", ["run", "--silent", "db:reset"], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 120_000,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: "silent", ENV_FILE: envFile, DATABASE_URL: url() },
    });
    expect({ status: r.status, stderr: r.stderr.replace(/^npm warn .*\n/gm, "") }).toEqual({ status: 0, stderr: "" });
    expect(await migrations()).toBe(committed);
    expect(await coffees()).toBeGreaterThan(0);

    await mark();
    const again = runMain(["--reset"], { DATABASE_URL: url(), DEMO_DATA: "false" });
    expect(again.status).toBe(0);
    expect(await marked()).toBe(0);
    expect(await migrations()).toBe(committed);
    expect(await coffees()).toBe(0);
  });

  test("NODE_ENV=production: refused without --force (nothing dropped), done with it", async () => {
    await mark();
    const refused = runMain(["--reset"], production());
    expect(refused.status).toBe(1);
    expect(refused.stderr.trim()).toBe("npm run db:reset drops the database: refused when NODE_ENV=production (run `npm run db:reset -- --force` to mean it)");
    expect(await marked()).toBe(1);

    const forced = runMain(["--reset", "--force"], production());
    expect(forced.status).toBe(0);
    expect(await marked()).toBe(0);
    // Production loads no demo data unless DEMO_DATA=true.
    expect(await coffees()).toBe(0);
    expect(await migrations()).toBe(committed);
  });

  test("a URL that is not a superuser's cannot reset: said in one line", async () => {
    const r = runMain(["--reset"], { DATABASE_URL: urlFor("cafe_cfg_reset", "cafe_owner") });
    expect(r.status).toBe(1);
    expect(r.stderr).toBe("npm run db:reset drops and creates the database: DATABASE_URL must be a superuser's (or unset, for the embedded server)\n");
  });
});
