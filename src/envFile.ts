import { readFileSync } from "node:fs";
import path from "node:path";
import { parseEnv } from "node:util";

// The .env file and the error a bad configuration stops start-up with
// (re-exported by src/config.ts). Nothing else is imported here: the entry
// point (src/main.ts) reads the file before tracing is started.

/** A configuration (or database set-up) the service cannot start with: main prints the message alone and exits 1. */
export class ConfigError extends Error {}

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
