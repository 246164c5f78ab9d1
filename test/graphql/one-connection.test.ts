import { randomUUID } from "node:crypto";
import { useTestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";

// One connection per request (plugins/OneConnectionPlugin.ts): a query or a
// mutation holds at most one of the API pool's connections at a time,
// whatever its aliases. Grafast runs aliased root fields side by side; each
// used to take a connection of its own, so one request of thirty aliases
// took the whole pool while others waited or were refused SERVICE_BUSY.

// (Behind the loopback proxy each test names its source: X-Forwarded-For.)
const t = useTestService({ env: { DATABASE_POOL_SIZE: "10", AD_HOC_QUERIES: "any", TRUST_PROXY: "loopback", TRUSTED_NETWORKS: "203.0.113.0/24" } });

/** The most connections of the API's pool checked out at once while `run` runs. */
async function mostCheckedOut<T>(run: () => Promise<T>): Promise<{ result: T; most: number; checkouts: number }> {
  const pool = t.service.api!.pool;
  let out = 0;
  let most = 0;
  let checkouts = 0;
  const acquire = () => {
    checkouts++;
    most = Math.max(most, ++out);
  };
  const release = () => void out--;
  pool.on("acquire", acquire);
  pool.on("release", release);
  try {
    const result = await run();
    return { result, most, checkouts };
  } finally {
    pool.off("acquire", acquire);
    pool.off("release", release);
  }
}

const aliased = (n: number, field: (i: number) => string) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${field(i)}`).join("\n")} }`;

test("a query of 30 aliased root fields holds one connection at a time, and every alias answers", async () => {
  const query = aliased(30, (i) => `allCoffees(first: 1, offset: ${i}) { nodes { id name } }`);
  const token = await t.token("alice");
  const { result, most, checkouts } = await mostCheckedOut(() => t.gql(query, { token }));
  expect(result.body.errors).toBeUndefined();
  expect(Object.keys(result.body.data)).toHaveLength(30);
  expect(checkouts).toBeGreaterThanOrEqual(30); // each alias's statement still ran
  expect(most).toBe(1);
});

test("30 aliased requests at once beside a bystander: the bystander is answered, nobody is SERVICE_BUSY", async () => {
  const token = await t.token("alice");
  const query = aliased(30, (i) => `allOrders(first: 5, offset: ${i}) { nodes { id status items { id } } }`);
  const { result, most } = await mostCheckedOut(async () => {
    const attack = Array.from({ length: 4 }, () => t.gql(query, { token }));
    const bystander = t.gql("{ menuItems { id } }");
    return Promise.all([bystander, ...attack]);
  });
  for (const r of result) expect(r.body.errors).toBeUndefined();
  // Five requests, one connection each at most.
  expect(most).toBeLessThanOrEqual(5);
});

test("a mutation's one transaction and its payload reads still share one connection, and the mutation commits", async () => {
  const token = await t.token("admin");
  const name = `One connection ${randomUUID().slice(0, 8)}`;
  const { result, most } = await mostCheckedOut(() => t.gql(`mutation($name: String!) { createCoffee(name: $name, price: 2.5) { id name price } }`, { token, variables: { name } }));
  expect(result.body.errors).toBeUndefined();
  expect(result.body.data.createCoffee.name).toBe(name);
  expect(most).toBe(1);
  await t.db.query("delete from app_public.coffees where name = $1", [name]);
});

/**
 * Runs `fn` while a DBA holds `table` locked and `role`'s statements wait on
 * the lock for as long as it is held (their lock_timeout raised for the
 * test); `waiting()` counts the statements waiting on it, `unlock()` lets
 * them go. The lock and the limits are put back afterwards.
 */
async function whileLocked<T>(role: string, table: string, fn: (lock: { waiting: () => Promise<number>; unlock: () => Promise<void> }) => Promise<T>): Promise<T> {
  const limitsOf = (r: string) => t.service.api!.roleLimits.settingsFor(r);
  const { rows } = await t.db.query("select statement_timeout::text, lock_timeout::text from app_private.role_limits where role = $1", [role]);
  await t.db.query("update app_private.role_limits set statement_timeout = '60 s', lock_timeout = '60 s' where role = $1", [role]);
  const dba = await t.db.connect();
  try {
    await waitUntil(`the API to learn ${role}'s new limits`, () => limitsOf(role).lock_timeout === "60000");
    await dba.query(`begin; lock table ${table} in access exclusive mode`);
    const waiting = async () => Number((await t.db.query("select count(*) from pg_locks where relation = $1::regclass and not granted", [table])).rows[0].count);
    return await fn({ waiting, unlock: () => dba.query("rollback").then(() => undefined) });
  } finally {
    await dba.query("rollback").catch(() => undefined);
    dba.release();
    await t.db.query("update app_private.role_limits set statement_timeout = $2, lock_timeout = $3 where role = $1", [role, rows[0].statement_timeout, rows[0].lock_timeout]);
  }
}

test("one payer holds at most its share of the pool (DATABASE_POOL_PAYER_SHARE: a quarter, 2 of 10): ten blocked requests of an admin leave a customer's read its connection", async () => {
  // The finding: ten slow reads of one barista held the pool, and a
  // customer's order read went from 31 to 5,038 ms, with SERVICE_BUSY. Here
  // the admin's statements wait on a lock the DBA holds.
  const admin = await t.token("admin");
  const alice = await t.token("alice");
  await whileLocked("cafe_admin", "app_public.suppliers", async ({ waiting, unlock }) => {
    const { result, most } = await mostCheckedOut(async () => {
      const blocked = Array.from({ length: 10 }, () => t.gql("{ allSuppliers { nodes { id } } }", { token: admin }));
      await waitUntil("the admin's statements to wait on the lock", async () => (await waiting()) >= 2);
      const bystander = await t.gql("{ allOrders(first: 5) { nodes { id status } } }", { token: alice });
      // (Answered while the lock is still held: the admin's statements still wait.)
      const stillWaiting = await waiting();
      await unlock();
      return { bystander, stillWaiting, admin: await Promise.all(blocked) };
    });
    expect(result.bystander.body.errors).toBeUndefined();
    expect(result.bystander.body.data.allOrders.nodes.length).toBeGreaterThan(0);
    expect(result.stillWaiting).toBe(2);
    // The admin's: served once the lock went, or (queued longer than DATABASE_POOL_WAIT_MS) SERVICE_BUSY for them alone.
    for (const r of result.admin) if (r.body.errors) expect(r.body.errors.map((e) => e.extensions?.code)).toEqual(["SERVICE_BUSY"]);
    expect(result.admin.filter((r) => !r.body.errors).length).toBeGreaterThanOrEqual(2);
    // The admin's two and the bystander's one.
    expect(most).toBeLessThanOrEqual(3);
  });
}, 60_000);

test("an anonymous source inside TRUSTED_NETWORKS (a café's kiosks behind one address) holds TRUSTED_NETWORK_FACTOR times the share, short of the pool (8 of 10); one outside holds its 2", async () => {
  // The finding: every anonymous kiosk behind the café's address was one
  // payer holding 2 of 10 connections; its third read waited
  // DATABASE_POOL_WAIT_MS, then SERVICE_BUSY. Distinct reads (no shared
  // answer), each waiting on the DBA's lock of the menu.
  const alice = await t.token("alice");
  const reads = (source: string, n: number) => Array.from({ length: n }, (_, i) => t.gql(`{ allCoffees(first: 1, offset: ${i}) { nodes { id } } }`, { headers: { "x-forwarded-for": source } }));
  const heldBy = (source: string, share: number) =>
    whileLocked("cafe_anonymous", "app_public.coffees", async ({ waiting, unlock }) => {
      const blocked = reads(source, 10);
      await waitUntil(`${source}'s reads to wait on the lock`, async () => (await waiting()) >= share);
      // Others are still served: a signed-in customer's read, on a connection the source left free.
      const bystander = await t.gql("{ allOrders(first: 5) { nodes { id } } }", { token: alice });
      const held = await waiting();
      await unlock();
      const answers = await Promise.all(blocked);
      return { held, bystander: bystander.body.errors ?? "answered", answers: answers.map((r) => (r.body.errors ? r.body.errors.map((e) => e.extensions?.code).join() : "answered")) };
    });
  const kiosks = await heldBy("203.0.113.9", 8);
  expect({ held: kiosks.held, bystander: kiosks.bystander }).toEqual({ held: 8, bystander: "answered" });
  const stranger = await heldBy("198.51.100.9", 2);
  expect({ held: stranger.held, bystander: stranger.bystander }).toEqual({ held: 2, bystander: "answered" });
  // Those held answered once the lock went; the rest, queued in their payer's own queue, too or (past DATABASE_POOL_WAIT_MS) SERVICE_BUSY.
  for (const [answers, held] of [
    [kiosks.answers, 8],
    [stranger.answers, 2],
  ] as const) {
    expect(answers.filter((a) => a === "answered").length).toBeGreaterThanOrEqual(held);
    expect(answers.filter((a) => a !== "answered" && a !== "SERVICE_BUSY")).toEqual([]);
  }
}, 90_000);
