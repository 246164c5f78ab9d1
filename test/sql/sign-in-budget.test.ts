import pg from "pg";
import { expectRefused, gql, type GraphQLResponse, ok } from "../support/client.ts";
import { testDatabaseUrl } from "../support/db.ts";
import { forgetAccounts, maxId } from "../support/fixtures.ts";
import { startAnotherService, useTestService, type TestService } from "../support/service.ts";
import { sleep, waitUntil } from "../support/wait.ts";

// Sign-in under a budget: every password check (login,
// changePassword, register) is counted per account and per source, right
// passwords too; the counts hold under concurrent requests; an API process
// runs a bounded number of password checks at once and refuses the excess
// RATE_LIMITED with a retry hint; the sign-in tables are purged by a cron
// task. The service trusts X-Forwarded-For (TRUST_PROXY=true): each test
// picks its own sources in TEST-NET-3 (203.0.113.0/24) and 192.0.2.0/24.

const LOGIN = `mutation($email: String!, $password: String!) { login(email: $email, password: $password) { token role } }`;
const REGISTER = `mutation($email: String!, $password: String!, $name: String!) { register(email: $email, password: $password, name: $name) { role } }`;
const CHANGE = `mutation($old: String!, $new: String!) { changePassword(oldPassword: $old, newPassword: $new) }`;

const run = `${process.pid}${Date.now().toString(36)}`;
let serial = 0;
const freshEmail = (label: string) => `budget-${label}-${run}-${++serial}@example.test`;
const PASSWORD = "Cortado-2024!";
let sourceSerial = 0;
const newSource = (net = "203.0.113") => `${net}.${++sourceSerial}`;

/** The settings this file changes, put back as found (the suites run with the success limits raised). */
const KEYS = ["login_max_successes_per_account", "login_max_successes_per_source", "password_hash_cost"];
let settingsAtStart: Array<{ key: string; value: string }> = [];

const t = useTestService({
  worker: true,
  env: { TRUST_PROXY: "true" },
  async cleanup() {
    for (const s of settingsAtStart) await t.db.query("update app_private.settings set value = $2 where key = $1", [s.key, s.value]);
    await t.db.query("delete from app_private.registration_attempts where id > $1", [firstRegistrationId]);
    await forgetAccounts(t, `budget-%-${run}-%@example.test`, "app_public.customers", firstAttemptId);
  },
});
let firstAttemptId = 0;
let firstRegistrationId = 0;

beforeAll(async () => {
  firstAttemptId = await maxId(t, "app_private.login_attempts");
  firstRegistrationId = await maxId(t, "app_private.registration_attempts");
  settingsAtStart = (await t.db.query("select key, value::text from app_private.settings where key = any($1)", [KEYS])).rows;
});

afterEach(async () => {
  for (const s of settingsAtStart) await t.db.query("update app_private.settings set value = $2 where key = $1", [s.key, s.value]);
});

async function gqlFrom(url: string, source: string, query: string, variables: Record<string, unknown>, token?: string): Promise<GraphQLResponse> {
  const res = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": source, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, body: await res.json() };
}
const loginFrom = (source: string, email: string, password: string) => gqlFrom(t.url, source, LOGIN, { email, password });
const codeOf = (r: GraphQLResponse) => r.body.errors?.[0]?.extensions?.code ?? "OK";
const setting = async (key: string) => Number((await t.db.query("select value from app_private.settings where key = $1", [key])).rows[0].value);
const setSetting = (key: string, value: number) => t.db.query("update app_private.settings set value = $2 where key = $1", [key, value]);
/** How many answers had each code. */
const tally = (rs: GraphQLResponse[]) => rs.map(codeOf).reduce<Record<string, number>>((m, c) => ((m[c] = (m[c] ?? 0) + 1), m), {});

/** A customer account whose password is hashed as registration hashes it. */
async function customer(label: string): Promise<string> {
  const email = freshEmail(label);
  const { rows } = await t.db.query("insert into app_private.accounts (email, password_hash, role) values ($1, app_private.hash_password($2), 'customer') returning id", [email, PASSWORD]);
  await t.db.query("insert into app_public.customers (id, name) values ($1, 'Budget Tester')", [rows[0].id]);
  return email;
}

async function passwordChecksOf(email: string): Promise<{ failed: number; succeeded: number }> {
  const { rows } = await t.db.query(
    "select count(*) filter (where not succeeded)::int as failed, count(*) filter (where succeeded)::int as succeeded from app_private.login_attempts where lower(email) = lower($1)",
    [email],
  );
  return rows[0];
}

describe("counters hold under concurrent requests", () => {
  test("20 wrong passwords at once for one account from one source: exactly login_max_failures_per_account_and_source are checked, the rest RATE_LIMITED", async () => {
    const email = await customer("concurrent-guess");
    const perPair = await setting("login_max_failures_per_account_and_source");
    const source = newSource();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => loginFrom(source, email, `Wrong-guess-${i}`)));
    expect(tally(answers)).toEqual({ UNAUTHENTICATED: perPair, RATE_LIMITED: 20 - perPair });
    expect(await passwordChecksOf(email)).toEqual({ failed: perPair, succeeded: 0 });
    expectRefused(await loginFrom(source, email, PASSWORD), "RATE_LIMITED");
  }, 60_000);

  test("30 registrations at once from one source: exactly registration_max_per_source accounts are made", async () => {
    const limit = await setting("registration_max_per_source");
    const source = newSource();
    const emails = Array.from({ length: 30 }, () => freshEmail("flood"));
    const answers = await Promise.all(emails.map((email, i) => gqlFrom(t.url, source, REGISTER, { email, password: PASSWORD, name: `Flood ${i}` })));
    expect(tally(answers)).toEqual({ OK: limit, RATE_LIMITED: 30 - limit });
    const { rows } = await t.db.query("select count(*)::int as n from app_private.accounts where email = any($1::citext[])", [emails]);
    expect(rows[0].n).toBe(limit);
  }, 120_000);

  test("12 right passwords at once with login_max_successes_per_account = 4: exactly 4 sign in", async () => {
    const email = await customer("concurrent-right");
    await setSetting("login_max_successes_per_account", 4);
    const answers = await Promise.all(Array.from({ length: 12 }, () => loginFrom(newSource(), email, PASSWORD)));
    expect(tally(answers)).toEqual({ OK: 4, RATE_LIMITED: 8 });
    expect(await passwordChecksOf(email)).toEqual({ failed: 0, succeeded: 4 });
  }, 60_000);
});

describe("successful sign-ins count too", () => {
  test("past login_max_successes_per_account (from any sources) the right password is RATE_LIMITED, with a retry hint; another account signs in", async () => {
    const [email, other] = [await customer("often"), await customer("other")];
    await setSetting("login_max_successes_per_account", 3);
    for (let i = 1; i <= 3; i += 1) expect({ i, code: codeOf(await loginFrom(newSource(), email, PASSWORD)) }).toEqual({ i, code: "OK" });
    const refused = expectRefused(await loginFrom(newSource(), email, PASSWORD), "RATE_LIMITED");
    expect(refused.message).toMatch(/too many sign-ins to this account/i);
    expect(refused.extensions?.details?.retry_after_seconds).toBe(await setting("login_window_seconds"));
    ok(await loginFrom(newSource(), other, PASSWORD));
  });

  test("past login_max_successes_per_source, every sign-in and registration from that source is RATE_LIMITED; another source is not", async () => {
    await setSetting("login_max_successes_per_source", 3);
    const accounts = [await customer("src-1"), await customer("src-2"), await customer("src-3"), await customer("src-4")];
    const [busy, other] = [newSource("192.0.2"), newSource("192.0.2")];
    for (const email of accounts.slice(0, 3)) ok(await loginFrom(busy, email, PASSWORD));
    expectRefused(await loginFrom(busy, accounts[3]!, PASSWORD), "RATE_LIMITED");
    expectRefused(await gqlFrom(t.url, busy, REGISTER, { email: freshEmail("src-reg"), password: PASSWORD, name: "Late" }), "RATE_LIMITED");
    ok(await loginFrom(other, accounts[3]!, PASSWORD));
  });
});

describe("changePassword is a password check", () => {
  test("12 wrong current passwords at once with a stolen access token: only login_max_failures_per_account_and_source are checked; then even the right one is RATE_LIMITED, and so is a sign-in from that source", async () => {
    const email = await customer("stolen");
    const perPair = await setting("login_max_failures_per_account_and_source");
    const thief = newSource();
    const token = ok(await loginFrom(thief, email, PASSWORD)).login.token;
    const guesses = await Promise.all(Array.from({ length: 12 }, (_, i) => gqlFrom(t.url, thief, CHANGE, { old: `Guess-number-${i}`, new: "Stolen-account-1" }, token)));
    expect(tally(guesses)).toEqual({ UNAUTHENTICATED: perPair, RATE_LIMITED: 12 - perPair });
    expectRefused(await gqlFrom(t.url, thief, CHANGE, { old: PASSWORD, new: "Stolen-account-1" }, token), "RATE_LIMITED");
    expectRefused(await loginFrom(thief, email, PASSWORD), "RATE_LIMITED");
    // The password is unchanged; its owner, elsewhere, signs in and changes it.
    const owner = newSource();
    const own = ok(await loginFrom(owner, email, PASSWORD)).login.token;
    expect(ok(await gqlFrom(t.url, owner, CHANGE, { old: PASSWORD, new: "Owner-again-22" }, own)).changePassword).toBe(true);
    expect(await passwordChecksOf(email)).toEqual({ failed: perPair, succeeded: 3 });
  }, 60_000);

  test("a weak new password is refused before the current one is checked (no hash, nothing counted)", async () => {
    const email = await customer("weak");
    const source = newSource();
    const token = ok(await loginFrom(source, email, PASSWORD)).login.token;
    expectRefused(await gqlFrom(t.url, source, CHANGE, { old: "Not-the-password-1", new: "short" }, token), "BAD_USER_INPUT");
    expect(await passwordChecksOf(email)).toEqual({ failed: 0, succeeded: 1 });
  });
});

describe("password checks take a bounded share of the process", () => {
  let second: TestService | undefined;
  afterAll(async () => {
    await second?.stop();
  });

  test("with PASSWORD_CHECK_CONCURRENCY=1 and PASSWORD_CHECK_QUEUE=2, a burst of 12 sign-ins runs one hash at a time, refuses the excess RATE_LIMITED (retryAfterSeconds), and a menu read goes on", async () => {
    second = await startAnotherService({ TRUST_PROXY: "true", PASSWORD_CHECK_CONCURRENCY: "1", PASSWORD_CHECK_QUEUE: "2", DATABASE_POOL_SIZE: "6" });
    await setSetting("password_hash_cost", 12); // slow hashes: the burst certainly overlaps
    // A superuser sees every session's statement (the owner would see "<insufficient privilege>").
    const watcher = new pg.Client({ connectionString: testDatabaseUrl() });
    await watcher.connect();
    // Hashes running at once: statements (pid, start) seen active in two
    // samples in a row. A real overlap lasts a whole hash (hundreds of ms);
    // a sample copied while this loaded machine preempted the reader may
    // mix two moments, but not twice with the same statements.
    let most = 0;
    let watching = true;
    const watch = (async () => {
      let previous = new Set<string>();
      while (watching) {
        const { rows } = await watcher.query(
          "select pid, query_start::text as started from pg_stat_activity where state = 'active' and query like '%app_hidden.authenticate%' and pid <> pg_backend_pid()",
        );
        const current = new Set(rows.map((r) => `${r.pid} ${r.started}`));
        most = Math.max(most, [...current].filter((k) => previous.has(k)).length);
        previous = current;
        await sleep(5);
      }
    })();
    try {
      const burst = Promise.all(Array.from({ length: 12 }, () => gqlFrom(second!.url, newSource("192.0.2"), LOGIN, { email: freshEmail("nobody"), password: "Wrong-password-1" })));
      await sleep(20);
      const bystander = await gql(second.url, "{ allCoffees(first: 1) { nodes { id } } }");
      const answers = await burst;
      ok(bystander);
      const counts = tally(answers);
      expect(counts.RATE_LIMITED).toBeGreaterThanOrEqual(6);
      expect(counts.UNAUTHENTICATED).toBeGreaterThanOrEqual(3);
      const refused = answers.find((a) => codeOf(a) === "RATE_LIMITED")!;
      expect(refused.body.errors![0]!.extensions).toMatchObject({ code: "RATE_LIMITED", retryAfterSeconds: 1 });
    } finally {
      watching = false;
      await watch;
      await watcher.end();
    }
    expect(most).toBe(1);
  }, 60_000);
});

describe("sign-in tables are purged", () => {
  test("purge_sign_in_logs deletes old attempts and refresh tokens expired or revoked past sign_in_log_retention_days; keeps recent ones and a used token of a live sign-in; the worker's hourly crontab runs it", async () => {
    const email = await customer("purge");
    const { rows: acc } = await t.db.query("select id from app_private.accounts where email = $1", [email]);
    const accountId = acc[0].id;
    const old = "now() - interval '30 days'";
    const attempt = async (age: string) =>
      Number((await t.db.query(`insert into app_private.login_attempts (email, source, succeeded, attempted_at) values ($1, '192.0.2.250', false, ${age}) returning id`, [email])).rows[0].id);
    const registration = async (age: string) =>
      Number((await t.db.query(`insert into app_private.registration_attempts (source, attempted_at) values ('192.0.2.250', ${age}) returning id`)).rows[0].id);
    const token = (label: string, columns: string) =>
      t.db.query(
        `insert into app_private.refresh_tokens (family_id, account_id, token_sha256, created_at, expires_at, used_at, revoked_at)
         values (gen_random_uuid(), $1, $2, ${columns})`,
        [accountId, `${run}-${label}`],
      );
    const oldAttempt = await attempt(old);
    const newAttempt = await attempt("now()");
    const oldRegistration = await registration(old);
    const newRegistration = await registration("now()");
    await token("expired", `${old} - interval '30 days', ${old}, null, null`);
    await token("revoked", `${old}, now() + interval '1 day', null, ${old}`);
    await token("used-live", `${old}, now() + interval '1 day', ${old}, null`);
    await token("fresh", "now(), now() + interval '30 days', null, null");

    const purge = async () => {
      const client = await t.db.connect();
      try {
        await client.query("begin; set local role cafe_system");
        const n = (await client.query("select app_private.purge_sign_in_logs() as n")).rows[0].n;
        await client.query("commit");
        return n;
      } finally {
        client.release();
      }
    };
    const left = async () => ({
      attempts: (await t.db.query("select id::int from app_private.login_attempts where id = any($1) order by id", [[oldAttempt, newAttempt]])).rows.map((r) => r.id),
      registrations: (await t.db.query("select id::int from app_private.registration_attempts where id = any($1) order by id", [[oldRegistration, newRegistration]])).rows.map((r) => r.id),
      tokens: (await t.db.query("select token_sha256 from app_private.refresh_tokens where account_id = $1 order by token_sha256", [accountId])).rows.map((r) => r.token_sha256.slice(run.length + 1)),
    });
    expect(await purge()).toBeGreaterThanOrEqual(4);
    expect(await left()).toEqual({ attempts: [newAttempt], registrations: [newRegistration], tokens: ["fresh", "used-live"] });

    // Scheduled: the worker registered the crontab entry, and runs the task.
    const { rows: crons } = await t.db.query("select identifier from graphile_worker._private_known_crontabs where identifier = 'purge_sign_in_logs'");
    expect(crons).toEqual([{ identifier: "purge_sign_in_logs" }]);
    const again = await attempt(old);
    await t.db.query("select graphile_worker.add_job('purge_sign_in_logs', '{}'::json)");
    await waitUntil("the worker's purge", async () => (await t.db.query("select 1 from app_private.login_attempts where id = $1", [again])).rowCount === 0, 10_000, 100);
  }, 30_000);
});
