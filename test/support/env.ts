// Set before each test file loads anything.
// Quiet logs in tests unless asked for (TEST_LOG_LEVEL=debug npm test).
process.env.LOG_LEVEL = process.env.TEST_LOG_LEVEL ?? "silent";
// Grafast in production mode, as the service runs it (src/envDefaults.ts);
// Jest's NODE_ENV=test would otherwise put it in development mode, which
// prints a client's bad cursor to the console with a stack trace (drill 10:
// 16,000 lines). GRAPHILE_ENV=development npm test opts in to its checks.
process.env.GRAPHILE_ENV ??= "production";
