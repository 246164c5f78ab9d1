import { parse } from "postgraphile/graphql";
import type { PgClient, PgClientQuery, WithPgClient } from "postgraphile/@dataplan/pg";
import pg from "pg";
import { answerAfter, oneTransaction, oneTransactionPerMutation, singleMutationField } from "../../common/mutationTransaction.ts";
import { testDatabaseUrl } from "../support/db.ts";
import { operationsOf } from "../support/contract.ts";
import { useTestService } from "../support/service.ts";
import { removeStockedCoffee, stockedCoffee } from "../support/fixtures.ts";
import { waitUntil, within } from "../support/wait.ts";

// A mutation with one root field runs in a transaction held by
// common/mutationTransaction.ts, committed before its payload is read: the
// mutation's locks are never held while a client's selection is read.

function fakeDatabase(failOn?: string) {
  const statements: string[] = [];
  const real: WithPgClient = async (_settings, callback) => {
    const client: PgClient = {
      async query(q: PgClientQuery) {
        statements.push(q.text);
        if (failOn && q.text.includes(failOn)) throw new Error(`failed: ${q.text}`);
        return { rows: [] } as never;
      },
      withTransaction: (fn) => fn(client as never),
    };
    return callback(client);
  };
  return { real, statements };
}
const settings = { role: "cafe_customer", "jwt.claims.user_id": "alice" };

test("which operations: exactly one root field, a mutation", () => {
  expect(singleMutationField(parse("mutation A { createOrder(coffeeId: 1, quantity: 1) { id } }"), "A")).toBe("createOrder");
  expect(singleMutationField(parse("mutation { o: createOrder(coffeeId: 1, quantity: 1) { id } }"), undefined)).toBe("o");
  expect(singleMutationField(parse("mutation { a: cancelOrder(id: 1) b: cancelOrder(id: 2) }"), undefined)).toBeNull();
  expect(singleMutationField(parse("query { __typename }"), undefined)).toBeNull();
  expect(singleMutationField(parse("mutation A { x: cancelOrder(id: 1) } query B { __typename }"), "B")).toBeNull();
});

test("the mutation in one transaction, committed before the payload is read; the payload's reads after the commit", async () => {
  // Before, the payload was read inside the mutation's transaction:
  // a heavy selection held the order's stock locks for as long as it ran.
  const db = fakeDatabase();
  const tx = oneTransaction(db.real);
  await tx.withPgClient(settings, (c) => c.query({ text: "select create_order()" }));
  await Promise.all([tx.withPgClient(settings, (c) => c.query({ text: "select items" })), tx.withPgClient(settings, (c) => c.query({ text: "select coffees" }))]);
  expect(await tx.finish()).toBeUndefined();
  expect(db.statements).toEqual([
    "begin; select set_config('role', 'cafe_customer', true), set_config('jwt.claims.user_id', 'alice', true)",
    "select create_order()",
    "commit",
    // The first payload read on the same connection, in a transaction of its own; the others take their own.
    "begin; select set_config('role', 'cafe_customer', true), set_config('jwt.claims.user_id', 'alice', true)",
    "select items",
    "commit",
    "select coffees",
  ]);
});

test("what an idempotent mutation adds: its claim before the mutation and its mark just before the COMMIT, all in the held transaction, before the payload", async () => {
  // plugins/IdempotencyPlugin.ts: the key's claim and its `committed` mark share
  // the effects' transaction; the payload (and the answer) come after the commit.
  const db = fakeDatabase();
  const tx = oneTransaction(db.real);
  expect(await tx.inHeld(settings, (c) => c.query({ text: "select claim()" }))).toBeDefined();
  tx.beforeCommit(async (c, mutationResult) => void (await c.query({ text: `select mark(${JSON.stringify(mutationResult)})` })));
  await tx.withPgClient(settings, (c) => c.query({ text: "select create_order()" }));
  expect(tx.ended()).toBe(false);
  await tx.withPgClient(settings, (c) => c.query({ text: "select items" }));
  expect(tx.ended()).toBe(true);
  expect(await tx.inHeld(settings, (c) => c.query({ text: "select too_late()" }))).toBeUndefined();
  expect(await tx.finish()).toBeUndefined();
  expect(db.statements).toEqual([
    expect.stringMatching(/^begin/),
    "select claim()",
    "select create_order()",
    'select mark({"rows":[]})',
    "commit",
    expect.stringMatching(/^begin/),
    "select items",
    "commit",
  ]);
});

test("a failed mutation statement rolls the mutation back, and an answer still carrying the mutation's data becomes the error", async () => {
  const db = fakeDatabase("select create_order");
  const tx = oneTransaction(db.real);
  await expect(tx.withPgClient(settings, (c) => c.query({ text: "select create_order()" }))).rejects.toThrow("failed");
  const undone = await tx.finish();
  expect(db.statements.at(-1)).toBe("rollback");
  expect((undone as Error).message).toMatch(/failed: select create_order/);
  const answer = answerAfter({ data: { createOrder: { id: "o1", items: null } }, errors: [{ message: "x" }] }, undone, "createOrder");
  expect(answer.data).toBeNull();
  expect(answer.errors.map((e: { message: string }) => e.message)).toEqual(["x", "failed: select create_order()"]);
  // The mutation itself failed: its own error is the answer.
  const failed = { data: null, errors: [{ message: "Not enough milk" }] };
  expect(answerAfter(failed, new Error("y"), "createOrder")).toBe(failed);
});

test("a payload read that fails after the commit leaves the mutation saved: an error on that field only", async () => {
  const db = fakeDatabase("select items");
  const tx = oneTransaction(db.real);
  await tx.withPgClient(settings, (c) => c.query({ text: "select create_order()" }));
  await expect(tx.withPgClient(settings, (c) => c.query({ text: "select items" }))).rejects.toThrow("failed");
  expect(await tx.finish()).toBeUndefined();
  expect(db.statements).toEqual([expect.stringMatching(/^begin/), "select create_order()", "commit", expect.stringMatching(/^begin/), "select items", "rollback"]);
});

test("what must follow the commit runs after it and before the answer (a logout waits there until its revocations are known)", async () => {
  const db = fakeDatabase();
  const ctx: { withPgClient: WithPgClient; afterCommit?: Array<() => unknown> } = { withPgClient: db.real };
  const order: string[] = [];
  const result = await oneTransactionPerMutation.execute(
    async () => {
      await ctx.withPgClient(settings, (c) => c.query({ text: "select app_hidden.logout()" }));
      ctx.afterCommit!.push(() => order.push(`after: ${db.statements.at(-1)}`));
      return { data: { logout: true } };
    },
    { args: { document: parse('mutation { logout(token: "x") }'), contextValue: ctx } },
  );
  order.push("answered");
  expect(result).toEqual({ data: { logout: true } });
  expect(order).toEqual(["after: commit", "answered"]);
});

test("a COMMIT that PostgreSQL answers with ROLLBACK (a failed statement whose error was caught) is a failure, not a success", async () => {
  const pool = new pg.Pool({ connectionString: testDatabaseUrl(), max: 1 });
  // The adaptor's shape: query() without `command`, node-postgres' client as rawClient.
  const real: WithPgClient = async (_settings, callback) => {
    const raw = await pool.connect();
    try {
      const client = { rawClient: raw, query: async (q: PgClientQuery) => ({ rows: (await raw.query(q.text, q.values as unknown[])).rows }) };
      return await callback(client as never);
    } finally {
      raw.release();
    }
  };
  try {
    const tx = oneTransaction(real);
    await tx.withPgClient(null, async (c) => {
      await c.query({ text: "select 1/0" }).catch(() => {});
    });
    expect(String(await tx.finish())).toMatch(/rolled back/);
    const fine = oneTransaction(real);
    await fine.withPgClient(null, (c) => c.query({ text: "select 1" }));
    expect(await fine.finish()).toBeUndefined();
  } finally {
    await pool.end();
  }
});

test("the first payload read runs on the mutation's connection: its BEGIN and settings go with the COMMIT, one round trip; it sees the committed row", async () => {
  const pool = new pg.Pool({ connectionString: testDatabaseUrl(), max: 2 });
  const sent: Array<{ pid: number; text: string }> = [];
  // The adaptor's shape, recording what each connection is sent.
  const real: WithPgClient = async (_settings, callback) => {
    const raw = await pool.connect();
    const pid = (raw as unknown as { processID: number }).processID;
    const rawClient = { query: (text: string) => (sent.push({ pid, text }), raw.query(text)) };
    const query = async (q: PgClientQuery) => (sent.push({ pid, text: q.text }), { rows: (await raw.query(q.text, q.values as unknown[])).rows });
    try {
      return await callback({ rawClient, query } as never);
    } finally {
      raw.release();
    }
  };
  const probe = `held_probe_${process.pid}`;
  await pool.query(`create table ${probe} (n int)`);
  try {
    const tx = oneTransaction(real);
    const pgSettings = { "cafe.probe": "yes" };
    await tx.withPgClient(pgSettings, (c) => c.query({ text: `insert into ${probe} values (1)` }));
    const { rows } = await tx.withPgClient(pgSettings, (c) => c.query({ text: `select count(*)::int as n, current_setting('cafe.probe', true) as setting from ${probe}` }));
    expect(await tx.finish()).toBeUndefined();
    expect(rows).toEqual([{ n: 1, setting: "yes" }]); // (a local setting: the read ran in the transaction that set it)
    expect(sent.map((s) => s.text)).toEqual([
      "begin; select set_config('cafe.probe', 'yes', true)",
      `insert into ${probe} values (1)`,
      "commit; begin; select set_config('cafe.probe', 'yes', true)",
      expect.stringMatching(/^select count/),
      "commit",
    ]);
    expect(new Set(sent.map((s) => s.pid)).size).toBe(1);
  } finally {
    await pool.query(`drop table ${probe}`);
    await pool.end();
  }
});

describe("against the service", () => {
  const t = useTestService({ deleteNewOrders: true });

  test("PlaceOrder: the order and its lines in the answer, saved; an order that fails leaves nothing behind", async () => {
    const { rows } = await t.db.query("select id, name from app_public.coffees where available order by name limit 2");
    const token = await t.token("alice");
    const place = (items: Array<{ coffeeId: string; quantity: number }>) => t.gql(operationsOf("mobile"), { operationName: "PlaceOrder", token, variables: { input: { items } } });
    const ok = await place(rows.map((r) => ({ coffeeId: r.id, quantity: 1 })));
    expect(ok.body.errors).toBeUndefined();
    const order = ok.body.data.createOrder;
    expect(order.items.map((i: { coffee: { name: string } }) => i.coffee.name)).toEqual(rows.map((r) => r.name));
    const saved = await t.db.query("select count(*)::int as n from app_public.order_items where order_id = $1", [order.id]);
    expect(saved.rows[0].n).toBe(2);
    const before = await t.db.query("select count(*)::int as n from app_public.orders");
    const bad = await place([
      { coffeeId: rows[0].id, quantity: 1 },
      { coffeeId: "00000000-0000-4000-8000-000000000000", quantity: 1 },
    ]);
    expect(bad.body.data).toBeNull();
    expect(bad.body.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    const after = await t.db.query("select count(*)::int as n from app_public.orders");
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  // With an Idempotency-Key too (plugins/IdempotencyPlugin.ts): the key's claim is
  // committed with the order, before the payload is read; the answer is
  // written after it. The stock locks go at that commit all the same.
  test.each([
    ["without a key", false],
    ["with an Idempotency-Key", true],
  ])("another customer ordering the same coffee never waits on someone's slow payload (the mutation commits first), %s", async (_label, withKey) => {
    const coffee = await stockedCoffee(t, `payload-locks-${withKey ? "key" : "nokey"}`, "2.50", 1);
    const [alice, bob] = [await t.token("alice"), await t.token("bob")];
    const stamp = `${Date.now()}`;
    const order = (token: string, selection: string) =>
      t.gql(`mutation($input: CreateOrderInput!) { createOrder(input: $input) ${selection} }`, {
        token,
        variables: { input: { items: [{ coffeeId: coffee.id, quantity: 1 }] } },
        ...(withKey ? { headers: { "idempotency-key": `payload-locks-${token === alice ? "alice" : "bob"}-${stamp}` } } : {}),
      });
    // A slow selection, made slow on purpose: the DBA holds the reviews
    // table, which Alice's payload reads (and her order does not).
    const dba = await t.db.connect();
    try {
      await dba.query("begin");
      await dba.query("lock table app_public.reviews in access exclusive mode");
      const heavy = order(alice, "{ id items { coffee { reviews(limit: 1) { rating } } } }");
      await waitUntil("Alice's payload to wait on the reviews", async () => {
        const { rows } = await t.db.query("select count(*)::int as n from pg_locks where not granted and relation = 'app_public.reviews'::regclass");
        return rows[0].n > 0;
      });
      if (withKey) {
        // Alice's order and her key's claim are committed; her answer is not written yet.
        const { rows } = await t.db.query("select status from app_private.idempotency_keys where key = $1", [`payload-locks-alice-${stamp}`]);
        expect(rows).toEqual([{ status: "committed" }]);
      }
      // Bob is answered while the DBA still holds the lock Alice's payload waits on.
      const bobs = order(bob, "{ id }");
      const first = await within(
        bobs.then(() => "answered"),
        2_500,
        "still waiting",
      ).catch((e: Error) => e.message);
      await dba.query("rollback");
      expect(first).toBe("answered");
      const b = await bobs;
      expect(b.body.errors).toBeUndefined();
      // Alice's order was saved before her payload was read; the payload shows it.
      const a = await heavy;
      const id = a.body.data?.createOrder?.id;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect((await t.db.query("select count(*)::int as n from app_public.orders where id = $1", [id])).rows[0].n).toBe(1);
      if (withKey) {
        // Her answer was written after her payload: a retry replays it, no second order.
        const again = await order(alice, "{ id items { coffee { reviews(limit: 1) { rating } } } }");
        expect(again.body.extensions?.idempotentReplayed).toBe(true);
        expect(again.body.data).toEqual(a.body.data);
        const { rows } = await t.db.query("select count(*)::int as n from app_public.order_items where coffee_id = $1", [coffee.id]);
        expect(rows[0].n).toBe(2); // Alice's and Bob's
        await t.db.query("delete from app_private.idempotency_keys where key like $1", [`payload-locks-%-${stamp}`]);
      }
      await t.db.query("delete from app_public.orders where id = any($1::uuid[])", [[id, b.body.data.createOrder.id]]);
    } finally {
      await dba.query("rollback").catch(() => {});
      dba.release();
      await t.db.query("delete from app_public.orders where id in (select order_id from app_public.order_items where coffee_id = $1)", [coffee.id]);
      await removeStockedCoffee(t, coffee);
    }
  });
});
