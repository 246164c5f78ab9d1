import { DEMO, expectRefused, type GraphQLResponse, ok, sha256Hex } from "../support/client.ts";
import { maxId } from "../support/fixtures.ts";
import { useTestService } from "../support/service.ts";

// Customer accounts against the real service and database: register,
// login, refresh-token rotation (and theft detection: a spent token revokes
// its whole sign-in), logout, changePassword and the login throttle
// (app_private.login_attempts). Every account is registered here, with an
// e-mail of this run, and removed at the end with the sign-in attempts this
// file caused (so other suites, all on 127.0.0.1, are not throttled).

const REGISTER = `mutation Register($email: String!, $password: String!, $name: String!) {
  register(email: $email, password: $password, name: $name) { token role expiresAt refreshToken }
}`;
const LOGIN = `mutation Login($email: String!, $password: String!) {
  login(email: $email, password: $password) { token role expiresAt refreshToken }
}`;
const REFRESH = `mutation Refresh($token: String!) {
  refreshToken(token: $token) { token role expiresAt refreshToken }
}`;
const LOGOUT = `mutation Logout($refreshToken: String!) { logout(refreshToken: $refreshToken) }`;
const CHANGE_PASSWORD = `mutation ChangePassword($oldPassword: String!, $newPassword: String!) {
  changePassword(oldPassword: $oldPassword, newPassword: $newPassword)
}`;
const ME = `{ customer { id name } }`;

const run = `${process.pid}${Date.now().toString(36)}`;
const PASSWORD = "Espresso-2024!";
let serial = 0;
/** A fresh e-mail of this run (lower case). */
const freshEmail = (label: string) => `acct-${label}-${run}-${++serial}@example.test`;

const t = useTestService({
  async cleanup() {
    // The sign-in attempts this file caused (failed ones count towards the
    // per-source limit that every suite on 127.0.0.1 shares), then the accounts.
    await t.db.query("delete from app_private.login_attempts where id > $1", [firstAttemptId]);
    await t.db.query("delete from app_private.registration_attempts where id > $1", [firstRegistrationId]);
    const pattern = `acct-%-${run}-%@example.test`;
    const { rows } = await t.db.query("select id from app_private.accounts where email::text like $1", [pattern]);
    const ids = rows.map((r) => r.id);
    await t.db.query("delete from app_public.customers where id = any($1::uuid[])", [ids]);
    await t.db.query("delete from app_private.accounts where id = any($1::uuid[])", [ids]);
  },
});
let firstAttemptId = 0;
let firstRegistrationId = 0;

interface Auth {
  token: string;
  role: string;
  expiresAt: string;
  refreshToken: string;
}

const register = (email: string, password: string, name: string) => t.gql(REGISTER, { variables: { email, password, name } });
const login = (email: string, password: string) => t.gql(LOGIN, { variables: { email, password } });
const refresh = (token: string) => t.gql(REFRESH, { variables: { token } });
const logout = (refreshToken: string, token: string | null = null) => t.gql(LOGOUT, { variables: { refreshToken }, token });
const changePassword = (oldPassword: string, newPassword: string, token: string | null) => t.gql(CHANGE_PASSWORD, { variables: { oldPassword, newPassword }, token });

async function signUp(label: string, name = `Tester ${label}`): Promise<{ email: string; id: string; auth: Auth }> {
  const email = freshEmail(label);
  const auth = ok(await register(email, PASSWORD, name)).register as Auth;
  const id = await accountId(email);
  return { email, id, auth };
}

async function accountId(email: string): Promise<string> {
  const { rows } = await t.db.query("select id from app_private.accounts where email = $1::citext", [email]);
  if (!rows[0]) throw new Error(`no account ${email}`);
  return rows[0].id;
}

async function accountCount(email: string): Promise<number> {
  const { rows } = await t.db.query("select count(*)::int as n from app_private.accounts where email = $1::citext", [email]);
  return rows[0].n;
}

/** The customer a bearer token reads as itself. */
async function me(token: string) {
  return ok(await t.gql(ME, { token })).customer as { id: string; name: string } | null;
}

function authOf(r: GraphQLResponse, field: "register" | "login" | "refreshToken"): Auth {
  const auth = ok(r)[field] as Auth;
  expect(auth.token).toEqual(expect.any(String));
  expect(auth.refreshToken).toEqual(expect.any(String));
  return auth;
}

beforeAll(async () => {
  firstAttemptId = await maxId(t, "app_private.login_attempts");
  firstRegistrationId = await maxId(t, "app_private.registration_attempts");
});

// This file registers more accounts from 127.0.0.1 than the per-source
// registration limit allows (test/sql/sign-in-policy.test.ts tests that limit):
// each test starts below it, whatever earlier suites tried from there.
beforeEach(async () => {
  await t.db.query("delete from app_private.registration_attempts where id > $1", [firstRegistrationId]);
  await t.db.query("update app_private.registration_attempts set attempted_at = attempted_at - interval '1 day' where attempted_at > now() - interval '1 day'");
});

describe("register", () => {
  test("a new customer, signed in: a working customer token and a refresh token", async () => {
    const email = freshEmail("new");
    const before = Date.now();
    const auth = authOf(await register(email, PASSWORD, "  Nadia Novak  "), "register");
    expect(auth.role).toBe("customer");
    const expires = Date.parse(auth.expiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + (t.config.JWT_EXPIRES_IN_SECONDS - 5) * 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + (t.config.JWT_EXPIRES_IN_SECONDS + 5) * 1000);

    const id = await accountId(email);
    expect(await me(auth.token)).toEqual({ id, name: "Nadia Novak" });
    const { rows } = await t.db.query("select a.role, a.email::text as email, c.is_walk_in, c.points from app_private.accounts a join app_public.customers c on c.id = a.id where a.id = $1", [id]);
    expect(rows).toEqual([{ role: "customer", email, is_walk_in: false, points: 0 }]);

    // The refresh token works too.
    const next = authOf(await refresh(auth.refreshToken), "refreshToken");
    expect(next.role).toBe("customer");
    expect(await me(next.token)).toEqual({ id, name: "Nadia Novak" });
    // And the password signs in.
    const again = authOf(await login(email, PASSWORD), "login");
    expect(await me(again.token)).toEqual({ id, name: "Nadia Novak" });
  });

  test("an e-mail is unique ignoring case: CONFLICT, and the message reveals nothing of the account", async () => {
    const { email, id } = await signUp("dup", "Original Owner");
    const shouted = email.toUpperCase();
    const r = await register(shouted, "Another-pass-99", "Impostor");
    const error = expectRefused(r, "CONFLICT");
    expect(Object.keys(error.extensions ?? {})).toEqual(["code"]);
    const message = String(error.message).toLowerCase();
    expect(message).not.toContain(email);
    expect(message).not.toContain(id);
    expect(message).not.toContain("original owner");
    expect(message).not.toMatch(/customer|barista|admin|password|hash|[0-9a-f]{8}-[0-9a-f]{4}/);
    expect(await accountCount(email)).toBe(1);
    // The first account is untouched: its password still signs in, under any case.
    const auth = authOf(await login(shouted, PASSWORD), "login");
    expect(await me(auth.token)).toEqual({ id, name: "Original Owner" });
    // A demo account's address is taken too, whatever its case.
    expectRefused(await register("Alice@Example.COM", PASSWORD, "Not Alice"), "CONFLICT");
  });

  test.each([
    ["too short", "Ab1!xyz"],
    ["letters only", "OnlyLettersHereNoDigits"],
    ["equal to the e-mail", "<email>"],
    ["equal to the e-mail, other case", "<EMAIL>"],
  ])("a weak password (%s) is BAD_USER_INPUT and creates nothing", async (_label, password) => {
    const email = freshEmail("weak");
    const pw = password === "<email>" ? email : password === "<EMAIL>" ? email.toUpperCase() : password;
    expectRefused(await register(email, pw, "Weak Password"), "BAD_USER_INPUT");
    expect(await accountCount(email)).toBe(0);
  });

  test.each(["", "   "])("an empty name (%j) is BAD_USER_INPUT and creates nothing", async (name) => {
    const email = freshEmail("noname");
    expectRefused(await register(email, PASSWORD, name), "BAD_USER_INPUT");
    expect(await accountCount(email)).toBe(0);
  });

  test.each(["not-an-email", "no-domain@", "@example.test", "two@@example.test", "spaces in@example.test", "nodot@localhost"])(
    "a bad e-mail (%s) is BAD_USER_INPUT and creates nothing",
    async (email) => {
      expectRefused(await register(email, PASSWORD, "Bad Email"), "BAD_USER_INPUT");
      expect(await accountCount(email)).toBe(0);
    },
  );
});

describe("refresh tokens", () => {
  test("login -> refresh -> the new refresh token works once; each access token works", async () => {
    const { email, id } = await signUp("rotate");
    const first = authOf(await login(email, PASSWORD), "login");
    expect(first.role).toBe("customer");

    const second = authOf(await refresh(first.refreshToken), "refreshToken");
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect(await me(second.token)).toEqual({ id, name: "Tester rotate" });

    // The new one works, once.
    const third = authOf(await refresh(second.refreshToken), "refreshToken");
    expect(await me(third.token)).toEqual({ id, name: "Tester rotate" });
    expectRefused(await refresh(second.refreshToken), "UNAUTHENTICATED");
  });

  test("reusing a spent refresh token: UNAUTHENTICATED, and every token of that sign-in is revoked (the newest fails too)", async () => {
    const { email, id } = await signUp("reuse");
    const first = authOf(await login(email, PASSWORD), "login");
    const second = authOf(await refresh(first.refreshToken), "refreshToken");

    // Someone replays the spent token.
    expectRefused(await refresh(first.refreshToken), "UNAUTHENTICATED");
    // The sign-in is over: the newest token of the family no longer works.
    expectRefused(await refresh(second.refreshToken), "UNAUTHENTICATED");

    const { rows } = await t.db.query("select token_sha256, revoked_at is not null as revoked from app_private.refresh_tokens where token_sha256 = any($1::text[])", [
      [sha256Hex(first.refreshToken), sha256Hex(second.refreshToken)],
    ]);
    expect(rows.map((r) => r.revoked)).toEqual([true, true]);

    // Another sign-in of the same account is a different family: it still works.
    const other = authOf(await login(email, PASSWORD), "login");
    const rotated = authOf(await refresh(other.refreshToken), "refreshToken");
    expect(await me(rotated.token)).toEqual({ id, name: "Tester reuse" });
  });

  test("an unknown or expired refresh token is UNAUTHENTICATED", async () => {
    expectRefused(await refresh("not-a-refresh-token"), "UNAUTHENTICATED");
    expectRefused(await refresh(""), "UNAUTHENTICATED");
    const { auth } = await signUp("expired");
    await t.db.query("update app_private.refresh_tokens set expires_at = now() - interval '1 second' where token_sha256 = $1", [sha256Hex(auth.refreshToken)]);
    expectRefused(await refresh(auth.refreshToken), "UNAUTHENTICATED");
  });

  test("concurrent refreshes of one token: at most one succeeds", async () => {
    const { auth } = await signUp("race");
    const answers = await Promise.all([refresh(auth.refreshToken), refresh(auth.refreshToken), refresh(auth.refreshToken)]);
    const successes = answers.filter((r) => r.body.data?.refreshToken?.token);
    expect(successes.length).toBeLessThanOrEqual(1);
    for (const r of answers.filter((a) => !a.body.data?.refreshToken)) expectRefused(r, "UNAUTHENTICATED");
  });

  test("refresh tokens are stored hashed: token_sha256 is the SHA-256 of the token, never the token", async () => {
    const { email, id, auth } = await signUp("hashed");
    const second = authOf(await login(email, PASSWORD), "login");
    const { rows } = await t.db.query("select * from app_private.refresh_tokens where account_id = $1 order by created_at", [id]);
    expect(rows).toHaveLength(2);
    const stored = rows.map((r) => r.token_sha256);
    expect(stored.sort()).toEqual([sha256Hex(auth.refreshToken), sha256Hex(second.refreshToken)].sort());
    for (const row of rows) {
      expect(row.token_sha256).toMatch(/^[0-9a-f]{64}$/);
      // No column holds the token itself.
      for (const value of Object.values(row)) {
        expect(String(value)).not.toContain(auth.refreshToken);
        expect(String(value)).not.toContain(second.refreshToken);
      }
    }
  });
});

describe("logout", () => {
  test("revokes the sign-in: a refresh afterwards is UNAUTHENTICATED; another sign-in is unaffected", async () => {
    const { email, id, auth } = await signUp("logout");
    const other = authOf(await login(email, PASSWORD), "login");
    const rotated = authOf(await refresh(auth.refreshToken), "refreshToken");

    expect(ok(await logout(rotated.refreshToken, rotated.token))).toEqual({ logout: true });
    expectRefused(await refresh(rotated.refreshToken), "UNAUTHENTICATED");

    const { rows } = await t.db.query("select revoked_at is not null as revoked from app_private.refresh_tokens where token_sha256 = $1", [sha256Hex(rotated.refreshToken)]);
    expect(rows).toEqual([{ revoked: true }]);

    const stillIn = authOf(await refresh(other.refreshToken), "refreshToken");
    expect(await me(stillIn.token)).toEqual({ id, name: "Tester logout" });
  });

  test("an unknown refresh token: false", async () => {
    expect(ok(await logout("not-a-refresh-token"))).toEqual({ logout: false });
  });
});

describe("changePassword", () => {
  test("wrong old password UNAUTHENTICATED, weak new BAD_USER_INPUT; success: the old password no longer signs in, the new one does, every other sign-in ends (refresh and access tokens), this one goes on", async () => {
    const { email, id, auth } = await signUp("change");
    const other = authOf(await login(email, PASSWORD), "login");
    const NEW = "Flat-White-77";

    // Wrong old password: refused, nothing changed.
    expectRefused(await changePassword("Wrong-password-1", NEW, auth.token), "UNAUTHENTICATED");
    // Weak new passwords: refused, nothing changed.
    expectRefused(await changePassword(PASSWORD, "short1!", auth.token), "BAD_USER_INPUT");
    expectRefused(await changePassword(PASSWORD, "lettersonlyhere", auth.token), "BAD_USER_INPUT");
    expectRefused(await changePassword(PASSWORD, email, auth.token), "BAD_USER_INPUT");
    const { rows: untouched } = await t.db.query("select count(*)::int as n from app_private.refresh_tokens where account_id = $1 and revoked_at is not null", [id]);
    expect(untouched[0].n).toBe(0);

    expect(ok(await changePassword(PASSWORD, NEW, auth.token))).toEqual({ changePassword: true });

    expectRefused(await login(email, PASSWORD), "UNAUTHENTICATED");
    const fresh = authOf(await login(email, NEW), "login");
    expect(await me(fresh.token)).toEqual({ id, name: "Tester change" });

    // Every other sign-in made before the change ends: its refresh token
    // and its access token; the sign-in that changed the password goes on.
    expectRefused(await refresh(other.refreshToken), "UNAUTHENTICATED");
    const otherAccess = await t.gql(ME, { token: other.token });
    expect({ status: otherAccess.status, code: otherAccess.body.errors?.[0]?.extensions?.code }).toEqual({ status: 401, code: "UNAUTHENTICATED" });
    expect(await me(auth.token)).toEqual({ id, name: "Tester change" });
    const { rows } = await t.db.query("select token_sha256, revoked_at is not null as revoked from app_private.refresh_tokens where account_id = $1", [id]);
    const revoked = Object.fromEntries(rows.map((r) => [r.token_sha256, r.revoked]));
    expect(revoked[sha256Hex(auth.refreshToken)]).toBe(false);
    expect(revoked[sha256Hex(other.refreshToken)]).toBe(true);
    expect(revoked[sha256Hex(fresh.refreshToken)]).toBe(false);
    // The sign-in after the change works, and the one that made it.
    authOf(await refresh(fresh.refreshToken), "refreshToken");
    authOf(await refresh(auth.refreshToken), "refreshToken");
  });

  test("anonymous: UNAUTHENTICATED", async () => {
    expectRefused(await changePassword(DEMO.password, "Another-pass-99", null), "UNAUTHENTICATED");
    // The demo password is unchanged.
    authOf(await login(DEMO.alice.email, DEMO.password), "login");
  });
});

describe("login", () => {
  test("a wrong password or an unknown e-mail: UNAUTHENTICATED, the same message", async () => {
    const { email } = await signUp("wrong");
    const wrong = expectRefused(await login(email, "Not-the-password-1"), "UNAUTHENTICATED");
    const unknown = expectRefused(await login(freshEmail("nobody"), "Not-the-password-1"), "UNAUTHENTICATED");
    expect(wrong.message).toBe(unknown.message);
  });

  test("throttling: after 5 failed sign-ins for one e-mail from one address, even the right password from it is RATE_LIMITED (any case of the e-mail); other accounts still sign in", async () => {
    const { email, id } = await signUp("throttle");
    for (let i = 1; i <= 5; i += 1) {
      const r = await login(email, `Wrong-password-${i}`);
      expect({ attempt: i, code: r.body.errors?.[0]?.extensions?.code }).toEqual({ attempt: i, code: "UNAUTHENTICATED" });
    }
    expectRefused(await login(email, PASSWORD), "RATE_LIMITED");
    expectRefused(await login(email.toUpperCase(), PASSWORD), "RATE_LIMITED");

    // Per account: another account from the same address is not throttled.
    const alice = authOf(await login(DEMO.alice.email, DEMO.password), "login");
    expect((await me(alice.token))?.id).toBe(DEMO.alice.id);

    // The limit counts failures within login_window_seconds (900): once they are older, the account signs in again.
    await t.db.query("update app_private.login_attempts set attempted_at = now() - interval '901 seconds' where lower(email) = lower($1) and id > $2", [email, firstAttemptId]);
    const back = authOf(await login(email, PASSWORD), "login");
    expect((await me(back.token))?.id).toBe(id);
  });

  test("throttling per source: after 30 failed sign-ins from one address (any e-mails), every sign-in from it is RATE_LIMITED", async () => {
    // Start from a clean count for this address: this file's earlier
    // failures go, and other suites' failures from 127.0.0.1 leave the window.
    await t.db.query("delete from app_private.login_attempts where id > $1", [firstAttemptId]);
    await t.db.query("update app_private.login_attempts set attempted_at = attempted_at - interval '1 day' where not succeeded and attempted_at > now() - interval '1 day'");
    try {
      for (let i = 1; i <= 30; i += 1) {
        const r = await login(freshEmail("spray"), "Wrong-password-1");
        expect({ attempt: i, code: r.body.errors?.[0]?.extensions?.code }).toEqual({ attempt: i, code: "UNAUTHENTICATED" });
      }
      expectRefused(await login(DEMO.alice.email, DEMO.password), "RATE_LIMITED");
    } finally {
      await t.db.query("delete from app_private.login_attempts where id > $1", [firstAttemptId]);
    }
    authOf(await login(DEMO.alice.email, DEMO.password), "login");
  });
});
