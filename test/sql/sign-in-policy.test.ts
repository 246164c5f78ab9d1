import { performance } from "node:perf_hooks";
import { DEMO, expectRefused, type GraphQLResponse, ok } from "../support/client.ts";
import { forgetAccounts, maxId } from "../support/fixtures.ts";
import { useTestService } from "../support/service.ts";
import { say } from "../support/figures.ts";

// The sign-in lock-out (per account and source, and per source), equal
// timing for known and unknown e-mails, and the per-source registration
// throttle. The service trusts X-Forwarded-For here (TRUST_PROXY=true), so
// each test picks its own sources (addresses of TEST-NET-2, 198.51.100.0/24,
// and 203.0.113.0/24) and nothing counts against 127.0.0.1.

const LOGIN = `mutation($email: String!, $password: String!) { login(email: $email, password: $password) { token role } }`;
const REGISTER = `mutation($email: String!, $password: String!, $name: String!) { register(email: $email, password: $password, name: $name) { role } }`;

const run = `${process.pid}${Date.now().toString(36)}`;
let serial = 0;
const freshEmail = (label: string) => `policy-${label}-${run}-${++serial}@example.test`;
const PASSWORD = "Macchiato-77!";
let sourceSerial = 0;
/** A source no other test uses. */
const newSource = (net = "198.51.100") => `${net}.${++sourceSerial}`;

const t = useTestService({
  env: { TRUST_PROXY: "true" },
  async cleanup() {
    await t.db.query("delete from app_private.registration_attempts where id > $1", [firstRegistrationId]);
    await forgetAccounts(t, `policy-%-${run}-%@example.test`, "app_public.customers", firstAttemptId);
  },
});
let firstAttemptId = 0;
let firstRegistrationId = 0;

beforeAll(async () => {
  firstAttemptId = await maxId(t, "app_private.login_attempts");
  firstRegistrationId = await maxId(t, "app_private.registration_attempts");
});

async function gqlFrom(source: string, query: string, variables: Record<string, unknown>): Promise<GraphQLResponse> {
  const res = await fetch(`${t.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": source },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, body: await res.json() };
}

const loginFrom = (source: string, email: string, password: string) => gqlFrom(source, LOGIN, { email, password });
const codeOf = (r: GraphQLResponse) => r.body.errors?.[0]?.extensions?.code ?? "OK";
const setting = async (key: string) => Number((await t.db.query("select value from app_private.settings where key = $1", [key])).rows[0].value);

/** A customer account whose password is hashed as registration hashes it (password_hash_cost). */
async function customer(label: string): Promise<string> {
  const email = freshEmail(label);
  const { rows } = await t.db.query("insert into app_private.accounts (email, password_hash, role) values ($1, app_private.hash_password($2), 'customer') returning id", [email, PASSWORD]);
  await t.db.query("insert into app_public.customers (id, name) values ($1, 'Policy Tester')", [rows[0].id]);
  return email;
}

describe("sign-in lock-out", () => {
  test("5 failures for the admin from source A: A is refused for the admin (RATE_LIMITED, even the right password); the admin signs in from source B; A still signs in others", async () => {
    const perPair = await setting("login_max_failures_per_account_and_source");
    const [a, b] = [newSource(), newSource()];
    for (let i = 1; i <= perPair; i += 1) {
      expect({ attempt: i, code: codeOf(await loginFrom(a, DEMO.admin.email, `Guess-number-${i}`)) }).toEqual({ attempt: i, code: "UNAUTHENTICATED" });
    }
    expectRefused(await loginFrom(a, DEMO.admin.email, DEMO.password), "RATE_LIMITED");
    expectRefused(await loginFrom(a, DEMO.admin.email.toUpperCase(), DEMO.password), "RATE_LIMITED");
    // The admin, from elsewhere: not locked out by a stranger's guesses.
    expect(ok(await loginFrom(b, DEMO.admin.email, DEMO.password)).login.role).toBe("admin");
    expect(codeOf(await loginFrom(b, DEMO.admin.email, "One-more-guess-1"))).toBe("UNAUTHENTICATED");
    expect(ok(await loginFrom(b, DEMO.admin.email, DEMO.password)).login.role).toBe("admin");
    // Source A is refused for the admin only.
    expect(ok(await loginFrom(a, DEMO.alice.email, DEMO.password)).login.role).toBe("customer");
  });

  test("30 failures over many accounts from one source: that source is refused for every account, another source is not", async () => {
    const perSource = await setting("login_max_failures_per_source");
    const [spray, other] = [newSource(), newSource()];
    const known = [DEMO.alice.email, DEMO.bob.email, DEMO.barista.email, DEMO.admin.email];
    for (let i = 1; i <= perSource; i += 1) {
      // Unknown e-mails and the demo accounts in turn: at most 4 failures
      // per account, so only the per-source count is reached.
      const email = i % 2 ? freshEmail("sprayed") : known[(i / 2) % known.length]!;
      expect({ attempt: i, code: codeOf(await loginFrom(spray, email, "Wrong-password-1")) }).toEqual({ attempt: i, code: "UNAUTHENTICATED" });
    }
    expectRefused(await loginFrom(spray, DEMO.barista.email, DEMO.password), "RATE_LIMITED");
    expect(ok(await loginFrom(other, DEMO.barista.email, DEMO.password)).login.role).toBe("barista");
  });
  test("IPv6: failures from addresses of one /64 count together (rotating addresses does not reset them); another /64 is not affected", async () => {
    const email = await customer("ipv6");
    const perPair = await setting("login_max_failures_per_account_and_source");
    for (let i = 1; i <= perPair; i += 1) {
      expect({ attempt: i, code: codeOf(await loginFrom(`2001:db8:aa:1::${i.toString(16)}`, email, `Guess-number-${i}`)) }).toEqual({ attempt: i, code: "UNAUTHENTICATED" });
    }
    expectRefused(await loginFrom("2001:db8:aa:1:ffff:ffff:ffff:fffe", email, PASSWORD), "RATE_LIMITED");
    ok(await loginFrom("2001:db8:aa:2::1", email, PASSWORD));
    const { rows } = await t.db.query("select s, app_private.source_key(s) as key from unnest(array['198.51.100.7', '::ffff:198.51.100.7', '2001:db8:aa:1:2:3:4:5', 'unknown']) s");
    expect(Object.fromEntries(rows.map((r) => [r.s, r.key]))).toEqual({
      "198.51.100.7": "198.51.100.7",
      "::ffff:198.51.100.7": "198.51.100.7",
      "2001:db8:aa:1:2:3:4:5": "2001:db8:aa:1::/64",
      unknown: "unknown",
    });
  });
});

describe("login timing", () => {
  test("a wrong password for a registered e-mail takes about as long as for an unknown e-mail (median of 9, ratio within 0.6..1.6)", async () => {
    const known = await customer("timing");
    const unknownTimes: number[] = [];
    const knownTimes: number[] = [];
    const time = async (email: string) => {
      const started = performance.now();
      // Each try from a source of its own: no limit is reached.
      const r = await loginFrom(newSource("203.0.113"), email, "Not-the-password-1");
      const ms = performance.now() - started;
      expect(codeOf(r)).toBe("UNAUTHENTICATED");
      return ms;
    };
    await time(known); // warm-up
    for (let i = 0; i < 9; i += 1) {
      knownTimes.push(await time(known));
      unknownTimes.push(await time(freshEmail("unknown")));
    }
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    const ratio = median(unknownTimes) / median(knownTimes);
    say(`login timing: known ${median(knownTimes).toFixed(1)} ms, unknown ${median(unknownTimes).toFixed(1)} ms (median of 9), ratio ${ratio.toFixed(2)}`);
    expect(ratio).toBeGreaterThan(0.6);
    expect(ratio).toBeLessThan(1.6);
  }, 60_000);

  test("a hash of a lower cost (the demo data's) is upgraded to password_hash_cost at a sign-in; concurrent sign-ins of that account all work", async () => {
    const email = freshEmail("old-hash");
    await t.db.query("insert into app_private.accounts (email, password_hash, role) values ($1, public.crypt($2, public.gen_salt('bf', 6)), 'customer')", [email, PASSWORD]);
    const cost = await setting("password_hash_cost");
    // Each holds the account's row while it signs in: none may wait on (or deadlock with) another to upgrade the hash.
    const together = await Promise.all(Array.from({ length: 6 }, () => loginFrom(newSource(), email, PASSWORD)));
    expect(together.map(codeOf)).toEqual(Array(6).fill("OK"));
    ok(await loginFrom(newSource(), email, PASSWORD));
    const { rows } = await t.db.query("select substr(password_hash, 5, 2)::int as cost from app_private.accounts where email = $1", [email]);
    expect(rows[0].cost).toBe(cost);
    ok(await loginFrom(newSource(), email, PASSWORD));
  });
});

describe("registration throttle", () => {
  test("25 registrations from one source: past registration_max_per_source (tries, CONFLICTs included) RATE_LIMITED and nothing created; another source still registers", async () => {
    const limit = await setting("registration_max_per_source");
    const [busy, other] = [newSource(), newSource()];
    const answers: string[] = [];
    const refusedEmails: string[] = [];
    // The first try is an e-mail already registered: CONFLICT, and it counts.
    answers.push(codeOf(await gqlFrom(busy, REGISTER, { email: DEMO.alice.email, password: PASSWORD, name: "Again" })));
    for (let i = 2; i <= 25; i += 1) {
      const email = freshEmail("reg");
      const code = codeOf(await gqlFrom(busy, REGISTER, { email, password: PASSWORD, name: `Reg ${i}` }));
      answers.push(code);
      if (code !== "OK") refusedEmails.push(email);
    }
    expect(answers).toEqual(["CONFLICT", ...Array(limit - 1).fill("OK"), ...Array(25 - limit).fill("RATE_LIMITED")]);
    const { rows } = await t.db.query("select count(*)::int as n from app_private.accounts where email = any($1::citext[])", [refusedEmails]);
    expect(rows[0].n).toBe(0);
    expect(ok(await gqlFrom(other, REGISTER, { email: freshEmail("elsewhere"), password: PASSWORD, name: "Elsewhere" })).register.role).toBe("customer");
    // The limit counts tries within registration_window_seconds.
    await t.db.query("update app_private.registration_attempts set attempted_at = attempted_at - interval '1 day' where source = $1", [busy]);
    expect(ok(await gqlFrom(busy, REGISTER, { email: freshEmail("later"), password: PASSWORD, name: "Later" })).register.role).toBe("customer");
  }, 60_000);
});
