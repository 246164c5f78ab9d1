import { execFile, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { DEMO, expectRefused, type GraphQLResponse, ok } from "../support/client.ts";
import { dropDatabase, EMBEDDED_DATABASE, prepareDatabase, resolveDatabaseUrls } from "../../src/db/database.ts";
import { testDatabaseUrl } from "../support/db.ts";
import { forgetAccounts, maxId } from "../support/fixtures.ts";
import { useTestService } from "../support/service.ts";
import { tempDir } from "../support/tempDirs.ts";

// Staff accounts: the operator's command line (the real `npm run cafe`, as a
// child process, against the test database) and the admins' GraphQL
// mutations; a disabled account can neither sign in, refresh nor act.

const ROOT = path.resolve(__dirname, "../..");
const run = `${process.pid}${Date.now().toString(36)}`;
let serial = 0;
const freshEmail = (label: string) => `staff-${label}-${run}-${++serial}@example.test`;
const PASSWORD = "Cortado-pass-42";

const LOGIN = `mutation($email: String!, $password: String!) { login(email: $email, password: $password) { token role refreshToken } }`;
const REFRESH = `mutation($token: String!) { refreshToken(token: $token) { token } }`;
const ADD = `mutation($email: String!, $name: String!, $role: String!, $password: String!) {
  addStaffAccount(email: $email, name: $name, role: $role, password: $password)
}`;
const DISABLE = `mutation($email: String!) { disableAccount(email: $email) }`;
const STAFF_ONLY = `{ lowStockItems { currentStock } }`;

const t = useTestService({
  async cleanup() {
    await forgetAccounts(t, `staff-%-${run}-%@example.test`, "app_public.baristas", firstAttemptId);
  },
});
let firstAttemptId = 0;

beforeAll(async () => {
  firstAttemptId = await maxId(t, "app_private.login_attempts");
});

const login = (email: string, password = PASSWORD) => t.gql(LOGIN, { variables: { email, password } });

async function account(email: string) {
  const { rows } = await t.db.query("select id, role, disabled_at from app_private.accounts where email = $1::citext", [email]);
  return rows[0] as { id: string; role: string; disabled_at: Date | null } | undefined;
}

function expect401(r: GraphQLResponse) {
  expect({ status: r.status, code: r.body.errors?.[0]?.extensions?.code }).toEqual({ status: 401, code: "UNAUTHENTICATED" });
}

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Every command line seen in `ps` while it ran. */
  psArgs: string[];
}

/** Runs the real `npm run cafe -- <args>` against the test database, `stdin` as its standard input. */
async function cafe(args: string[], stdin = "", extraEnv: Record<string, string | undefined> = {}): Promise<CliResult> {
  const env: Record<string, string | undefined> = { ...process.env, DATABASE_URL: testDatabaseUrl(), NODE_OPTIONS: "", LOG_LEVEL: "silent", ...extraEnv };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  const child = spawn("npm", ["run", "-s", "cafe", "--", ...args], {
    cwd: ROOT,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  child.stdin.end(stdin);
  const psArgs: string[] = [];
  let running = true;
  void exited.then(() => (running = false));
  while (running) {
    const { stdout: ps } = await promisify(execFile)("ps", ["-eo", "args", "ww"]).catch(() => ({ stdout: "" }));
    psArgs.push(...ps.split("\n").filter((l) => l.includes("cafe") || l.includes("cli.ts")));
    await new Promise((r) => setTimeout(r, 50));
  }
  return { code: await exited, stdout, stderr, psArgs };
}

describe("npm run cafe", () => {
  test("--help: the commands, exit 0", async () => {
    const r = await cafe(["--help"]);
    expect(r.code).toBe(0);
    for (const word of ["add-staff", "disable-account", "list-staff", "standard input"]) expect(r.stdout).toContain(word);
  }, 60_000);

  test("reads ENV_FILE as npm start does (the real environment wins), and prints no Grafast notice", async () => {
    const dir = tempDir("cli-env");
    const envFile = path.join(dir, "cafe.env");
    writeFileSync(envFile, `DATABASE_URL=${testDatabaseUrl()}\n`);
    const r = await cafe(["list-staff"], "", { DATABASE_URL: undefined, ENV_FILE: envFile, GRAPHILE_ENV: undefined });
    expect({ code: r.code, stderr: r.stderr.replace(/^Node\.js .*\n/m, "") }).toEqual({ code: 0, stderr: "" });
    expect(r.stdout).toMatch(/^admin@example\.com\s+Morgan Lee\s+admin\s+active$/m);
    // Without the file (nor .env in the project root): it names the variable.
    const without = await cafe(["list-staff"], "", { DATABASE_URL: undefined, ENV_FILE: path.join(dir, "missing.env") });
    expect(without.code).toBe(2);
    expect(without.stderr).toContain("ENV_FILE");
  }, 60_000);

  // The tests' own embedded PostgreSQL (.data/test-pg) stands for npm start's (.data/pg): with no DATABASE_URL anywhere, the CLI reaches it.
  (process.env.TEST_DATABASE_URL ? test.skip : test)(
    "no DATABASE_URL: the embedded PostgreSQL npm start uses, reused while it runs; before its first start a message says what to run",
    async () => {
      const dir = tempDir("cli-embedded");
      const emptyEnvFile = path.join(dir, "empty.env");
      writeFileSync(emptyEnvFile, "");
      const embedded = {
        DATABASE_URL: undefined,
        DATABASE_OWNER_URL: undefined,
        ENV_FILE: emptyEnvFile,
        EMBEDDED_PG_DIR: path.join(".data", "test-pg"),
        EMBEDDED_PG_PORT: new URL(testDatabaseUrl()).port,
      };
      const cafeUrl = Object.assign(new URL(testDatabaseUrl()), { pathname: `/${EMBEDDED_DATABASE}` }).toString();
      const config = t.config;
      const urls = await resolveDatabaseUrls(config, cafeUrl);
      await dropDatabase(urls.root!, EMBEDDED_DATABASE);
      try {
        const before = await cafe(["list-staff"], "", embedded);
        expect({ code: before.code, stdout: before.stdout }).toEqual({ code: 1, stdout: "" });
        expect(before.stderr).toContain("has no café database yet: run `npm start`");

        await prepareDatabase(urls, config, { demoData: true });
        const listed = await cafe(["list-staff"], "", embedded);
        expect({ code: listed.code, stderr: listed.stderr.replace(/^Node\.js .*\n/m, "") }).toEqual({ code: 0, stderr: "" });
        expect(listed.stdout).toMatch(/^admin@example\.com\s+Morgan Lee\s+admin\s+active$/m);
        // The server it found running is left running.
        expect((await t.db.query("select 1 as up")).rows).toEqual([{ up: 1 }]);
      } finally {
        await dropDatabase(urls.root!, EMBEDDED_DATABASE);
      }
    },
    120_000,
  );

  test("add-staff reads the password from stdin (never in the output or in ps); the account signs in over GraphQL; list-staff shows it; disable-account ends it", async () => {
    const email = freshEmail("cli");
    const added = await cafe(["add-staff", "--email", email, "--name", "Jo Cli", "--role", "barista"], `${PASSWORD}\n`);
    expect({ code: added.code, stderr: added.stderr.replace(/^Node\.js .*\n/m, "") }).toEqual({ code: 0, stderr: "" });
    expect(added.stdout).toContain(`Added barista ${email}`);
    expect(added.psArgs.length).toBeGreaterThan(0); // ps did see the command running
    for (const text of [added.stdout, added.stderr, ...added.psArgs]) expect(text).not.toContain(PASSWORD);

    const signedIn = ok(await login(email)).login;
    expect(signedIn.role).toBe("barista");
    ok(await t.gql(STAFF_ONLY, { token: signedIn.token }));

    const listed = await cafe(["list-staff"]);
    expect(listed.code).toBe(0);
    const line = listed.stdout.split("\n").find((l) => l.startsWith(email));
    expect(line?.split(/\s{2,}/)).toEqual([email, "Jo Cli", "barista", "active"]);
    expect(listed.stdout).toMatch(/^admin@example\.com\s+Morgan Lee\s+admin\s+active$/m);

    const disabled = await cafe(["disable-account", "--email", email.toUpperCase()]);
    expect(disabled.code).toBe(0);
    expect(disabled.stdout).toContain(`Disabled ${email}`);
    expect((await account(email))?.disabled_at).toBeInstanceOf(Date);
    // Its token is refused at once; it can no longer sign in.
    expect401(await t.gql(STAFF_ONLY, { token: signedIn.token }));
    expectRefused(await login(email), "UNAUTHENTICATED");

    const again = await cafe(["list-staff"]);
    expect(again.stdout.split("\n").find((l) => l.startsWith(email))).toMatch(/barista\s+disabled 20\d\d-/);
  }, 90_000);

  test("refusals: a clear message and a non-zero exit; nothing is created", async () => {
    const email = freshEmail("bad");
    const weak = await cafe(["add-staff", "--email", email, "--name", "Weak", "--role", "admin"], "short\n");
    expect({ code: weak.code, message: weak.stderr.includes("A password needs at least 10 characters.") }).toEqual({ code: 1, message: true });
    const role = await cafe(["add-staff", "--email", email, "--name", "Chef", "--role", "chef"], `${PASSWORD}\n`);
    expect({ code: role.code, message: role.stderr.includes("A staff role is barista or admin.") }).toEqual({ code: 1, message: true });
    const taken = await cafe(["add-staff", "--email", DEMO.alice.email, "--name", "Alice", "--role", "admin"], `${PASSWORD}\n`);
    expect({ code: taken.code, message: taken.stderr.includes("already registered") }).toEqual({ code: 1, message: true });
    const inArgs = await cafe(["add-staff", "--email", email, "--name", "Args", "--role", "admin", `--password=${PASSWORD}`]);
    expect({ code: inArgs.code, message: inArgs.stderr.includes("read from standard input") }).toEqual({ code: 2, message: true });
    expect(inArgs.stderr).not.toContain(PASSWORD);
    const missing = await cafe(["add-staff", "--email", email, "--role", "admin"], `${PASSWORD}\n`);
    expect({ code: missing.code, message: missing.stderr.includes("--name is required") }).toEqual({ code: 2, message: true });
    const unknown = await cafe(["disable-account", "--email", freshEmail("nobody")]);
    expect({ code: unknown.code, message: unknown.stderr.includes("No account has that e-mail address.") }).toEqual({ code: 1, message: true });
    const nonsense = await cafe(["promote-everyone"]);
    expect(nonsense.code).toBe(2);
    expect(nonsense.stderr).not.toContain("promote-everyone");
    // A stray argument (a password typed in the wrong place) is named by its position, never printed.
    const stray = await cafe(["list-staff", PASSWORD]);
    expect({ code: stray.code, message: stray.stderr.includes("Unexpected argument #2") }).toEqual({ code: 2, message: true });
    expect(stray.stderr + stray.stdout).not.toContain(PASSWORD);
    const strayOption = await cafe(["list-staff", `--${PASSWORD}`]);
    expect({ code: strayOption.code, message: strayOption.stderr.includes("Unknown option (argument #2)") }).toEqual({ code: 2, message: true });
    expect(strayOption.stderr + strayOption.stdout).not.toContain(PASSWORD);
    expect(await account(email)).toBeUndefined();
    expect((await account(DEMO.alice.email))?.role).toBe("customer");
  }, 300_000);
});

describe("addStaffAccount and disableAccount (GraphQL)", () => {
  test("admin only: customers and baristas FORBIDDEN, anonymous UNAUTHENTICATED, nothing created or disabled", async () => {
    const email = freshEmail("denied");
    const vars = { email, name: "Nope", role: "admin", password: PASSWORD };
    expectRefused(await t.gql(ADD, { variables: vars }), "UNAUTHENTICATED");
    expectRefused(await t.gql(ADD, { variables: vars, token: await t.token("alice") }), "FORBIDDEN");
    expectRefused(await t.gql(ADD, { variables: vars, token: await t.token("barista") }), "FORBIDDEN");
    expect(await account(email)).toBeUndefined();

    expectRefused(await t.gql(DISABLE, { variables: { email: DEMO.bob.email } }), "UNAUTHENTICATED");
    expectRefused(await t.gql(DISABLE, { variables: { email: DEMO.bob.email }, token: await t.token("alice") }), "FORBIDDEN");
    expectRefused(await t.gql(DISABLE, { variables: { email: DEMO.bob.email }, token: await t.token("barista") }), "FORBIDDEN");
    expect((await account(DEMO.bob.email))?.disabled_at).toBeNull();
  });

  test("an admin adds a barista and an admin; bad input BAD_USER_INPUT, a taken e-mail CONFLICT", async () => {
    const admin = await t.token("admin");
    const barista = freshEmail("gql-barista");
    const id = ok(await t.gql(ADD, { variables: { email: barista, name: "Ana Bar", role: "barista", password: PASSWORD }, token: admin })).addStaffAccount;
    expect(await account(barista)).toMatchObject({ id, role: "barista", disabled_at: null });
    expect(ok(await login(barista)).login.role).toBe("barista");
    const { rows } = await t.db.query("select name, is_admin from app_public.baristas where id = $1", [id]);
    expect(rows).toEqual([{ name: "Ana Bar", is_admin: false }]);

    const second = freshEmail("gql-admin");
    ok(await t.gql(ADD, { variables: { email: second, name: "Ada Min", role: "admin", password: PASSWORD }, token: admin }));
    expect(ok(await login(second)).login.role).toBe("admin");

    const bad = freshEmail("gql-bad");
    expectRefused(await t.gql(ADD, { variables: { email: bad, name: "X", role: "customer", password: PASSWORD }, token: admin }), "BAD_USER_INPUT");
    expectRefused(await t.gql(ADD, { variables: { email: bad, name: "X", role: "barista", password: "lettersonlyhere" }, token: admin }), "BAD_USER_INPUT");
    expectRefused(await t.gql(ADD, { variables: { email: bad, name: " ", role: "barista", password: PASSWORD }, token: admin }), "BAD_USER_INPUT");
    expect(await account(bad)).toBeUndefined();
    expectRefused(await t.gql(ADD, { variables: { email: barista.toUpperCase(), name: "Again", role: "admin", password: PASSWORD }, token: admin }), "CONFLICT");
    expect((await account(barista))?.role).toBe("barista");
  });

  test("a disabled account: its access token is refused at once (401), its refresh token and its password no longer work; disabling again is false; unknown NOT_FOUND; not oneself", async () => {
    const admin = await t.token("admin");
    const email = freshEmail("gql-disable");
    ok(await t.gql(ADD, { variables: { email, name: "Soon Gone", role: "barista", password: PASSWORD }, token: admin }));
    const session = ok(await login(email)).login;
    ok(await t.gql(STAFF_ONLY, { token: session.token }));

    expect(ok(await t.gql(DISABLE, { variables: { email }, token: admin }))).toEqual({ disableAccount: true });
    expect401(await t.gql(STAFF_ONLY, { token: session.token }));
    expectRefused(await t.gql(REFRESH, { variables: { token: session.refreshToken } }), "UNAUTHENTICATED");
    // The right password: the same answer as a wrong one.
    const refused = expectRefused(await login(email), "UNAUTHENTICATED");
    expect(refused.message).toBe(expectRefused(await login(email, "Wrong-password-9"), "UNAUTHENTICATED").message);

    expect(ok(await t.gql(DISABLE, { variables: { email }, token: admin }))).toEqual({ disableAccount: false });
    expectRefused(await t.gql(DISABLE, { variables: { email: freshEmail("nobody") }, token: admin }), "NOT_FOUND");
    expectRefused(await t.gql(DISABLE, { variables: { email: DEMO.admin.email }, token: admin }), "BAD_USER_INPUT");
    expect((await account(DEMO.admin.email))?.disabled_at).toBeNull();
  });
});
