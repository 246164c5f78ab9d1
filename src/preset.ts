import { readFileSync } from "node:fs";
import path from "node:path";
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";
import { createWithPgClient, makePgService } from "postgraphile/adaptors/pg";
import { normalizeConnectionParams } from "postgraphile/grafserv";
import { PostGraphileConnectionFilterPreset } from "postgraphile-plugin-connection-filter";
import type { Pool } from "pg";
import { ContractShapesPlugin } from "../plugins/ContractShapesPlugin.ts";
import { ComputedRowFilterPlugin } from "../plugins/ComputedRowFilterPlugin.ts";
import { OrdersFieldPlugin, ORDERS_PAGE_SIZE } from "../plugins/OrdersFieldPlugin.ts";
import { makePageSizePlugin } from "../plugins/PageSizePlugin.ts";
import { makeOperationCachePlugin } from "../plugins/OperationCachePlugin.ts";
import { MutationsPlugin } from "../plugins/MutationsPlugin.ts";
import { idempotencyState, makeIdempotencyPlugin } from "../plugins/IdempotencyPlugin.ts";
import { OrderItemsOrderPlugin } from "../plugins/OrderItemsOrderPlugin.ts";
import { InventoryPlugin } from "../plugins/InventoryPlugin.ts";
import { AccountsPlugin } from "../plugins/AccountsPlugin.ts";
import { SubscriptionsPlugin } from "../plugins/SubscriptionsPlugin.ts";
import { AUDIT_LOG_MAX_PAGE, ReportsPlugin, SALES_REPORT_PAGE_SIZE } from "../plugins/ReportsPlugin.ts";
import { ComplexityDirectivePlugin } from "../plugins/ComplexityDirectivePlugin.ts";
import { ComplexityDirectiveDefinitionPlugin } from "../plugins/ComplexityDirectiveDefinitionPlugin.ts";
import { pgSettingsFor, signToken, type LimitsOf } from "./auth.ts";
import { RequestStorePlugin } from "../plugins/RequestStorePlugin.ts";
import { requestStoreOf, STORE_HEADER } from "./requestStore.ts";
import { FALLBACK_ROLE_LIMIT } from "./db/roleLimits.ts";
import { isStaff, type CafeServices, type Viewer } from "../common/services.ts";
import { MEMORY_BOUNDS, poolShares, type Config } from "./config.ts";
import { maskError } from "./errors.ts";
import { makeQueryCostPlugin } from "../plugins/QueryCostPlugin/index.ts";
import { ErrorCodesPlugin } from "../plugins/ErrorCodesPlugin.ts";
import { makeTrustedDocumentsPlugin } from "../plugins/TrustedDocumentsPlugin.ts";
import { graphqlErrors, observeOperation, operationLabel } from "./metrics.ts";
import { inSpan, traceparent, tracingOn } from "./tracing.ts";
import { logger } from "./logger.ts";
import { refusedFor, requestScope } from "./requestScope.ts";
import { OperationNamePlugin } from "../plugins/OperationNamePlugin.ts";
import { poolWaitTimeout } from "./db/dbHealth.ts";
import { makeOneConnectionPlugin } from "../plugins/OneConnectionPlugin.ts";
import { MAX_BODY_BYTES } from "./http/bodyLimit.ts";
import { makePasswordCheckGate, passwordCheckConcurrency } from "./passwordChecks.ts";
import type { Source } from "./http/clientAddress.ts";
import type { LiveCache } from "./http/liveCache.ts";
import { VIEWER, type RequestWithViewer } from "./http/viewer.ts";
import { makeStripeClient, stripePaymentIntents } from "./payments/stripeClient.ts";
import { PaymentsPlugin } from "../plugins/PaymentsPlugin.ts";

export interface PresetOptions {
  /** Delivers LISTEN/NOTIFY events to subscriptions. */
  pgSubscriber?: GraphileConfig.PgServiceConfiguration["pgSubscriber"];
  /** The caller's address for a request. */
  clientAddress(req: import("node:http").IncomingMessage): string;
  /** The caller as a source (src/http/clientAddress.ts); without it, the address, never trusted. */
  sourceOf?(req: import("node:http").IncomingMessage): Source;
  config: Config;
  pool: Pool;
  /** Where the subscriptions read each event again (src/db/pool.ts openSubscriptionPool); without it, the API's pool. */
  subscriptionPool?: Pool | null;
  /** Waits until this process knows of the sign-ins revoked so far. */
  revocationsCaughtUp?: () => Promise<void>;
  /** A request role's time limits (src/db/roleLimits.ts); without it (scripts that only build the schema), the strict fallback. */
  limitsOf?: LimitsOf;
  /** Estimated rows per table (src/db/tableSizes.ts), for pricing what a totalCount scans. */
  tableRows?: { rows(table: string): number; generation(): number };
  /**
   * Development watch mode: the schema is rebuilt when the database's DDL
   * changes (a DBA's `graphile-migrate watch` on migrations/current.sql), no
   * restart. PostGraphile installs its event trigger through this
   * superuser's pool. Production never watches (src/server.ts).
   */
  watch?: { superuserPool: Pool };
  /** Verifies a WebSocket connection's token; throws when it is bad. */
  viewerFromConnectionParams(params: Record<string, unknown> | undefined): Viewer | null;
  /** The live cache of public reads (src/http/liveCache.ts; answered by src/http/fastPath.ts): emptied when a mutation commits here. */
  liveCache?: LiveCache;
  /** Charges the request this runs for the milliseconds of CPU a document not seen before took (GRAPHQL_DOCUMENT_WORK_US; src/http/rateLimiter.ts). */
  chargeWork?: (ms: number) => void;
  /** Charges the request this runs for the bytes of a new plan of its operation (GRAPHQL_PLAN_BYTES_PER_REQUEST; plugins/OperationCachePlugin.ts). */
  chargePlanBytes?: (bytes: number) => void;
}

/** contract/trusted-documents.json (`npm run documents`): id -> document text. */
const TRUSTED_DOCUMENTS: Record<string, string> = JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../contract/trusted-documents.json"), "utf8"));

/** What the plugins need from this server (common/services.ts): they import nothing from src/. */
function servicesFor(config: Config): CafeServices {
  const stripe = makeStripeClient(config);
  const passwordChecks = makePasswordCheckGate({
    concurrency: passwordCheckConcurrency(config.PASSWORD_CHECK_CONCURRENCY, config.DATABASE_POOL_SIZE),
    queue: config.PASSWORD_CHECK_QUEUE,
    perCaller: config.PASSWORD_CHECK_PLACES_PER_CALLER,
    trustedFactor: config.TRUSTED_NETWORK_FACTOR,
  });
  return {
    passwordCheckTurn: (caller, limits) => passwordChecks.acquire(caller, limits),
    signSession: (session) => signToken(config.JWT_SECRET, session, config.JWT_EXPIRES_IN_SECONDS),
    logger,
    // Trusted documents by name, every ad-hoc one as `adhoc` (bounded labels).
    observeOperation: (name, type, seconds) => observeOperation(operationLabel(name, requestScope.getStore()), type, seconds),
    requestScope: () => requestScope.getStore(),
    refused: refusedFor,
    paymentIntents: stripe ? stripePaymentIntents(stripe) : null,
    logError: (fields, message) => logger.error(fields, message),
    ...(tracingOn()
      ? {
          operationSpan: <T>(attributes: Record<string, string | number | undefined>, fn: () => T) =>
            inSpan(`graphql ${attributes["graphql.operation.type"]} ${attributes["graphql.operation.name"] ?? ""}`.trim(), attributes, fn),
        }
      : null),
  };
}

/** The whole GraphQL service, in one object: what is exposed and how. */
export function makePreset({
  config,
  pool,
  subscriptionPool,
  pgSubscriber,
  viewerFromConnectionParams,
  clientAddress,
  sourceOf = (req) => ({ address: clientAddress(req), key: clientAddress(req), trusted: false }),
  revocationsCaughtUp,
  limitsOf = () => FALLBACK_ROLE_LIMIT,
  tableRows,
  watch,
  liveCache,
  chargeWork,
  chargePlanBytes,
}: PresetOptions): GraphileConfig.Preset {
  const onCommit = liveCache ? () => liveCache.caughtUp() : undefined;
  // plugins/SubscriptionsPlugin.ts takes it from a subscription's context.
  const subscriptionWithPgClient = subscriptionPool ? createWithPgClient({ pool: subscriptionPool }) : undefined;
  return {
    extends: [PostGraphileAmberPreset, PostGraphileConnectionFilterPreset],
    plugins: [
      makeOneConnectionPlugin({ ...poolShares(config), waitMs: config.DATABASE_POOL_WAIT_MS, busy: poolWaitTimeout }),
      ContractShapesPlugin,
      ComputedRowFilterPlugin,
      OrdersFieldPlugin,
      MutationsPlugin,
      makeIdempotencyPlugin({ maskError }),
      OrderItemsOrderPlugin,
      InventoryPlugin,
      AccountsPlugin,
      PaymentsPlugin,
      SubscriptionsPlugin,
      ReportsPlugin,
      ComplexityDirectiveDefinitionPlugin,
      ComplexityDirectivePlugin,
      ErrorCodesPlugin,
      OperationNamePlugin,
      RequestStorePlugin,
      makePageSizePlugin(
        { default: config.DEFAULT_LIST_SIZE, max: config.MAX_LIST_SIZE },
        {
          "Query.orders": ORDERS_PAGE_SIZE,
          "Query.salesReport": SALES_REPORT_PAGE_SIZE,
          "Query.auditLog": { default: config.DEFAULT_LIST_SIZE, max: AUDIT_LOG_MAX_PAGE },
        },
      ),
      makeOperationCachePlugin({
        plans: { maxEntries: MEMORY_BOUNDS.adHocOperationPlans, maxBytes: MEMORY_BOUNDS.operationPlanBytes },
        trustedPlans: { maxEntries: Object.keys(TRUSTED_DOCUMENTS).length, maxBytes: MEMORY_BOUNDS.trustedOperationPlanBytes },
        queries: Object.keys(TRUSTED_DOCUMENTS).length + MEMORY_BOUNDS.adHocOperationPlans,
        onPlanBytes: chargePlanBytes,
        onWarning: (message) => logger.warn(message),
      }),
      makeQueryCostPlugin({
        maxDepth: config.MAX_QUERY_DEPTH,
        maxAliases: config.MAX_QUERY_ALIASES,
        maxTokens: config.MAX_QUERY_TOKENS,
        maxLength: config.MAX_QUERY_LENGTH,
        maxCost: config.MAX_QUERY_COST,
        maxCostStaff: config.MAX_QUERY_COST_STAFF,
        defaultListSize: config.DEFAULT_LIST_SIZE,
        costCache: MEMORY_BOUNDS.queryCosts,
        ...(tableRows ? { tableRows } : null),
      }),
      makeTrustedDocumentsPlugin({
        documents: TRUSTED_DOCUMENTS,
        adHocQueries: config.adHocQueries,
        adHocDocuments: { maxEntries: config.GRAPHQL_DOCUMENT_CACHE_SIZE, maxBytes: config.GRAPHQL_DOCUMENT_CACHE_BYTES },
        maxLength: config.MAX_QUERY_LENGTH,
        // The viewer as grafast.context below finds it: verified by server.ts
        // (HTTP), or from the socket's connection_init payload, checked again
        // (a token may have expired since the socket opened).
        callerIsStaff(event) {
          if (event.request) return isStaff((event.request.requestContext.node?.req as RequestWithViewer | undefined)?.[VIEWER]);
          try {
            return isStaff(viewerFromConnectionParams(normalizeConnectionParams(event.graphqlWsContext?.connectionParams) as Record<string, unknown> | undefined));
          } catch {
            return false;
          }
        },
        // On a socket, maskError (which counts errors) sees the refusal too.
        onRefusal(code, transport) {
          if (transport !== "http") return;
          graphqlErrors.inc({ code });
          refusedFor(code);
        },
        // The request's log scope learns the trusted document's id (metrics, traces).
        onTrusted(id) {
          const scope = requestScope.getStore();
          if (scope) scope.documentId = id;
        },
        onWork: chargeWork,
      }),
    ],
    disablePlugins: ["NodePlugin", "PgTableNodePlugin", "PgNodeIdAttributesPlugin"],
    pgServices: [makePgService({ pool, schemas: ["app_public"], pubsub: true, ...(pgSubscriber ? { pgSubscriber } : null), ...(watch ? { superuserPool: watch.superuserPool } : null) })],
    schema: {
      cafe: servicesFor(config),
      // Writes are the explicit mutations; generated connections are read-only.
      defaultBehavior: "-node -insert -update -delete",
      pgForbidSetofFunctionsToReturnNull: true,
      connectionFilterAllowNullInput: false,
      connectionFilterAllowEmptyObjectInput: false,
    },
    grafserv: {
      graphqlPath: "/graphql",
      graphiqlPath: "/graphiql",
      graphiql: config.graphiql,
      graphiqlOnGraphQLGET: false,
      graphqlOverGET: true,
      websockets: true,
      maskError,
      maxRequestLength: MAX_BODY_BYTES,
      // Parsed texts are kept by plugins/TrustedDocumentsPlugin.ts instead, bounded in bytes too.
      parseAndValidateCacheSize: 0,
      watch: Boolean(watch),
    },
    grafast: {
      explain: false,
      context(requestContext) {
        const req = requestContext.node?.req as RequestWithViewer | undefined;
        const viewer = req ? (req[VIEWER] ?? null) : viewerFromConnectionParams(requestContext.ws?.normalizedConnectionParams as Record<string, unknown> | undefined);
        const httpReq = req ?? requestContext.ws?.request;
        const source = httpReq ? sourceOf(httpReq) : null;
        // The SQL counters (sign-ins, registrations) count by the same source;
        // inside TRUSTED_NETWORKS they allow TRUSTED_NETWORK_FACTOR times more
        // (app_private.source_limit_factor() reads this setting).
        const pgSettings = pgSettingsFor(viewer, limitsOf);
        if (source?.trusted) pgSettings["cafe.source_limit_factor"] = String(config.TRUSTED_NETWORK_FACTOR);
        // A signed-in caller's source (the key, as app_private.source_key writes
        // it): orders record it and their stock share per source counts by it
        // (migration 000010-fair-stock.sql). Not before sign-in: anonymous
        // subscribers' identical settings share their re-reads (common/sharedReads.ts).
        if (viewer && source) pgSettings["cafe.source"] = source.key;
        // Jobs a mutation queues carry the request's trace (migration 000009-ops.sql).
        const trace = traceparent();
        if (trace) pgSettings["cafe.traceparent"] = trace;
        // The store the request is for (X-Store-Id; graphql-ws: connectionParams.storeId): what an argument naming no store means.
        // (grafserv lower-cases the connection params' names.)
        const params = requestContext.ws?.normalizedConnectionParams as Record<string, unknown> | undefined;
        const store = requestStoreOf(req ? req.headers[STORE_HEADER] : (params?.storeid ?? params?.[STORE_HEADER]));
        if (store !== undefined) pgSettings["cafe.store_id"] = store;
        return {
          viewer,
          clientIp: source?.key ?? "unknown",
          clientTrusted: source?.trusted ?? false,
          revocationsCaughtUp,
          onCommit,
          pgSettings,
          idempotency: idempotencyState(req),
          ...(subscriptionWithPgClient && requestContext.ws ? { subscriptionWithPgClient } : null),
        };
      },
    },
  };
}
