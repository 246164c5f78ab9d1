import pino from "pino";

// Structured JSON logs. Secrets never reach them: the redact list covers the
// headers that carry credentials.
export const logger = pino({
  level: process.env.LOG_LEVEL || "info",
  base: { service: "cafe-api" },
  redact: {
    paths: ["req.headers.authorization", "req.headers['x-signature']", "password", "*.password", "token", "*.token"],
    censor: "[redacted]",
  },
});

export type Logger = typeof logger;
