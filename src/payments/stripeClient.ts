import Stripe from "stripe";
import type { Config } from "../config.ts";
import { annotateSpan, outgoingCall } from "../tracing.ts";
import type { PaymentIntentService, PaymentIntentView } from "../../common/services.ts";

// The official Stripe client, made once from the configuration: the API's
// startPayment (through common/services.ts) and the worker's jobs
// (payment_intent__cancel, refund__pay) use it. STRIPE_API_URL points it
// elsewhere (the tests' local server that speaks Stripe's API). Its requests
// go through fetch, each in a client span that sends `traceparent` while
// tracing is on (src/tracing.ts).

export type StripeClient = Stripe;

/** Stripe's client for STRIPE_SECRET_KEY at STRIPE_API_URL; null without a key. */
export function makeStripeClient(config: Pick<Config, "STRIPE_SECRET_KEY" | "STRIPE_API_URL">): Stripe | null {
  if (!config.STRIPE_SECRET_KEY) return null;
  const url = new URL(config.STRIPE_API_URL);
  const protocol = url.protocol === "http:" ? "http" : "https";
  return new Stripe(config.STRIPE_SECRET_KEY, {
    host: url.hostname,
    port: url.port || (protocol === "http" ? 80 : 443),
    protocol,
    // A network error or a 5xx is retried once at once, with the same
    // Idempotency-Key; the jobs' own retries come later, with back-off.
    maxNetworkRetries: 1,
    timeout: 20_000,
    telemetry: false,
    httpClient: Stripe.createFetchHttpClient(tracedFetch),
  });
}

/** A path's ids as `{id}` (`/v1/payment_intents/pi_3Mt…/cancel` is `/v1/payment_intents/{id}/cancel`): span names stay few. */
function stripePathTemplate(path: string): string {
  return path
    .split("?")[0]!
    .split("/")
    .map((segment) => (/\d/.test(segment) && !/^v\d+$/.test(segment) ? "{id}" : segment))
    .join("/");
}

/** fetch in a client span (one per attempt: a retry is a span of its own), until Stripe's answer's headers arrive. */
const tracedFetch: typeof fetch = (input, init) => {
  const url = new URL(input instanceof Request ? input.url : input);
  const method = (init?.method ?? "GET").toUpperCase();
  const template = stripePathTemplate(url.pathname);
  const attributes = { "http.request.method": method, "server.address": url.hostname, "server.port": Number(url.port) || undefined, "url.template": template };
  return outgoingCall(`${method} stripe ${template}`, attributes, async (traceHeaders) => {
    let headers = init?.headers;
    if (Object.keys(traceHeaders).length) {
      const withTrace = new Headers(headers);
      for (const [name, value] of Object.entries(traceHeaders)) withTrace.set(name, value);
      headers = withTrace;
    }
    const res = await fetch(input, { ...init, headers });
    annotateSpan({ "http.response.status_code": res.status });
    return res;
  });
};

/** Whether Stripe refused the request for good (a 4xx other than 409 and 429): sending it again cannot help. */
export function isPermanentStripeError(err: unknown): boolean {
  const status = (err as { statusCode?: number } | null)?.statusCode;
  return err instanceof Stripe.errors.StripeError && status !== undefined && status >= 400 && status < 500 && status !== 409 && status !== 429;
}

/** A Stripe error's text for a log line or last_error. */
export function stripeErrorText(err: unknown): string {
  if (err instanceof Stripe.errors.StripeError) return `${err.statusCode ?? "network"} ${err.type}${err.code ? ` ${err.code}` : ""}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

function view(intent: Stripe.PaymentIntent): PaymentIntentView {
  if (!intent.client_secret) throw new Error(`Stripe answered PaymentIntent ${intent.id} without a client secret`);
  return { id: intent.id, clientSecret: intent.client_secret, amount: intent.amount, currency: intent.currency.toUpperCase(), status: intent.status };
}

/** startPayment's intents (common/services.ts), through Stripe's API. */
export function stripePaymentIntents(stripe: Stripe): PaymentIntentService {
  return {
    async create({ orderId, amount, currency }, idempotencyKey) {
      const intent = await stripe.paymentIntents.create(
        { amount, currency: currency.toLowerCase(), metadata: { order_id: orderId }, automatic_payment_methods: { enabled: true } },
        { idempotencyKey },
      );
      return view(intent);
    },
    async retrieve(id) {
      return view(await stripe.paymentIntents.retrieve(id));
    },
  };
}
