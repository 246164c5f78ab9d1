import { type GraphQLResponse } from "../support/client.ts";
import { percentile, say } from "../support/figures.ts";
import { forgetAccounts, maxId } from "../support/fixtures.ts";
import { useTestService } from "../support/service.ts";
import { sleep } from "../support/wait.ts";

// The password-check queue is shared fairly (src/passwordChecks.ts): a
// flood of sign-ins from 64 addresses, each under its own limits, slows
// sign-ins, but customers signing in from other addresses still get in;
// one source holds at most PASSWORD_CHECK_PLACES_PER_CALLER
// places; a source its own limits refuse (SQL) never takes a place. The
// service trusts X-Forwarded-For (TRUST_PROXY=true), with the production
// defaults of the queue (2 running, 32 waiting, 3 places per caller) and
// of the bcrypt cost.

const LOGIN = `mutation($email: String!, $password: String!) { login(email: $email, password: $password) { token } }`;
const PASSWORD = "Flat-White-64!";
const run = `${process.pid}${Date.now().toString(36)}`;
let serial = 0;
const unknownEmail = () => `flood-nobody-${run}-${++serial}@example.test`;
const customerEmail = (i: number) => `flood-customer-${i}-${run}@example.test`;
const FLOOD_ADDRESSES = 64;
const CUSTOMERS = 20;

let firstAttemptId = 0;
const t = useTestService({
  env: { TRUST_PROXY: "true", PASSWORD_CHECK_PLACES_PER_CALLER: "3" },
  async cleanup() {
    await forgetAccounts(t, `flood-%-${run}@example.test`, "app_public.customers", firstAttemptId);
  },
});

beforeAll(async () => {
  firstAttemptId = await maxId(t, "app_private.login_attempts");
  // Real customers, their passwords hashed at the production cost (what sign-in checks).
  const emails = Array.from({ length: CUSTOMERS }, (_, i) => customerEmail(i));
  await t.db.query(
    `with a as (insert into app_private.accounts (email, password_hash, role)
                select e, app_private.hash_password($2), 'customer' from unnest($1::text[]) e returning id)
     insert into app_public.customers (id, name) select id, 'Flood bystander' from a`,
    [emails, PASSWORD],
  );
});

async function loginFrom(source: string, email: string, password: string): Promise<GraphQLResponse & { ms: number }> {
  const started = Date.now();
  const res = await fetch(`${t.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": source },
    body: JSON.stringify({ query: LOGIN, variables: { email, password } }),
  });
  return { status: res.status, body: await res.json(), ms: Date.now() - started };
}
const codeOf = (r: GraphQLResponse) => r.body.errors?.[0]?.extensions?.code ?? "OK";
const tally = (rs: GraphQLResponse[]) => rs.map(codeOf).reduce<Record<string, number>>((m, c) => ((m[c] = (m[c] ?? 0) + 1), m), {});

/**
 * 64 addresses, each 2 sign-ins in flight with unknown e-mails (128: 4 times
 * the queue), until `stop()`; after a refusal a loop waits the
 * retryAfterSeconds it was given (1 s: a flood that does not is bounded by
 * GRAPHQL_RATE_LIMIT, test/http/rate-limiter.test.ts). An address whose wrong
 * passwords reach login_max_failures_per_source is refused by its own limit.
 */
function flood() {
  let stopped = false;
  const answers: GraphQLResponse[] = [];
  const loops: Array<Promise<void>> = [];
  for (let a = 1; a <= FLOOD_ADDRESSES; a++) {
    for (let c = 0; c < 2; c++) {
      loops.push(
        (async () => {
          while (!stopped) {
            // A request the loaded server cut (a reset) is the flood's loss, not the test's failure.
            const r = await loginFrom(`198.51.100.${a}`, unknownEmail(), "Wrong-password-1").catch(
              () => ({ status: -1, body: { errors: [{ message: "lost", extensions: { code: "LOST" } }] } }) as GraphQLResponse,
            );
            answers.push(r);
            if (codeOf(r) === "RATE_LIMITED") await sleep(1000 * (r.body.errors?.[0]?.extensions?.retryAfterSeconds ?? 1));
          }
        })(),
      );
    }
  }
  return {
    answers,
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

test(`under a sign-in flood from ${FLOOD_ADDRESSES} addresses (each under its own limits), >= 95% of ${CUSTOMERS} customers signing in from other addresses get in; a locked-out source is refused by its limits, not by the queue`, async () => {
  await loginFrom("192.0.2.9", unknownEmail(), "Wrong-password-1"); // the first request plans what the others reuse
  const f = flood();
  try {
    await sleep(2000); // the queue is full by now
    const customers: Array<GraphQLResponse & { ms: number }> = [];
    for (let i = 0; i < CUSTOMERS; i++) {
      customers.push(await loginFrom(`192.0.2.${10 + i}`, customerEmail(i), PASSWORD));
      await sleep(200);
    }
    // A source past its own limit (login_max_failures_per_source) while the queue is full: its own limit answers.
    const locked = "192.0.2.200";
    await t.db.query(
      "insert into app_private.login_attempts (email, source, succeeded) select 'x' || g || '@example.test', $1, false from generate_series(1, app_private.setting('login_max_failures_per_source')::int) g",
      [locked],
    );
    const refused = await loginFrom(locked, unknownEmail(), "Wrong-password-1");
    const floodAnswers = f.answers.length;

    const ok = customers.filter((r) => r.body.data?.login?.token);
    const p95 = percentile(
      customers.map((r) => r.ms).sort((a, b) => a - b),
      95,
    );
    say(
      `[sign-in flood] customers ${ok.length}/${CUSTOMERS} signed in, p95 ${p95} ms (${customers.map((r) => r.ms).join(" ")}), ${JSON.stringify(tally(customers))}; flood answers so far ${floodAnswers}: ${JSON.stringify(tally(f.answers))}`,
    );
    // Their latency is a figure (printed above; drill 11's "distributed sign-in flood" compares it with quiet), not asserted here:
    // two runs on a loaded 2-core machine gave p95 550 ms and 1,837 ms (slowest 1.2 s and 3.7 s), too near 3 s to assert it.
    expect(ok.length).toBeGreaterThanOrEqual(Math.ceil(0.95 * CUSTOMERS));
    // The flood really filled the queue: some of its checks were refused by it.
    expect(tally(f.answers).RATE_LIMITED).toBeGreaterThan(0);
    expect(codeOf(refused)).toBe("RATE_LIMITED");
    expect(refused.body.errors![0]!.message).toMatch(/Too many failed sign-ins/);
  } finally {
    await f.stop();
  }
}, 240_000);

test("one source holds at most PASSWORD_CHECK_PLACES_PER_CALLER (3) places: of 12 sign-ins at once from one address, 3 are checked and the rest refused at once", async () => {
  const source = "192.0.2.201";
  const cost = (await t.db.query("select value from app_private.settings where key = 'password_hash_cost'")).rows[0].value;
  await t.db.query("update app_private.settings set value = 12 where key = 'password_hash_cost'"); // slow hashes: the 12 certainly overlap
  let answers: Array<GraphQLResponse & { ms: number }>;
  try {
    answers = await Promise.all(Array.from({ length: 12 }, () => loginFrom(source, unknownEmail(), "Wrong-password-1")));
  } finally {
    await t.db.query("update app_private.settings set value = $1 where key = 'password_hash_cost'", [cost]);
  }
  const counts = tally(answers);
  expect(counts).toEqual({ UNAUTHENTICATED: 3, RATE_LIMITED: 9 });
  const busy = answers.find((a) => codeOf(a) === "RATE_LIMITED")!;
  expect(busy.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED", retryAfterSeconds: 1 });
}, 60_000);

test("a flood of wrong passwords for one account from 16 other addresses never locks it: its owner's right password, from their own address, gets in every time", async () => {
  // The account's share of places was taken by strangers while their own
  // limits were asked, even by strangers already over them (an attack:
  // 19 of 19 refused RATE_LIMITED). Places are held by who pays: the source.
  const victim = `flood-victim-${run}@example.test`;
  await t.db.query(
    `with a as (insert into app_private.accounts (email, password_hash, role) values ($1, app_private.hash_password($2), 'customer') returning id)
     insert into app_public.customers (id, name) select id, 'Flood victim' from a`,
    [victim, PASSWORD],
  );
  let stopped = false;
  const answers: GraphQLResponse[] = [];
  const loops: Array<Promise<void>> = [];
  for (let a = 1; a <= 16; a++) {
    for (let c = 0; c < 3; c++) {
      loops.push(
        (async () => {
          while (!stopped) {
            const r = await loginFrom(`198.18.0.${a}`, victim, `Random-guess-${Math.random()}`).catch(
              () => ({ status: -1, body: { errors: [{ message: "lost", extensions: { code: "LOST" } }] } }) as GraphQLResponse,
            );
            answers.push(r);
            await sleep(codeOf(r) === "RATE_LIMITED" ? 100 : 0); // no retry hint obeyed: a stranger does not
          }
        })(),
      );
    }
  }
  const own: GraphQLResponse[] = [];
  try {
    await sleep(1500);
    for (let i = 0; i < 12; i++) {
      own.push(await loginFrom("192.0.2.250", victim, PASSWORD));
      await sleep(250);
    }
  } finally {
    stopped = true;
    await Promise.all(loops);
  }
  say(
    `[lock-out flood] owner signed in ${own.filter((r) => r.body.data?.login?.token).length}/${own.length}: ${JSON.stringify(tally(own))}; strangers' answers ${answers.length}: ${JSON.stringify(tally(answers))}`,
  );
  expect(answers.length).toBeGreaterThan(100); // the flood really ran
  expect(tally(own)).toEqual({ OK: own.length });
}, 120_000);

test("150 sign-ins at once from 150 addresses never hold more than a few of the pool's connections: a customer's menu read from another address is answered meanwhile", async () => {
  // Each sign-in's own limits (assert_password_check_allowed) took a pool
  // connection with no process-wide bound: a many-address flood took the
  // whole pool. Now at most as many limit checks run
  // at once as password checks (PASSWORD_CHECK_CONCURRENCY, 2 here).
  const pool = t.service.api!.pool;
  let inUse = 0;
  let most = 0;
  let mostWaiting = 0;
  const onAcquire = () => {
    most = Math.max(most, ++inUse);
    mostWaiting = Math.max(mostWaiting, pool.waitingCount);
  };
  const onRelease = () => (inUse -= 1);
  pool.on("acquire", onAcquire);
  pool.on("release", onRelease);
  let menu: GraphQLResponse | undefined;
  let answers: GraphQLResponse[] = [];
  try {
    const flood = Promise.all(Array.from({ length: 150 }, (_, i) => loginFrom(`203.0.113.${i + 1}`, unknownEmail(), "Wrong-password-1")));
    await sleep(50);
    const res = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": "192.0.2.240" },
      body: JSON.stringify({ query: "query Menu { menuItems { id } }" }),
    });
    menu = { status: res.status, body: await res.json() };
    answers = await flood;
  } finally {
    pool.off("acquire", onAcquire);
    pool.off("release", onRelease);
  }
  say(
    `[many-address sign-ins] 150 at once: ${JSON.stringify(tally(answers))}; the pool's connections in use at most ${most} of ${pool.options.max}, statements waiting for one at most ${mostWaiting}; the menu read: ${codeOf(menu!)}`,
  );
  expect(codeOf(menu!)).toBe("OK");
  expect(most).toBeLessThanOrEqual(7); // 2 password checks, 2 limit checks, the menu read, the service's own (rate-limit sync...): 5 and 6 seen; 10 of 10 before
  expect(tally(answers).UNAUTHENTICATED).toBeGreaterThan(0);
}, 120_000);
