import pg from "pg";
import { orderStatusTopic, orderTopic } from "../../common/topics.ts";
import { resolveDatabaseUrls, databaseName } from "../../src/db/database.ts";
import { liveCacheEvents } from "../../src/metrics.ts";
import { errorsOf, ok, request, subscribe, type RawResponse } from "../support/client.ts";
import { operationsOf } from "../support/contract.ts";
import { sandbox, testDatabaseUrl, type Sandbox } from "../support/db.ts";
import { forgetAccounts, maxId, placeOrder, PLENTIFUL_COFFEES } from "../support/fixtures.ts";
import { startPgBouncer, usersOf, type PgBouncer } from "../support/pgbouncer.ts";
import { testIfInstalled } from "../support/programs.ts";
import { listenerPid, listening, startTestService, testConfig, type TestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";

// The service behind a real PgBouncer in transaction mode (Debian's
// package, test/support/pgbouncer.ts), as docs/operations.md says to run
// it: the API's pool through PgBouncer (DATABASE_POOL_MODE=transaction, so
// its statements go unnamed), its LISTEN connection straight to PostgreSQL
// (DATABASE_LISTEN_URL), the worker on the owner's URL. PgBouncer has two
// server connections here, so a request's transaction seldom finds the one
// its client used last. Queries, a mutation, the worker's step seen by a
// subscription, a revoked sign-in and the live cache each go the whole way.

const MARK_PAID = `mutation($id: ID!) { markOrderPaid(id: $id, method: CASH) { id status } }`;
const STATUS_FEED = `subscription($orderId: ID!) { orderStatusChanged(orderId: $orderId) { status } }`;
const LOGIN = `mutation($email: String!, $password: String!) { login(email: $email, password: $password) { token } }`;
const PROBE = `{ customer { id } }`;
const KIOSK = operationsOf("kiosk");
// Skipped, saying how to install it, where pgbouncer is missing (REQUIRE_PGBOUNCER=1: failed).
const testIfPgBouncer = testIfInstalled("pgbouncer");
const run = `${process.pid}${Date.now().toString(36)}`;

let bouncer: PgBouncer;
let direct: string;
let box: Sandbox;
let firstAttemptId = 0;
let ordersAtStart: string[] = [];
const t = {} as TestService;

beforeAll(async () => {
  // The authenticator's own URL, straight to PostgreSQL (whatever TEST_PGBOUNCER says).
  const plain = { DATABASE_AUTHENTICATOR_URL: undefined, DATABASE_LISTEN_URL: undefined, DATABASE_POOL_MODE: undefined };
  direct = (await resolveDatabaseUrls(testConfig(plain), testDatabaseUrl())).authenticator;
  bouncer = await startPgBouncer(testDatabaseUrl(), usersOf(direct), { poolSize: 2 });
  Object.assign(
    t,
    await startTestService({
      worker: true,
      env: { DATABASE_AUTHENTICATOR_URL: bouncer.through(direct), DATABASE_LISTEN_URL: direct, DATABASE_POOL_MODE: "transaction", LIVE_CACHE_MAX_ENTRIES: "1000" },
    }),
  );
  box = await sandbox(t);
  ordersAtStart = (await t.db.query("select id from app_public.orders")).rows.map((r) => r.id);
  firstAttemptId = await maxId(t, "app_private.login_attempts");
}, 60_000);

afterAll(async () => {
  try {
    if (t.db) {
      await t.db.query("delete from app_public.orders where not (id = any($1::uuid[]))", [ordersAtStart]);
      await box?.restore();
      await forgetAccounts(t, `bouncer-%-${run}@example.test`, "app_public.baristas", firstAttemptId);
    }
  } finally {
    await t.stop?.();
    await bouncer?.stop();
  }
});

/** What PgBouncer has carried to the test database so far. */
const carried = () => bouncer.stats(databaseName(testDatabaseUrl()));

testIfPgBouncer("queries: the pool's transactions go through PgBouncer, more at once than it has server connections, the same statements again and again", async () => {
  const before = await carried();
  const token = await t.token("alice");
  const answers = await Promise.all(
    Array.from({ length: 24 }, (_, i) => t.gql(`query($id: ID!) { coffee(id: $id) { id name } customer { id } }`, { token, variables: { id: PLENTIFUL_COFFEES[i % PLENTIFUL_COFFEES.length] } })),
  );
  for (const [i, r] of answers.entries()) expect(ok(r).coffee.id).toBe(PLENTIFUL_COFFEES[i % PLENTIFUL_COFFEES.length]);
  const after = await carried();
  expect(after.transactions - before.transactions).toBeGreaterThanOrEqual(24);
});

testIfPgBouncer("the LISTEN connection is straight to PostgreSQL, not one of PgBouncer's server connections", async () => {
  const pid = listenerPid(t);
  expect(pid).not.toBeNull();
  const { rows } = await t.db.query("select usename, query from pg_stat_activity where pid = $1", [pid]);
  expect(rows[0]?.usename).toBe(decodeURIComponent(new URL(direct).username));
  expect(await bouncer.serverPids()).not.toContain(pid);
});

testIfPgBouncer("a mutation, the worker and a subscription: alice's order is paid at the till, the worker starts it, her StatusFeed hears both", async () => {
  const alice = await t.token("alice");
  const order = await placeOrder(t, alice, [{ coffeeId: PLENTIFUL_COFFEES[0]!, quantity: 1 }]);
  const feed = subscribe(t.ws(alice), STATUS_FEED, { orderId: order.id });
  await listening(t, [orderStatusTopic(order.id)]);
  expect(ok(await t.gql(MARK_PAID, { token: await t.token("barista"), variables: { id: order.id } })).markOrderPaid.status).toBe("PAID");
  await feed.waitFor(2, 15_000);
  expect(errorsOf(feed)).toEqual([]);
  expect(feed.results.map((r) => r.data?.orderStatusChanged.status)).toEqual(["PAID", "PREPARING"]);
  feed.dispose();
});

// DATABASE_SUBSCRIPTION_POOL_SIZE (3 by default): each event is read again on
// connections of their own, straight to PostgreSQL, where the statements stay
// prepared; through PgBouncer each read would be four round trips, planned anew.
testIfPgBouncer("a subscription's reads of each event go straight to PostgreSQL (DATABASE_LISTEN_URL), not through PgBouncer", async () => {
  const alice = await t.token("alice");
  const order = await placeOrder(t, alice, [{ coffeeId: PLENTIFUL_COFFEES[1]!, quantity: 1 }]);
  const feed = subscribe(t.ws(alice), `subscription($id: ID!) { orderUpdated(id: $id) { id status updatedAt } }`, { id: order.id });
  await listening(t, [orderTopic(order.id)]);
  const events = 20;
  const before = await carried();
  // Each event a real change (an answer equal to the last one delivered is not sent again).
  for (let i = 1; i <= events; i++) {
    await t.db.query("update app_public.orders set updated_at = clock_timestamp() where id = $1", [order.id]);
    await feed.waitFor(i, 5000);
  }
  const after = await carried();
  expect(errorsOf(feed)).toEqual([]);
  const answers = feed.results.map((r) => r.data?.orderUpdated);
  expect(answers.map(({ id, status }) => ({ id, status }))).toEqual(Array.from({ length: events }, () => ({ id: order.id, status: "PENDING" })));
  expect(new Set(answers.map((a) => a.updatedAt)).size).toBe(events);
  // Background work (the shared rate limits' sync, the table sizes) may pass meanwhile; one read per event would be 20.
  expect(after.transactions - before.transactions).toBeLessThan(events / 2);
  feed.dispose();
});

testIfPgBouncer("revocation: a DBA's demotion reaches the API over the LISTEN connection, and the sign-in's token is refused", async () => {
  const email = `bouncer-demoted-${run}@example.test`;
  await t.db.query("select app_hidden.add_staff_account($1, $2, 'admin', $3)", [email, "Bouncer demoted", "Ristretto-pass-5"]);
  const { token } = ok(await t.gql(LOGIN, { variables: { email, password: "Ristretto-pass-5" } })).login;
  expect((await t.gql(`{ paymentAlerts { id } }`, { token })).status).toBe(200);
  await t.db.query("update app_private.accounts set role = 'barista' where email = $1", [email]);
  await waitUntil("the demoted admin's token refused", async () => (await t.gql(PROBE, { token })).status === 401, 5000, 20);
});

testIfPgBouncer("the live cache: a repeated KioskMenu is a hit; a DBA's new price reaches it over the LISTEN connection and the next read shows it", async () => {
  const post = (): Promise<RawResponse> =>
    request(`${t.url}/graphql`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify({ query: KIOSK, operationName: "KioskMenu" }) });
  const priceOf = (r: RawResponse) => r.json.data.menuItems.find((c: { id: string }) => c.id === PLENTIFUL_COFFEES[0])?.price;
  // On once the service has checked the database's policies.
  await waitUntil("a cache hit", async () => {
    const hits = liveCacheEvents.hits;
    await post();
    await post();
    return liveCacheEvents.hits > hits;
  });
  const { rows } = await t.db.query("select price::float8 as price from app_public.coffees where id = $1", [PLENTIFUL_COFFEES[0]]);
  expect(priceOf(await post())).toBe(rows[0].price);
  await t.db.query("update app_public.coffees set price = price + 1 where id = $1", [PLENTIFUL_COFFEES[0]]);
  await t.service.api!.subscriber.flush();
  expect(priceOf(await post())).toBe(rows[0].price + 1);
});

testIfPgBouncer("without DATABASE_LISTEN_URL, transaction mode is refused at start-up (a LISTEN through PgBouncer would hear nothing)", () => {
  expect(() => testConfig({ DATABASE_AUTHENTICATOR_URL: bouncer.through(direct), DATABASE_LISTEN_URL: undefined, DATABASE_POOL_MODE: "transaction" })).toThrow(/DATABASE_LISTEN_URL: required/);
});

// A plain client through PgBouncer sees what the service's would have: a
// named statement prepared in one transaction is unknown in the next,
// which runs on the other server connection.
testIfPgBouncer("why the statements go unnamed: a named statement does not survive its transaction behind PgBouncer", async () => {
  const clients = [new pg.Client({ connectionString: bouncer.through(direct) }), new pg.Client({ connectionString: bouncer.through(direct) })];
  await Promise.all(clients.map((c) => c.connect()));
  try {
    const [a, b] = clients as [pg.Client, pg.Client];
    // Both server connections busy, then a's next transaction gets whichever is free first.
    await a.query({ name: "cafe_probe", text: "select 1 as one" });
    const held = b.query("select pg_sleep(0.3)");
    const failures: string[] = [];
    for (let i = 0; i < 6; i++) await a.query({ name: "cafe_probe", text: "select 1 as one" }).catch((e: Error) => failures.push(e.message));
    await held;
    expect(failures.join(" | ")).toMatch(/prepared statement "cafe_probe" does not exist/);
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
});
