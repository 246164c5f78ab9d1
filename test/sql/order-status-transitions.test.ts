import type pg from "pg";
import { DEMO, type DemoUser, expectRefused, ok } from "../support/client.ts";
import { operationsOf } from "../support/contract.ts";
import { requestRoleClient, tryInRollback } from "../support/db.ts";
import { allowedMoves, makeCoffee, money, orderEvents, orderIn, orderRow, type Status, STATUSES } from "../support/fixtures.ts";
import { useTestService } from "../support/service.ts";

// The order lifecycle: updateOrderStatus (the barista dashboard's Advance)
// obeys app_public.order_status_transitions for every role and every path,
// including raw SQL; PAID only ever comes from a payment; BREWING names
// the barista; COMPLETED awards points; every change is an order_event;
// two staff racing on one order leave it valid.

const BARISTA = operationsOf("barista");
const MOBILE = operationsOf("mobile");
const POS = operationsOf("pos");
const RANDOM_ID = "0f8fad5b-d9cb-469f-a165-70867728950e";
const suffix = Date.now().toString(36);

const t = useTestService({ sandbox: true });
let tokens: Record<DemoUser, string>;
let coffee: { id: string; price: number };
let staffName: Record<"barista" | "admin", string>;

beforeAll(async () => {
  tokens = await t.tokens();
  // 2.65 a cup: totals with cents, so floor(total) is visible in the points.
  coffee = { id: await makeCoffee(t, `Life Plain ${suffix}`, "2.65"), price: 2.65 };
  const { rows } = await t.db.query("select id, name from app_public.baristas where id = any($1)", [[DEMO.barista.id, DEMO.admin.id]]);
  const byId = Object.fromEntries(rows.map((r) => [r.id, r.name]));
  staffName = { barista: byId[DEMO.barista.id], admin: byId[DEMO.admin.id] };
});

const advance = (id: string, status: Status, token: string | null) => t.gql(BARISTA, { operationName: "Advance", variables: { id, status }, token });
const points = async (id: string) => (await t.db.query("select points from app_public.customers where id = $1", [id])).rows[0].points as number;

describe("an order from the mobile app to pickup", () => {
  test("create -> PAID (payment, here in SQL) -> PREPARING -> BREWING -> READY -> COMPLETED, with barista, points and events", async () => {
    const { rows } = await t.db.query("select value from app_private.settings where key = 'points_per_currency_unit'");
    expect(Number(rows[0].value)).toBe(1);
    const pointsBefore = await points(DEMO.alice.id);

    const placed = ok(
      await t.gql(MOBILE, {
        operationName: "PlaceOrder",
        variables: { input: { items: [{ coffeeId: coffee.id, quantity: 3, specialInstructions: "one decaf" }], notes: "lifecycle" } },
        token: tokens.alice,
      }),
    ).createOrder;
    expect(placed.status).toBe("PENDING");
    expect(money(placed.total)).toBe("7.95");
    const id: string = placed.id;

    // The payment provider's callback would do this; the owner acts as 'dba'.
    await t.db.query("update app_public.orders set status = 'PAID' where id = $1", [id]);
    expect((await orderRow(t, id)).paid_at).not.toBeNull();

    const steps: Array<[Status, "barista" | "admin"]> = [
      ["PREPARING", "barista"],
      ["BREWING", "barista"],
      ["READY", "barista"],
      ["COMPLETED", "barista"],
    ];
    for (const [status, who] of steps) {
      const r = ok(await advance(id, status, tokens[who])).updateOrderStatus;
      expect(r.id).toBe(id);
      expect(r.status).toBe(status);
      // Nobody is the barista until someone starts brewing; then it is them.
      expect(r.barista).toEqual(status === "PREPARING" ? null : { name: staffName.barista });
      const row = await orderRow(t, id);
      expect(row.status).toBe(status);
      expect(row.barista_id).toBe(status === "PREPARING" ? null : DEMO.barista.id);
      if (status !== "COMPLETED") expect(await points(DEMO.alice.id)).toBe(pointsBefore);
    }

    // floor(7.95) * 1 point.
    expect(await points(DEMO.alice.id)).toBe(pointsBefore + 7);
    expect(await orderEvents(t, id)).toEqual([
      { from_status: null, to_status: "PENDING", actor_role: "customer", actor_id: DEMO.alice.id },
      { from_status: "PENDING", to_status: "PAID", actor_role: "dba", actor_id: null },
      { from_status: "PAID", to_status: "PREPARING", actor_role: "barista", actor_id: DEMO.barista.id },
      { from_status: "PREPARING", to_status: "BREWING", actor_role: "barista", actor_id: DEMO.barista.id },
      { from_status: "BREWING", to_status: "READY", actor_role: "barista", actor_id: DEMO.barista.id },
      { from_status: "READY", to_status: "COMPLETED", actor_role: "barista", actor_id: DEMO.barista.id },
    ]);

    // The customer sees the finished order, its barista and the points.
    const mine = ok(await t.gql(`query($id: ID!) { order(id: $id) { status total barista { name } } }`, { variables: { id }, token: tokens.alice })).order;
    expect(mine).toEqual({ status: "COMPLETED", total: 7.95, barista: { name: staffName.barista } });
    const home = ok(await t.gql(MOBILE, { operationName: "MobileHome", token: tokens.alice })).customer;
    expect(home.points).toBe(pointsBefore + 7);

    // A completed order goes nowhere, whoever asks and however.
    for (const to of STATUSES) {
      for (const who of ["barista", "admin"] as const) {
        const err = expectRefused(await advance(id, to, tokens[who]), "INVALID_TRANSITION");
        expect(err.extensions?.details).toMatchObject({ from: "COMPLETED", to });
      }
      expectRefused(await advance(id, to, tokens.alice), "FORBIDDEN");
      expectRefused(await advance(id, to, null), "UNAUTHENTICATED");
    }
    for (const who of ["alice", "barista", "admin"] as const) {
      const err = expectRefused(await t.gql(MOBILE, { operationName: "CancelMine", variables: { id }, token: tokens[who] }), "INVALID_TRANSITION");
      expect(err.extensions?.details).toMatchObject({ from: "COMPLETED", to: "CANCELLED" });
    }
    const sqlErr = await tryInRollback(t, (c) => c.query("update app_public.orders set status = 'PENDING' where id = $1", [id]));
    expect(sqlErr?.code).toBe("CT001");
    expect((await orderRow(t, id)).status).toBe("COMPLETED");
    expect(await points(DEMO.alice.id)).toBe(pointsBefore + 7);
    expect(await orderEvents(t, id)).toHaveLength(6);
  });

  test("a point-of-sale order for a known customer earns them points; the walk-in customer earns none", async () => {
    const { rows } = await t.db.query("select points from app_public.customers where id = $1", [DEMO.walkInId]);
    const walkInBefore = rows[0]?.points ?? 0;
    const bobBefore = await points(DEMO.bob.id);

    const forBob = ok(
      await t.gql(`mutation($c: ID!, $q: Int!, $who: ID) { createOrder(coffeeId: $c, quantity: $q, customerId: $who) { id total } }`, {
        variables: { c: coffee.id, q: 4, who: DEMO.bob.id },
        token: tokens.barista,
      }),
    ).createOrder;
    const walkIn = ok(await t.gql(POS, { operationName: "PosOrder", variables: { coffeeId: coffee.id, quantity: 4 }, token: tokens.barista })).createOrder;
    for (const id of [forBob.id, walkIn.id]) {
      await t.db.query("update app_public.orders set status = 'PAID' where id = $1", [id]);
      for (const s of ["PREPARING", "BREWING", "READY", "COMPLETED"] as Status[]) ok(await advance(id, s, tokens.admin));
    }
    // 4 x 2.65 = 10.60 -> 10 points.
    expect(await points(DEMO.bob.id)).toBe(bobBefore + 10);
    expect((await t.db.query("select points from app_public.customers where id = $1", [DEMO.walkInId])).rows[0].points).toBe(walkInBefore);
    // The admin started brewing, so the admin is the order's barista.
    expect((await orderRow(t, forBob.id)).barista_id).toBe(DEMO.admin.id);
  });
});

describe("Order.barista", () => {
  test("is whoever started brewing; later moves by someone else do not change it", async () => {
    const id = await orderIn(t, "PREPARING", coffee.id, { customerId: DEMO.alice.id });
    expect(ok(await advance(id, "BREWING", tokens.barista)).updateOrderStatus.barista).toEqual({ name: staffName.barista });
    expect(ok(await advance(id, "READY", tokens.admin)).updateOrderStatus.barista).toEqual({ name: staffName.barista });
    expect(ok(await advance(id, "COMPLETED", tokens.admin)).updateOrderStatus.barista).toEqual({ name: staffName.barista });
    expect((await orderRow(t, id)).barista_id).toBe(DEMO.barista.id);
    // The customer may read the name of the barista of their own order.
    const mine = ok(await t.gql(`query($id: ID!) { order(id: $id) { barista { id name } } }`, { variables: { id }, token: tokens.alice })).order;
    expect(mine.barista).toEqual({ id: DEMO.barista.id, name: staffName.barista });
  });
});

describe("updateOrderStatus follows the rules table", () => {
  test.each(["barista", "admin"] as const)("as %s: every move the table allows works; every other is INVALID_TRANSITION with {from, to}, changing nothing", async (who) => {
    const allowed = await allowedMoves(t, who);
    expect(allowed.size).toBeGreaterThan(0);
    const userId = DEMO[who].id;
    const outcomes: string[] = [];
    for (const from of STATUSES) {
      for (const to of STATUSES) {
        const id = await orderIn(t, from, coffee.id);
        const before = await orderRow(t, id);
        const eventsBefore = await orderEvents(t, id);
        const r = await advance(id, to, tokens[who]);
        // PAID comes from a payment only, never from updateOrderStatus.
        const shouldWork = allowed.has(`${from}->${to}`) && to !== "PAID" && from !== to;
        outcomes.push(`${from}->${to}: ${r.body.errors ? r.body.errors[0]!.extensions?.code : "ok"}`);
        if (shouldWork) {
          const o = ok(r).updateOrderStatus;
          expect(o).toEqual({ id, status: to, barista: to === "BREWING" ? { name: staffName[who] } : o.barista });
          const after = await orderRow(t, id);
          expect(after.status).toBe(to);
          if (to === "BREWING") expect(after.barista_id).toBe(userId);
          else expect(after.barista_id).toBe(before.barista_id);
          expect(await orderEvents(t, id)).toEqual([...eventsBefore, { from_status: from, to_status: to, actor_role: who, actor_id: userId }]);
        } else {
          const err = expectRefused(r, "INVALID_TRANSITION");
          expect(err.extensions?.details).toMatchObject({ from, to });
          expect(await orderRow(t, id)).toEqual(before);
          expect(await orderEvents(t, id)).toEqual(eventsBefore);
        }
      }
    }
    // For the report when it fails: the whole matrix.
    expect(outcomes.filter((o) => o.endsWith("ok")).sort()).toEqual(
      [...allowed]
        .filter((m) => !m.endsWith("->PAID"))
        .map((m) => `${m}: ok`)
        .sort(),
    );
  });

  test("PAID is never set by updateOrderStatus, by any staff member", async () => {
    for (const who of ["barista", "admin"] as const) {
      const id = await orderIn(t, "PENDING", coffee.id);
      const err = expectRefused(await advance(id, "PAID", tokens[who]), "INVALID_TRANSITION");
      expect(err.extensions?.details).toMatchObject({ from: "PENDING", to: "PAID" });
      const row = await orderRow(t, id);
      expect(row.status).toBe("PENDING");
      expect(row.paid_at).toBeNull();
    }
  });

  test("customers: FORBIDDEN (even on their own order); anonymous: UNAUTHENTICATED; nothing changes", async () => {
    for (const from of STATUSES) {
      const id = await orderIn(t, from, coffee.id, { customerId: DEMO.alice.id });
      const before = await orderRow(t, id);
      const events = await orderEvents(t, id);
      for (const to of STATUSES) {
        expectRefused(await advance(id, to, tokens.alice), "FORBIDDEN");
        expectRefused(await advance(id, to, tokens.bob), "FORBIDDEN");
        expectRefused(await advance(id, to, null), "UNAUTHENTICATED");
      }
      expect(await orderRow(t, id)).toEqual(before);
      expect(await orderEvents(t, id)).toEqual(events);
    }
  });

  test("an unknown order: NOT_FOUND; a malformed id: BAD_USER_INPUT", async () => {
    expectRefused(await advance(RANDOM_ID, "PREPARING", tokens.barista), "NOT_FOUND");
    expectRefused(await advance("x", "PREPARING", tokens.barista), "BAD_USER_INPUT");
  });

  test("a rule a DBA adds to the table applies at once, and stops applying when removed", async () => {
    const id = await orderIn(t, "READY", coffee.id);
    expectRefused(await advance(id, "BREWING", tokens.barista), "INVALID_TRANSITION");
    await t.db.query("insert into app_public.order_status_transitions (from_status, to_status, role) values ('READY', 'BREWING', 'barista')");
    try {
      expect(ok(await advance(id, "BREWING", tokens.barista)).updateOrderStatus.status).toBe("BREWING");
    } finally {
      await t.db.query("delete from app_public.order_status_transitions where from_status = 'READY' and to_status = 'BREWING' and role = 'barista'");
    }
    ok(await advance(id, "READY", tokens.barista));
    expectRefused(await advance(id, "BREWING", tokens.barista), "INVALID_TRANSITION");
    expect((await orderRow(t, id)).status).toBe("READY");
  });
});

describe("raw SQL obeys the same rules", () => {
  test("the owner (dba): exactly the table's dba moves; anything else raises CT001", async () => {
    const allowed = await allowedMoves(t, "dba");
    const outcomes: string[] = [];
    for (const from of STATUSES) {
      const id = await orderIn(t, from, coffee.id);
      for (const to of STATUSES) {
        if (to === from) continue;
        const err = await tryInRollback(t, (c) => c.query("update app_public.orders set status = $2 where id = $1", [id, to]));
        outcomes.push(`${from}->${to}: ${err ? err.code : "ok"}`);
        if (!allowed.has(`${from}->${to}`)) expect(err?.code).toBe("CT001");
      }
      expect((await orderRow(t, id)).status).toBe(from);
    }
    expect(outcomes.filter((o) => o.endsWith("ok")).sort()).toEqual([...allowed].map((m) => `${m}: ok`).sort());
    expect(outcomes).toContain("COMPLETED->PENDING: CT001");
  });

  test("a request role cannot INSERT an order by SQL either", async () => {
    const c = await requestRoleClient(t);
    try {
      await c.query("begin");
      await c.query("set local role cafe_admin");
      await expect(c.query("insert into app_public.orders (customer_id, status) values ($1, 'COMPLETED')", [DEMO.alice.id])).rejects.toMatchObject({ code: "42501" });
    } finally {
      await c.query("rollback").catch(() => undefined);
      await c.end();
    }
  });

  test.each(["cafe_anonymous", "cafe_customer", "cafe_barista", "cafe_admin", "cafe_system"])("as request role %s: UPDATE of orders is denied (writes go through the functions)", async (role) => {
    const id = await orderIn(t, "PREPARING", coffee.id, { customerId: DEMO.alice.id });
    const c: pg.Client = await requestRoleClient(t);
    try {
      for (const [to, userId] of [
        ["BREWING", DEMO.barista.id],
        ["COMPLETED", DEMO.admin.id],
        ["CANCELLED", DEMO.alice.id],
      ] as const) {
        await c.query("begin");
        await c.query(`set local role ${role}`);
        await c.query("select set_config('jwt.claims.user_id', $1, true)", [userId]);
        await expect(c.query("update app_public.orders set status = $2 where id = $1", [id, to])).rejects.toMatchObject({
          code: "42501",
          message: expect.stringMatching(/permission denied for table orders/),
        });
        await c.query("rollback");
      }
      // The function path checks the same table: PREPARING -> READY is no move for anyone.
      await c.query("begin");
      await c.query(`set local role ${role}`);
      // The role's own account (a token acts only for an account of its role: app_hidden.signed_in_as).
      await c.query("select set_config('jwt.claims.user_id', $1, true)", [role === "cafe_admin" ? DEMO.admin.id : DEMO.barista.id]);
      const viaFunction = c.query("select app_public.update_order_status($1, 'READY')", [id]);
      await expect(viaFunction).rejects.toMatchObject({ code: role === "cafe_barista" || role === "cafe_admin" ? "CT001" : "42501" }); // others may not call it at all (exact grants)
      await c.query("rollback");
    } finally {
      await c.query("rollback").catch(() => undefined);
      await c.end();
    }
    expect((await orderRow(t, id)).status).toBe("PREPARING");
  });

  test("a request role cannot write the rules table or the event log either", async () => {
    const c = await requestRoleClient(t);
    try {
      for (const role of ["cafe_barista", "cafe_admin", "cafe_customer"]) {
        for (const sql of [
          "insert into app_public.order_status_transitions (from_status, to_status, role) values ('COMPLETED', 'PENDING', 'barista')",
          "delete from app_public.order_status_transitions",
          "delete from app_public.order_events",
        ]) {
          await c.query("begin");
          await c.query(`set local role ${role}`);
          await expect(c.query(sql)).rejects.toMatchObject({ code: "42501" });
          await c.query("rollback");
        }
      }
    } finally {
      await c.query("rollback").catch(() => undefined);
      await c.end();
    }
  });
});

describe("two staff moving one order at once", () => {
  test("PREPARING -> BREWING twice at the same moment: exactly one succeeds, the other is INVALID_TRANSITION", async () => {
    for (let round = 0; round < 6; round++) {
      const id = await orderIn(t, "PREPARING", coffee.id);
      const [a, b] = await Promise.all([advance(id, "BREWING", tokens.barista), advance(id, "BREWING", tokens.admin)]);
      const winners = [a, b].filter((r) => !r.body.errors);
      const losers = [a, b].filter((r) => r.body.errors);
      expect(winners).toHaveLength(1);
      expect(losers).toHaveLength(1);
      const err = expectRefused(losers[0]!, "INVALID_TRANSITION");
      expect(err.extensions?.details).toMatchObject({ from: "BREWING", to: "BREWING" });
      const won = ok(winners[0]!).updateOrderStatus;
      const winner = winners[0] === a ? "barista" : "admin";
      expect(won).toEqual({ id, status: "BREWING", barista: { name: staffName[winner] } });
      const row = await orderRow(t, id);
      expect(row.status).toBe("BREWING");
      expect(row.barista_id).toBe(DEMO[winner].id);
      expect((await orderEvents(t, id)).filter((e) => e.to_status === "BREWING")).toEqual([{ from_status: "PREPARING", to_status: "BREWING", actor_role: winner, actor_id: DEMO[winner].id }]);
    }
  });

  test("cancel and brew racing on a PREPARING order: one wins, the order ends CANCELLED or BREWING, never both", async () => {
    for (let round = 0; round < 6; round++) {
      const id = await orderIn(t, "PREPARING", coffee.id, { customerId: DEMO.bob.id });
      const [brew, cancel] = await Promise.all([advance(id, "BREWING", tokens.barista), t.gql(MOBILE, { operationName: "CancelMine", variables: { id }, token: tokens.admin })]);
      const row = await orderRow(t, id);
      const events = (await orderEvents(t, id)).slice(3); // after PENDING, PAID, PREPARING
      if (row.status === "BREWING") {
        expect(ok(brew).updateOrderStatus.status).toBe("BREWING");
        expect(expectRefused(cancel, "INVALID_TRANSITION").extensions?.details).toMatchObject({ from: "BREWING", to: "CANCELLED" });
        expect(events.map((e) => e.to_status)).toEqual(["BREWING"]);
      } else {
        expect(row.status).toBe("CANCELLED");
        expect(ok(cancel).cancelOrder).toBe(true);
        expect(expectRefused(brew, "INVALID_TRANSITION").extensions?.details).toMatchObject({ from: "CANCELLED", to: "BREWING" });
        expect(events.map((e) => e.to_status)).toEqual(["CANCELLED"]);
      }
    }
  });
});
