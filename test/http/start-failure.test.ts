import net from "node:net";
import pg from "pg";
import { ConfigError } from "../../src/config.ts";
import { resolveDatabaseUrls } from "../../src/db/database.ts";
import { startService } from "../../src/service.ts";
import { testDatabaseUrl } from "../support/db.ts";
import { testConfig } from "../support/service.ts";
import { sleep } from "../support/wait.ts";

// A start that fails part way (here at its last step: the port is taken)
// undoes what it had started: the pools, the health probe and the LISTEN
// connection, which would otherwise go on reconnecting in a process that
// is not serving (src/server.ts, startApi).

test("a start that fails when its port is taken leaves no connection of its own behind", async () => {
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
  const port = (holder.address() as net.AddressInfo).port;
  const config = testConfig({ PORT: String(port) });
  const urls = await resolveDatabaseUrls(config, testDatabaseUrl());
  const db = new pg.Pool({ connectionString: urls.owner, max: 1 });
  const login = decodeURIComponent(new URL(urls.authenticator).username);
  const connections = async () => Number((await db.query("select count(*) from pg_stat_activity where usename = $1 and datname = current_database()", [login])).rows[0].count);
  try {
    const before = await connections();
    await expect(startService(config)).rejects.toThrow(ConfigError);
    // Time for a reconnecting LISTEN connection to come back, were it still running.
    await sleep(2500);
    // (At most as many: another file's connections may still be closing.)
    expect(await connections()).toBeLessThanOrEqual(before);
  } finally {
    holder.close();
    await db.end();
  }
});
