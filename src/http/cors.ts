import cors from "cors";
import type { Config } from "../config.ts";

// CORS_ORIGINS: the browser origins allowed on /graphql ("*": any; empty:
// CORS off). WebSockets have no CORS (a page may open one to anywhere), so
// the same list decides which Origins may open one.

export function makeCors(config: Config) {
  const origins = config.CORS_ORIGINS.split(",")
    .map((o) => o.trim())
    .filter(Boolean);
  const any = origins.includes("*");
  return {
    handler: cors({
      origin: any ? true : origins,
      methods: ["GET", "POST", "OPTIONS"],
      allowedHeaders: ["content-type", "authorization", "accept", "idempotency-key", "x-store-id"],
      // A browser page may read whether an answer was a replay.
      exposedHeaders: ["idempotent-replayed"],
      maxAge: 600,
    }),
    /** Whether a WebSocket upgrade with this Origin is accepted (none: not a browser, accepted). */
    originAllowed: (origin: string | undefined) => origin === undefined || origins.length === 0 || any || origins.includes(origin),
  };
}
