import pg from "pg";
import type { PgClient, PgClientQuery, WithPgClient } from "postgraphile/@dataplan/pg";
import { sharingWithPgClient, visibilityKey } from "../../common/sharedReads.ts";
import { ORDER_PAYLOADS_SQL, orderStatusTopic, orderTopic, type Delivery, type DeliveryScope } from "../../common/topics.ts";
import { DEMO, subscribe } from "../support/client.ts";
import { operationsOf } from "../support/contract.ts";
import { insertOrders } from "../support/fixtures.ts";
import { listening, useTestService } from "../support/service.ts";
import { sleep } from "../support/wait.ts";

// Subscribers who would see the same thing share one re-read per event
// (common/sharedReads.ts): which ones do, what is never shared, and the
// facts about the database that make sharing between staff users right.

const SELECT = 'select __baristas__."name" as "0" from "app_public"."baristas" as __baristas__ where (__baristas__."id" = $1::"uuid")';
const settings = (role: string, user: string, sid = "s1") => ({
  role,
  "jwt.claims.user_id": user,
  "jwt.claims.role": role.replace("cafe_", ""),
  "jwt.claims.sid": sid,
});

/** A withPgClient that records every transaction and the statements in it. */
function fakeDatabase() {
  const transactions: Array<{ settings: unknown; statements: string[]; ended?: "commit" | "rollback" }> = [];
  const real: WithPgClient = async (pgSettings, callback) => {
    const tx: (typeof transactions)[number] = { settings: pgSettings, statements: [] };
    transactions.push(tx);
    const client: PgClient = {
      async query(q: PgClientQuery) {
        tx.statements.push(q.text);
        await new Promise((r) => setTimeout(r, 5));
        return { rows: [[`${q.text.slice(0, 6)} as ${(pgSettings as any)?.["jwt.claims.user_id"]}`]] } as never;
      },
      withTransaction: (fn) => fn(client as never),
    };
    try {
      const value = await callback(client);
      tx.ended = "commit";
      return value;
    } catch (e) {
      tx.ended = "rollback";
      throw e;
    }
  };
  return { real, transactions };
}

const delivery = (payload = "{}"): Delivery => ({ payload, shared: new Map() });
const read = (w: WithPgClient, s: Record<string, string>, text = SELECT, values: unknown[] = ["b1"]) => w(s, (c) => c.query<unknown[]>({ text, values, arrayMode: true }));

describe("sharing a re-read (unit)", () => {
  test("no delivery being answered (subscribing, queries on a socket): every call is its own transaction", async () => {
    const db = fakeDatabase();
    const w = sharingWithPgClient(db.real, { delivery: null });
    const s = settings("cafe_barista", "u1");
    await Promise.all([read(w, s), read(w, s)]);
    expect(db.transactions).toHaveLength(2);
  });

  test("one delivery: identical pgSettings share one read; the next delivery reads again", async () => {
    const db = fakeDatabase();
    const scopes: DeliveryScope[] = [{ delivery: null }, { delivery: null }, { delivery: null }];
    const ws = scopes.map((scope) => sharingWithPgClient(db.real, scope));
    const first = delivery();
    for (const s of scopes) s.delivery = first;
    const alice = settings("cafe_customer", "alice");
    const results = await Promise.all(ws.map((w) => read(w, alice)));
    expect(db.transactions).toHaveLength(1);
    expect(results.map((r) => r.rows)).toEqual([[["select as alice"]], [["select as alice"]], [["select as alice"]]]);
    expect(results[0]!.rows).not.toBe(results[1]!.rows); // each gets its own list
    // A later read of the same delivery (a slow subscriber) still shares it.
    await read(ws[0]!, alice);
    expect(db.transactions).toHaveLength(1);
    const second = delivery();
    for (const s of scopes) s.delivery = second;
    await Promise.all(ws.map((w) => read(w, alice)));
    expect(db.transactions).toHaveLength(2);
  });

  test("customers never share with another customer (nor with another sign-in of their own)", async () => {
    const db = fakeDatabase();
    const d = delivery();
    const w = sharingWithPgClient(db.real, { delivery: d });
    const [a, b, a2] = await Promise.all([read(w, settings("cafe_customer", "alice")), read(w, settings("cafe_customer", "bob")), read(w, settings("cafe_customer", "alice", "s2"))]);
    expect(db.transactions).toHaveLength(3);
    expect([a.rows, b.rows, a2.rows]).toEqual([[["select as alice"]], [["select as bob"]], [["select as alice"]]]);
  });

  test("staff share only with their own sockets: two baristas (who may work at different stores) never share a read", async () => {
    const db = fakeDatabase();
    const w = sharingWithPgClient(db.real, { delivery: delivery() });
    await Promise.all([read(w, settings("cafe_barista", "u1")), read(w, settings("cafe_barista", "u1")), read(w, settings("cafe_barista", "u2")), read(w, settings("cafe_admin", "u3"))]);
    expect(db.transactions).toHaveLength(3);
    expect(visibilityKey(settings("cafe_barista", "u1"), SELECT)).not.toBe(visibilityKey(settings("cafe_barista", "u2"), SELECT));
    expect(visibilityKey(settings("cafe_customer", "u1"), SELECT)).not.toBe(visibilityKey(settings("cafe_customer", "u2"), SELECT));
  });

  test("different values or statements are different reads", async () => {
    const db = fakeDatabase();
    const w = sharingWithPgClient(db.real, { delivery: delivery() });
    const s = settings("cafe_barista", "u1");
    await Promise.all([read(w, s, SELECT, ["b1"]), read(w, s, SELECT, ["b2"]), read(w, s, `${SELECT} limit 1`, ["b1"])]);
    expect(db.transactions).toHaveLength(3);
  });

  test("what is not a PgExecutor read runs in the subscriber's own single transaction, committed after the callback (rolled back on failure)", async () => {
    const db = fakeDatabase();
    const w = sharingWithPgClient(db.real, { delivery: delivery() });
    const s = settings("cafe_barista", "u1");
    const out = await w(s, async (c) => {
      await c.query({ text: "select app_hidden.assert_can_follow_queue()" });
      await c.query({ text: "select 2" });
      return "done";
    });
    expect(out).toBe("done");
    // BEGIN and the settings in one round trip, then the statements, then COMMIT.
    expect(db.transactions).toEqual([
      {
        settings: null,
        statements: [
          "begin; select set_config('role', 'cafe_barista', true), set_config('jwt.claims.user_id', 'u1', true), set_config('jwt.claims.role', 'barista', true), set_config('jwt.claims.sid', 's1', true)",
          "select app_hidden.assert_can_follow_queue()",
          "select 2",
          "commit",
        ],
        ended: "commit",
      },
    ]);
    await expect(
      w(s, async (c) => {
        await c.query({ text: "select 3" });
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(db.transactions[1]!.statements.slice(1)).toEqual(["select 3", "rollback"]);
  });
});

describe("against the database", () => {
  const t = useTestService({ deleteNewOrders: true });
  let orderId: string;
  beforeAll(async () => {
    const { rows } = await t.db.query("select id from app_public.coffees where available order by name limit 1");
    [orderId] = await insertOrders(t, [{ customerId: DEMO.alice.id, status: "PAID", baristaId: DEMO.barista.id, lines: [{ coffeeId: rows[0].id, quantity: 1 }] }]);
  });

  test("every SELECT policy that applies to staff depends on the role, or on the stores the caller works at (staff_store_ids): so sharedReads.ts keys staff by their whole pgSettings", async () => {
    const { rows } = await t.db.query(
      `select schemaname, tablename, policyname, roles::text[] as roles, qual from pg_policies
        where cmd in ('SELECT', 'ALL') and schemaname = 'app_public'
          and (roles && array['cafe_barista', 'cafe_admin', 'public']::name[])`,
    );
    expect(rows.length).toBeGreaterThan(5);
    // The policies call the role checks as `(select ...)`: once per statement.
    const ROLE_ONLY =
      /^(true|\( SELECT app_public\.is_staff\(\) AS is_staff\)|\( SELECT app_public\.is_admin\(\) AS is_admin\)|\(\( SELECT app_public\.current_actor\(\) AS current_actor\) = ANY \(ARRAY\['barista'::text, 'admin'::text, 'system'::text\]\)\))$/;
    const perStore = rows.filter((r) => !ROLE_ONLY.test(r.qual));
    expect(perStore.map((r) => r.tablename).sort()).toEqual(expect.arrayContaining(["notifications", "order_events", "order_items", "orders", "refunds", "stock_items", "stock_movements"]));
    for (const r of perStore) expect(r.qual).toMatch(/staff_store_ids|is_open|is_staff/);
    // No view that could look at the user: only tables are read.
    const views = await t.db.query("select viewname from pg_views where schemaname = 'app_public'");
    expect(views.rows).toEqual([]);
  });

  test("the payloads sent after a reconnection (common/topics.ts) are the triggers' own", async () => {
    const listener = new pg.Client({ connectionString: t.urls.owner });
    await listener.connect();
    try {
      const got = new Map<string, string>();
      listener.on("notification", (n) => got.set(n.channel, n.payload ?? ""));
      await listener.query(`listen "${orderTopic(orderId)}"`);
      await listener.query(`listen "${orderStatusTopic(orderId)}"`);
      await t.db.query("update app_public.orders set status = 'PREPARING' where id = $1", [orderId]);
      const deadline = Date.now() + 5000;
      while (got.size < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      const { rows } = await t.db.query(`select ${ORDER_PAYLOADS_SQL.order} as "order", ${ORDER_PAYLOADS_SQL.orderStatus} as status from app_public.orders o where o.id = $1`, [orderId]);
      expect(JSON.parse(got.get(orderTopic(orderId))!)).toEqual(JSON.parse(rows[0].order));
      expect(JSON.parse(got.get(orderStatusTopic(orderId))!)).toEqual(JSON.parse(rows[0].status));
    } finally {
      await listener.end();
    }
  });

  test("over real sockets: alice (two sockets), the barista (two sockets) and an admin each get the change, with the barista they may see", async () => {
    const doc = operationsOf("mobile");
    const who = ["alice", "alice", "barista", "barista", "admin"] as const;
    const tokens = await Promise.all(who.map((u) => t.token(u)));
    const clients = tokens.map((token) => t.ws(token));
    try {
      const subs = clients.map((c) => subscribe(c, doc, { orderId }, "StatusFeed"));
      await listening(t, [orderStatusTopic(orderId)]);
      await sleep(200); // every subscription checked and listening
      await t.db.query("update app_public.orders set status = 'BREWING' where id = $1", [orderId]);
      const { rows } = await t.db.query("select name from app_public.baristas where id = $1", [DEMO.barista.id]);
      for (const sub of subs) {
        expect(await sub.waitFor(1)).toEqual([{ data: { orderStatusChanged: { status: "BREWING", message: expect.any(String), barista: { name: rows[0].name } } } }]);
      }
    } finally {
      await Promise.all(clients.map((c) => c.dispose()));
    }
  });
});
