import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { ConfigError, type Config } from "../config.ts";
import { ROOT_DIR, databaseName } from "./database.ts";

// The development JWT secret: when JWT_SECRET is unset outside production,
// a random secret made once per data directory and kept there (mode 0600),
// so tokens survive restarts but nobody knows it from the source (a
// published default let anyone sign an admin token). The embedded database
// keeps it beside its data (.data/jwt-secret); a DATABASE_URL-configured
// development server keeps one per database under .data/jwt-secrets/ (a
// file, not a row: the secret stays out of the database's dumps and
// backups, and no migration is needed). Production requires JWT_SECRET.

/** Where the development secret of this configuration is kept. */
export function developmentSecretFile(config: Pick<Config, "EMBEDDED_PG_DIR" | "DATABASE_URL">): string {
  const dataDir = path.dirname(path.resolve(ROOT_DIR, config.EMBEDDED_PG_DIR));
  if (!config.DATABASE_URL) return path.join(dataDir, "jwt-secret");
  const u = new URL(config.DATABASE_URL);
  const key = `${u.hostname || "localhost"}_${u.port || "5432"}_${databaseName(config.DATABASE_URL)}`.replace(/[^A-Za-z0-9._-]/g, "-");
  return path.join(dataDir, "jwt-secrets", key);
}

/** Reads the development secret, making it first when there is none yet (several processes may race: the first write wins). */
export function developmentJwtSecret(config: Pick<Config, "EMBEDDED_PG_DIR" | "DATABASE_URL">): string {
  const file = developmentSecretFile(config);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(file, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600, flag: "wx" });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
  const secret = readFileSync(file, "utf8").trim();
  if (secret.length < 32) throw new ConfigError(`Invalid configuration:\n  JWT_SECRET: the development secret in ${file} is shorter than 32 characters; delete the file to make a new one`);
  return secret;
}
