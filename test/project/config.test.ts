import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { applyEnvFile, ConfigError, loadConfig } from "../../src/config.ts";
import { developmentJwtSecret, developmentSecretFile } from "../../src/db/devSecret.ts";
import { expectNoStackTrace, runMain } from "../support/service.ts";
import { tempDir } from "../support/tempDirs.ts";

// Configuration: environment variables (and a .env file) validated once at
// start-up, before anything else runs. Bad values stop the process with one
// message naming every one; production refuses the development secrets and
// the embedded database; `.env.example` documents every variable.

const ROOT = path.resolve(__dirname, "../..");
const PRODUCTION_DB = "postgres://cafe:pw@db.example/cafe";
const STRONG = {
  JWT_SECRET: "a-production-secret-of-at-least-32-characters!!",
  WEBHOOK_TOKEN: "a-production-webhook-token",
  SIGNING_SECRET: "a-production-signing-secret",
  DATABASE_ROLE_PASSWORD: "a-production-role-password",
};

/** The ConfigError loadConfig throws for this environment (fails the test if it does not throw one). */
function refusal(env: Record<string, string | undefined>): ConfigError {
  try {
    loadConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

/** The variables a ConfigError names, one a line ("  NAME: why"). */
function named(e: ConfigError): string[] {
  return [...new Set([...e.message.matchAll(/^\s+([A-Z_]+):/gm)].map((m) => m[1]!))].sort();
}

describe("the development JWT secret", () => {
  test("random per data directory (and per database for a DATABASE_URL), kept with mode 0600, the same after a restart", () => {
    const dir = tempDir("secret");
    const embedded = { EMBEDDED_PG_DIR: path.join(dir, "pg"), DATABASE_URL: undefined };
    const first = developmentJwtSecret(embedded);
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect(developmentSecretFile(embedded)).toBe(path.join(dir, "jwt-secret"));
    expect(statSync(developmentSecretFile(embedded)).mode & 0o777).toBe(0o600);
    expect(developmentJwtSecret(embedded)).toBe(first);
    const other = developmentJwtSecret({ EMBEDDED_PG_DIR: path.join(dir, "elsewhere", "pg"), DATABASE_URL: undefined });
    expect(other).not.toBe(first);
    const a = developmentJwtSecret({ ...embedded, DATABASE_URL: "postgres://u:p@db.example:5433/cafe_a" });
    const b = developmentJwtSecret({ ...embedded, DATABASE_URL: "postgres://u:p@db.example:5433/cafe_b" });
    expect(new Set([first, a, b]).size).toBe(3);
    expect(readdirSync(path.join(dir, "jwt-secrets")).sort()).toEqual(["db.example_5433_cafe_a", "db.example_5433_cafe_b"]);
    // Nothing in the source knows it.
    expect(readFileSync(path.join(__dirname, "../..", "src", "config.ts"), "utf8")).not.toContain(first);
  });
});

describe("loadConfig", () => {
  test("an empty environment gives the documented development defaults", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      NODE_ENV: "development",
      // This machine only, unless asked (a container sets HOST=0.0.0.0).
      HOST: "127.0.0.1",
      PORT: 5678,
      LOG_LEVEL: "info",
      JWT_EXPIRES_IN_SECONDS: 900,
      TRUST_PROXY: "false",
      RUN_API: true,
      RUN_WORKER: true,
      isProduction: false,
      demoData: true,
      graphiql: true,
    });
    expect(c.DATABASE_URL).toBeUndefined();
    // No published JWT secret: start-up makes this data directory's own (test below).
    expect(c.JWT_SECRET).toBe("");
    expect(c.WEBHOOK_TOKEN.length).toBeGreaterThanOrEqual(16);
    expect(c.SIGNING_SECRET.length).toBeGreaterThanOrEqual(16);
  });

  test("values are parsed: numbers, booleans, and empty strings count as unset", () => {
    const c = loadConfig({ PORT: "8080", RUN_WORKER: "false", DEMO_DATA: "0", GRAPHIQL: "no", JWT_EXPIRES_IN_SECONDS: "60", HOST: "" });
    expect(c).toMatchObject({ PORT: 8080, RUN_WORKER: false, demoData: false, graphiql: false, JWT_EXPIRES_IN_SECONDS: 60, HOST: "127.0.0.1" });
    expect(loadConfig({ PORT: "" }).PORT).toBe(5678);
    expect(loadConfig({ PORT: "0" }).PORT).toBe(0);
  });

  test.each(["abc", "70000", "-1", "80.5", "8080abc"])("PORT=%s throws a ConfigError naming PORT", (port) => {
    const e = refusal({ PORT: port });
    expect(named(e)).toEqual(["PORT"]);
  });

  test("a JWT_SECRET shorter than 32 characters is refused, naming JWT_SECRET and not echoing it", () => {
    const secret = "short-secret-1234";
    const e = refusal({ JWT_SECRET: secret });
    expect(named(e)).toEqual(["JWT_SECRET"]);
    expect(e.message).toMatch(/32/);
    expect(e.message).not.toContain(secret);
  });

  test("every bad variable is named at once", () => {
    const e = refusal({ PORT: "abc", JWT_SECRET: "x", WEBHOOK_TOKEN: "y", LOG_LEVEL: "loud", DEMO_DATA: "maybe", DATABASE_URL: "mysql://db/cafe" });
    expect(named(e)).toEqual(["DATABASE_URL", "DEMO_DATA", "JWT_SECRET", "LOG_LEVEL", "PORT", "WEBHOOK_TOKEN"]);
  });

  test.each([
    ["NODE_ENV", "staging"],
    ["DATABASE_URL", "not a url"],
    ["DATABASE_POOL_SIZE", "0"],
    ["JWT_EXPIRES_IN_SECONDS", "5"],
    ["SIGNING_SECRET", "too-short"],
    ["RUN_API", "perhaps"],
    ["MAX_QUERY_DEPTH", "0"],
  ])("%s=%s is refused, naming it", (name, value) => {
    expect(named(refusal({ [name]: value }))).toEqual([name]);
  });

  test("NODE_ENV=production refuses every development default secret and a missing DATABASE_URL, naming each", () => {
    const e = refusal({ NODE_ENV: "production" });
    expect(named(e)).toEqual(["DATABASE_ROLE_PASSWORD", "DATABASE_URL", "JWT_SECRET", "SIGNING_SECRET", "WEBHOOK_TOKEN"]);
    const one = refusal({ NODE_ENV: "production", DATABASE_URL: PRODUCTION_DB, ...STRONG, JWT_SECRET: undefined });
    expect(named(one)).toEqual(["JWT_SECRET"]);
    const webhook = refusal({ NODE_ENV: "production", DATABASE_URL: PRODUCTION_DB, ...STRONG, WEBHOOK_TOKEN: "" });
    expect(named(webhook)).toEqual(["WEBHOOK_TOKEN"]);
    // Written out in full, the development value is refused as well.
    const spelled = refusal({ NODE_ENV: "production", DATABASE_URL: PRODUCTION_DB, ...STRONG, SIGNING_SECRET: loadConfig({}).SIGNING_SECRET });
    expect(named(spelled)).toEqual(["SIGNING_SECRET"]);
    expect(named(refusal({ NODE_ENV: "production", ...STRONG }))).toEqual(["DATABASE_URL"]);
    // Nor may a rotation keep the development key as the previous one.
    const previous = refusal({ NODE_ENV: "production", DATABASE_URL: PRODUCTION_DB, ...STRONG, SIGNING_SECRET_PREVIOUS: loadConfig({}).SIGNING_SECRET });
    expect(named(previous)).toEqual(["SIGNING_SECRET_PREVIOUS"]);
  });

  test("Stripe: the webhook secret is required with the key, its secrets are whsec_ values, and production refuses a test key unless STRIPE_TEST_MODE=true", () => {
    const key = { STRIPE_SECRET_KEY: "sk_test_abc123", STRIPE_WEBHOOK_SECRET: "whsec_one,whsec_two" };
    expect(loadConfig(key)).toMatchObject({ ...key, STRIPE_API_URL: "https://api.stripe.com", STRIPE_TEST_MODE: false });
    expect(() => loadConfig({ STRIPE_SECRET_KEY: "sk_test_abc123" })).toThrow(/STRIPE_WEBHOOK_SECRET: required/);
    expect(named(refusal({ ...key, STRIPE_WEBHOOK_SECRET: "not-a-secret" }))).toEqual(["STRIPE_WEBHOOK_SECRET"]);
    expect(named(refusal({ ...key, STRIPE_SECRET_KEY: "pk_test_publishable" }))).toEqual(["STRIPE_SECRET_KEY"]);
    const production = { NODE_ENV: "production", DATABASE_URL: PRODUCTION_DB, ...STRONG, ...key };
    expect(() => loadConfig(production)).toThrow(/STRIPE_SECRET_KEY: a test-mode key/);
    expect(loadConfig({ ...production, STRIPE_TEST_MODE: "true" }).STRIPE_SECRET_KEY).toBe("sk_test_abc123");
    expect(() => loadConfig({ ...production, STRIPE_SECRET_KEY: "sk_live_abc123" })).not.toThrow();
  });

  test("production's refusals and malformed values come in the same message", () => {
    const e = refusal({ NODE_ENV: "production", PORT: "abc", LOG_LEVEL: "verbose", JWT_SECRET: "short" });
    expect(named(e)).toEqual(["DATABASE_ROLE_PASSWORD", "DATABASE_URL", "JWT_SECRET", "LOG_LEVEL", "PORT", "SIGNING_SECRET", "WEBHOOK_TOKEN"]);
  });

  test("production with its own secrets and database starts without demo data unless asked, with Ruru for the admin, ad-hoc documents for staff only", () => {
    const c = loadConfig({ NODE_ENV: "production", DATABASE_URL: PRODUCTION_DB, ...STRONG });
    expect(c).toMatchObject({ isProduction: true, demoData: false, graphiql: true, adHocQueries: "staff", JWT_SECRET: STRONG.JWT_SECRET });
    expect(loadConfig({ NODE_ENV: "production", DATABASE_URL: PRODUCTION_DB, ...STRONG, GRAPHIQL: "false" }).graphiql).toBe(false);
    expect(loadConfig({ NODE_ENV: "production", DATABASE_URL: PRODUCTION_DB, ...STRONG, DEMO_DATA: "true" }).demoData).toBe(true);
    // Given its own runtime URL, production needs no role password.
    const { DATABASE_ROLE_PASSWORD: _unused, ...secrets } = STRONG;
    expect(() => loadConfig({ NODE_ENV: "production", DATABASE_URL: PRODUCTION_DB, ...secrets, DATABASE_AUTHENTICATOR_URL: "postgres://api:pw@db/cafe" })).not.toThrow();
  });
});

describe("the .env file", () => {
  test("fills what the environment leaves unset or empty; the environment wins", () => {
    const dir = tempDir("cfg");
    writeFileSync(path.join(dir, ".env"), 'PORT=7000\nHOST=10.0.0.1\nJWT_SECRET="quoted # not a comment"\n# a comment\nDEMO_DATA=false\n');
    const env: NodeJS.ProcessEnv = { PORT: "8000", HOST: "" };
    expect(applyEnvFile(env, dir)).toBe(path.join(dir, ".env"));
    expect(env).toEqual({ PORT: "8000", HOST: "10.0.0.1", JWT_SECRET: "quoted # not a comment", DEMO_DATA: "false" });
  });

  test("none in the working directory: nothing read; ENV_FILE names another, which must exist", () => {
    const dir = tempDir("cfg");
    const env: NodeJS.ProcessEnv = {};
    expect(applyEnvFile(env, dir)).toBeNull();
    expect(env).toEqual({});
    writeFileSync(path.join(dir, "cafe.env"), "PORT=7001\n");
    const explicit: NodeJS.ProcessEnv = { ENV_FILE: "cafe.env" };
    expect(applyEnvFile(explicit, dir)).toBe(path.join(dir, "cafe.env"));
    expect(explicit.PORT).toBe("7001");
    expect(() => applyEnvFile({ ENV_FILE: "missing.env" }, dir)).toThrow(/ENV_FILE: cannot read .*missing\.env/);
  });
});

describe(".env.example", () => {
  const example = readFileSync(path.join(ROOT, ".env.example"), "utf8");
  const exampleEnv = Object.fromEntries(
    example
      .split("\n")
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );

  test("as written, it is a valid development configuration", () => {
    expect(() => loadConfig(exampleEnv)).not.toThrow();
  });

  test("lists every variable the service reads", () => {
    const source = readFileSync(path.join(ROOT, "src", "config.ts"), "utf8");
    const schemaBody = source.slice(source.indexOf("z.object({"), source.indexOf("});", source.indexOf("z.object({")));
    const read = [...schemaBody.matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!);
    expect(read.length).toBeGreaterThan(10);
    expect(read.filter((name) => !(name in exampleEnv))).toEqual([]);
  });
});

describe("the real process", () => {
  // Were the configuration wrongly accepted, start-up would fail here rather
  // than touch a real database.
  const start = (env: Record<string, string | undefined>, cwd?: string) => runMain([], { DATABASE_URL: "postgres://nobody@127.0.0.1:1/none", ...env }, { cwd, timeoutMs: 30_000 });

  test("PORT=notaport: exits non-zero at once, naming PORT on stderr", () => {
    const r = start({ PORT: "notaport" });
    expect(r.error).toBeUndefined();
    expect(r.signal).toBeNull();
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/\bPORT\b/);
    expect(r.stdout).not.toMatch(/listening/i);
  });

  test("NODE_ENV=production without DATABASE_URL and with the development secrets: one message naming every one, exit 1, no stack", () => {
    const r = start({ NODE_ENV: "production", DATABASE_URL: undefined });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim()).toBe(
      [
        "Invalid configuration:",
        "  DATABASE_URL: required when NODE_ENV=production (without it an embedded database would start)",
        ...["JWT_SECRET", "WEBHOOK_TOKEN", "SIGNING_SECRET", "DATABASE_ROLE_PASSWORD"].map((name) => `  ${name}: the development default may not be used when NODE_ENV=production`),
      ].join("\n"),
    );
    expectNoStackTrace(r);
  });

  test("LOG_LEVEL=verbose: the configuration error naming LOG_LEVEL, no stack trace", () => {
    const r = start({ LOG_LEVEL: "verbose" });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^Invalid configuration:\n {2}LOG_LEVEL: /);
    expect(r.stderr.trim().split("\n")).toHaveLength(2);
    expectNoStackTrace(r);
  });

  test("a .env in the working directory is used, the real environment overrides it, ENV_FILE points elsewhere", () => {
    const dir = tempDir("cfg");
    writeFileSync(path.join(dir, ".env"), "PORT=notaport\nMAX_QUERY_DEPTH=0\n");
    const fromFile = start({}, dir);
    expect(fromFile.status).toBe(1);
    expect(fromFile.stderr).toMatch(/^\s+PORT:/m);
    expect(fromFile.stderr).toMatch(/^\s+MAX_QUERY_DEPTH:/m);
    // The environment's PORT wins: only the file's MAX_QUERY_DEPTH is left to refuse.
    const overridden = start({ PORT: "5999" }, dir);
    expect(overridden.status).toBe(1);
    expect(overridden.stderr).not.toMatch(/PORT/);
    expect(overridden.stderr).toMatch(/^\s+MAX_QUERY_DEPTH:/m);
    // ENV_FILE: another file, from anywhere; one that is missing is refused.
    writeFileSync(path.join(dir, "other.env"), "JWT_EXPIRES_IN_SECONDS=1\n");
    const other = start({ ENV_FILE: path.join(dir, "other.env") });
    expect(other.status).toBe(1);
    expect(other.stderr.trim()).toMatch(/^Invalid configuration:\n\s+JWT_EXPIRES_IN_SECONDS: [^\n]+$/);
    const missing = start({ ENV_FILE: path.join(dir, "nope.env") });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/ENV_FILE: cannot read .*nope\.env/);
    expectNoStackTrace(missing);
  });

  test("production with a development value in the .env file is refused like one in the environment", () => {
    const dir = tempDir("cfg");
    writeFileSync(
      path.join(dir, ".env"),
      `NODE_ENV=production\nDATABASE_URL=${PRODUCTION_DB}\nJWT_SECRET=${STRONG.JWT_SECRET}\nWEBHOOK_TOKEN=${STRONG.WEBHOOK_TOKEN}\nSIGNING_SECRET=${loadConfig({}).SIGNING_SECRET}\nDATABASE_ROLE_PASSWORD=${STRONG.DATABASE_ROLE_PASSWORD}\n`,
    );
    const r = start({ DATABASE_URL: undefined }, dir);
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe("Invalid configuration:\n  SIGNING_SECRET: the development default may not be used when NODE_ENV=production");
  });
});
