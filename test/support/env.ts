// Quiet logs in tests unless asked for (TEST_LOG_LEVEL=debug npm test).
process.env.LOG_LEVEL = process.env.TEST_LOG_LEVEL ?? "silent";
