import "./envDefaults.ts";
import { realpathSync } from "node:fs";
import { applyEnvFile, ConfigError } from "./envFile.ts";
import { startTracingIfWanted } from "./tracing.ts";

// `npm start` (src/service.ts is the service): the .env file first, then
// tracing when the OTEL_* variables ask for it (src/tracing.ts), and only
// then the service's modules, so the instrumentations patch the `pg` and
// `http` it uses. Nothing of the service is imported statically here.

if (process.argv[1] && realpathSync(process.argv[1]) === import.meta.filename) {
  try {
    const envFile = applyEnvFile();
    await startTracingIfWanted();
    const { main } = await import("./service.ts");
    await main(envFile);
  } catch (err) {
    // A bad configuration or database set-up is the operator's to fix: its
    // message alone, no stack trace.
    if (err instanceof ConfigError) console.error(err.message);
    else {
      const { logger } = await import("./logger.ts");
      logger.fatal({ err }, "failed to start");
    }
    process.exit(1);
  }
}
