import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { ConfigError, loadConfig } from "../src/config.ts";

// Configuration: environment variables validated once at start-up. A bad
// value stops the process naming the variable; production refuses the
// development secrets; `.env.example` documents every variable.

const ROOT = path.resolve(__dirname, "..");
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

describe("loadConfig", () => {
  test("an empty environment gives the documented development defaults", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      NODE_ENV: "development",
      HOST: "0.0.0.0",
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
    expect(c.JWT_SECRET.length).toBeGreaterThanOrEqual(32);
    expect(c.WEBHOOK_TOKEN.length).toBeGreaterThanOrEqual(16);
    expect(c.SIGNING_SECRET.length).toBeGreaterThanOrEqual(16);
  });

  test("values are parsed: numbers, booleans, and empty strings count as unset", () => {
    const c = loadConfig({ PORT: "8080", RUN_WORKER: "false", DEMO_DATA: "0", GRAPHIQL: "no", JWT_EXPIRES_IN_SECONDS: "60", HOST: "" });
    expect(c).toMatchObject({ PORT: 8080, RUN_WORKER: false, demoData: false, graphiql: false, JWT_EXPIRES_IN_SECONDS: 60, HOST: "0.0.0.0" });
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

  test("NODE_ENV=production refuses every development default secret, naming each", () => {
    const e = refusal({ NODE_ENV: "production" });
    expect(named(e)).toEqual(["DATABASE_ROLE_PASSWORD", "JWT_SECRET", "SIGNING_SECRET", "WEBHOOK_TOKEN"]);
    const one = refusal({ NODE_ENV: "production", ...STRONG, JWT_SECRET: undefined });
    expect(named(one)).toEqual(["JWT_SECRET"]);
    const webhook = refusal({ NODE_ENV: "production", ...STRONG, WEBHOOK_TOKEN: "" });
    expect(named(webhook)).toEqual(["WEBHOOK_TOKEN"]);
  });

  test("production with its own secrets starts without demo data or the IDE unless asked", () => {
    const c = loadConfig({ NODE_ENV: "production", ...STRONG });
    expect(c).toMatchObject({ isProduction: true, demoData: false, graphiql: false, JWT_SECRET: STRONG.JWT_SECRET });
    expect(loadConfig({ NODE_ENV: "production", ...STRONG, DEMO_DATA: "true" }).demoData).toBe(true);
    // Given its own runtime URL, production needs no role password.
    const { DATABASE_ROLE_PASSWORD: _unused, ...secrets } = STRONG;
    expect(() => loadConfig({ NODE_ENV: "production", ...secrets, DATABASE_AUTHENTICATOR_URL: "postgres://api:pw@db/cafe" })).not.toThrow();
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
  const start = (env: Record<string, string | undefined>) =>
    spawnSync(path.join(ROOT, "node_modules", ".bin", "tsx"), ["src/main.ts"], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 30_000,
      env: {
        PATH: `${path.join(ROOT, "node_modules", ".bin")}:${process.env.PATH}`,
        HOME: process.env.HOME,
        LOG_LEVEL: "silent",
        // Were the configuration wrongly accepted, start-up would fail here
        // rather than touch a real database.
        DATABASE_URL: "postgres://nobody@127.0.0.1:1/none",
        ...env,
      },
    });

  test("PORT=notaport: exits non-zero at once, naming PORT on stderr", () => {
    const r = start({ PORT: "notaport" });
    expect(r.error).toBeUndefined();
    expect(r.signal).toBeNull();
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/\bPORT\b/);
    expect(r.stdout).not.toMatch(/listening/i);
  });

  test("NODE_ENV=production with the development secrets: exits non-zero, naming them", () => {
    const r = start({ NODE_ENV: "production" });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/JWT_SECRET/);
    expect(r.stderr).toMatch(/WEBHOOK_TOKEN/);
    expect(r.stderr).toMatch(/SIGNING_SECRET/);
  });
});
