import { PostGraphileAmberPreset } from "postgraphile/presets/amber";
import { makePgService } from "postgraphile/adaptors/pg";
import { PostGraphileConnectionFilterPreset } from "postgraphile-plugin-connection-filter";
import type { Pool } from "pg";
import { ContractShapesPlugin } from "../plugins/contractShapes.ts";
import { OrdersFieldPlugin } from "../plugins/ordersField.ts";
import { MutationsPlugin } from "../plugins/mutations.ts";
import { OrderItemsOrderPlugin } from "../plugins/orderItemsOrder.ts";
import { AccountsPlugin } from "../plugins/accounts.ts";
import { SubscriptionsPlugin } from "../plugins/subscriptions.ts";
import { ComplexityDirectivePlugin, ComplexityDirectiveDefinitionPlugin } from "../plugins/complexity.ts";
import { pgSettingsFor, type Viewer } from "./auth.ts";
import type { Config } from "./config.ts";
import { maskError } from "./errors.ts";
import { makeQueryCostPlugin } from "../plugins/queryCost.ts";
import { ErrorCodesPlugin } from "../plugins/errorCodes.ts";

declare global {
  namespace Grafast {
    interface Context {
      viewer: Viewer | null;
      config: Config;
      /** The caller's address (X-Forwarded-For only where TRUST_PROXY says so). */
      clientIp: string;
    }
  }
}

/** Where a request's verified viewer is kept (set before grafserv sees it). */
export const VIEWER = Symbol("viewer");

export interface PresetOptions {
  /** Delivers LISTEN/NOTIFY events to subscriptions. */
  pgSubscriber?: GraphileConfig.PgServiceConfiguration["pgSubscriber"];
  /** The caller's address for a request. */
  clientAddress(req: import("node:http").IncomingMessage): string;
  config: Config;
  pool: Pool;
  /** Verifies a WebSocket connection's token; throws when it is bad. */
  viewerFromConnectionParams(params: Record<string, unknown> | undefined): Viewer | null;
}

/** The whole GraphQL service, in one object: what is exposed and how. */
export function makePreset({ config, pool, pgSubscriber, viewerFromConnectionParams, clientAddress }: PresetOptions): GraphileConfig.Preset {
  return {
    extends: [PostGraphileAmberPreset, PostGraphileConnectionFilterPreset],
    plugins: [
      ContractShapesPlugin,
      OrdersFieldPlugin,
      MutationsPlugin,
      OrderItemsOrderPlugin,
      AccountsPlugin,
      SubscriptionsPlugin,
      ComplexityDirectiveDefinitionPlugin,
      ComplexityDirectivePlugin,
      ErrorCodesPlugin,
      makeQueryCostPlugin({
        maxDepth: config.MAX_QUERY_DEPTH,
        maxAliases: config.MAX_QUERY_ALIASES,
        maxTokens: config.MAX_QUERY_TOKENS,
        maxLength: config.MAX_QUERY_LENGTH,
        maxCost: config.MAX_QUERY_COST,
        maxCostStaff: config.MAX_QUERY_COST_STAFF,
        defaultListSize: config.DEFAULT_LIST_SIZE,
      }),
    ],
    disablePlugins: ["NodePlugin", "PgTableNodePlugin", "PgNodeIdAttributesPlugin"],
    pgServices: [makePgService({ pool, schemas: ["app_public"], pubsub: true, ...(pgSubscriber ? { pgSubscriber } : null) })],
    schema: {
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
      maxRequestLength: 100_000, // = MAX_GRAPHQL_BODY in server.ts
    },
    grafast: {
      explain: false,
      context(requestContext) {
        const req = requestContext.node?.req as (import("node:http").IncomingMessage & { [VIEWER]?: Viewer | null }) | undefined;
        const viewer = req ? (req[VIEWER] ?? null) : viewerFromConnectionParams(requestContext.ws?.normalizedConnectionParams as Record<string, unknown> | undefined);
        const clientIp = req ? clientAddress(req) : (requestContext.ws?.request ? clientAddress(requestContext.ws.request) : "unknown");
        return { viewer, config, clientIp, pgSettings: pgSettingsFor(viewer) };
      },
    },
  };
}
