// The error catalogue: every code a client may meet, with its HTTP status,
// the SQLSTATEs it is raised with and when it happens: GraphQL's
// (ERROR_CATALOGUE), the payment callback's (CALLBACK_ERRORS), the other
// routes' (ROUTE_ERRORS), the WebSocket close codes (WS_CLOSE_CODES), and
// the SQLSTATEs no client sees (INTERNAL_SQLSTATES, UNUSED_SQLSTATES). A data
// module (no imports): plugins and src/ both read it; docs/errors.md is
// written from it (npm run docs); test/project/error-catalogue.test.ts holds it to
// the SQL and the code.

/** One entry of the catalogue: the HTTP status when the refusal is the whole answer (null: only ever an execution or validation error, whose status is grafserv's), the SQLSTATEs it is raised with (our SQL's own `CTnnn`, or PostgreSQL's), and when it happens. */
export interface ErrorEntry {
  status: number | null;
  sqlstates?: readonly string[];
  /** The SQL's DETAIL (JSON) goes to the client as `extensions.details` (src/errors.ts). */
  details?: true;
  /** The library that makes the refusal (a module name: test/project/error-catalogue.test.ts checks it is installed); the code itself is added by plugins/ErrorCodesPlugin.ts or src/errors.ts. */
  by?: string;
  when: string;
}

/**
 * The error catalogue: every `extensions.code` a GraphQL client (HTTP or
 * WebSocket) may meet. The one list: src/errors.ts maps SQLSTATEs onto it,
 * /metrics counts each code from 0, src/http/ answers its own refusals with
 * these statuses, and `npm run docs` writes docs/errors.md from it.
 * test/project/error-catalogue.test.ts fails when the SQL raises a SQLSTATE that is
 * not here (nor in INTERNAL_SQLSTATES), or when nothing produces a code.
 */
export const ERROR_CATALOGUE = {
  UNAUTHENTICATED: {
    status: 401,
    sqlstates: ["28000"],
    when: "A bad, expired or revoked token (never a silent downgrade to anonymous): 401, before anything runs. A wrong password, or a caller without a token whom Postgres refuses (e.g. an anonymous `createOrder`): 200, in `errors`, as every error raised while the operation runs. Sign in first. A subscription ends with it when its token expires.",
  },
  FORBIDDEN: { status: null, sqlstates: ["42501"], when: "A signed-in caller whose role may not do this (e.g. a customer following the barista queue)." },
  BAD_USER_INPUT: {
    status: 400,
    sqlstates: ["22023", "22P02", "22003", "23514", "23502", "22001", "22021", "22P05"],
    when: "An argument the rules refuse: invalid value (22023), malformed text such as an id that is not a UUID (22P02), a number out of range (22003), a check (23514) or not-null (23502) constraint, a value too long (22001), a character that cannot be stored such as NUL (22021, 22P05); also a negative `first`/`last`/`offset`/`limit`, a cursor the server did not hand out, `documentId` and `query` together.",
  },
  NOT_FOUND: { status: null, sqlstates: ["P0002"], when: "No such row, or one the caller may not see (e.g. another customer's order)." },
  INVALID_TRANSITION: {
    status: null,
    sqlstates: ["CT001"],
    details: true,
    when: "An order status change that `app_public.order_status_transitions` does not allow for this role; `extensions.details` holds `from` and `to`.",
  },
  OUT_OF_STOCK: { status: null, sqlstates: ["CT002"], when: "An order needs more of an ingredient than is in stock (less what open orders hold)." },
  NOT_AVAILABLE: { status: null, sqlstates: ["CT003"], when: "An order names a coffee that is not on sale." },
  CONFLICT: { status: null, sqlstates: ["23505"], when: "A unique value taken, e.g. registering an e-mail that has an account (ignoring case)." },
  RATE_LIMITED: {
    status: 429,
    sqlstates: ["CT004"],
    details: true,
    when: "Too many requests from one source (`GRAPHQL_RATE_LIMIT`), or too many failed sign-ins or registrations (`app_private.settings`; `extensions.details` holds `retry_after_seconds` for sign-ins), or an account younger than `new_account_scarce_stock_seconds` ordering scarce stock (`extensions.details`: `retry_after_seconds` until it may, `ingredient`).",
  },
  TOO_MANY_OPEN_ORDERS: {
    status: null,
    sqlstates: ["CT011"],
    details: true,
    when: "A customer's unpaid orders or their cups are at the cap (`max_open_orders_per_customer`, `max_open_cups_per_customer`), or the order would hold more of an ingredient than one customer's share (`max_stock_share_percent`) or one source's, across its accounts (`max_stock_share_percent_per_source`); `extensions.details` holds the counts and caps.",
  },
  QUERY_TIMEOUT: {
    status: null,
    sqlstates: ["57014", "55P03"],
    when: "A statement ran past its role's statement timeout, or waited past its lock timeout for a row another request holds (app_private.role_limits).",
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    when: "The database is unreachable (its own health connection cannot connect); retry after `Retry-After` (2 s). `/readyz` answers 503 meanwhile; requests that need no SQL still answer.",
  },
  SERVICE_BUSY: {
    status: 503,
    when: 'The database answers, but every connection of the pool stayed in use for `DATABASE_POOL_WAIT_MS` (or a queue is full), or the process holds `HTTP_MAX_CONNECTIONS` and this source already holds the most (the connection is closed): retry after `Retry-After` (1 s). Not "down": `/readyz` stays ready.',
  },
  INTERNAL_SERVER_ERROR: { status: null, when: "Anything else, masked: `extensions.errorId` is also in the log line (with the request's id)." },
  GRAPHQL_PARSE_FAILED: { status: null, by: "graphql", when: "The document is not valid GraphQL syntax." },
  GRAPHQL_VALIDATION_FAILED: { status: null, by: "graphql", when: "The document does not validate against the schema (unknown field, wrong argument type, ...)." },
  // the limits, checked before any SQL (plugins/QueryCostPlugin/)
  QUERY_TOO_COMPLEX: {
    status: null,
    when: "The request's cost is above `MAX_QUERY_COST` (`MAX_QUERY_COST_STAFF` for staff), or an operation, its fragments spread out, expands to more selections than the pricing walks (the message gives the limit).",
  },
  QUERY_TOO_DEEP: { status: null, when: "The document is nested deeper than `MAX_QUERY_DEPTH`." },
  TOO_MANY_ALIASES: { status: null, when: "The document holds more than `MAX_QUERY_ALIASES` aliases." },
  TOO_MANY_TOKENS: { status: null, when: "The document holds more than `MAX_QUERY_TOKENS` tokens." },
  QUERY_TOO_LARGE: { status: null, when: "The document is longer than `MAX_QUERY_LENGTH` characters." },
  INTROSPECTION_LIMIT: { status: null, when: "An operation holds more than one `__schema` or 10 `__type` fields." },
  // refusals of the HTTP layer (src/http/, and grafserv's own below)
  PAYLOAD_TOO_LARGE: { status: 413, when: "A request body over 100 kB (64 KiB on the payment callback)." },
  METHOD_NOT_ALLOWED: { status: 405, by: "postgraphile/grafserv", when: "A method `/graphql` does not take, or a mutation over GET." },
  NOT_ACCEPTABLE: { status: 406, by: "postgraphile/grafserv", when: "An `Accept` header that allows no type `/graphql` answers with." },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, by: "postgraphile/grafserv", when: "A body that is not `application/json` (or another type grafserv reads)." },
  INVALID_JSON: { status: 400, when: "A request body that is not valid JSON (on `/graphql` and the payment callback alike)." },
  // untrusted documents (plugins/TrustedDocumentsPlugin.ts)
  TRUSTED_DOCUMENT_REQUIRED: { status: 403, when: "An ad-hoc document (or introspection) that `AD_HOC_QUERIES` refuses for this caller." },
  PERSISTED_DOCUMENT_NOT_FOUND: { status: 400, when: "A `documentId` that is not in the trusted-documents manifest." },
  PERSISTED_QUERY_NOT_FOUND: {
    status: 400,
    when: "Apollo's persisted-query protocol: an `extensions.persistedQuery.sha256Hash` this server does not know (Apollo's link then sends the text with the hash).",
  },
  // idempotent mutations (plugins/IdempotencyPlugin.ts)
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    when: "A mutation's `Idempotency-Key` (HTTP header; graphql-ws: `extensions.idempotencyKey`) that this caller already used, within `idempotency_key_retention_hours`, for a different request (document, operation name or variables). Nothing ran: use a new key for a new request.",
  },
  IDEMPOTENCY_KEY_IN_PROGRESS: {
    status: 409,
    when: "The first request with this `Idempotency-Key` still runs, or its effects are saved and its answer is not written yet (or was lost in a crash between the two), after waiting `idempotency_wait_seconds` for it. Nothing ran again: retry shortly with the same key.",
  },
  IDEMPOTENCY_KEY_LIMIT: {
    status: 429,
    sqlstates: ["CT012"],
    details: true,
    when: "A mutation with a new `Idempotency-Key` from a caller (the account; before sign-in, the source) that already stored `idempotency_keys_per_owner` keys within `idempotency_key_window_seconds`. Nothing ran; `extensions.details.retry_after_seconds` says when the window ends. Only keys of mutations that changed something are stored.",
  },
  // payments (plugins/PaymentsPlugin.ts: startPayment)
  PAYMENTS_NOT_CONFIGURED: { status: null, when: "`startPayment` on a server without `STRIPE_SECRET_KEY`: this café takes no card payments in the app (pay at the till)." },
  PAYMENT_PROVIDER_ERROR: {
    status: null,
    when: "`startPayment`: Stripe could not be reached or refused to make the payment (logged); nothing was charged. Retry: the same order gets the same payment.",
  },
  // refusals of the WebSocket layer (src/http/websocket.ts)
  TOO_MANY_SUBSCRIPTIONS: { status: null, when: "More than `WS_MAX_SUBSCRIPTIONS_PER_SOCKET` operations open at once on one socket (an `error` message)." },
  TOO_MANY_CONNECTIONS: { status: 429, when: "More than `WS_MAX_SOCKETS_PER_SOURCE` open sockets from one source (the upgrade is refused)." },
  ORIGIN_NOT_ALLOWED: { status: 403, when: "A WebSocket from a browser `Origin` outside `CORS_ORIGINS` (when set)." },
} as const satisfies Record<string, ErrorEntry>;

/** Each code's HTTP status (see ErrorEntry). */
export const ERROR_STATUS = Object.fromEntries(Object.entries(ERROR_CATALOGUE).map(([code, e]) => [code, e.status])) as {
  [K in keyof typeof ERROR_CATALOGUE]: (typeof ERROR_CATALOGUE)[K]["status"];
};
export type ErrorCode = keyof typeof ERROR_CATALOGUE;
export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

/** The SQLSTATE of a refusal raised in SQL -> its code (src/errors.ts). */
export const SQLSTATE_CODES: Record<string, ErrorCode> = Object.fromEntries<ErrorCode>(
  Object.entries(ERROR_CATALOGUE as Record<string, ErrorEntry>).flatMap(([code, e]) => (e.sqlstates ?? []).map((state) => [state, code as ErrorCode] as const)),
);

/**
 * The payment callback's refusals (POST /orders/payment-callback): the
 * provider's contract, answered as `{"error":{"code","message","details"?}}`.
 * `by`: the route itself (src/payments/generic.ts) or
 * app_private.process_payment_callback (the order's rules, 422; it may also
 * answer the route's VALIDATION_FAILED). A code the GraphQL catalogue has
 * too answers with the same status.
 */
export const CALLBACK_ERRORS = {
  RATE_LIMITED: {
    status: ERROR_CATALOGUE.RATE_LIMITED.status,
    by: "route",
    when: "The source failed authentication (401) too often and is blocked for a while; nothing is written for it while blocked (a validly signed request still passes).",
  },
  PAYLOAD_TOO_LARGE: { status: ERROR_CATALOGUE.PAYLOAD_TOO_LARGE.status, by: "route", when: "A body over 64 KiB (never read nor written)." },
  METHOD_NOT_ALLOWED: { status: ERROR_CATALOGUE.METHOD_NOT_ALLOWED.status, by: "route", when: "Any method but POST (the `Allow` header says so)." },
  UNAUTHORIZED: { status: 401, by: "route", when: "A missing or wrong bearer token (`WEBHOOK_TOKEN`)." },
  BAD_SIGNATURE: { status: 401, by: "route", when: "`X-Signature` does not match the body (`SIGNING_SECRET`, or `SIGNING_SECRET_PREVIOUS` while rotating)." },
  UNSUPPORTED_MEDIA_TYPE: { status: ERROR_CATALOGUE.UNSUPPORTED_MEDIA_TYPE.status, by: "route", when: "A body that is not `application/json`." },
  INVALID_JSON: { status: ERROR_CATALOGUE.INVALID_JSON.status, by: "route", when: "A body that is not valid JSON." },
  VALIDATION_FAILED: {
    status: 400,
    by: "route",
    when: "Bad fields (`details[{path,message}]`): also a status that looks like `paid` but is not exactly `paid`, a payment without a valid amount (or shape B without items), a malformed `currency`.",
  },
  SERVICE_UNAVAILABLE: { status: ERROR_CATALOGUE.SERVICE_UNAVAILABLE.status, by: "route", when: "The database cannot be reached; retry after `Retry-After`." },
  SERVICE_BUSY: { status: ERROR_CATALOGUE.SERVICE_BUSY.status, by: "route", when: "Every connection of the route's own pool stayed in use; nothing was recorded: retry after `Retry-After`." },
  INTERNAL_ERROR: { status: 500, by: "route", when: "An unexpected failure (logged); retry." },
  ORDER_NOT_FOUND: { status: 422, by: "database", when: "No such order (for that customer)." },
  AMOUNT_MISMATCH: { status: 422, by: "database", when: "The amount is not the order's total." },
  ITEMS_MISMATCH: { status: 422, by: "database", when: "The items do not match the order's lines." },
  ORDER_NOT_PAYABLE: { status: 422, by: "database", when: "The order is not PENDING (paid already, cancelled, or expired: a refund is owed)." },
  AMBIGUOUS_ORDER: { status: 422, by: "database", when: "Shape A without `order_id`, and the customer has several PENDING orders of that amount: send `order_id`." },
  CURRENCY_MISMATCH: { status: 422, by: "database", when: "A `currency` that is not the café's (`app_private.settings` key `currency`)." },
} as const satisfies Record<string, { status: number; by: "route" | "database"; when: string }>;
export type CallbackErrorCode = keyof typeof CALLBACK_ERRORS;

/**
 * Stripe's webhook route's refusals (POST /payments/stripe/webhook,
 * src/payments/stripe.ts), answered as `{"error":{"code","message"}}`. A
 * verified event is always answered 2xx (`processed`, `duplicate`,
 * `ignored`, or `refused` with the business code of CALLBACK_ERRORS and an
 * alert): only these make Stripe retry.
 */
export const STRIPE_WEBHOOK_ERRORS = {
  BAD_SIGNATURE: { status: 400, when: "`Stripe-Signature` missing, not matching the body under any of `STRIPE_WEBHOOK_SECRET`'s secrets, or older than 300 s (nothing is written)." },
  INVALID_JSON: { status: 400, when: "A correctly signed body that is not JSON." },
  VALIDATION_FAILED: { status: 400, when: "A correctly signed event without `id`, `type` or `data.object`." },
  PAYLOAD_TOO_LARGE: { status: ERROR_CATALOGUE.PAYLOAD_TOO_LARGE.status, when: "A body over 64 KiB (never read nor written)." },
  RATE_LIMITED: {
    status: ERROR_CATALOGUE.RATE_LIMITED.status,
    when: "An unverified delivery from a source past `CALLBACK_RATE_LIMIT` a second (the payment routes' one per-source limit; one without `Stripe-Signature` is not read). A verified delivery is never refused nor counted.",
  },
  METHOD_NOT_ALLOWED: { status: ERROR_CATALOGUE.METHOD_NOT_ALLOWED.status, when: "Any method but POST." },
  SERVICE_UNAVAILABLE: { status: ERROR_CATALOGUE.SERVICE_UNAVAILABLE.status, when: "The database cannot be reached; nothing was recorded (Stripe retries)." },
  SERVICE_BUSY: { status: ERROR_CATALOGUE.SERVICE_BUSY.status, when: "Every connection of the payment routes' pool stayed in use; nothing was recorded (Stripe retries)." },
  INTERNAL_ERROR: { status: 500, when: "An unexpected failure (logged); Stripe retries." },
} as const satisfies Record<string, { status: number; when: string }>;
export type StripeWebhookErrorCode = keyof typeof STRIPE_WEBHOOK_ERRORS;

/**
 * SQLSTATEs of ours that never reach a client under a code of their own
 * (`code`: what the client sees; null: caught inside the database).
 */
export const INTERNAL_SQLSTATES = {
  CT900: {
    code: "INTERNAL_SERVER_ERROR",
    when: "`app_private.setting()` or `text_setting()` finds a setting missing from `app_private.settings`: the limits fail closed; the log line names the setting.",
  },
  CTI01: { code: null, when: "`app_hidden.idempotency_claim()` finds the key claimed: raised and caught in the same block, to undo it and release the row's lock." },
} as const satisfies Record<string, { code: ErrorCode | null; when: string }>;

/** Our own numbers never assigned (CT001-CT004, CT011 and CT012 are; these were skipped): nothing raises them. */
export const UNUSED_SQLSTATES = ["CT005", "CT006", "CT007", "CT008", "CT009", "CT010"] as const;

/** The other routes' refusals (`{"error":{"code","message"}}`, as the payment callback answers). */
export const ROUTE_ERRORS = {
  NOT_FOUND: { status: 404, when: "A path no route serves (other than `/graphql`); `/payments/stripe/webhook` without `STRIPE_SECRET_KEY`." },
  UNAUTHORIZED: { status: 401, when: "`GET /metrics` without `Authorization: Bearer <METRICS_TOKEN>` (when `METRICS_TOKEN` is set)." },
} as const satisfies Record<string, { status: number; when: string }>;

/**
 * Close codes of a `/graphql` WebSocket: graphql-ws's `CloseCode` (`name`;
 * test/project/error-catalogue.test.ts checks the numbers against it) and the
 * WebSocket standard's 1001. `by`: src/http/websocket.ts closes with it, or
 * graphql-ws does, for a fault of the protocol.
 */
export const WS_CLOSE_CODES = {
  1001: { name: "GoingAway", by: "ours", when: "The server is shutting down: reconnect." },
  4400: { name: "BadRequest", by: "graphql-ws", when: "A message that is not one of the `graphql-transport-ws` protocol." },
  4401: { name: "Unauthorized", by: "graphql-ws", when: "A `subscribe` before the server acknowledged `connection_init`." },
  4403: { name: "Forbidden", by: "ours", when: "A bad, expired or revoked token in `connection_init`, or the socket's sign-in ended (signed out, revoked): sign in again and reconnect." },
  4406: { name: "SubprotocolNotAcceptable", by: "graphql-ws", when: "The socket did not ask for the `graphql-transport-ws` subprotocol." },
  4408: { name: "ConnectionInitialisationTimeout", by: "graphql-ws", when: "No `connection_init` within 3 s of opening." },
  4409: { name: "SubscriberAlreadyExists", by: "graphql-ws", when: "A `subscribe` with an id already running on this socket." },
  4429: {
    name: "TooManyInitialisationRequests",
    by: "ours",
    when: "The socket went on sending past its payer's request budget (every message spends from it, pings included: docs/security.md), or sent a second `connection_init` (graphql-ws's own use of the code). Its client does not retry: wait, then reconnect.",
  },
  4500: { name: "InternalServerError", by: "ours", when: "Handling a message failed unexpectedly." },
} as const satisfies Record<number, { name: string; by: "ours" | "graphql-ws"; when: string }>;

/** A GraphQL answer that is one refusal. */
export function refusalBody(code: ErrorCode, message: string) {
  return { errors: [{ message, extensions: { code } }] };
}

/** Seconds a client should wait before retrying, with a 503 (the Retry-After header). */
export const RETRY_AFTER_SECONDS = { SERVICE_BUSY: 1, SERVICE_UNAVAILABLE: 2 } as const;
