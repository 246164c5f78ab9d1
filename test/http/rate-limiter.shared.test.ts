import http from "node:http";
import pg from "pg";
import { resolveDatabaseUrls } from "../../src/db/database.ts";
import { shareRateUsage } from "../../src/db/rateUsage.ts";
import { RateLimiter } from "../../src/http/rateLimiter.ts";
import { request } from "../support/client.ts";
import { testDatabaseUrl } from "../support/db.ts";
import { ChildService, testConfig, withLogsOnFailure } from "../support/service.ts";
import { sleep, waitUntil } from "../support/wait.ts";
import { say } from "../support/figures.ts";

// The request limit shared by the API processes through PostgreSQL
// (src/http/rateLimiter.ts, src/db/rateUsage.ts,
// app_hidden.share_rate_usage): each process answers from memory and sends
// its counts and demand in the background. First sync by sync, with two
// limiters in this process whose syncs the test calls (exact, whatever the
// machine's speed); then over two real API processes (`src/main.ts --api`),
// syncing every 100 ms. A client gets one budget between them however it
// spreads its requests, and a client of one process alone is not starved.
// With TEST_PGBOUNCER=1 the syncs go through PgBouncer like the requests.

const BURST = 100;
const run = `${process.pid}${Date.now().toString(36)}`;

describe("sync by sync (two limiters in this process)", () => {
  let pool: pg.Pool;
  let dba: pg.Pool;
  let a: RateLimiter;
  let b: RateLimiter;
  let serial = 0;

  beforeAll(async () => {
    const config = testConfig();
    pool = new pg.Pool({ connectionString: (await resolveDatabaseUrls(config, testDatabaseUrl())).authenticator, max: 2 });
    dba = new pg.Pool({ connectionString: testDatabaseUrl(), max: 1 });
    // A window longer than the test: no key's window ends under it.
    a = new RateLimiter(BURST, 600_000, { share: shareRateUsage(pool, `rounds-a-${run}`) });
    b = new RateLimiter(BURST, 600_000, { share: shareRateUsage(pool, `rounds-b-${run}`) });
    // Both heartbeats in, and no other process live (a service of an earlier file counts as live for 2 s after it stops).
    await waitUntil(
      "a and b the only live processes",
      async () => {
        for (const l of [a, b]) await l.syncNow();
        const { rows } = await dba.query("select count(*)::int as n from app_private.rate_usage where key = '' and window_end_ms > extract(epoch from clock_timestamp()) * 1000");
        return rows[0].n === 2;
      },
      10_000,
      100,
    );
  });

  afterAll(async () => {
    a?.stop();
    b?.stop();
    await pool?.end();
    await dba?.end();
  });

  /** What the processes' ceilings for `key` add up to, as the database holds them. */
  const ceilings = async (key: string) => Number((await dba.query("select coalesce(sum(ceiling), 0) as n from app_private.rate_usage where key = $1", [key])).rows[0].n);

  /**
   * Rounds of requests to `key`: in each, `perRound` requests spread over the
   * limiters by `split` (a's share), then a sync of each. Returns the
   * requests granted by each, checking after every sync that the ceilings
   * add up to the budget at most.
   */
  async function rounds(key: string, count: number, perRound: number, split: number) {
    const granted = { a: 0, b: 0 };
    for (let r = 0; r < count; r++) {
      for (let i = 0; i < perRound; i++) {
        const toA = (i + 0.5) / perRound < split;
        if ((toA ? a : b).take(key)) granted[toA ? "a" : "b"]++;
      }
      await a.syncNow();
      expect(await ceilings(key)).toBeLessThanOrEqual(BURST);
      await b.syncNow();
      expect(await ceilings(key)).toBeLessThanOrEqual(BURST);
    }
    return granted;
  }

  test.each([
    ["half to each (a load balancer's round robin)", 0.5],
    ["nine in ten to one", 0.9],
    ["all to one", 1],
  ])("%s: 2.5 times the budget over three syncs gets 90-100%% of it", async (_label, split) => {
    const granted = await rounds(`source:rounds-${run}-${++serial}`, 3, Math.ceil((2.5 * BURST) / 3), split);
    say(`[shared limits] ${_label}: ${JSON.stringify(granted)}`);
    expect(granted.a + granted.b).toBeGreaterThanOrEqual(0.9 * BURST);
    expect(granted.a + granted.b).toBeLessThanOrEqual(BURST);
  });

  test("room a process holds and no longer uses goes to the one that needs it at their next syncs", async () => {
    const key = `source:rounds-${run}-${++serial}`;
    const first = await rounds(key, 2, 30, 1); // all to a: it holds most of the budget
    const then = await rounds(key, 4, 30, 0); // the client moves to b
    say(`[shared limits] moved from a to b: ${JSON.stringify({ first, then })}`);
    expect(first.a + then.b).toBeGreaterThanOrEqual(0.9 * BURST);
    expect(first.a + then.b).toBeLessThanOrEqual(BURST);
  });
});

describe("two API processes", () => {
  const WINDOW_MS = 5000; // BURST / GRAPHQL_RATE_LIMIT
  // Each burst comes from an address of its own (X-Forwarded-For through the loopback proxy): 127.0.0.1's budget is shared with every other service of the run on this database.
  const ENV = { GRAPHQL_RATE_LIMIT: "20", GRAPHQL_RATE_BURST: String(BURST), RATE_LIMIT_SYNC_MS: "100", TRUST_PROXY: "loopback" };
  let burstSource = 0;
  let a: ChildService;
  let b: ChildService;

  beforeAll(async () => {
    [a, b] = await Promise.all([ChildService.startApi(ENV), ChildService.startApi(ENV)]);
    // Warm (the first answers of a process are slow), then let the window end.
    for (const api of [a, b]) for (let i = 0; i < 3; i++) await request(`${api.url}/graphql`, { body: JSON.stringify({ query: "{ __typename }" }), headers: { "content-type": "application/json" } });
    await sleep(WINDOW_MS + 500);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  /**
   * `count` anonymous requests (one source: 127.0.0.1), 8 at a time, each to
   * the next of `targets` in turn, spread over one second (ten syncs: a
   * machine's speed does not decide how many syncs a burst spans), within
   * one window: the answers by status.
   */
  async function spend(targets: ChildService[], count: number): Promise<Record<number, number>> {
    const statuses: Record<number, number> = {};
    // Kept-alive connections of its own: the servers close idle ones after 5 s.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    const started = Date.now();
    let n = 0;
    const source = `198.18.${Math.floor(Math.random() * 250)}.${++burstSource}`;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (n < count) {
          const due = started + (n * 1000) / count;
          const target = targets[n++ % targets.length]!;
          if (due > Date.now()) await sleep(due - Date.now());
          const r = await request(`${target.url}/graphql`, { body: JSON.stringify({ query: "{ __typename }" }), headers: { "content-type": "application/json", "x-forwarded-for": source }, agent });
          statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        }
      }),
    );
    const ms = Date.now() - started;
    agent.destroy();
    if (ms >= WINDOW_MS) throw new Error(`the requests took longer than a window (${ms} ms)`);
    say(`[shared limits] ${count} requests to ${targets.length} process(es) in ${ms} ms: ${JSON.stringify(statuses)}`);
    return statuses;
  }

  test("a source spreading its requests over two processes gets one budget between them, within 10%", async () => {
    await withLogsOnFailure(
      () => [a, b],
      async () => {
        // Within one window, 2.5 times the budget, half to each process.
        const statuses = await spend([a, b], 2.5 * BURST);
        expect(statuses[200]).toBeGreaterThanOrEqual(BURST * 0.9);
        expect(statuses[200]).toBeLessThanOrEqual(BURST * 1.1);
      },
    );
  });

  test("a source calling one process alone still gets its whole budget", async () => {
    await withLogsOnFailure(
      () => [a, b],
      async () => {
        // The windows of the previous test are over.
        await sleep(WINDOW_MS + 500);
        const statuses = await spend([a], 2 * BURST);
        expect(statuses[200]).toBeGreaterThanOrEqual(BURST * 0.9);
        expect(statuses[200]).toBeLessThanOrEqual(BURST * 1.1);
      },
    );
  });
});
