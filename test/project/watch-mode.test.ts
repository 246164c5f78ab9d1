import { cpSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Logger, watch as migrateWatch } from "graphile-migrate";
import { gql } from "../support/client.ts";
import { freshDatabase, type DrillDb } from "../support/db.ts";
import { ChildService, ROOT, withLogsOnFailure } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";
import { tempDir } from "../support/tempDirs.ts";

// Watch mode in development: a DBA's migrations/current.sql, applied as
// `graphile-migrate watch` applies it, reaches the running development
// server's schema without a restart. The test service (NODE_ENV=test) and
// production never watch.

jest.setTimeout(90_000);

let d: DrillDb;
let dev: ChildService | null = null;

beforeAll(async () => {
  d = await freshDatabase("cafe_schemacheck_watch", { demoData: true });
});
afterAll(async () => {
  await dev?.stop();
  await d?.close();
});

async function applyCurrentSql(sql: string): Promise<void> {
  const dir = tempDir("watch");
  cpSync(path.join(ROOT, "migrations"), path.join(dir, "migrations"), { recursive: true });
  writeFileSync(path.join(dir, "migrations/current.sql"), sql);
  await migrateWatch({ connectionString: d.urls.owner, migrationsFolder: path.join(dir, "migrations"), logger: new Logger(() => () => {}) }, true);
}

test("a column added through current.sql is queryable on the running development server, same process", async () => {
  dev = await ChildService.start({ name: "dev", mode: "api", databaseUrl: d.url, env: { NODE_ENV: "development", DEMO_DATA: "false" }, readyTimeoutMs: 60_000 });
  await withLogsOnFailure(
    () => [dev],
    async () => {
      const pid = dev!.innerPid();
      const before = await gql(dev!.url, "{ coffees { id origin } }");
      expect(before.body.errors?.[0]?.message).toMatch(/Cannot query field "origin"/);
      await applyCurrentSql("alter table app_public.coffees add column if not exists origin text;\n");
      const after = await waitUntil(
        "the new field is served",
        async () => {
          const r = await gql(dev!.url, "{ coffees { id origin } }");
          return r.body.errors ? null : r;
        },
        20_000,
        200,
      );
      expect(after!.status).toBe(200);
      expect(Array.isArray(after!.body.data.coffees)).toBe(true);
      expect(dev!.alive).toBe(true);
      expect(dev!.innerPid()).toBe(pid);
    },
  );
});
