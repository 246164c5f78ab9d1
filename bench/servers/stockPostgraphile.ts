// The peer: stock PostGraphile V5 (Amber preset, no plugins, no schema
// options) on the same database, served by the same grafserv node:http
// adaptor as the service. Requests run as the role the bearer token names
// (verified with the same JWT secret), exactly like the service's pgSettings,
// so RLS does the same work. Started as a child process by bench/run.ts.
import http from "node:http";
import pg from "pg";
import { postgraphile } from "postgraphile";
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";
import { makePgService } from "postgraphile/adaptors/pg";
import { grafserv } from "postgraphile/grafserv/node";
import { pgSettingsFor, runChild, stopOn } from "./child.ts";

const url = process.env.BENCH_AUTHENTICATOR_URL!;
const port = Number(process.env.PORT ?? 0);
const poolSize = Number(process.env.DATABASE_POOL_SIZE ?? 10);

async function main() {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  const preset: GraphileConfig.Preset = {
    extends: [PostGraphileAmberPreset],
    pgServices: [makePgService({ pool, schemas: ["app_public"] })],
    grafserv: { graphqlPath: "/graphql", graphiql: false, websockets: false },
    grafast: {
      explain: false,
      context(requestContext) {
        const req = requestContext.node?.req;
        return { pgSettings: pgSettingsFor(req?.headers.authorization) };
      },
    },
  };
  const pgl = postgraphile(preset);
  const serv = pgl.createServ(grafserv);
  await pgl.getSchemaResult();
  const handler = serv.createHandler();
  const server = http.createServer((req, res) =>
    handler(req, res, () => {
      res.statusCode = 404;
      res.end();
    }),
  );
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  process.send?.({ ready: true, port: address.port });
  stopOn(async () => {
    server.close();
    server.closeAllConnections();
    await pgl.release();
    await pool.end();
  });
}

runChild(main);
