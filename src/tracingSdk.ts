import { register } from "node:module";
import type { Attributes, Tracing } from "./tracing.ts";

// The OpenTelemetry SDK, loaded by src/tracing.ts only when tracing is on.
// The ES-module loader hook of @opentelemetry/instrumentation
// (import-in-the-middle) is registered first, limited to `pg` (and
// pg-pool), so the service's `import pg from "pg"` gets the patched module;
// CommonJS `require("pg")` (PostGraphile's adaptor) is patched by the same
// instrumentation's require hook. node:http is patched on its exports
// object, which every importer shares. Exporter, protocol, endpoint,
// sampler, service name and batch timing come from the standard OTEL_*
// variables (the SDK reads them); the propagator is W3C `traceparent` only
// (OTEL_PROPAGATORS is not read).

/** Paths whose requests make no span: probes and scrapes, every few seconds. */
const UNTRACED_PATHS = new Set(["/healthz", "/readyz", "/metrics"]);

export async function startTracing(): Promise<Tracing> {
  register("@opentelemetry/instrumentation/hook.mjs", import.meta.url, { data: { include: ["pg", "pg-pool"] } });
  const api = await import("@opentelemetry/api");
  const { NodeSDK } = await import("@opentelemetry/sdk-node");
  const { HttpInstrumentation } = await import("@opentelemetry/instrumentation-http");
  const { PgInstrumentation } = await import("@opentelemetry/instrumentation-pg");
  const { W3CTraceContextPropagator } = await import("@opentelemetry/core");

  // `traceparent` only, in and out: a caller's `tracestate` and `baggage`
  // are never read, so never forwarded (to Stripe, a webhook). Which
  // callers' `traceparent` is read at all: src/http/httpServer.ts.
  const w3c = new W3CTraceContextPropagator();
  const traceparentOnly: import("@opentelemetry/api").TextMapPropagator = {
    inject(context, carrier, setter) {
      const out: Record<string, string> = {};
      w3c.inject(context, out, api.defaultTextMapSetter);
      if (out.traceparent) setter.set(carrier, "traceparent", out.traceparent);
    },
    extract(context, carrier, getter) {
      const value = getter.get(carrier, "traceparent");
      const tp = Array.isArray(value) ? value[0] : value;
      return tp ? w3c.extract(context, { traceparent: tp }, api.defaultTextMapGetter) : context;
    },
    fields: () => ["traceparent"],
  };

  const sdk = new NodeSDK({
    textMapPropagator: traceparentOnly,
    serviceName: process.env.OTEL_SERVICE_NAME ? undefined : "cafe-api",
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? "/").split("?")[0]!),
        // Outgoing calls are fetch (undici), spanned by outgoingCall (src/tracing.ts).
        disableOutgoingRequestInstrumentation: true,
      }),
      // Statement text only (no parameter values); only under a span (a
      // request, a job): the pools' background statements make no traces.
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
    ],
  });
  sdk.start();

  const tracer = api.trace.getTracer("cafe-api");
  const KIND = { internal: api.SpanKind.INTERNAL, client: api.SpanKind.CLIENT, consumer: api.SpanKind.CONSUMER };
  const clean = (attributes: Attributes) => Object.fromEntries(Object.entries(attributes).filter(([, v]) => v !== undefined)) as Record<string, string | number | boolean>;
  const fail = (span: import("@opentelemetry/api").Span, err: unknown) => {
    span.recordException(err instanceof Error ? err : String(err));
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  };

  return {
    traceId: () => api.trace.getActiveSpan()?.spanContext().traceId,
    traceparent() {
      const carrier: Record<string, string> = {};
      api.propagation.inject(api.context.active(), carrier);
      return carrier.traceparent;
    },
    inSpan(name, attributes, fn, kind = "internal") {
      return tracer.startActiveSpan(name, { kind: KIND[kind], attributes: clean(attributes) }, (span) => {
        let result: unknown;
        try {
          result = fn();
        } catch (err) {
          fail(span, err);
          span.end();
          throw err;
        }
        if (result instanceof Promise) {
          return result.then(
            (value) => {
              span.end();
              return value;
            },
            (err: unknown) => {
              fail(span, err);
              span.end();
              throw err;
            },
          ) as never;
        }
        span.end();
        return result as never;
      });
    },
    withParent(traceparent, fn) {
      if (!traceparent) return api.context.with(api.ROOT_CONTEXT, fn);
      return api.context.with(api.propagation.extract(api.ROOT_CONTEXT, { traceparent }), fn);
    },
    annotate(attributes) {
      api.trace.getActiveSpan()?.setAttributes(clean(attributes));
    },
    inject(headers) {
      api.propagation.inject(api.context.active(), headers);
    },
    shutdown: () => sdk.shutdown(),
  };
}
