// Imported first by bench/run.ts (and the in-process helpers): Grafast reads
// its mode when it is loaded, and src/logger.ts its level, so both are set
// before anything else is imported. Benchmarks measure production mode.
process.env.GRAPHILE_ENV ??= "production";
process.env.LOG_LEVEL ??= "warn";
export {};
