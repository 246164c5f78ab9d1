import pg from "pg";
import { startService, type Service } from "../../src/service.ts";
import { testDatabaseUrl } from "../support/db.ts";
import { testConfig } from "../support/service.ts";

// Two deployments on one PostgreSQL server (staging and production, two
// cafés): login roles belong to the whole server, so each deployment's carry
// its own prefix (DATABASE_ROLE_PREFIX), and a start never changes the
// password of a role that exists unless told to (--reset-role-passwords).
// Before, every start with a superuser URL ran `alter role cafe_owner ...
// password` and `cafe_authenticator`: the second deployment's start broke
// the first's logins.

const DEPLOYMENTS = {
  staging: { DATABASE_ROLE_PREFIX: "staging_", DATABASE_ROLE_PASSWORD: "staging-password-1" },
  prod: { DATABASE_ROLE_PREFIX: "prod_", DATABASE_ROLE_PASSWORD: "production-password-2" },
} as const;
type Name = keyof typeof DEPLOYMENTS;

function urlFor(database: string, user?: string, password?: string): string {
  const u = new URL(testDatabaseUrl());
  u.pathname = `/${database}`;
  if (user) {
    u.username = user;
    u.password = password ?? "";
  }
  return u.toString();
}

async function asRoot<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: urlFor("postgres") });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const database = (name: Name) => `cafe_dep_${name}`;
const start = (name: Name, env: Record<string, string> = {}, argv: string[] = []) =>
  startService(testConfig({ DATABASE_URL: urlFor(database(name)), DEMO_DATA: "true", ...DEPLOYMENTS[name], ...env }), argv);
const passwordOf = (role: string) => asRoot(async (c) => (await c.query("select rolpassword from pg_authid where rolname = $1", [role])).rows[0]?.rolpassword as string | undefined);

/** Logs in as a login role with a password and reads the menu there (RLS as anonymous). */
async function canLogIn(name: Name, role: string, password: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: urlFor(database(name), role, password) });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function menu(service: Service): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${service.api!.port}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query: "{ coffees(first: 1) { name } }" }),
  });
  return res.json();
}

async function dropAll() {
  await asRoot(async (c) => {
    for (const name of Object.keys(DEPLOYMENTS) as Name[]) await c.query(`drop database if exists ${database(name)} with (force)`);
    for (const { DATABASE_ROLE_PREFIX: p } of Object.values(DEPLOYMENTS)) {
      for (const role of [`${p}cafe_owner`, `${p}cafe_authenticator`]) await c.query(`drop role if exists ${role}`);
    }
  });
}
beforeAll(dropAll);
afterAll(dropAll);

test("two deployments with different prefixes on one server: each has its own login roles and passwords, and neither's start breaks the other", async () => {
  const staging = await start("staging");
  try {
    const prod = await start("prod");
    try {
      for (const [name, role] of [
        ["staging", "staging_cafe_owner"],
        ["staging", "staging_cafe_authenticator"],
        ["prod", "prod_cafe_owner"],
        ["prod", "prod_cafe_authenticator"],
      ] as const) {
        expect({ role, logsIn: await canLogIn(name, role, DEPLOYMENTS[name].DATABASE_ROLE_PASSWORD) }).toEqual({ role, logsIn: true });
      }
      // Each serves its own database after the other started.
      expect(await menu(staging)).toMatchObject({ data: { coffees: [{ name: expect.any(String) }] } });
      expect(await menu(prod)).toMatchObject({ data: { coffees: [{ name: expect.any(String) }] } });
    } finally {
      await prod.stop();
    }
  } finally {
    await staging.stop();
  }
}, 120_000);

test("a start leaves an existing role's password alone; another password is refused with what to do; --reset-role-passwords sets it", async () => {
  const before = await passwordOf("staging_cafe_owner");
  expect(before).toBeTruthy();
  const again = await start("staging");
  await again.stop();
  expect(await passwordOf("staging_cafe_owner")).toBe(before);
  // Another password for the same roles: not applied, and the start says why it cannot log in.
  // (A server whose pg_hba trusts every login, as a CI machine's may, lets the start in all the same: there only "not applied" is checked.)
  if (await canLogIn("staging", "staging_cafe_authenticator", "not-its-password")) {
    await (await start("staging", { DATABASE_ROLE_PASSWORD: "another-password-3" })).stop();
  } else {
    await expect(start("staging", { DATABASE_ROLE_PASSWORD: "another-password-3" })).rejects.toThrow(/--reset-role-passwords/);
  }
  expect(await passwordOf("staging_cafe_owner")).toBe(before);
  expect(await passwordOf("staging_cafe_authenticator")).toBeTruthy();
  // Told to: the roles take the new password.
  const reset = await start("staging", { DATABASE_ROLE_PASSWORD: "another-password-3" }, ["--reset-role-passwords"]);
  await reset.stop();
  expect(await passwordOf("staging_cafe_owner")).not.toBe(before);
  expect(await canLogIn("staging", "staging_cafe_authenticator", "another-password-3")).toBe(true);
}, 120_000);
