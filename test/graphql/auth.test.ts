import { randomUUID } from "node:crypto";
import jwt from "jsonwebtoken";
import { codes, DEMO, type DemoUser, ok } from "../support/client.ts";
import { startAnotherService, type TestService, useTestService } from "../support/service.ts";

// Sign-in and bearer tokens: login issues a JWT for each demo account; a
// wrong password and an unknown e-mail look the same; any token that is not
// one the service signed (garbage, expired, unsigned, signed elsewhere, or
// naming a role the API does not hand out) is a 401 with UNAUTHENTICATED,
// never a silent downgrade to anonymous.

const LOGIN = `mutation($e: String!, $p: String!) { login(email: $e, password: $p) { token role expiresAt } }`;
const ACCOUNTS: Array<[DemoUser, string]> = [
  ["alice", "customer"],
  ["bob", "customer"],
  ["barista", "barista"],
  ["admin", "admin"],
];
/** A query that succeeds anonymously: a token that were silently ignored would answer it. */
const PUBLIC_QUERY = `{ menuItems { id } }`;

const t = useTestService({
  async cleanup() {
    // The failed sign-ins of this file must not count against other suites' logins.
    await t.db.query("delete from app_private.login_attempts where not succeeded and attempted_at >= $1", [started]);
  },
});

const started = new Date();

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

/** What a genuine token of that user carries, to forge variations of it. */
async function genuineClaims(user: DemoUser): Promise<jwt.JwtPayload> {
  return jwt.decode(await t.token(user)) as jwt.JwtPayload;
}

/** Signs claims like the service's own tokens, with overrides. */
function forge(claims: Record<string, unknown>, secret = t.config.JWT_SECRET, algorithm: jwt.Algorithm = "HS256"): string {
  return jwt.sign(claims, secret, { algorithm, noTimestamp: "iat" in claims });
}

async function post(authorization: string, query = PUBLIC_QUERY, url = t.url) {
  const res = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", authorization },
    body: JSON.stringify({ query }),
  });
  return { status: res.status, headers: res.headers, body: JSON.parse(await res.text()) };
}

async function get(authorization: string, query = PUBLIC_QUERY) {
  const res = await fetch(`${t.url}/graphql?${new URLSearchParams({ query })}`, { headers: { accept: "application/json", authorization } });
  return { status: res.status, headers: res.headers, body: JSON.parse(await res.text()) };
}

function expect401(r: { status: number; headers: Headers; body: any }) {
  expect({ status: r.status, code: r.body.errors?.[0]?.extensions?.code, data: r.body.data ?? null }).toEqual({
    status: 401,
    code: "UNAUTHENTICATED",
    data: null,
  });
  expect(r.body.errors[0].message).toEqual(expect.any(String));
  expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/i);
}

describe("login", () => {
  test.each(ACCOUNTS)("%s signs in and gets a token, its role and its expiry", async (user, role) => {
    const before = Date.now();
    const r = await t.gql(LOGIN, { variables: { e: DEMO[user].email, p: DEMO.password } });
    const { login } = ok(r);
    expect(login).toEqual({ token: expect.any(String), role, expiresAt: expect.any(String) });

    const claims = jwt.verify(login.token, t.config.JWT_SECRET, { algorithms: ["HS256"] }) as jwt.JwtPayload;
    expect(jwt.decode(login.token, { complete: true })!.header.alg).toBe("HS256");
    expect(claims).toMatchObject({ role, user_id: DEMO[user].id });
    const expiresAt = Date.parse(login.expiresAt);
    expect(expiresAt).toBe(claims.exp! * 1000);
    // Short-lived: the configured lifetime from now.
    expect(expiresAt).toBeGreaterThanOrEqual(before + (t.config.JWT_EXPIRES_IN_SECONDS - 5) * 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + (t.config.JWT_EXPIRES_IN_SECONDS + 5) * 1000);
  });

  test("each token acts as its own account", async () => {
    const mine = async (user: DemoUser) => {
      const { login } = ok(await t.gql(LOGIN, { variables: { e: DEMO[user].email, p: DEMO.password } }));
      return login.token as string;
    };
    for (const user of ["alice", "bob"] as const) {
      const d = ok(await t.gql(`{ customer { id } }`, { token: await mine(user) }));
      expect(d.customer).toEqual({ id: DEMO[user].id });
    }
    const staff = ok(await t.gql(`query($id: ID!) { user(id: $id) { id } }`, { token: await mine("barista"), variables: { id: DEMO.alice.id } }));
    expect(staff.user).toEqual({ id: DEMO.alice.id });
    const admin = ok(await t.gql(`{ coffees { cost } }`, { token: await mine("admin") }));
    expect(admin.coffees.some((c: any) => c.cost !== null)).toBe(true);
  });

  test("the e-mail is case-insensitive", async () => {
    const { login } = ok(await t.gql(LOGIN, { variables: { e: "Alice@Example.COM", p: DEMO.password } }));
    expect(login.role).toBe("customer");
    expect((jwt.decode(login.token) as jwt.JwtPayload).user_id).toBe(DEMO.alice.id);
  });

  test("a wrong password and an unknown e-mail are the same UNAUTHENTICATED error", async () => {
    // Few attempts, on Bob and unknown addresses: sign-in is throttled per
    // account and per source, and afterAll removes these failures again.
    const attempts = [
      { e: DEMO.bob.email, p: "tea" },
      { e: "nobody@example.com", p: DEMO.password },
      { e: DEMO.bob.email, p: "" },
      { e: "' or 1=1 --", p: "' or 1=1 --" },
    ];
    const answers = [];
    for (const variables of attempts) {
      const r = await t.gql(LOGIN, { variables });
      expect(codes(r)).toEqual(["UNAUTHENTICATED"]);
      expect(r.body.data ?? null).toBeNull();
      answers.push(r.body.errors![0]!.message);
    }
    expect(new Set(answers).size).toBe(1);
    expect(answers[0]).not.toMatch(/exist|unknown|no such|not found/i);
  });
});

describe("bearer tokens the service did not issue are a 401 UNAUTHENTICATED", () => {
  const now = () => Math.floor(Date.now() / 1000);
  const cases: Array<[string, () => Promise<string>]> = [
    ["a token that is not a JWT", async () => "Bearer not-a-jwt"],
    ["an expired token", async () => `Bearer ${forge({ ...(await genuineClaims("alice")), iat: now() - 3600, exp: now() - 60 })}`],
    [
      "an unsigned token (alg none) claiming admin",
      async () => {
        const claims = { ...(await genuineClaims("alice")), role: "admin", user_id: DEMO.admin.id, sub: DEMO.admin.id };
        return `Bearer ${b64url({ alg: "none", typ: "JWT" })}.${b64url(claims)}.`;
      },
    ],
    ["a token signed with another secret", async () => `Bearer ${forge({ ...(await genuineClaims("admin")) }, "another-secret-that-is-long-enough-0123456789")}`],
    [
      "a genuine token whose payload was changed to admin",
      async () => {
        const [header, , signature] = (await t.token("alice")).split(".");
        const claims = { ...(await genuineClaims("alice")), role: "admin" };
        return `Bearer ${header}.${b64url(claims)}.${signature}`;
      },
    ],
    ["a token with role cafe_system", async () => `Bearer ${forge({ ...(await genuineClaims("barista")), role: "cafe_system" })}`],
    ["a token with role postgres", async () => `Bearer ${forge({ ...(await genuineClaims("admin")), role: "postgres" })}`],
    ["a token with role cafe_admin", async () => `Bearer ${forge({ ...(await genuineClaims("admin")), role: "cafe_admin" })}`],
    ["a token with role cafe_owner", async () => `Bearer ${forge({ ...(await genuineClaims("admin")), role: "cafe_owner" })}`],
    [
      "a token without a user id",
      async () => {
        const { user_id: _drop, ...claims } = await genuineClaims("alice");
        return `Bearer ${forge(claims)}`;
      },
    ],
    ["the payment webhook token", async () => `Bearer ${t.config.WEBHOOK_TOKEN}`],
    ["the JWT secret itself", async () => `Bearer ${t.config.JWT_SECRET}`],
    ["a Basic credential", async () => `Basic ${Buffer.from(`${DEMO.alice.email}:${DEMO.password}`).toString("base64")}`],
    ["Bearer with no token", async () => "Bearer "],
    ["a genuine token with trailing junk", async () => `Bearer ${await t.token("alice")} extra`],
  ];

  test.each(cases)("%s (POST)", async (_label, authorization) => {
    expect401(await post(await authorization()));
  });

  test.each(cases)("%s (GET)", async (_label, authorization) => {
    expect401(await get(await authorization()));
  });

  test("an expired token's 401 says that it expired (sign in again), for staff fields too", async () => {
    const expired = forge({ ...(await genuineClaims("barista")), iat: now() - 3600, exp: now() - 1 });
    const r = await post(`Bearer ${expired}`, `{ lowStockItems { currentStock } }`);
    expect401(r);
    expect(r.body.errors[0].message).toMatch(/expired/i);
  });

  test("a forged admin token reaches no admin data", async () => {
    const forged = forge({ ...(await genuineClaims("admin")) }, "another-secret-that-is-long-enough-0123456789");
    const r = await post(`Bearer ${forged}`, `{ coffees { cost margin supplier { name } } }`);
    expect401(r);
    expect(JSON.stringify(r.body)).not.toMatch(/"cost":\s*\d/);
  });

  test("a genuine, unexpired token is accepted (the forged variants above differ only in what they break)", async () => {
    const fresh = forge({ ...(await genuineClaims("alice")), iat: now(), exp: now() + 60 });
    const r = await post(`Bearer ${fresh}`, `{ customer { id } }`);
    expect({ status: r.status, data: r.body.data }).toEqual({ status: 200, data: { customer: { id: DEMO.alice.id } } });
  });

  test("a token the service has accepted (and remembers as verified) is refused from the second its exp names; a copy with its signature changed never passes", async () => {
    const claims = await genuineClaims("alice");
    // Expires at the start of a second at least 2 s away.
    const exp = now() + 2;
    const token = forge({ ...claims, iat: now(), exp });
    const [head, payload, signature] = token.split(".") as [string, string, string];
    const altered = `${head}.${payload}.${signature.slice(0, -2)}${signature.endsWith("AA") ? "BA" : "AA"}`;
    for (let i = 0; i < 3; i++) {
      const r = await post(`Bearer ${token}`, `{ customer { id } }`);
      expect({ status: r.status, data: r.body.data }).toEqual({ status: 200, data: { customer: { id: DEMO.alice.id } } });
      expect401(await post(`Bearer ${altered}`, `{ customer { id } }`));
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, exp * 1000 - Date.now()) + 50));
    const late = await post(`Bearer ${token}`, `{ customer { id } }`);
    expect401(late);
    expect(late.body.errors[0].message).toMatch(/expired/i);
  });

  test("no Authorization header is anonymous (the menu, no customer)", async () => {
    const r = await t.gql(`{ menuItems { id } }`);
    expect(ok(r).menuItems.length).toBeGreaterThan(0);
  });
});

describe("a correctly signed token for an account that does not exist acts as nobody (a rule in Postgres: app_hidden.signed_in_as)", () => {
  test("no admin data, no admin mutation, no staff read: UNAUTHENTICATED or nothing", async () => {
    const admin = await genuineClaims("admin");
    const ghost = randomUUID();
    const forged = `Bearer ${forge({ ...admin, user_id: ghost, sub: ghost, sid: randomUUID() })}`;
    // The genuine admin sees suppliers; the ghost none.
    const genuine = await post(`Bearer ${forge(admin)}`, "{ allSuppliers { nodes { name } } }");
    expect(genuine.body.data.allSuppliers.nodes.length).toBeGreaterThan(0);
    const suppliers = await post(forged, "{ allSuppliers { nodes { name } } }");
    expect(suppliers.body.data?.allSuppliers?.nodes ?? []).toEqual([]);
    const staffRead = await post(forged, "{ allOrders { nodes { id } } }");
    expect(staffRead.body.data?.allOrders?.nodes ?? []).toEqual([]);
    const email = `ghost-${randomUUID().slice(0, 8)}@example.com`;
    const add = await post(forged, `mutation { addStaffAccount(email: "${email}", name: "Ghost", role: "admin", password: "a-long-enough-password-1") }`);
    expect(codes({ body: add.body } as never)).toEqual(["UNAUTHENTICATED"]);
    const { rows } = await t.db.query("select 1 from app_private.accounts where email = $1", [email]);
    expect(rows).toEqual([]);
    // A customer's genuine id under an admin's role is not an admin either.
    const wrongRole = `Bearer ${forge({ ...admin, user_id: DEMO.alice.id, sub: DEMO.alice.id })}`;
    expect((await post(wrongRole, "{ allSuppliers { nodes { name } } }")).body.data?.allSuppliers?.nodes ?? []).toEqual([]);
  });
});

describe("rotating the JWT secret: JWT_SECRET_PREVIOUS verifies, never signs", () => {
  const NEXT = `next-jwt-secret-${randomUUID()}`;
  const OTHER = `another-jwt-secret-${randomUUID()}`;
  let rotated: TestService;
  let unrelated: TestService;
  beforeAll(async () => {
    // The current secret becomes the previous one; a second service names a different previous secret.
    rotated = await startAnotherService({ JWT_SECRET: NEXT, JWT_SECRET_PREVIOUS: t.config.JWT_SECRET });
    unrelated = await startAnotherService({ JWT_SECRET: NEXT, JWT_SECRET_PREVIOUS: OTHER });
  }, 60_000);
  afterAll(async () => {
    await rotated?.stop();
    await unrelated?.stop();
  });

  test("a token signed with the previous secret is accepted only where JWT_SECRET_PREVIOUS names it", async () => {
    const old = `Bearer ${await t.token("alice")}`;
    const accepted = await post(old, PUBLIC_QUERY, rotated.url);
    expect({ status: accepted.status, errors: accepted.body.errors }).toEqual({ status: 200, errors: undefined });
    expect(accepted.body.data.menuItems.length).toBeGreaterThan(0);
    expect401(await post(old, PUBLIC_QUERY, unrelated.url));
    // An expired token of the previous secret is refused as expired.
    const expired = forge({ ...(await genuineClaims("alice")), exp: Math.floor(Date.now() / 1000) - 60 });
    const r = await post(`Bearer ${expired}`, PUBLIC_QUERY, rotated.url);
    expect401(r);
    expect(r.body.errors[0].message).toMatch(/expired/);
  });

  test("new tokens are signed with the current secret only", async () => {
    const r = await rotated.gql(LOGIN, { variables: { e: DEMO.bob.email, p: DEMO.password } });
    const token = ok(r).login.token as string;
    expect(() => jwt.verify(token, NEXT, { algorithms: ["HS256"] })).not.toThrow();
    expect(() => jwt.verify(token, t.config.JWT_SECRET, { algorithms: ["HS256"] })).toThrow(/invalid signature/);
    // So the service still on the old secret (no previous) refuses it, and one that rotated accepts it.
    expect401(await post(`Bearer ${token}`));
    expect((await post(`Bearer ${token}`, PUBLIC_QUERY, unrelated.url)).status).toBe(200);
  });
});
