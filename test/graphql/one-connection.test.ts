import { randomUUID } from "node:crypto";
import { useTestService } from "../support/service.ts";

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
