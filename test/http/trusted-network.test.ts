import { subscribe } from "../support/client.ts";
import { forgetAccounts, makeCoffee, maxId, placeOrder, removeStockedCoffee, stockedCoffee, type StockedCoffee } from "../support/fixtures.ts";
import { listening, useTestService } from "../support/service.ts";
import { sleep } from "../support/wait.ts";

// A café's own network: its customers, tills
// and kiosks share one address. From an address in TRUSTED_NETWORKS (here
// 127.0.0.1, where the test's requests come from), with the default limits
// on (request rate, WebSockets and HTTP connections per source), 200
// customers each sign in with `login`, open a WebSocket, subscribe and
// place an order. The SQL sign-in counters per source are raised there
// too: the API passes TRUSTED_NETWORK_FACTOR in `cafe.source_limit_factor`,
// which app_private.source_limit_factor() reads.

const CUSTOMERS = 200;
const PASSWORD = "Flat-White-200!";
const run = `${process.pid}${Date.now().toString(36)}`;
const emailOf = (i: number) => `wifi-${i}-${run}@example.test`;
const LOGIN = `mutation($email: String!, $password: String!) { login(email: $email, password: $password) { token } }`;

let c: StockedCoffee;
let firstAttemptId = 0;
let hashCostAtStart = 0;
let perSourceAtStart = 0;
const newCoffees: string[] = [];

const t = useTestService({
  env: { TRUSTED_NETWORKS: "127.0.0.1/32", GRAPHQL_RATE_LIMIT: "100", GRAPHQL_RATE_BURST: "200" },
  deleteNewOrders: true,
  async cleanup() {
    await t.db.query("update app_private.settings set value = $1 where key = 'password_hash_cost'", [hashCostAtStart]);
    await t.db.query("update app_private.settings set value = $1 where key = 'login_max_failures_per_source'", [perSourceAtStart]);
    for (const id of newCoffees) await t.db.query("delete from app_public.coffees where id = $1", [id]);
    await forgetAccounts(t, `wifi-%-${run}@example.test`, "app_public.customers", firstAttemptId);
    await removeStockedCoffee(t, c);
  },
});

const setting = async (key: string) => Number((await t.db.query("select value from app_private.settings where key = $1", [key])).rows[0].value);

beforeAll(async () => {
  firstAttemptId = await maxId(t, "app_private.login_attempts");
  hashCostAtStart = await setting("password_hash_cost");
  perSourceAtStart = await setting("login_max_failures_per_source");
  c = await stockedCoffee(t, "Wi-Fi", "3.00", 1);
  // 200 accounts at once, with a cheap hash (and the cost sign-ins expect, so none is redone).
  await t.db.query("update app_private.settings set value = 4 where key = 'password_hash_cost'");
  const emails = Array.from({ length: CUSTOMERS }, (_, i) => emailOf(i));
  await t.db.query(
    `with a as (insert into app_private.accounts (email, password_hash, role)
                select e, public.crypt($2, public.gen_salt('bf', 4)), 'customer' from unnest($1::text[]) e returning id)
     insert into app_public.customers (id, name) select id, 'Wi-Fi customer' from a`,
    [emails, PASSWORD],
  );
});

test(`from a trusted network, ${CUSTOMERS} customers each sign in, open a WebSocket, subscribe and place an order`, async () => {
  // In waves of 25 at once (a café's queue, not one instant); every socket stays open to the end.
  const customers: Array<{ i: number; problem: string | null; sub?: ReturnType<typeof subscribe<any>> }> = [];
  const one = async (i: number) => {
    const r = await t.gql(LOGIN, { variables: { email: emailOf(i), password: PASSWORD } });
    const token: string | undefined = r.body.data?.login?.token;
    if (!token) return { i, problem: `login: ${r.status} ${JSON.stringify(r.body.errors)}` };
    const sub = subscribe(t.ws(token), "subscription { newCoffee { id } }");
    try {
      await placeOrder(t, token, [{ coffeeId: c.id, quantity: 1 }]);
    } catch (e) {
      return { i, problem: `order: ${(e as Error).message}` };
    }
    return { i, sub, problem: null };
  };
  for (let from = 0; from < CUSTOMERS; from += 25) {
    customers.push(...(await Promise.all(Array.from({ length: Math.min(25, CUSTOMERS - from) }, (_, k) => one(from + k)))));
  }
  expect(customers.filter((x) => x.problem).map((x) => x.problem)).toEqual([]);
  await listening(t, ["coffee:new"]);
  // Each socket's subscribe message has reached the server.
  await sleep(1000);
  const id = await makeCoffee(t, `Wi-Fi special ${run}`, "3.50");
  newCoffees.push(id);
  const received = await Promise.all(
    customers.map(async (x) => {
      const results = await x.sub!.waitFor(1, 20_000);
      return results[0]?.data?.newCoffee?.id === id ? "received" : JSON.stringify(results[0] ?? x.sub!.error ?? "nothing");
    }),
  );
  expect(received.filter((r) => r !== "received")).toEqual([]);
  const { rows } = await t.db.query("select count(distinct o.customer_id)::int as n from app_public.orders o join app_private.accounts a on a.id = o.customer_id where a.email::text like $1", [
    `wifi-%-${run}@example.test`,
  ]);
  expect(rows[0].n).toBe(CUSTOMERS);
}, 180_000);

test("sign-in failures per source: a trusted source may fail TRUSTED_NETWORK_FACTOR times login_max_failures_per_source; the SQL raises the threshold only with cafe.source_limit_factor", async () => {
  await t.db.query("update app_private.settings set value = 3 where key = 'login_max_failures_per_source'");
  // Over the API from 127.0.0.1 (trusted, factor 10): 6 failures for 6 e-mails, none locked out.
  const codes: string[] = [];
  for (let i = 0; i < 6; i++) {
    const r = await t.gql(LOGIN, { variables: { email: `wifi-unknown-${i}-${run}@example.test`, password: "wrong-password" } });
    codes.push(r.body.errors?.[0]?.extensions?.code ?? (r.body.data?.login === null ? "NO_SESSION" : "OK"));
  }
  expect(codes).not.toContain("RATE_LIMITED");
  // In SQL, from one untrusted source: the 4th try is refused; with the factor set, it is not.
  const source = `198.51.100.${Math.floor(Math.random() * 200) + 20}`;
  const client = await t.db.connect();
  try {
    const tryOnce = async (factor: string | null) => {
      await client.query("begin");
      try {
        if (factor) await client.query("select set_config('cafe.source_limit_factor', $1, true)", [factor]);
        await client.query("select app_private.assert_login_allowed('x@example.test', $1)", [source]);
        return "allowed";
      } catch (e) {
        return (e as { code?: string }).code === "CT004" ? "refused" : String(e);
      } finally {
        await client.query("rollback");
      }
    };
    await t.db.query("insert into app_private.login_attempts (email, source, succeeded) select 'wifi-' || g || $2, $1, false from generate_series(1, 3) g", [source, `-${run}@example.test`]);
    expect({ untrusted: await tryOnce(null), trusted: await tryOnce("10"), junk: await tryOnce("lots") }).toEqual({
      untrusted: "refused",
      trusted: "allowed",
      junk: "refused",
    });
  } finally {
    client.release();
  }
});
