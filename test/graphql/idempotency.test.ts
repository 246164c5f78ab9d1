import { ERROR_CATALOGUE } from "../../common/errorCatalogue.ts";
import { SERVER_FAULTS } from "../../plugins/IdempotencyPlugin.ts";
import { DEMO, request, type Caller } from "../support/client.ts";
import { stockedCoffee, type StockedCoffee } from "../support/fixtures.ts";
import { startTestService, useTestService, type TestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";

// Idempotent mutations (plugins/IdempotencyPlugin.ts): an Idempotency-Key header
// over HTTP, extensions.idempotencyKey over graphql-ws; a retry of the same
// request gets the first answer (Idempotent-Replayed: true), never a second
// effect. Against the real service, its database and its worker; orders are
// of a coffee of this file, made at the till (staff orders have no caps).

const PLACE = `mutation Place($coffeeId: ID!, $quantity: Int!, $notes: String) { createOrder(coffeeId: $coffeeId, quantity: $quantity, notes: $notes) { id total status items { quantity coffee { name } } } }`;
const MENU = `query Menu { menuItems { id } }`;

const t = useTestService({
  worker: true,
  sandbox: true,
  async cleanup(t) {
    await t.db.query("delete from app_private.idempotency_keys");
    await t.db.query("update app_private.settings set value = 10 where key = 'idempotency_wait_seconds'");
    await t.db.query("drop trigger if exists _000_idempotency_test_fault on app_public.orders");
    await t.db.query("drop trigger if exists _000_idempotency_test_fault on app_private.idempotency_keys");
    await t.db.query("drop function if exists app_private.idempotency_test_fault()");
  },
});
let coffee: StockedCoffee;
let n = 0;
/** A key no other test uses. */
const newKey = (label: string) => `${label}-${Date.now()}-${++n}`;

beforeAll(async () => {
  coffee = await stockedCoffee(t, "Idempotent latte", "3.50", 1);
});

interface Answer {
  status: number;
  replayed: string | undefined;
  body: { data?: any; errors?: Array<{ message: string; extensions?: Record<string, any> }>; extensions?: Record<string, any> };
  text: string;
}

/** A POST to /graphql as `who`, with an Idempotency-Key header unless key is undefined. */
async function post(api: Pick<TestService, "url" | "token">, who: Caller, query: string, variables: Record<string, unknown>, key?: string): Promise<Answer> {
  const token = who === "anonymous" ? null : await api.token(who);
  const r = await request(`${api.url}/graphql`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(key !== undefined ? { "idempotency-key": key } : {}),
    },
    body: JSON.stringify({ query, variables }),
    timeoutMs: 30_000,
  });
  return { status: r.status, replayed: r.headers["idempotent-replayed"] as string | undefined, body: r.json, text: r.text };
}

const place = (key: string | undefined, vars: Record<string, unknown> = {}, who: Caller = "barista", api: Pick<TestService, "url" | "token"> = t) =>
  post(api, who, PLACE, { coffeeId: coffee.id, quantity: 1, ...vars }, key);

async function ordersOfCoffee(): Promise<number> {
  const { rows } = await t.db.query("select count(distinct order_id)::int as n from app_public.order_items where coffee_id = $1", [coffee.id]);
  return rows[0].n;
}

async function keyRow(key: string) {
  const { rows } = await t.db.query("select owner, status, response is not null as answered from app_private.idempotency_keys where key = $1", [key]);
  return rows;
}

/** One operation over graphql-ws with `extensions`; its one result. */
async function overWs(token: string | null, query: string, variables: Record<string, unknown>, extensions?: Record<string, unknown>) {
  const client = t.ws(token);
  const results: any[] = [];
  await new Promise<void>((resolve, reject) => {
    client.subscribe({ query, variables, ...(extensions ? { extensions } : {}) } as any, { next: (r) => void results.push(r), error: reject, complete: resolve });
  });
  expect(results).toHaveLength(1);
  return results[0] as { data?: any; errors?: any[]; extensions?: Record<string, any> };
}

describe("over HTTP", () => {
  test("the same key and request: the first answer, identical, with Idempotent-Replayed; one order", async () => {
    const key = newKey("same");
    const before = await ordersOfCoffee();
    const first = await place(key, { notes: "no sugar" });
    expect(first.body.errors).toBeUndefined();
    expect(first.replayed).toBeUndefined();
    expect(first.body.data.createOrder.status).toBe("PENDING");
    const again = await place(key, { notes: "no sugar" });
    expect(again.replayed).toBe("true");
    expect(again.status).toBe(first.status);
    expect(again.body.data).toEqual(first.body.data);
    // The same bytes for the data (field order kept: the answer is stored as json, not jsonb).
    expect(JSON.stringify(again.body.data)).toBe(JSON.stringify(first.body.data));
    expect(again.body.extensions?.idempotentReplayed).toBe(true);
    expect(await ordersOfCoffee()).toBe(before + 1);
    expect(await keyRow(key)).toEqual([{ owner: `account:${DEMO.barista.id}`, status: "done", answered: true }]);
  });

  test("variables in another key order are the same request", async () => {
    const key = newKey("order");
    const first = await post(t, "barista", PLACE, { coffeeId: coffee.id, quantity: 2 }, key);
    const again = await post(t, "barista", PLACE, { quantity: 2, coffeeId: coffee.id }, key);
    expect(again.replayed).toBe("true");
    expect(again.body.data).toEqual(first.body.data);
  });

  test("the same key with another request: IDEMPOTENCY_KEY_REUSED, nothing done", async () => {
    const key = newKey("reused");
    await place(key);
    const before = await ordersOfCoffee();
    const other = await place(key, { quantity: 2 });
    expect(other.body.errors?.map((e) => e.extensions?.code)).toEqual(["IDEMPOTENCY_KEY_REUSED"]);
    expect(other.status).toBe(422);
    expect(other.body.data ?? null).toBeNull();
    expect(other.replayed).toBeUndefined();
    // Another document with the same key is another request too.
    const cancel = await post(t, "barista", `mutation { cancelOrder(id: "${DEMO.alicePendingOrder}") }`, {}, key);
    expect(cancel.body.errors?.map((e) => e.extensions?.code)).toEqual(["IDEMPOTENCY_KEY_REUSED"]);
    expect(await ordersOfCoffee()).toBe(before);
  });

  test("a refusal with a code (BAD_USER_INPUT) stores nothing: the retry runs again and is refused again", async () => {
    const key = newKey("refused");
    const before = await ordersOfCoffee();
    const first = await place(key, { quantity: 0 });
    expect(first.body.errors?.map((e) => e.extensions?.code)).toEqual(["BAD_USER_INPUT"]);
    expect(await keyRow(key)).toEqual([]);
    const again = await place(key, { quantity: 0 });
    expect(again.replayed).toBeUndefined();
    expect(again.body.errors?.map((e) => e.extensions?.code)).toEqual(["BAD_USER_INPUT"]);
    expect(await keyRow(key)).toEqual([]);
    expect(await ordersOfCoffee()).toBe(before);
    // The same key, once the request is right, places the order (and is kept).
    const fixed = await place(key, { quantity: 1 });
    expect(fixed.body.data.createOrder.status).toBe("PENDING");
    expect(await keyRow(key)).toEqual([{ owner: `account:${DEMO.barista.id}`, status: "done", answered: true }]);
  });

  test("anonymous refused and no-op mutations with keys store no row (a logout with an unknown token, an order, a price change)", async () => {
    const flood = newKey("flood");
    const junk = (i: number) => `${"k".repeat(200)}-${flood}-${i}`;
    for (let i = 0; i < 10; i++) {
      const logout = await post(t, "anonymous", `mutation { logout(refreshToken: "junk-${i}") }`, {}, junk(i));
      expect(logout.body).toMatchObject({ data: { logout: false } });
      const order = await place(junk(i), {}, "anonymous");
      expect(order.body.errors?.length).toBeGreaterThan(0);
      const price = await post(t, "anonymous", `mutation { updateCoffeePrice(id: "${coffee.id}", newPrice: 9.99) { id } }`, {}, junk(i));
      expect(price.body.errors?.length).toBeGreaterThan(0);
    }
    expect(Number((await t.db.query("select count(*) from app_private.idempotency_keys where key like $1", [`%-${flood}-%`])).rows[0].count)).toBe(0);
  });

  test("new keys per owner are bounded per window (idempotency_keys_per_owner): one more is IDEMPOTENCY_KEY_LIMIT and runs nothing; a stored key still replays", async () => {
    await t.db.query("update app_private.settings set value = 2 where key = 'idempotency_keys_per_owner'");
    // The barista's keys of the other tests count too: start from none.
    await t.db.query("delete from app_private.idempotency_keys where owner = $1", [`account:${DEMO.barista.id}`]);
    try {
      const keys = [newKey("limit"), newKey("limit"), newKey("limit")];
      const first = await place(keys[0]);
      expect(first.body.data.createOrder.status).toBe("PENDING");
      expect((await place(keys[1])).body.data.createOrder.status).toBe("PENDING");
      const before = await ordersOfCoffee();
      const third = await place(keys[2]);
      expect(third.status).toBe(429);
      expect(third.body.errors?.map((e) => e.extensions?.code)).toEqual(["IDEMPOTENCY_KEY_LIMIT"]);
      expect(third.body.errors?.[0]?.extensions?.details).toMatchObject({ retry_after_seconds: 3600 });
      expect(await keyRow(keys[2]!)).toEqual([]);
      expect(await ordersOfCoffee()).toBe(before);
      const replay = await place(keys[0]);
      expect(replay.replayed).toBe("true");
      expect(replay.body.data).toEqual(first.body.data);
      // Another owner is not affected.
      expect((await place(newKey("limit"), {}, "admin")).body.data.createOrder.status).toBe("PENDING");
    } finally {
      await t.db.query("update app_private.settings set value = 600 where key = 'idempotency_keys_per_owner'");
    }
  });

  test("an answer that failed for the server's own reasons is not stored: nothing is saved and the retry runs", async () => {
    // A fault the client cannot cause: an unmapped SQLSTATE (XX000) from a trigger of this test.
    await t.db.query(`create or replace function app_private.idempotency_test_fault() returns trigger language plpgsql as $$
      begin if new.notes = 'server fault' then raise exception 'simulated fault' using errcode = 'XX000'; end if; return new; end $$`);
    await t.db.query("create trigger _000_idempotency_test_fault before insert on app_public.orders for each row execute function app_private.idempotency_test_fault()");
    const key = newKey("fault");
    const before = await ordersOfCoffee();
    const failed = await place(key, { notes: "server fault" });
    expect(failed.body.errors?.map((e) => e.extensions?.code)).toEqual(["INTERNAL_SERVER_ERROR"]);
    expect(await keyRow(key)).toEqual([]);
    expect(await ordersOfCoffee()).toBe(before);
    await t.db.query("drop trigger _000_idempotency_test_fault on app_public.orders");
    const retried = await place(key, { notes: "server fault" });
    expect(retried.replayed).toBeUndefined();
    expect(retried.body.errors).toBeUndefined();
    expect(retried.body.data.createOrder.status).toBe("PENDING");
    expect(await ordersOfCoffee()).toBe(before + 1);
  });

  // The fair-share rule forbids holding stock locks while a payload is read, so a
  // mutation commits before its payload is read and its answer cannot be in
  // the effects' transaction. What is atomic with the effects is the key's
  // claim (marked `committed`): a crash or failure between the commit and
  // the answer's write leaves a `committed` key, and a retry then waits for
  // the answer and is IDEMPOTENCY_KEY_IN_PROGRESS: never a second order.
  test("the claim is saved with the effects: when writing the answer fails, the order is saved once, and the retry is IDEMPOTENCY_KEY_IN_PROGRESS, never a second order", async () => {
    // Writing the answer fails (as a crash between the commit and the answer would lose it): a trigger of this test on the keys table.
    await t.db.query(`create or replace function app_private.idempotency_test_fault() returns trigger language plpgsql as $$
      begin if new.key like 'crash-%' and new.status = 'done' then raise exception 'simulated crash' using errcode = 'XX000'; end if; return new; end $$`);
    await t.db.query("create trigger _000_idempotency_test_fault before update on app_private.idempotency_keys for each row execute function app_private.idempotency_test_fault()");
    await t.db.query("update app_private.settings set value = 1 where key = 'idempotency_wait_seconds'");
    const key = newKey("crash");
    const before = await ordersOfCoffee();
    let id: string;
    try {
      const first = await place(key);
      // The order was made and the client is told so.
      expect(first.body.errors).toBeUndefined();
      id = first.body.data.createOrder.id;
      expect(await ordersOfCoffee()).toBe(before + 1);
      expect(await keyRow(key)).toEqual([{ owner: `account:${DEMO.barista.id}`, status: "committed", answered: false }]);
      // The mutation's own result was saved with the claim: the order's id.
      const { rows } = await t.db.query("select mutation_result::text as r from app_private.idempotency_keys where key = $1", [key]);
      expect(rows[0].r).toContain(id);
    } finally {
      await t.db.query("drop trigger _000_idempotency_test_fault on app_private.idempotency_keys");
    }
    const started = Date.now();
    const retried = await place(key);
    expect(retried.body.errors?.map((e) => e.extensions?.code)).toEqual(["IDEMPOTENCY_KEY_IN_PROGRESS"]);
    expect(retried.status).toBe(409);
    expect(retried.body.data ?? null).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(await ordersOfCoffee()).toBe(before + 1);
  });

  test("a retry that finds the key committed waits for the answer and replays it", async () => {
    const key = newKey("late");
    const first = await place(key);
    const before = await ordersOfCoffee();
    // As if the first request were still building its answer after its commit.
    const { rows } = await t.db.query("update app_private.idempotency_keys set status = 'committed', response = null where key = $1 returning response", [key]);
    expect(rows).toHaveLength(1);
    const retry = place(key);
    await new Promise((r) => setTimeout(r, 300));
    await t.db.query("update app_private.idempotency_keys set status = 'done', response = $2::json where key = $1", [key, JSON.stringify({ data: first.body.data })]);
    const again = await retry;
    expect(again.replayed).toBe("true");
    expect(again.body.data).toEqual(first.body.data);
    expect(await ordersOfCoffee()).toBe(before);
  });

  test("a key that is not 1-255 printable ASCII characters is BAD_USER_INPUT and changes nothing", async () => {
    const before = await ordersOfCoffee();
    for (const bad of ["", "x".repeat(256), "caf\u00e9", "tab\there"]) {
      const r = await place(bad);
      expect({ bad, codes: r.body.errors?.map((e) => e.extensions?.code) }).toEqual({ bad, codes: ["BAD_USER_INPUT"] });
    }
    expect((await place("x".repeat(255))).body.errors).toBeUndefined();
    expect((await place(" ~!")).body.errors).toBeUndefined();
    expect(await ordersOfCoffee()).toBe(before + 2);
  });

  test("a query with a key: the key is ignored (queries change nothing); a malformed key is still refused", async () => {
    const key = newKey("query");
    const a = await post(t, "barista", MENU, {}, key);
    const b = await post(t, "barista", MENU, {}, key);
    expect(a.body.errors).toBeUndefined();
    expect(b.replayed).toBeUndefined();
    expect(await keyRow(key)).toEqual([]);
    expect((await post(t, "barista", MENU, {}, "")).body.errors?.map((e) => e.extensions?.code)).toEqual(["BAD_USER_INPUT"]);
  });

  test("a key belongs to its caller: equal keys of different callers both run", async () => {
    const key = newKey("shared");
    const before = await ordersOfCoffee();
    const [barista, admin] = await Promise.all([place(key, {}, "barista"), place(key, {}, "admin")]);
    expect([barista.replayed, admin.replayed]).toEqual([undefined, undefined]);
    expect(barista.body.data.createOrder.id).not.toBe(admin.body.data.createOrder.id);
    expect(await ordersOfCoffee()).toBe(before + 2);
    // An anonymous caller's key is its source's (here a sign-in: it changed something, so its key is stored).
    const anonymous = await post(
      t,
      "anonymous",
      `mutation($email: String!, $password: String!) { login(email: $email, password: $password) { role } }`,
      { email: DEMO.alice.email, password: DEMO.password },
      key,
    );
    expect(anonymous.replayed).toBeUndefined();
    expect(anonymous.body.data).toEqual({ login: { role: "customer" } });
    const owners = (await keyRow(key)).map((r) => r.owner).sort();
    expect(owners).toEqual([`account:${DEMO.admin.id}`, `account:${DEMO.barista.id}`, "source:127.0.0.1"].sort());
  });

  test("20 concurrent requests with one key: exactly one order, every answer the same", async () => {
    const key = newKey("storm");
    const before = await ordersOfCoffee();
    const answers = await Promise.all(Array.from({ length: 20 }, () => place(key)));
    expect(await ordersOfCoffee()).toBe(before + 1);
    const ran = answers.filter((a) => a.replayed === undefined);
    expect(ran).toHaveLength(1);
    for (const a of answers) expect(a.body.data).toEqual(ran[0]!.body.data);
  });

  test("a request that waits longer than idempotency_wait_seconds for the key's holder: IDEMPOTENCY_KEY_IN_PROGRESS", async () => {
    const key = newKey("held");
    await t.db.query("update app_private.settings set value = 1 where key = 'idempotency_wait_seconds'");
    const holder = await t.db.connect();
    try {
      // Another transaction holds the key (as a request would while its mutation runs).
      await holder.query("begin");
      await holder.query("insert into app_private.idempotency_keys (owner, key, request_hash, expires_at) values ($1, $2, 'x', now() + interval '1 hour')", [`account:${DEMO.barista.id}`, key]);
      const before = await ordersOfCoffee();
      const started = Date.now();
      const r = await place(key);
      expect(r.body.errors?.map((e) => e.extensions?.code)).toEqual(["IDEMPOTENCY_KEY_IN_PROGRESS"]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect(await ordersOfCoffee()).toBe(before);
    } finally {
      await holder.query("rollback");
      holder.release();
      await t.db.query("update app_private.settings set value = 10 where key = 'idempotency_wait_seconds'");
    }
    // The holder gave up: the key is free, the request runs.
    expect((await place(key)).body.data.createOrder.status).toBe("PENDING");
  });

  test("an expired key counts as unused; the worker's hourly purge deletes expired keys", async () => {
    const key = newKey("expired");
    await place(key);
    await t.db.query("update app_private.idempotency_keys set expires_at = now() - interval '1 second' where key = $1", [key]);
    const before = await ordersOfCoffee();
    const again = await place(key);
    expect(again.replayed).toBeUndefined();
    expect(await ordersOfCoffee()).toBe(before + 1);
    await t.db.query("update app_private.idempotency_keys set expires_at = now() - interval '1 second' where key = $1", [key]);
    const { rows: crons } = await t.db.query("select identifier from graphile_worker._private_known_crontabs where identifier = 'purge_idempotency_keys'");
    expect(crons).toEqual([{ identifier: "purge_idempotency_keys" }]);
    await t.db.query("select graphile_worker.add_job('purge_idempotency_keys', '{}'::json)");
    await waitUntil("the purge ran", async () => (await keyRow(key)).length === 0);
    const { rows } = await t.db.query("select value from app_private.settings where key = 'idempotency_key_retention_hours'");
    expect(Number(rows[0].value)).toBe(24);
  });

  test("the request roles cannot read or write the keys table directly", async () => {
    const { rows } = await t.db.query(
      "select has_table_privilege(r, 'app_private.idempotency_keys', 'select') or has_table_privilege(r, 'app_private.idempotency_keys', 'insert') as any from unnest(array['cafe_anonymous','cafe_customer','cafe_barista','cafe_admin','cafe_system']) r",
    );
    expect(rows.map((r) => r.any)).toEqual([false, false, false, false, false]);
  });
});

describe("over graphql-ws (extensions.idempotencyKey)", () => {
  test("replay with extensions.idempotentReplayed; one order; another request is IDEMPOTENCY_KEY_REUSED", async () => {
    const token = await t.token("barista");
    const key = newKey("ws");
    const vars = { coffeeId: coffee.id, quantity: 1 };
    const before = await ordersOfCoffee();
    const first = await overWs(token, PLACE, vars, { idempotencyKey: key });
    expect(first.errors).toBeUndefined();
    expect(first.extensions?.idempotentReplayed).toBeUndefined();
    const again = await overWs(token, PLACE, vars, { idempotencyKey: key });
    expect(again.extensions?.idempotentReplayed).toBe(true);
    expect(again.data).toEqual(first.data);
    expect(await ordersOfCoffee()).toBe(before + 1);
    // The same key over HTTP is the same caller's same request: replayed too.
    const http = await place(key);
    expect(http.replayed).toBe("true");
    expect(http.body.data).toEqual(first.data);
    const other = await overWs(token, PLACE, { ...vars, quantity: 3 }, { idempotencyKey: key });
    expect(other.errors?.map((e) => e.extensions?.code)).toEqual(["IDEMPOTENCY_KEY_REUSED"]);
    expect(await ordersOfCoffee()).toBe(before + 1);
  });

  test("a refusal is not stored (the retry runs again); a malformed key is BAD_USER_INPUT", async () => {
    const token = await t.token("barista");
    const key = newKey("ws-refused");
    const vars = { coffeeId: coffee.id, quantity: 0 };
    const first = await overWs(token, PLACE, vars, { idempotencyKey: key });
    expect(first.errors?.map((e) => e.extensions?.code)).toEqual(["BAD_USER_INPUT"]);
    const again = await overWs(token, PLACE, vars, { idempotencyKey: key });
    expect(again.extensions?.idempotentReplayed).toBeUndefined();
    expect(again.errors?.map((e) => e.extensions?.code)).toEqual(["BAD_USER_INPUT"]);
    expect(await keyRow(key)).toEqual([]);
    for (const bad of [42, "", "x".repeat(256), "\u00e9t\u00e9"]) {
      const r = await overWs(token, PLACE, { coffeeId: coffee.id, quantity: 1 }, { idempotencyKey: bad });
      expect({ bad, codes: r.errors?.map((e) => e.extensions?.code) }).toEqual({ bad, codes: ["BAD_USER_INPUT"] });
    }
  });

  test("a server fault is not stored over graphql-ws either", async () => {
    await t.db.query(`create or replace function app_private.idempotency_test_fault() returns trigger language plpgsql as $$
      begin if new.notes = 'server fault' then raise exception 'simulated fault' using errcode = 'XX000'; end if; return new; end $$`);
    await t.db.query("create trigger _000_idempotency_test_fault before insert on app_public.orders for each row execute function app_private.idempotency_test_fault()");
    const token = await t.token("barista");
    const key = newKey("ws-fault");
    const vars = { coffeeId: coffee.id, quantity: 1, notes: "server fault" };
    const failed = await overWs(token, PLACE, vars, { idempotencyKey: key });
    expect(failed.errors?.map((e) => e.extensions?.code)).toEqual(["INTERNAL_SERVER_ERROR"]);
    expect(await keyRow(key)).toEqual([]);
    await t.db.query("drop trigger _000_idempotency_test_fault on app_public.orders");
    const retried = await overWs(token, PLACE, vars, { idempotencyKey: key });
    expect(retried.extensions?.idempotentReplayed).toBeUndefined();
    expect(retried.data.createOrder.status).toBe("PENDING");
  });

  test("equal keys of different callers both run; 20 concurrent operations with one key make one order", async () => {
    const [barista, admin] = [await t.token("barista"), await t.token("admin")];
    const shared = newKey("ws-shared");
    const vars = { coffeeId: coffee.id, quantity: 1 };
    const before = await ordersOfCoffee();
    const [a, b] = await Promise.all([overWs(barista, PLACE, vars, { idempotencyKey: shared }), overWs(admin, PLACE, vars, { idempotencyKey: shared })]);
    expect(a.data.createOrder.id).not.toBe(b.data.createOrder.id);
    expect(await ordersOfCoffee()).toBe(before + 2);

    const key = newKey("ws-storm");
    const client = t.ws(barista);
    const answers = await Promise.all(
      Array.from(
        { length: 20 },
        () =>
          new Promise<any>((resolve, reject) => {
            let result: any;
            client.subscribe({ query: PLACE, variables: vars, extensions: { idempotencyKey: key } } as any, { next: (r) => void (result = r), error: reject, complete: () => resolve(result) });
          }),
      ),
    );
    expect(await ordersOfCoffee()).toBe(before + 3);
    const ran = answers.filter((r) => !r.extensions?.idempotentReplayed);
    expect(ran).toHaveLength(1);
    for (const r of answers) expect(r.data).toEqual(ran[0].data);
  });
});

describe("across API processes and restarts", () => {
  test("two API processes on one database: one order for a key; a replay after a restart", async () => {
    let other = await startTestService();
    try {
      const key = newKey("two");
      const before = await ordersOfCoffee();
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => place(key, {}, "barista", i % 2 ? t : other)));
      expect(await ordersOfCoffee()).toBe(before + 1);
      const ran = answers.filter((a) => a.replayed === undefined);
      expect(ran).toHaveLength(1);
      for (const a of answers) expect(a.body.data).toEqual(ran[0]!.body.data);

      // Stop that process, start a new one: the key and its answer are still there.
      const restartKey = newKey("restart");
      const first = await place(restartKey, {}, "barista", other);
      await other.stop();
      other = await startTestService();
      const again = await place(restartKey, {}, "barista", other);
      expect(again.replayed).toBe("true");
      expect(again.body.data).toEqual(first.body.data);
      expect(await ordersOfCoffee()).toBe(before + 2);
    } finally {
      await other.stop();
    }
  });
});

test("every answer the catalogue serves with a 5xx status is a server fault: never stored, so the retry runs", () => {
  const fiveHundreds = Object.entries(ERROR_CATALOGUE as Record<string, { status: number | null }>)
    .filter(([, e]) => (e.status ?? 0) >= 500)
    .map(([code]) => code);
  expect(fiveHundreds).toContain("SERVICE_BUSY");
  expect(fiveHundreds.filter((code) => !SERVER_FAULTS.has(code))).toEqual([]);
});
