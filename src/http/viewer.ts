import type { IncomingMessage } from "node:http";
import type { Viewer } from "../../common/services.ts";

/** Where a request's verified viewer is kept (set by the GraphQL route before grafserv sees the request; read by the preset's context). */
export const VIEWER = Symbol("viewer");

/** A request that may carry its verified viewer. */
export type RequestWithViewer = IncomingMessage & { [VIEWER]?: Viewer | null };
