// OpenTelemetry traces, off unless OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; then
// every standard OTEL_* variable applies (the SDK reads them). This module
// imports nothing of OpenTelemetry: while tracing is off each helper below
// is one null check, and the SDK (src/tracingSdk.ts) is never loaded. The
// entry point (src/main.ts) starts it before it imports the service, so the
// pg and http instrumentations patch the modules the service uses.

/** What src/tracingSdk.ts provides once started. */
export interface Tracing {
  /** The current span's trace id (32 hex digits), if a span is active. */
  traceId(): string | undefined;
  /** The current span's W3C traceparent, if a span is active. */
  traceparent(): string | undefined;
  /** Runs `fn` in a new child span of the current one, ended when `fn` returns or its promise settles; an error ends it as failed. */
  inSpan<T>(name: string, attributes: Attributes, fn: () => T, kind?: "internal" | "client" | "consumer"): T;
  /** Runs `fn` in the context `traceparent` names (a job's): its spans continue that trace. */
  withParent<T>(traceparent: string | undefined, fn: () => T): T;
  /** Sets attributes on the current span. */
  annotate(attributes: Attributes): void;
  /** Writes the current context's `traceparent` (and `tracestate`) into outgoing headers. */
  inject(headers: Record<string, string>): void;
  shutdown(): Promise<void>;
}

export type Attributes = Record<string, string | number | boolean | undefined>;

let active: Tracing | null = null;

/** Whether the OTEL_* variables ask for traces (OTEL_TRACES_EXPORTER=none and OTEL_SDK_DISABLED=true say no). */
export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === "true" || env.OTEL_TRACES_EXPORTER === "none") return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_TRACES_EXPORTER);
}

/** Loads and starts the SDK when the environment asks for it (before the service's modules are imported). */
export async function startTracingIfWanted(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  if (active || !tracingWanted(env)) return false;
  const { startTracing } = await import("./tracingSdk.ts");
  active = await startTracing();
  return true;
}

export const tracingOn = (): boolean => active !== null;
export const traceId = (): string | undefined => active?.traceId();
export const traceparent = (): string | undefined => active?.traceparent();
export const annotateSpan = (attributes: Attributes): void => active?.annotate(attributes);
export const stopTracing = (): Promise<void> => active?.shutdown() ?? Promise.resolve();

/** Runs `fn` (sync or async) in a span named `name` (tracing off: just `fn`). */
export function inSpan<T>(name: string, attributes: Attributes, fn: () => T): T {
  return active ? active.inSpan(name, attributes, fn) : fn();
}

/**
 * An outgoing call (a webhook, a Stripe request) in a client span: `call`
 * gets the headers to send, which carry `traceparent` while tracing is on.
 * Attributes: e.g. `{ "http.request.method": "POST", "server.address": host }`.
 */
export function outgoingCall<T>(name: string, attributes: Attributes, call: (headers: Record<string, string>) => Promise<T>): Promise<T> {
  if (!active) return call({});
  const tracing = active;
  return tracing.inSpan(
    name,
    attributes,
    () => {
      const headers: Record<string, string> = {};
      tracing.inject(headers);
      return call(headers);
    },
    "client",
  );
}

/** Runs a job's `fn` as a child of the trace its payload carries (`traceparent`), in a consumer span. */
export function inJobSpan<T>(payloadTraceparent: unknown, name: string, attributes: Attributes, fn: () => Promise<T>): Promise<T> {
  if (!active) return fn();
  const tracing = active;
  const parent = typeof payloadTraceparent === "string" ? payloadTraceparent : undefined;
  return tracing.withParent(parent, () => tracing.inSpan(name, attributes, fn, "consumer"));
}

/** A W3C traceparent, strictly (it is inlined into SQL: only hex and dashes pass). */
export const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * SQL that hands the current trace to the transaction: a job queued in it
 * carries the traceparent in its payload (migration 000009-ops.sql). Empty
 * while tracing is off.
 */
export function traceparentSql(): string {
  const tp = active?.traceparent();
  return tp && TRACEPARENT.test(tp) ? `; select set_config('cafe.traceparent', '${tp}', true)` : "";
}
