// Prints the served GraphQL schema (sorted, with applied directives) to
// stdout. `npm run schema:snapshot` writes it to data/schema.graphql, the
// reviewable snapshot that test/clients/contract.test.ts compares with the server.
import { makeSchema } from "postgraphile";
import { printSchemaWithDirectives } from "@graphql-tools/utils";
import { lexicographicSortSchema } from "postgraphile/graphql";
import "../src/envDefaults.ts";
import pg from "pg";
import { applyEnvFile, ConfigError, loadConfig } from "../src/config.ts";
import { makePreset } from "../src/preset.ts";
import { resolveDatabaseUrls, prepareDatabase, startEmbeddedPostgres } from "../src/db/database.ts";

async function main() {
  applyEnvFile();
  const config = loadConfig();
  const embedded = config.DATABASE_URL ? null : await startEmbeddedPostgres(config);
  const baseUrl = config.DATABASE_URL ?? embedded!.url.replace(/\/postgres$/, "/cafe");
  const urls = await resolveDatabaseUrls(config, baseUrl);
  if (process.argv.includes("--prepare")) await prepareDatabase(urls, config, { demoData: false });
  const pool = new pg.Pool({ connectionString: urls.authenticator });
  const { schema } = await makeSchema(makePreset({ config, pool, viewerFromConnectionParams: () => null, clientAddress: () => "script" }));
  process.stdout.write(printSchemaWithDirectives(lexicographicSortSchema(schema)) + "\n");
  await pool.end();
  await embedded?.stop();
}
main().catch((e) => {
  console.error(e instanceof ConfigError ? e.message : e);
  process.exit(1);
});
