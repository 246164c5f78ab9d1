import { z } from "zod";

// Every setting the service reads, validated once at start-up. `.env.example`
// documents each variable; a bad one stops the process with its name.

const DEV_SECRET = "development-only-secret-change-me-0123456789";
const DEV_WEBHOOK_TOKEN = "development-webhook-token";
const DEV_SIGNING_SECRET = "development-signing-secret";
const DEV_DB_ROLE_PASSWORD = "cafe-development-password";

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
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),

  DATABASE_URL: postgresUrl.optional(),
  DATABASE_OWNER_URL: postgresUrl.optional(),
  DATABASE_AUTHENTICATOR_URL: postgresUrl.optional(),
  DATABASE_ROLE_PASSWORD: z.string().min(8).default(DEV_DB_ROLE_PASSWORD),
  DATABASE_POOL_SIZE: int(1, 200).default(10),
  EMBEDDED_PG_DIR: z.string().min(1).default(".data/pg"),
  EMBEDDED_PG_PORT: int(1, 65535).default(54329),
  DEMO_DATA: bool.optional(),

  JWT_SECRET: z.string().min(32, "must be at least 32 characters").default(DEV_SECRET),
  JWT_EXPIRES_IN_SECONDS: int(30, 86_400).default(900),
  WEBHOOK_TOKEN: z.string().min(16, "must be at least 16 characters").default(DEV_WEBHOOK_TOKEN),
  SIGNING_SECRET: z.string().min(16, "must be at least 16 characters").default(DEV_SIGNING_SECRET),
  SIGNING_SECRET_PREVIOUS: z.string().min(16).optional(),
  TRUST_PROXY: z.string().default("false"),

  RUN_API: bool.default(true),
  RUN_WORKER: bool.default(true),
  WORKER_CONCURRENCY: int(1, 100).default(4),
  GRAPHIQL: bool.optional(),

  CORS_ORIGINS: z.string().default(""),
  GRAPHQL_RATE_LIMIT: int(0, 1_000_000).default(100),
  GRAPHQL_RATE_BURST: int(1, 1_000_000).default(200),
  METRICS: bool.default(true),
  SHUTDOWN_GRACE_MS: int(0, 60_000).default(1000),

  MAX_QUERY_DEPTH: int(1, 100).default(12),
  MAX_QUERY_ALIASES: int(0, 1000).default(30),
  MAX_QUERY_TOKENS: int(10, 100_000).default(5000),
  MAX_QUERY_LENGTH: int(100, 1_000_000).default(50_000),
  MAX_QUERY_COST: int(1, 10_000_000).default(5000),
  MAX_QUERY_COST_STAFF: int(1, 10_000_000).default(50_000),
  DEFAULT_LIST_SIZE: int(1, 10_000).default(20),
});

export type Config = z.infer<typeof schema> & {
  isProduction: boolean;
  demoData: boolean;
  graphiql: boolean;
};

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings count as unset, as shells and .env files often leave them.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = schema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const c = parsed.data;
  const isProduction = c.NODE_ENV === "production";
  if (isProduction) {
    const weak: string[] = [];
    if (c.JWT_SECRET === DEV_SECRET) weak.push("JWT_SECRET");
    if (c.WEBHOOK_TOKEN === DEV_WEBHOOK_TOKEN) weak.push("WEBHOOK_TOKEN");
    if (c.SIGNING_SECRET === DEV_SIGNING_SECRET) weak.push("SIGNING_SECRET");
    if (c.DATABASE_ROLE_PASSWORD === DEV_DB_ROLE_PASSWORD && !c.DATABASE_AUTHENTICATOR_URL)
      weak.push("DATABASE_ROLE_PASSWORD");
    if (weak.length) {
      throw new ConfigError(
        `Invalid configuration:\n${weak.map((w) => `  ${w}: the development default may not be used when NODE_ENV=production`).join("\n")}`,
      );
    }
  }
  return {
    ...c,
    isProduction,
    demoData: c.DEMO_DATA ?? !isProduction,
    graphiql: c.GRAPHIQL ?? !isProduction,
  };
}
