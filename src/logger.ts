import pino from "pino";
import { PinoPretty } from "pino-pretty";
import { LOG_FORMATS, LOG_LEVELS } from "./config.ts";
import { currentRequestId } from "./requestScope.ts";

// Structured logs: JSON lines (one object a line) when stdout is not a
// terminal or LOG_FORMAT=json, readable lines (pino-pretty) on a terminal or
// with LOG_FORMAT=pretty. Secrets never reach them: the redact list covers
// the headers that carry credentials. A line logged while serving a request
// carries that request's id (X-Request-Id).
//
// Made when first imported, before the configuration is validated: a
// LOG_LEVEL pino does not know leaves it at "info" here (validation then
// stops the process naming LOG_LEVEL), and main sets the validated level.
const fromEnv = process.env.LOG_LEVEL;
const base = { service: "cafe-api" };

export type LogFormat = (typeof LOG_FORMATS)[number];
/** Whether lines are readable text or JSON: `auto` is readable on a terminal only. */
export function usesPrettyLines(format: string | undefined, isTTY: boolean | undefined): boolean {
  return format === "pretty" || (format !== "json" && Boolean(isTTY));
}

/** Readable lines on stdout: one a line, the time, level and message first, then the fields. */
function prettyStream() {
  return PinoPretty({ destination: 1, sync: true, singleLine: true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname,service" });
}
let pretty: ReturnType<typeof prettyStream> | null = usesPrettyLines(process.env.LOG_FORMAT, process.stdout.isTTY) ? prettyStream() : null;
/** Whether this process writes readable lines (the start-up banner is then text too). */
export const prettyLines = () => pretty !== null;
/** Sets the format once the configuration is validated (a LOG_FORMAT from .env is only known then). */
export function setLogFormat(format: LogFormat): void {
  const wanted = usesPrettyLines(format, process.stdout.isTTY);
  if (wanted && !pretty) pretty = prettyStream();
  else if (!wanted) pretty = null;
}

// stdout, one synchronous write per line (pino's default), or the pretty stream.
const json = pino.destination({ dest: 1, sync: true });
const destination = { write: (line: string) => (pretty ?? json).write(line) };
export const logger = pino(
  {
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
  },
  destination,
);

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
export const accessLogger = pino({ level: "info", base }, { write: (line: string) => (pretty ?? accessDestination).write(line) });

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
