import { expectRefused, gql, ok, subscribe, wsClient } from "../support/client.ts";
import { waitForListen } from "../support/db.ts";
import { forgetAccounts, maxId } from "../support/fixtures.ts";
import { ChildService, useTestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";
import { say } from "../support/figures.ts";

// Revoked sign-ins on every API process: this test's in-process API (A) and
// a second API as its own OS process (B, `src/main.ts --api`), on one
// database. After a logout, a reused refresh token, an account disabled,
// deleted or demoted, the access tokens of that sign-in or account are
// refused (401 UNAUTHENTICATED) and a WebSocket of that sign-in is closed
// (4403). The process that served the revoking mutation refuses them from
// the very next request; the others as soon as their LISTEN connection
// delivers the NOTIFY (each check below allows 1 s and records the lag).

const LOGIN = `mutation($email: String!, $password: String!) { login(email: $email, password: $password) { token role refreshToken } }`;
const REFRESH = `mutation($token: String!) { refreshToken(token: $token) { token refreshToken } }`;
const LOGOUT = `mutation($token: String!) { logout(refreshToken: $token) }`;
const DISABLE = `mutation($email: String!) { disableAccount(email: $email) }`;
const ADMIN_ONLY = `{ paymentAlerts { id } }`;
const PROBE = `{ __typename }`;
const NEW_COFFEE = `subscription { newCoffee { id } }`;

const run = `${process.pid}${Date.now().toString(36)}`;
let serial = 0;
const freshEmail = (label: string) => `revoke-${label}-${run}-${++serial}@example.test`;
const PASSWORD = "Ristretto-pass-5";

interface Session {
  token: string;
  role: string;
  refreshToken: string;
}

const t = useTestService({
  async cleanup() {
    if (lags.length) say(`revocation reached the other process within ${Math.max(...lags)} ms (max of ${lags.length}; median ${[...lags].sort((x, y) => x - y)[lags.length >> 1]} ms)`);
    await b?.stop();
    await forgetAccounts(t, `revoke-%-${run}-%@example.test`, "app_public.baristas", firstAttemptId);
  },
});
let b: ChildService;
let firstAttemptId = 0;
/** Signed out before B started: B learns of it from SQL at start-up. */
let signedOutEarly: Session;

/** An account made as the DBA, with the function the CLI uses. */
async function staff(label: string, role: "barista" | "admin"): Promise<string> {
  const email = freshEmail(label);
  await t.db.query("select app_hidden.add_staff_account($1, $2, $3, $4)", [email, `Revoke ${label}`, role, PASSWORD]);
  return email;
}

async function signIn(email: string): Promise<Session> {
  return ok(await t.gql(LOGIN, { variables: { email, password: PASSWORD } })).login;
}

const show = (r: { status: number; body: { errors?: any[] } }) => `${r.status} ${r.body.errors?.[0]?.extensions?.code ?? "OK"}`;

/** The answer to a request with this token on A and on B. */
async function statuses(token: string, query = PROBE): Promise<{ a: string; b: string }> {
  return { a: show(await gql(t.url, query, { token })), b: show(await gql(b.url, query, { token })) };
}
const ACCEPTED = { a: "200 OK", b: "200 OK" };
const REFUSED = { a: "401 UNAUTHENTICATED", b: "401 UNAUTHENTICATED" };

/** Milliseconds from each revocation until another process refused the token. */
const lags: number[] = [];

/**
 * The token is refused on both processes: at once on `servedBy` (the one
 * that answered the revoking mutation; none for a DBA's SQL), within 1 s on
 * the others.
 */
async function refusedEverywhere(token: string, servedBy: "a" | "b" | null, query = PROBE): Promise<void> {
  const started = Date.now();
  const urls = { a: t.url, b: b.url };
  if (servedBy) expect({ [servedBy]: show(await gql(urls[servedBy], query, { token })) }).toEqual({ [servedBy]: "401 UNAUTHENTICATED" });
  for (const name of (["a", "b"] as const).filter((n) => n !== servedBy)) {
    await waitUntil(`${name} to refuse the token`, async () => show(await gql(urls[name], query, { token })) === "401 UNAUTHENTICATED", 1000, 5);
    lags.push(Date.now() - started);
  }
  expect(await statuses(token, query)).toEqual(REFUSED);
}

beforeAll(async () => {
  firstAttemptId = await maxId(t, "app_private.login_attempts");
  signedOutEarly = await signIn(await staff("early", "barista"));
  expect(ok(await t.gql(LOGOUT, { variables: { token: signedOutEarly.refreshToken } }))).toEqual({ logout: true });
  b = await ChildService.startApi({ JWT_SECRET: t.config.JWT_SECRET });
}, 90_000);

test("a process started after a logout refuses that sign-in's token (revocations loaded from SQL at start-up)", async () => {
  expect(await statuses(signedOutEarly.token)).toEqual(REFUSED);
});

test("logout (on B): that sign-in's access token is refused by B from the next request, by A as soon as the NOTIFY arrives; another sign-in of the account is not", async () => {
  const email = await staff("logout", "barista");
  const [ending, staying] = [await signIn(email), await signIn(email)];
  expect(await statuses(ending.token)).toEqual(ACCEPTED);
  expect(ok(await gql(b.url, LOGOUT, { variables: { token: ending.refreshToken } }))).toEqual({ logout: true });
  await refusedEverywhere(ending.token, "b");
  expect(await statuses(staying.token)).toEqual(ACCEPTED);
});

test("a reused refresh token (on A): every access token of that sign-in is refused, the newest too (A at once, B on the NOTIFY)", async () => {
  const email = await staff("reuse", "barista");
  const first = await signIn(email);
  const second = ok(await t.gql(REFRESH, { variables: { token: first.refreshToken } })).refreshToken;
  expect(await statuses(second.token)).toEqual(ACCEPTED);
  // The spent refresh token, presented again (a thief, or a confused client).
  expectRefused(await t.gql(REFRESH, { variables: { token: first.refreshToken } }), "UNAUTHENTICATED");
  await refusedEverywhere(second.token, "a");
  await refusedEverywhere(first.token, "a");
});

test("an account disabled (disableAccount on B): its tokens are refused on both processes", async () => {
  const email = await staff("disabled", "barista");
  const [one, two] = [await signIn(email), await signIn(email)];
  const admin = await signIn(await staff("disabler", "admin"));
  expect(ok(await gql(b.url, DISABLE, { variables: { email }, token: admin.token }))).toEqual({ disableAccount: true });
  await refusedEverywhere(one.token, "b");
  await refusedEverywhere(two.token, "b");
  expect(await statuses(admin.token)).toEqual(ACCEPTED);
});

test("an account deleted (by the DBA): its tokens are refused on both processes", async () => {
  const email = await staff("deleted", "barista");
  const session = await signIn(email);
  const { rows } = await t.db.query("select id from app_private.accounts where email = $1", [email]);
  await t.db.query("delete from app_public.baristas where id = $1", [rows[0].id]);
  await t.db.query("delete from app_private.accounts where id = $1", [rows[0].id]);
  await refusedEverywhere(session.token, null);
});

test("an admin demoted to barista (by the DBA): the admin tokens are refused on both processes; a new sign-in acts as a barista", async () => {
  const email = await staff("demoted", "admin");
  const session = await signIn(email);
  expect(await statuses(session.token, ADMIN_ONLY)).toEqual(ACCEPTED);
  await t.db.query("update app_private.accounts set role = 'barista' where email = $1", [email]);
  await refusedEverywhere(session.token, null, ADMIN_ONLY);
  const after = await signIn(email);
  expect(after.role).toBe("barista");
  expectRefused(await t.gql(ADMIN_ONLY, { token: after.token }), "FORBIDDEN");
});

test("WebSocket: a logout on A closes that sign-in's socket on B (4403, its subscription ends); a new socket with the token is refused", async () => {
  const email = await staff("socket", "barista");
  const [ending, staying] = [await signIn(email), await signIn(email)];
  const endingWs = wsClient(b.url, ending.token);
  const stayingWs = wsClient(b.url, staying.token);
  try {
    const feed = subscribe(endingWs.client, NEW_COFFEE);
    const other = subscribe(stayingWs.client, NEW_COFFEE);
    await waitForListen("coffee:new", { excludePids: [] });
    await waitUntil("both sockets open", () => endingWs.closes.length === 0 && stayingWs.closes.length === 0, 1000);
    ok(await t.gql(LOGOUT, { variables: { token: ending.refreshToken } }));
    await waitUntil("the socket of the ended sign-in to close", () => endingWs.closes.length > 0, 5000, 10);
    expect(endingWs.closes[0]?.code).toBe(4403);
    await feed.waitFor(1, 1000);
    expect(feed.error ?? feed.completed).toBeTruthy();
    expect(stayingWs.closes).toEqual([]);
    expect(other.error).toBeUndefined();

    const again = wsClient(b.url, ending.token);
    const retry = subscribe(again.client, NEW_COFFEE);
    await waitUntil("the new socket to be refused", () => again.closes.length > 0, 5000, 10);
    expect(again.closes[0]?.code).toBe(4403);
    expect(retry.error).toBeTruthy();
    await again.client.dispose();
  } finally {
    await endingWs.client.dispose();
    await stayingWs.client.dispose();
  }
}, 30_000);
