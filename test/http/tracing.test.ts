import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { login, request } from "../support/client.ts";
import { paymentBody, sendCallback } from "../support/paymentProvider.ts";
import { freePort } from "../support/ports.ts";
import { ChildService, ROOT, useDrillDatabase, withLogsOnFailure } from "../support/service.ts";
import { say } from "../support/figures.ts";
import { startStripeServer, stripeEnv, type StripeServer } from "../support/stripe.ts";
import { waitUntil } from "../support/wait.ts";

// Traces (src/tracing.ts, src/tracingSdk.ts): the real service as `npm
// start` runs it (API and worker, a child process), OTEL_* pointing at a
// local OTLP/HTTP receiver (JSON), follows one paid order end to end. The
// client and the provider send one W3C traceparent with the order, the
// start of its payment and the payment; every span (the requests, the
// GraphQL operations, the SQL of PostGraphile's adaptor and of the service's
// own pools, the call to Stripe's API (a local server speaking it), the
// callback's steps, the jobs the payment queued, the webhook telling the
// customer) has that trace id, Stripe and the webhook receive it, and the
// access log names it. A caller's traceparent is believed only inside
// TRUSTED_NETWORKS, and its tracestate and baggage go nowhere.

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
}

const { d } = useDrillDatabase("ops_tracing");
const spans: OtlpSpan[] = [];
const webhooks: http.IncomingHttpHeaders[] = [];
let receiver: http.Server;
let hooks: http.Server;
let stripe: StripeServer;
let api: ChildService | undefined;

function listen(handler: http.RequestListener): Promise<{ server: http.Server; url: string }> {
  return freePort().then(
    (port) =>
      new Promise((resolve) => {
        const server = http.createServer(handler);
        server.listen(port, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${port}` }));
      }),
  );
}

/** The id of the trusted document (contract/trusted-documents.json) of `operation`, as the mobile app sends it. */
function documentIdOf(operation: string): string {
  const documents: Record<string, string> = JSON.parse(readFileSync(path.join(ROOT, "contract", "trusted-documents.json"), "utf8"));
  return Object.entries(documents).find(([, text]) => new RegExp(`mutation ${operation}\\b`).test(text))![0];
}

const attrs = (s: OtlpSpan) => Object.fromEntries((s.attributes ?? []).map((a) => [a.key, Object.values(a.value)[0]]));

let otlpUrl = "";
let hookUrl = "";
beforeAll(async () => {
  ({ server: receiver, url: otlpUrl } = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/v1/traces") {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...ss.spans);
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  }));
  ({ server: hooks, url: hookUrl } = await listen((req, res) => {
    webhooks.push(req.headers);
    req.resume();
    req.on("end", () => res.writeHead(204).end());
  }));
  stripe = await startStripeServer();
});

afterAll(async () => {
  await api?.stop();
  receiver?.close();
  hooks?.close();
  await stripe?.close();
});

test("one paid order is one trace: requests, operations, SQL, the Stripe call, callback steps, jobs, webhook; the access log carries its id", async () => {
  api = await ChildService.start({
    name: "traced",
    mode: "all",
    databaseUrl: d.url,
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "100",
      NOTIFY_WEBHOOK_URL: `${hookUrl}/hook`,
      NOTIFY_WEBHOOK_SECRET: "a-tracing-test-webhook-secret-0123",
      LOG_LEVEL: "info",
      // The client and the provider are on the café's own network: their traceparent is believed.
      TRUSTED_NETWORKS: "127.0.0.0/8",
      ...stripeEnv(stripe.url),
    },
  });
  await withLogsOnFailure(
    () => [api],
    async () => {
      const traceId = randomBytes(16).toString("hex");
      const traceparent = () => `00-${traceId}-${randomBytes(8).toString("hex")}-01`;
      const token = await login(api!.url, "alice");

      // The order, as the mobile app sends it: the trusted document by id.
      const documentId = documentIdOf("PlaceOrder");
      const coffeeId = "40000000-0000-4000-8000-000000000003";
      const specialInstructions = `extra hot ${randomBytes(4).toString("hex")}`;
      const placed = await request(`${api!.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}`, traceparent: traceparent() },
        body: JSON.stringify({ documentId, variables: { input: { items: [{ coffeeId, quantity: 1, specialInstructions }] } } }),
      });
      const order = placed.json?.data?.createOrder;
      expect(order?.status).toBe("PENDING");

      // The app starts its payment: the service asks Stripe for an intent.
      const started = await request(`${api!.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}`, traceparent: traceparent() },
        body: JSON.stringify({ documentId: documentIdOf("StartPayment"), variables: { orderId: order.id } }),
      });
      expect(started.json?.data?.startPayment?.paymentIntentId).toMatch(/^pi_/);

      // Paid, as the provider would, with the same trace.
      const paid = await sendCallback(api!.url, paymentBody({ id: order.id, email: "alice@example.com", total: String(order.total), lines: [] }, "A", "event"), {
        headers: { traceparent: traceparent() },
      });
      expect(paid.status).toBe(200);

      // The worker prepares the order and tells the customer: the webhook carries the trace.
      await waitUntil("the webhook", () => webhooks.some((h) => String(h.traceparent).includes(traceId)), 30_000);
      const ours = () => spans.filter((s) => s.traceId === traceId);
      const named = (pattern: RegExp) => ours().filter((s) => pattern.test(s.name));
      await waitUntil("the job spans", () => named(/^job start_preparation$/).length > 0 && named(/^POST notification webhook$/).length > 0, 30_000);

      // Both requests continue the caller's trace (server spans).
      const servers = ours().filter((s) => s.kind === 2);
      expect(servers.map((s) => attrs(s)["http.route"] ?? attrs(s)["url.path"] ?? attrs(s)["http.target"] ?? s.name)).toEqual(expect.arrayContaining(["/graphql", "/orders/payment-callback"]));

      // The GraphQL operation: name, type, document id and cost, never the variables.
      const [operation] = named(/^graphql mutation PlaceOrder$/);
      expect(attrs(operation!)).toMatchObject({ "graphql.operation.name": "PlaceOrder", "graphql.operation.type": "mutation", "cafe.graphql.document_id": documentId });
      expect(Number(attrs(operation!)["cafe.graphql.cost"])).toBeGreaterThan(0);
      const everything = JSON.stringify(ours());
      expect(everything).not.toContain(specialInstructions);

      // SQL, text without parameters, from PostGraphile's pool (the mutation)
      // and the service's own (the callback's pool, the worker's).
      const statements = ours()
        .map((s) => attrs(s)["db.statement"] ?? attrs(s)["db.query.text"])
        .filter((t): t is string => typeof t === "string");
      expect(statements.some((t) => /create_order/.test(t))).toBe(true);
      expect(statements.some((t) => /app_private\.process_payment_callback\(\$1/.test(t))).toBe(true);
      expect(statements.some((t) => /app_private\.start_preparation\(\$1\)/.test(t))).toBe(true);
      expect(everything).not.toContain("db.postgresql.values"); // parameters (enhancedDatabaseReporting) stay out

      // The callback's steps, under its request.
      for (const step of ["read_body", "verify_signature", "parse", "process"]) expect(named(new RegExp(`^payment_callback ${step}$`))).toHaveLength(1);
      const callbackServer = servers.find((s) => named(/^payment_callback process$/)[0]!.parentSpanId === s.spanId);
      expect(callbackServer).toBeDefined();

      // The jobs the payment queued are children of its transaction's span; the webhook a child of its job.
      const [prep] = named(/^job start_preparation$/);
      expect(prep!.parentSpanId).toBeDefined();
      const [hookJob] = named(/^job notification__send_webhook$/);
      const [hookCall] = named(/^POST notification webhook$/);
      expect(hookCall!.parentSpanId).toBe(hookJob!.spanId);
      expect(hookCall!.kind).toBe(3); // client
      expect(attrs(hookCall!)["http.response.status_code"]).toBe(204);
      const sent = webhooks.find((h) => String(h.traceparent).includes(traceId))!;
      expect(String(sent.traceparent).split("-")[2]).toBe(hookCall!.spanId);

      // The call to Stripe's API is a client span under StartPayment's
      // operation, and Stripe received its traceparent.
      const [startOperation] = named(/^graphql mutation StartPayment$/);
      const [stripeCall] = named(/^POST stripe \/v1\/payment_intents$/);
      expect(stripeCall?.kind).toBe(3); // client
      expect(attrs(stripeCall!)).toMatchObject({ "http.request.method": "POST", "url.template": "/v1/payment_intents", "http.response.status_code": 200 });
      const ancestors = (s: OtlpSpan): string[] => {
        const parent = ours().find((p) => p.spanId === s.parentSpanId);
        return parent ? [parent.spanId, ...ancestors(parent)] : [];
      };
      expect(ancestors(stripeCall!)).toContain(startOperation!.spanId);
      const [intentRequest] = stripe.sent("POST", "/v1/payment_intents");
      expect(intentRequest!.traceparent?.split("-")).toEqual(["00", traceId, stripeCall!.spanId, "01"]);

      // The access log's lines carry the trace id (a line is written when its answer has gone: wait for it).
      const tracedRoutes = () =>
        api!.logs
          .filter((l) => l.includes('"msg":"request"'))
          .map((l) => JSON.parse(l))
          .filter((l) => l.traceId === traceId)
          .map((l) => l.route as string);
      await waitUntil("the callback's access-log line", () => tracedRoutes().includes("/orders/payment-callback"), 10_000).catch(() => {});
      expect(tracedRoutes()).toEqual(expect.arrayContaining(["/graphql", "/orders/payment-callback"]));
    },
  );
}, 120_000);

test("a caller's traceparent decides sampling only from TRUSTED_NETWORKS; tracestate and baggage never reach Stripe, from anyone", async () => {
  // Sampling off unless a believed parent says otherwise: a client outside
  // the café's networks forced every request it sent into the traces, and
  // its tracestate and baggage went to Stripe verbatim.
  const sampled = await ChildService.start({
    name: "traced-sampling",
    mode: "api",
    databaseUrl: d.url,
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "100",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0",
      TRUST_PROXY: "loopback",
      TRUSTED_NETWORKS: "127.0.0.0/8",
      ...stripeEnv(stripe.url),
    },
  });
  try {
    await withLogsOnFailure(
      () => [sampled],
      async () => {
        const token = await login(sampled.url, "alice");
        /** An order and the start of its payment, with the caller's trace headers; the request Stripe received. */
        const payFrom = async (forwardedFor: string | null) => {
          const traceId = randomBytes(16).toString("hex");
          const headers = {
            "content-type": "application/json",
            authorization: `Bearer ${token}`,
            traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-01`,
            tracestate: "vendor=client-chosen",
            baggage: "user.id=drop-table,plan=gold",
            ...(forwardedFor ? { "x-forwarded-for": forwardedFor } : null),
          };
          const placed = await request(`${sampled.url}/graphql`, {
            method: "POST",
            headers,
            body: JSON.stringify({ documentId: documentIdOf("PlaceOrder"), variables: { input: { items: [{ coffeeId: "40000000-0000-4000-8000-000000000003", quantity: 1 }] } } }),
          });
          const orderId = placed.json?.data?.createOrder?.id;
          expect(orderId).toBeDefined();
          const before = stripe.sent("POST", "/v1/payment_intents").length;
          const started = await request(`${sampled.url}/graphql`, { method: "POST", headers, body: JSON.stringify({ documentId: documentIdOf("StartPayment"), variables: { orderId } }) });
          expect(started.json?.data?.startPayment?.paymentIntentId).toMatch(/^pi_/);
          return { traceId, atStripe: stripe.sent("POST", "/v1/payment_intents")[before]! };
        };
        const stranger = await payFrom("198.51.100.7");
        const cafe = await payFrom(null); // 127.0.0.1, inside TRUSTED_NETWORKS
        const spansOf = (traceId: string) => spans.filter((s) => s.traceId === traceId);
        // The café's sampled traceparent is believed (its spans arrive); the stranger's is not: none of its spans are kept.
        await waitUntil("the café client's spans", () => spansOf(cafe.traceId).some((s) => /^POST stripe/.test(s.name)), 15_000);
        await new Promise((r) => setTimeout(r, 500));
        say(
          `[trace headers] stranger: ${spansOf(stranger.traceId).length} spans, Stripe got traceparent ${stranger.atStripe.traceparent}, tracestate ${stranger.atStripe.tracestate}, baggage ${stranger.atStripe.baggage}; café: ${spansOf(cafe.traceId).length} spans, tracestate ${cafe.atStripe.tracestate}, baggage ${cafe.atStripe.baggage}`,
        );
        expect(spansOf(stranger.traceId)).toHaveLength(0);
        expect(String(stranger.atStripe.traceparent)).not.toContain(stranger.traceId);
        expect(cafe.atStripe.traceparent?.split("-")[1]).toBe(cafe.traceId);
        for (const sent of [stranger.atStripe, cafe.atStripe]) expect({ tracestate: sent.tracestate, baggage: sent.baggage }).toEqual({ tracestate: undefined, baggage: undefined });
      },
    );
  } finally {
    await sampled.stop();
  }
}, 120_000);
