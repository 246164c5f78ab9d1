import { readFileSync } from "node:fs";
import path from "node:path";
import { parseEnv } from "node:util";
import { z } from "zod";
import { AD_HOC_POLICIES, type AdHocPolicy } from "../plugins/trustedDocuments.ts";

// Every setting the service reads, validated once at start-up, before
// anything else runs. `.env.example` documents each variable; bad ones stop
// the process with one message naming every one of them.

const DEV_SECRET = "development-only-secret-change-me-0123456789";
const DEV_WEBHOOK_TOKEN = "development-webhook-token";
const DEV_SIGNING_SECRET = "development-signing-secret";
const DEV_DB_ROLE_PASSWORD = "cafe-development-password";

/** The development defaults that NODE_ENV=production refuses. */
export const DEVELOPMENT_DEFAULTS = {
  JWT_SECRET: DEV_SECRET,
  WEBHOOK_TOKEN: DEV_WEBHOOK_TOKEN,
  SIGNING_SECRET: DEV_SIGNING_SECRET,
  DATABASE_ROLE_PASSWORD: DEV_DB_ROLE_PASSWORD,
} as const;

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

const bool = z
  .enum(["true", "false", "1", "0", "yes", "no"])
  .transform((v) => v === "true" || v === "1" || v === "yes");
const postgresUrl = z
  .string()
  .refine((v) => /^postgres(ql)?:\/\//.test(v), "must be a postgres:// URL")
  .refine((v) => {
    try {
      new URL(v);
      return true;
    } catch {
      return false;
    }
  }, "is not a valid URL");
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const schema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  HOST: z.string().min(1).default("0.0.0.0"),
  PORT: int(0, 65535).default(5678),
  LOG_LEVEL: z.enum(LOG_LEVELS).default("info"),
  // Read from the real environment only (see applyEnvFile).
  ENV_FILE: z.string().optional(),

  DATABASE_URL: postgresUrl.optional(),
  DATABASE_OWNER_URL: postgresUrl.optional(),
  DATABASE_AUTHENTICATOR_URL: postgresUrl.optional(),
  DATABASE_ROLE_PASSWORD: z.string().min(8).default(DEV_DB_ROLE_PASSWORD),
  DATABASE_POOL_SIZE: int(1, 200).default(10),
  PASSWORD_CHECK_CONCURRENCY: int(1, 100)
    .default(2)
    .describe(
      "Password checks (bcrypt in PostgreSQL: sign-in, registration, password change, new staff account) one API process runs at once; never more than half of DATABASE_POOL_SIZE. The others wait in a queue (PASSWORD_CHECK_QUEUE), holding no connection.",
    ),
  PASSWORD_CHECK_QUEUE: int(0, 10_000)
    .default(32)
    .describe("Password checks that may wait for their turn in one API process; beyond it they are refused at once with RATE_LIMITED (extensions.retryAfterSeconds)."),
  EMBEDDED_PG_DIR: z.string().min(1).default(".data/pg"),
  EMBEDDED_PG_PORT: int(1, 65535).default(54329),
  DEMO_DATA: bool.optional(),

  JWT_SECRET: z.string().min(32, "must be at least 32 characters").default(DEV_SECRET),
  JWT_EXPIRES_IN_SECONDS: int(30, 86_400).default(900),
  WEBHOOK_TOKEN: z.string().min(16, "must be at least 16 characters").default(DEV_WEBHOOK_TOKEN),
  SIGNING_SECRET: z.string().min(16, "must be at least 16 characters").default(DEV_SIGNING_SECRET),
  SIGNING_SECRET_PREVIOUS: z.string().min(16).optional(),
  NOTIFY_WEBHOOK_URL: z
    .string()
    .url()
    .refine((v) => /^https?:\/\//.test(v), "must be an http(s) URL")
    .optional()
    .describe(
      "Where the worker POSTs each customer notification (paid, ready for pickup, cancelled with a refund owed) as a Standard Webhooks request, for an SMS, push or e-mail provider. Unset: no webhooks (the notifications are still recorded and sent over the notificationAdded subscription).",
    ),
  NOTIFY_WEBHOOK_SECRET: z
    .string()
    .refine((v) => (v.startsWith("whsec_") ? Buffer.from(v.slice(6), "base64").length >= 24 : v.length >= 24), "must be whsec_<base64 of at least 24 bytes> or at least 24 characters")
    .optional()
    .describe(
      "Signs the notification webhooks (webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>): the Standard Webhooks form whsec_<base64 key>, or a raw string used as the key. Required with NOTIFY_WEBHOOK_URL.",
    ),
  TRUST_PROXY: z.string().default("false"),

  RUN_API: bool.default(true),
  RUN_WORKER: bool.default(true),
  WORKER_CONCURRENCY: int(1, 100).default(4),
  GRAPHIQL: bool.optional(),

  CORS_ORIGINS: z.string().default(""),
  GRAPHQL_RATE_LIMIT: int(0, 1_000_000).default(100),
  GRAPHQL_RATE_BURST: int(1, 1_000_000).default(200),
  METRICS: bool.default(true),
  /** Bearer token /metrics requires; in production /metrics is off without one. */
  METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  WS_PING_INTERVAL_MS: int(100, 600_000).default(15_000),
  WS_MAX_SUBSCRIPTIONS_PER_SOCKET: int(1, 100_000).default(100),
  WS_MAX_SOCKETS_PER_SOURCE: int(1, 1_000_000).default(50),
  SHUTDOWN_GRACE_MS: int(0, 60_000).default(1000),

  MAX_QUERY_DEPTH: int(1, 100).default(12),
  MAX_QUERY_ALIASES: int(0, 1000).default(30),
  MAX_QUERY_TOKENS: int(10, 100_000).default(5000),
  MAX_QUERY_LENGTH: int(100, 1_000_000).default(50_000),
  MAX_QUERY_COST: int(1, 10_000_000).default(5000),
  MAX_QUERY_COST_STAFF: int(1, 10_000_000).default(50_000),
  DEFAULT_LIST_SIZE: int(1, 10_000).default(20),
  // Who may send documents that are not trusted (README "Trusted documents").
  AD_HOC_QUERIES: z.enum(AD_HOC_POLICIES).optional(),
  MAX_LIST_SIZE: int(1, 10_000).default(100),
});

export type Config = z.infer<typeof schema> & {
  /** NODE_ENV=production. */
  isProduction: boolean;
  demoData: boolean;
  graphiql: boolean;
  /** AD_HOC_QUERIES, defaulted: `staff` in production, else `any`. */
  adHocQueries: AdHocPolicy;
};

/** A configuration (or database set-up) the service cannot start with: main prints the message alone and exits 1. */
export class ConfigError extends Error {}

const PRODUCTION_DEFAULT = "the development default may not be used when NODE_ENV=production";

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings count as unset, as shells and .env files often leave them.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = schema.safeParse(cleaned);
  // Every problem, keyed by variable, in one message.
  const problems = new Map<string, string>();
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const name = issue.path.join(".");
      if (!problems.has(name)) problems.set(name, issue.message);
    }
  }
  if (cleaned.NODE_ENV === "production") {
    if (!cleaned.DATABASE_URL && !problems.has("DATABASE_URL"))
      problems.set("DATABASE_URL", "required when NODE_ENV=production (without it an embedded database would start)");
    for (const [name, value] of Object.entries(DEVELOPMENT_DEFAULTS)) {
      // The role password derives the runtime role's URL unless that is given.
      if (name === "DATABASE_ROLE_PASSWORD" && cleaned.DATABASE_AUTHENTICATOR_URL) continue;
      if ((cleaned[name] ?? value) === value && !problems.has(name)) problems.set(name, PRODUCTION_DEFAULT);
    }
    // Rotating away from the development key must not keep accepting it.
    if (cleaned.SIGNING_SECRET_PREVIOUS === DEV_SIGNING_SECRET && !problems.has("SIGNING_SECRET_PREVIOUS"))
      problems.set("SIGNING_SECRET_PREVIOUS", PRODUCTION_DEFAULT);
  }
  if (problems.size || !parsed.success) {
    const lines = [...problems].map(([name, why]) => `  ${name}: ${why}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const c = parsed.data;
  // A webhook nobody can verify would let anyone who finds the URL forge one.
  if (c.NOTIFY_WEBHOOK_URL && !c.NOTIFY_WEBHOOK_SECRET) {
    throw new ConfigError("Invalid configuration:\n  NOTIFY_WEBHOOK_SECRET: required when NOTIFY_WEBHOOK_URL is set");
  }
  const isProduction = c.NODE_ENV === "production";
  if (c.MAX_LIST_SIZE < c.DEFAULT_LIST_SIZE) {
    throw new ConfigError("Invalid configuration:\n  MAX_LIST_SIZE: must be at least DEFAULT_LIST_SIZE");
  }
  return {
    ...c,
    isProduction,
    demoData: c.DEMO_DATA ?? !isProduction,
    // On in production too: the admin writes ad-hoc GraphQL in it, and
    // AD_HOC_QUERIES (staff by default there) decides who may send what.
    graphiql: c.GRAPHIQL ?? true,
    adHocQueries: c.AD_HOC_QUERIES ?? (isProduction ? "staff" : "any"),
  };
}

/** The refusal of a development default found after start-up began (e.g. once the database URL turns out to be a superuser's). */
export function productionDefaultError(name: keyof typeof DEVELOPMENT_DEFAULTS, why: string): ConfigError {
  return new ConfigError(`Invalid configuration:\n  ${name}: ${PRODUCTION_DEFAULT} (${why})`);
}

export function isDevelopmentDefault(name: keyof typeof DEVELOPMENT_DEFAULTS, value: string): boolean {
  return DEVELOPMENT_DEFAULTS[name] === value;
}

/**
 * Fills `env` from a .env file: ENV_FILE when set (it must be readable), else
 * `.env` in the working directory when there is one (`npm start` and the
 * other npm scripts run in the project's root). A variable already set to a
 * non-empty value in the real environment wins over the file. Returns the
 * file read, if any.
 */
export function applyEnvFile(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string | null {
  const explicit = env.ENV_FILE ? path.resolve(cwd, env.ENV_FILE) : null;
  const file = explicit ?? path.join(cwd, ".env");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if (!explicit && (e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new ConfigError(`Invalid configuration:\n  ENV_FILE: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (value !== undefined && !env[name]) env[name] = value;
  }
  return file;
}
