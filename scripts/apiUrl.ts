import { applyEnvFile, loadConfig } from "../src/config.ts";

/** The API the scripts talk to: API_URL, else this machine's service on its PORT (the environment, then ENV_FILE or .env). */
export function apiUrl(): string {
  applyEnvFile();
  return process.env.API_URL ?? `http://localhost:${loadConfig().PORT}`;
}
