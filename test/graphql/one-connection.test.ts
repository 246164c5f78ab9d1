import { randomUUID } from "node:crypto";
import { useTestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";

// One connection per request (plugins/OneConnectionPlugin.ts): a query or a
// mutation holds at most one of the API pool's connections at a time,
// whatever its aliases. Grafast runs aliased root fields side by side; each
// used to take a connection of its own, so one request of thirty aliases
// took the whole pool while others waited or were refused SERVICE_BUSY.

const t = useTestService({ env: { DATABASE_POOL_SIZE: "10", AD_HOC_QUERIES: "any" } });

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

test("one payer holds at most its share of the pool (DATABASE_POOL_PAYER_SHARE: a quarter, 2 of 10): ten blocked requests of an admin leave a customer's read its connection", async () => {
  // The finding: ten slow reads of one barista held the pool, and a
  // customer's order read went from 31 to 5,038 ms, with SERVICE_BUSY. Here
  // the admin's statements wait on a lock the DBA holds, each for as long as
  // the lock is held (their lock_timeout raised for the test).
  const limitsOf = (role: string) => t.service.api!.roleLimits.settingsFor(role);
  const { rows } = await t.db.query("select statement_timeout::text, lock_timeout::text from app_private.role_limits where role = 'cafe_admin'");
  await t.db.query("update app_private.role_limits set statement_timeout = '60 s', lock_timeout = '60 s' where role = 'cafe_admin'");
  const admin = await t.token("admin");
  const alice = await t.token("alice");
  const dba = await t.db.connect();
  try {
    await waitUntil("the API to learn the admin's new limits", () => limitsOf("cafe_admin").lock_timeout === "60000");
    await dba.query("begin; lock table app_public.suppliers in access exclusive mode");
    const { result, most } = await mostCheckedOut(async () => {
      const blocked = Array.from({ length: 10 }, () => t.gql("{ allSuppliers { nodes { id } } }", { token: admin }));
      const waiting = async () => Number((await t.db.query("select count(*) from pg_locks where relation = 'app_public.suppliers'::regclass and not granted")).rows[0].count);
      await waitUntil("the admin's statements to wait on the lock", async () => (await waiting()) >= 2);
      const bystander = await t.gql("{ allOrders(first: 5) { nodes { id status } } }", { token: alice });
      // (Answered while the lock is still held: the admin's statements still wait.)
      const stillWaiting = await waiting();
      await dba.query("rollback");
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
  } finally {
    await dba.query("rollback").catch(() => undefined);
    dba.release();
    await t.db.query("update app_private.role_limits set statement_timeout = $1, lock_timeout = $2 where role = 'cafe_admin'", [rows[0].statement_timeout, rows[0].lock_timeout]);
  }
}, 60_000);
