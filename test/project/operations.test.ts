import { readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { INSTALL_DDL_AUDIT, resolveDatabaseUrls } from "../../src/db/database.ts";
import { testDatabaseUrl } from "../support/db.ts";
import { freePort } from "../support/ports.ts";
import { ChildService, expectNoStackTrace, killAllChildren, ROOT, runMain, testConfig, withLogsOnFailure } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";

// What an operator following docs/operations.md meets: start-up errors, the
// production log, the production SQL list.

afterAll(() => killAllChildren());

describe("start-up", () => {
  test("a taken port is one line naming PORT (no stack trace), exit 1", async () => {
    const taken = net.createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => taken.listen(port, "127.0.0.1", resolve));
    try {
      const r = runMain(["--api"], { NODE_ENV: "test", DATABASE_URL: testDatabaseUrl(), PORT: String(port), HOST: "127.0.0.1", DEMO_DATA: "false", LOG_LEVEL: "warn" });
      expect(r.status).toBe(1);
      expectNoStackTrace(r);
      const lines = r.stderr.trim().split("\n");
      expect(lines).toEqual([`PORT ${port} on 127.0.0.1 is in use (another instance is running?): stop it or set PORT to a free port.`]);
    } finally {
      taken.close();
    }
  }, 90_000);

  test("a production log is JSON from its first line to its last", async () => {
    const urls = await resolveDatabaseUrls(testConfig(), testDatabaseUrl());
    const api = await ChildService.start({
      name: "production",
      mode: "all",
      databaseUrl: urls.owner,
      env: {
        NODE_ENV: "production",
        // The owner's and the authenticator's URLs: no superuser, so no role's password is set.
        DATABASE_AUTHENTICATOR_URL: urls.authenticator,
        JWT_SECRET: "a-production-secret-of-32-characters-or-more",
        WEBHOOK_TOKEN: "production-webhook-token",
        SIGNING_SECRET: "production-signing-secret",
        LOG_LEVEL: "info",
        DEMO_DATA: "false",
        GRAPHILE_ENV: "",
      },
      readyTimeoutMs: 60_000,
    });
    await withLogsOnFailure(
      () => [api],
      async () => {
        await fetch(`${api.url}/healthz`);
        // Started (the worker too) once it says "ready": its signal handlers are in place.
        await waitUntil("the ready line", () => api.logs.some((l) => l.includes('"msg":"ready"')), 30_000);
        await api.stop();
        expect(api.exitInfo?.code).toBe(0);
        const notJson = api.logs.filter((l) => {
          try {
            return typeof JSON.parse(l) !== "object";
          } catch {
            return true;
          }
        });
        expect(notJson).toEqual([]);
        expect(api.logs.map((l) => JSON.parse(l).msg)).toEqual(expect.arrayContaining(["ready", "request", "stopped"]));
      },
    );
  }, 120_000);
});

describe("docs/operations.md", () => {
  const doc = readFileSync(path.join(ROOT, "docs", "operations.md"), "utf8");

  test("the production SQL list (no superuser) ends with the DDL audit a superuser installs", () => {
    const list = /No superuser:[\s\S]*?```sql\n([\s\S]*?)```/.exec(doc)?.[1] ?? "";
    expect(list).toContain("create role cafe_authenticator");
    expect(list).toContain(`${INSTALL_DDL_AUDIT};`);
  });
});
