import pino from "pino";
import { LOG_LEVELS } from "./config.ts";
import { currentRequestId } from "./http/requestScope.ts";

// Structured JSON logs. Secrets never reach them: the redact list covers the
// headers that carry credentials. A line logged while serving a request
// carries that request's id (X-Request-Id).
//
// Made when first imported, before the configuration is validated: a
// LOG_LEVEL pino does not know leaves it at "info" here (validation then
// stops the process naming LOG_LEVEL), and main sets the validated level.
const fromEnv = process.env.LOG_LEVEL;
const base = { service: "cafe-api" };
// stdout, one synchronous write per line (pino's default).
const destination = pino.destination({ dest: 1, sync: true });
export const logger = pino({
  level: (LOG_LEVELS as readonly string[]).includes(fromEnv ?? "") ? fromEnv : "info",
  base,
  mixin() {
    const requestId = currentRequestId();
    return requestId ? { requestId } : {};
  },
  redact: {
    paths: ["req.headers.authorization", "req.headers['x-signature']", "password", "*.password", "token", "*.token"],
    censor: "[redacted]",
  },
}, destination);

/**
 * The access log's lines (src/http/accessLog.ts), to stdout too: fields it
 * sets itself (the request id among them) and nothing to redact, so neither
 * the mixin nor the redaction runs for them. Written in batches, at most
 * ACCESS_LOG_BATCH_BYTES or ACCESS_LOG_FLUSH_MS late (a write per line was
 * the largest cost the access log added to a small request), and what is
 * left when the process exits. Write to it only when `logger` logs `info`
 * (its level is the one that counts).
 */
export const ACCESS_LOG_BATCH_BYTES = 4096;
export const ACCESS_LOG_FLUSH_MS = 100;
const accessDestination = pino.destination({ dest: 1, sync: true, minLength: ACCESS_LOG_BATCH_BYTES, periodicFlush: ACCESS_LOG_FLUSH_MS });
process.once("exit", () => accessDestination.flushSync());
export const accessLogger = pino({ level: "info", base }, accessDestination);

export type Logger = typeof logger;

/**
 * A @graphile/logger log function factory (graphile-worker's and
 * graphile-migrate's `new Logger(...)`) writing to `logger`, each line
 * tagged with the component.
 */
export function graphileLogFactory(component: string) {
  return (scope: object) => (level: string, message: string, meta?: object) => {
    const log = level === "error" ? logger.error : level === "warning" ? logger.warn : level === "info" ? logger.info : logger.debug;
    log.call(logger, { component, ...scope, ...meta }, message);
  };
}
