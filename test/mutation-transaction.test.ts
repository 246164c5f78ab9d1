import { parse } from "postgraphile/graphql";
import type { PgClient, PgClientQuery, WithPgClient } from "postgraphile/@dataplan/pg";
import pg from "pg";
import { answerAfter, oneTransaction, oneTransactionPerMutation, singleMutationField } from "../plugins/mutationTransaction.ts";
import { testDatabaseUrl } from "./support/db.ts";
import { operationsOf } from "./support/contract.ts";
import { useTestService } from "./support/service.ts";

// A mutation with one root field and the reading of its payload run in one
// transaction (plugins/mutationTransaction.ts).

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

test("every statement in one transaction, committed at the end; later calls (after the answer) get their own", async () => {
  const db = fakeDatabase();
  const tx = oneTransaction(db.real);
  await tx.withPgClient(settings, (c) => c.query({ text: "select create_order()" }));
  await Promise.all([
    tx.withPgClient(settings, (c) => c.query({ text: "select items" })),
    tx.withPgClient(settings, (c) => c.query({ text: "select coffees" })),
  ]);
  expect(await tx.finish()).toBeUndefined();
  expect(db.statements).toEqual([
    "begin; select set_config('role', 'cafe_customer', true), set_config('jwt.claims.user_id', 'alice', true)",
    "select create_order()",
    "select items",
    "select coffees",
    "commit",
  ]);
});

test("a failed statement rolls everything back, and an answer still carrying the mutation's data becomes the error", async () => {
  const db = fakeDatabase("select items");
  const tx = oneTransaction(db.real);
  await tx.withPgClient(settings, (c) => c.query({ text: "select create_order()" }));
  await expect(tx.withPgClient(settings, (c) => c.query({ text: "select items" }))).rejects.toThrow("failed");
  const undone = await tx.finish();
  expect(db.statements.at(-1)).toBe("rollback");
  expect((undone as Error).message).toMatch(/failed: select items/);
  const answer = answerAfter({ data: { createOrder: { id: "o1", items: null } }, errors: [{ message: "x" }] }, undone, "createOrder");
  expect(answer.data).toBeNull();
  expect(answer.errors.map((e: { message: string }) => e.message)).toEqual(["x", "failed: select items"]);
  // The mutation itself failed: its own error is the answer.
  const failed = { data: null, errors: [{ message: "Not enough milk" }] };
  expect(answerAfter(failed, new Error("y"), "createOrder")).toBe(failed);
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

describe("against the service", () => {
  const t = useTestService({ deleteNewOrders: true });

  test("PlaceOrder: the order and its lines in the answer, saved; an order that fails leaves nothing behind", async () => {
    const { rows } = await t.db.query("select id, name from app_public.coffees where available order by name limit 2");
    const token = await t.token("alice");
    const place = (items: Array<{ coffeeId: string; quantity: number }>) =>
      t.gql(operationsOf("mobile"), { operationName: "PlaceOrder", token, variables: { input: { items } } });
    const ok = await place(rows.map((r) => ({ coffeeId: r.id, quantity: 1 })));
    expect(ok.body.errors).toBeUndefined();
    const order = ok.body.data.createOrder;
    expect(order.items.map((i: { coffee: { name: string } }) => i.coffee.name)).toEqual(rows.map((r) => r.name));
    const saved = await t.db.query("select count(*)::int as n from app_public.order_items where order_id = $1", [order.id]);
    expect(saved.rows[0].n).toBe(2);
    const before = await t.db.query("select count(*)::int as n from app_public.orders");
    const bad = await place([{ coffeeId: rows[0].id, quantity: 1 }, { coffeeId: "00000000-0000-4000-8000-000000000000", quantity: 1 }]);
    expect(bad.body.data).toBeNull();
    expect(bad.body.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    const after = await t.db.query("select count(*)::int as n from app_public.orders");
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });
});
