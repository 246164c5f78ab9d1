import pg from "pg";
import { cachedViewerFrom } from "./src/auth.ts";
import { applyEnvFile, loadConfig, MEMORY_BOUNDS } from "./src/config.ts";
import { makePreset } from "./src/preset.ts";

// The service's preset as a static default export, for the graphile tools
// that look for graphile.config.* in the current folder (e.g.
// `node scripts/node.mjs node_modules/.bin/postgraphile` serves the schema
// on its own; graphile's `graphile config print` shows the preset). The
// configuration is the environment's (and .env's), as for `npm start`; the
// pool connects to DATABASE_URL only when first used. The service itself
// (src/server.ts) builds the same preset with its own pool, subscriber,
// proxy rules and revocation list.
applyEnvFile();
const config = loadConfig();
// Tokens are verified as the service does; the revoked sign-ins are not followed here.
const viewerFrom = cachedViewerFrom([config.JWT_SECRET], () => false, MEMORY_BOUNDS.verifiedTokens);

export default makePreset({
  config,
  pool: new pg.Pool({ connectionString: config.DATABASE_URL }),
  clientAddress: (req) => req.socket.remoteAddress ?? "",
  viewerFromConnectionParams: (params) => viewerFrom(params?.authorization as string | undefined),
});
