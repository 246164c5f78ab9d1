import "./envDefaults.ts";
import { realpathSync } from "node:fs";
import { applyEnvFile, ConfigError } from "./envFile.ts";
import { startTracingIfWanted } from "./tracing.ts";

// `npm start` (src/service.ts is the service): the .env file first, then
// tracing when the OTEL_* variables ask for it (src/tracing.ts), and only
// then the service's modules, so the instrumentations patch the `pg` and
// `http` it uses. Nothing of the service is imported statically here.

if (process.argv[1] && realpathSync(process.argv[1]) === import.meta.filename) {
  // Signals from the first line: until the service's own handlers take over
  // (src/service.ts), nothing has started, and a stop ends the process at
  // once, exit 0.
  const SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
  const early = () => process.exit(0);
  for (const signal of SIGNALS) process.on(signal, early);
  try {
    const envFile = applyEnvFile();
    await startTracingIfWanted();
    const { main } = await import("./service.ts");
    await main(envFile, () => SIGNALS.forEach((signal) => process.off(signal, early)));
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
