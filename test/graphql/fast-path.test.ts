import { readFileSync } from "node:fs";
import path from "node:path";
import { signToken } from "../../src/auth.ts";
import { DEMO } from "../support/client.ts";
import { captureLogLines } from "../support/logs.ts";
import { startAnotherService, useTestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";

// /graphql's fast path (src/http/fastPath.ts): a POSTed query, trusted or
// ad hoc, served from its parse and checks worked out once. Each test sends
// a request the fast path takes (the counter cafe_graphql_fast_path_
// requests_total says so) and checks a protection still holds on it: the
// token, the rate limit, the cost limit, the ad-hoc policy, masked errors,
// the access log, the metrics, the security headers and the request id.
// What it does not take (a mutation, a refused ad-hoc text) goes to grafserv.

const CACHE_SIZE = 3;
/** Low enough that a customer's or an anonymous caller's menu is over it. */
const MAX_COST = 5;
const t = useTestService({ env: { AD_HOC_QUERIES: "staff", GRAPHQL_DOCUMENT_CACHE_SIZE: String(CACHE_SIZE), MAX_QUERY_COST: String(MAX_COST) } });
const log = captureLogLines();

const MANIFEST: Record<string, string> = JSON.parse(readFileSync(path.resolve(__dirname, "../../contract/trusted-documents.json"), "utf8"));
const idOf = (operation: string) => Object.entries(MANIFEST).find(([, text]) => new RegExp(`^(query|mutation) ${operation}\\b`).test(text))![0];
const PING = idOf("Ping");
const COFFEE_DETAIL = idOf("CoffeeDetail");

async function post(body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.url}/graphql`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json", ...headers }, body: JSON.stringify(body) });
  return { res, status: res.status, body: (await res.json()) as { data?: any; errors?: Array<{ message: string; extensions?: Record<string, any> }>; extensions?: any } };
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
/** Signs in by the trusted Login document (t.token sends an ad-hoc text, which AD_HOC_QUERIES=staff refuses). */
async function signIn(who: "alice" | "admin"): Promise<{ token: string; refreshToken: string }> {
  const r = await post({ documentId: idOf("Login"), variables: { email: DEMO[who].email, password: DEMO.password } });
  return r.body.data.login;
}

/** Every sample of a /metrics scrape, as `name{labels}` -> value. */
async function scrape(): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await (await fetch(`${t.url}/metrics`)).text()).split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const i = line.lastIndexOf(" ");
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}
const fastCount = async (document: "trusted" | "ad_hoc") => (await scrape()).get(`cafe_graphql_fast_path_requests_total{document="${document}"}`) ?? NaN;

/** Runs `send` and says how many requests of each kind the fast path served meanwhile. */
async function counted(send: () => Promise<unknown>): Promise<{ trusted: number; ad_hoc: number }> {
  const before = { trusted: await fastCount("trusted"), ad_hoc: await fastCount("ad_hoc") };
  await send();
  return { trusted: (await fastCount("trusted")) - before.trusted, ad_hoc: (await fastCount("ad_hoc")) - before.ad_hoc };
}

test("a trusted query by documentId takes the fast path: security headers, the request id echoed, its access log line, the request and operation metrics, extensions.cost", async () => {
  let answer!: Awaited<ReturnType<typeof post>>;
  // Once, so its text is learned: a request that meets a schema being swapped
  // in at start-up is grafserv's, uncounted here.
  await waitUntil("Ping on the fast path", async () => (await counted(() => post({ documentId: PING }))).trusted === 1, 10_000, 100);
  const before = await scrape();
  expect(await counted(async () => (answer = await post({ documentId: PING }, { "x-request-id": "fast-path-ping-1" })))).toEqual({ trusted: 1, ad_hoc: 0 });
  expect(answer.status).toBe(200);
  expect(answer.body).toEqual({ data: { __typename: "Query" }, extensions: { cost: { requested: 0, maximum: MAX_COST } } });
  expect(answer.res.headers.get("content-type")).toBe("application/json;charset=utf-8");
  expect(answer.res.headers.get("x-request-id")).toBe("fast-path-ping-1");
  expect(answer.res.headers.get("x-content-type-options")).toBe("nosniff");
  expect(answer.res.headers.get("x-frame-options")).toBe("DENY");
  expect(answer.res.headers.get("content-security-policy")).toContain("default-src 'none'");
  const line = await waitUntil("the access log line", () => log.lines().find((l) => l.msg === "request" && l.requestId === "fast-path-ping-1"), 5000, 10);
  expect(line).toMatchObject({ method: "POST", route: "/graphql", status: 200, operationName: "Ping" });
  const after = await scrape();
  const grew = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
  expect(grew('cafe_http_requests_total{route="/graphql",status="200"}')).toBeGreaterThanOrEqual(1);
  // Sent without operationName: a trusted document is named by its operation, as for grafserv.
  expect(grew('cafe_graphql_operation_duration_seconds_count{operation="Ping",type="query"}')).toBe(1);
});

test("an ad-hoc text is served by the fast path, on its second request too; a mutation is not (grafserv serves it)", async () => {
  const admin = (await signIn("admin")).token;
  const text = `query FastAdHoc${Date.now()} { __typename }`;
  const twice = await counted(async () => {
    for (let i = 0; i < 2; i++) expect((await post({ query: text }, bearer(admin))).body.data).toEqual({ __typename: "Query" });
  });
  expect(twice).toEqual({ trusted: 0, ad_hoc: 2 });
  // The exact text of a trusted document counts as trusted.
  expect(await counted(() => post({ query: MANIFEST[PING] }))).toEqual({ trusted: 1, ad_hoc: 0 });
  const mutation = await counted(async () => {
    const r = await post({ query: 'mutation { refreshToken(token: "not-a-token") { token } }' }, bearer(admin));
    expect(r.body.errors?.[0]?.extensions?.code).toBeDefined();
  });
  expect(mutation).toEqual({ trusted: 0, ad_hoc: 0 });
});

test(`the ad-hoc texts it keeps are bounded (GRAPHQL_DOCUMENT_CACHE_SIZE ${CACHE_SIZE}); one dropped is worked out again`, async () => {
  const admin = (await signIn("admin")).token;
  const texts = Array.from({ length: CACHE_SIZE + 3 }, (_, i) => `query Bounded${i}x${Date.now()} { __typename }`);
  for (const text of texts) expect((await post({ query: text }, bearer(admin))).body.data).toEqual({ __typename: "Query" });
  expect((await scrape()).get(`cafe_cache_entries{cache="fast_path_ad_hoc"}`)).toBe(CACHE_SIZE);
  expect(await counted(async () => expect((await post({ query: texts[0] }, bearer(admin))).body.data).toEqual({ __typename: "Query" }))).toEqual({ trusted: 0, ad_hoc: 1 });
  expect((await scrape()).get(`cafe_cache_entries{cache="fast_path_ad_hoc"}`)).toBe(CACHE_SIZE);
});

test("a variant of a trusted text (whitespace, a comment, a __typename more) is ad hoc: refused to anonymous callers under `staff`, served as ad hoc to staff; the trusted texts kept never grow", async () => {
  const ping = MANIFEST[PING]!;
  const variants = Array.from({ length: 40 }, (_, i) => [`${ping}${" ".repeat(i + 1)}`, `# ${i}\n${ping}`, ping.replace("__typename", `__typename${"\n".repeat(i + 1)}__typename`)][i % 3]!);
  const trustedKept = async () => (await scrape()).get('cafe_cache_entries{cache="fast_path_trusted"}') ?? 0;
  const before = await trustedKept();
  const anonymous = await counted(async () => {
    for (const query of variants) expect((await post({ query })).body.errors?.[0]?.extensions?.code).toBe("TRUSTED_DOCUMENT_REQUIRED");
  });
  expect(anonymous).toEqual({ trusted: 0, ad_hoc: 0 });
  const admin = (await signIn("admin")).token;
  const staff = await counted(async () => {
    for (const query of variants) expect((await post({ query }, bearer(admin))).body.data).toEqual({ __typename: "Query" });
  });
  expect(staff).toEqual({ trusted: 0, ad_hoc: variants.length });
  // The exact text is still trusted; what the fast path keeps of trusted texts is at most the manifest.
  expect(await counted(() => post({ query: ping }))).toEqual({ trusted: 1, ad_hoc: 0 });
  expect(await trustedKept()).toBeLessThanOrEqual(Math.max(before, 1) + 1);
  expect(await trustedKept()).toBeLessThanOrEqual(Object.keys(MANIFEST).length);
  expect((await scrape()).get('cafe_cache_entries{cache="fast_path_ad_hoc"}')).toBeLessThanOrEqual(CACHE_SIZE);
});

test("texts that differ only in what GraphQL ignores are parsed, validated and priced once: a flood of variants adds no parsed form and no price", async () => {
  const admin = (await signIn("admin")).token;
  const cached = async () => {
    const m = await scrape();
    return { forms: m.get('cafe_cache_entries{cache="ad_hoc_forms"}') ?? 0, prices: m.get('cafe_cache_entries{cache="query_costs"}') ?? 0 };
  };
  const detail = MANIFEST[COFFEE_DETAIL]!;
  const variables = { id: "40000000-0000-4000-8000-000000000001" };
  expect((await post({ documentId: COFFEE_DETAIL, variables }, bearer(admin))).body.errors).toBeUndefined();
  const adHoc = `query Shared${Date.now()} { allCoffees(first: 2) { nodes { name } } }`;
  expect((await post({ query: adHoc }, bearer(admin))).body.errors).toBeUndefined();
  const before = await cached();
  // Variants of a trusted text, and of an ad-hoc one, each sent once: each is still ad hoc (and counted as such).
  const variantsOf = (text: string) => Array.from({ length: 12 }, (_, i) => [`${text}${" ".repeat(i + 1)}`, `# ${i}\n${text}`, text.replace(/\n|\{/, (m) => `${m}${",".repeat(i + 1)}`)][i % 3]!);
  const served = await counted(async () => {
    for (const query of variantsOf(detail)) expect((await post({ query, variables }, bearer(admin))).body.data?.coffee).toBeDefined();
    for (const query of variantsOf(adHoc)) expect((await post({ query }, bearer(admin))).body.data?.allCoffees.nodes).toHaveLength(2);
  });
  expect(served).toEqual({ trusted: 0, ad_hoc: 24 });
  expect(await cached()).toEqual(before);
  // Anonymous callers are still refused the variants under `staff`: trust is the exact text.
  expect((await post({ query: `${detail} `, variables })).body.errors?.[0]?.extensions?.code).toBe("TRUSTED_DOCUMENT_REQUIRED");
});

test("a document not seen before costs its caller the CPU it took (GRAPHQL_DOCUMENT_WORK_US), in requests of their own budget; a known one costs one request", async () => {
  // One request for each microsecond: any new document's parse and validation is well over the burst.
  const limited = await startAnotherService({ GRAPHQL_RATE_LIMIT: "10", GRAPHQL_RATE_BURST: "20", GRAPHQL_DOCUMENT_WORK_US: "1", AD_HOC_QUERIES: "any", TRUSTED_NETWORK_FACTOR: "1" });
  const send = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${limited.url}/graphql`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as any,
    }));
  try {
    const text = `query Work${Date.now()} { allCoffees(first: 1) { nodes { name } } }`;
    // Admitted (it had budget left), and charged afterwards: the source's next request is refused.
    expect((await send({ query: text })).body.data.allCoffees.nodes).toHaveLength(1);
    const next = await send({ documentId: PING });
    expect(next.status).toBe(429);
    expect(next.body.errors[0].extensions.code).toBe("RATE_LIMITED");
    // Another payer behind the same address (a signed-in customer) has their own budget.
    const alice = signToken(limited.config.JWT_SECRET, { userId: DEMO.alice.id, role: "customer", signInId: "00000000-0000-4000-8000-00000000c0de" }, 60).token;
    expect((await send({ documentId: PING }, bearer(alice))).status).toBe(200);
    // A new window: the same text, known now, costs one request each time.
    await new Promise((r) => setTimeout(r, 2100));
    for (let i = 0; i < 8; i++) expect((await send({ query: text })).status).toBe(200);
  } finally {
    await limited.stop();
  }
});

test("a bad, expired or revoked token is 401 UNAUTHENTICATED before anything runs", async () => {
  const expired = signToken(t.config.JWT_SECRET, { userId: "00000000-0000-4000-8000-00000000a11c", role: "customer", signInId: "00000000-0000-4000-8000-000000000001" }, -10).token;
  const { token, refreshToken } = await signIn("alice");
  expect((await post({ documentId: PING }, bearer(token))).status).toBe(200);
  expect((await post({ documentId: idOf("Logout"), variables: { refreshToken } }, bearer(token))).body.data).toEqual({ logout: true });
  for (const bad of ["not-a-jwt", expired, token]) {
    const r = await post({ documentId: PING }, bearer(bad));
    expect(r.status).toBe(401);
    expect(r.body.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
  }
});

test("an ad-hoc text the policy refuses (staff: not anonymous callers, not customers) is TRUSTED_DOCUMENT_REQUIRED; a trusted one runs", async () => {
  const alice = (await signIn("alice")).token;
  const text = `query Refused${Date.now()} { __typename }`;
  const refused = await counted(async () => {
    for (const headers of [{}, bearer(alice)]) {
      const r = await post({ query: text }, headers);
      expect(r.body.errors?.[0]?.extensions?.code).toBe("TRUSTED_DOCUMENT_REQUIRED");
    }
  });
  expect(refused).toEqual({ trusted: 0, ad_hoc: 0 });
  // Once an admin's request has put the text in the cache, it is still refused to others.
  expect((await post({ query: text }, bearer((await signIn("admin")).token))).status).toBe(200);
  expect((await post({ query: text }, bearer(alice))).body.errors?.[0]?.extensions?.code).toBe("TRUSTED_DOCUMENT_REQUIRED");
});

test("a query over the cost limit, trusted and anonymous, is refused QUERY_TOO_COMPLEX on the fast path", async () => {
  const answer = await counted(async () => {
    const r = await post({ documentId: idOf("KioskMenu") });
    expect(r.body.errors?.[0]?.extensions).toMatchObject({ code: "QUERY_TOO_COMPLEX", maximumCost: MAX_COST });
    expect(r.body.data).toBeUndefined();
  });
  expect(answer).toEqual({ trusted: 1, ad_hoc: 0 });
});

describe("a masked internal error", () => {
  let coffeeId: string;
  beforeAll(async () => {
    coffeeId = (await t.db.query("select id from app_public.coffees order by name limit 1")).rows[0].id;
    // A DBA's row-level policy gone wrong, for one coffee: division by zero when it is read.
    await t.db.query(`create policy fast_path_test_failure on app_public.coffees as restrictive for select
      using (case when id = '${coffeeId}' then 1 / (length(name) - length(name)) = 1 else true end)`);
  });
  afterAll(async () => {
    await t.db.query("drop policy if exists fast_path_test_failure on app_public.coffees");
  });

  test("keeps its code and errorId, hides the internals, and is counted and logged with the request id", async () => {
    const admin = (await signIn("admin")).token;
    const before = (await scrape()).get('cafe_graphql_errors_total{code="INTERNAL_SERVER_ERROR"}') ?? 0;
    let r!: Awaited<ReturnType<typeof post>>;
    expect(await counted(async () => (r = await post({ documentId: COFFEE_DETAIL, variables: { id: coffeeId } }, { ...bearer(admin), "x-request-id": "fast-path-masked-1" })))).toEqual({
      trusted: 1,
      ad_hoc: 0,
    });
    const error = r.body.errors![0]!;
    expect(error.extensions).toMatchObject({ code: "INTERNAL_SERVER_ERROR" });
    expect(error.extensions!.errorId).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.stringify(r.body)).not.toMatch(/division|fast_path_test_failure|stack/i);
    expect((await scrape()).get('cafe_graphql_errors_total{code="INTERNAL_SERVER_ERROR"}')).toBe(before + 1);
    const errorLine = await waitUntil("the masked error's log line", () => log.lines().find((l) => l.errorId === error.extensions!.errorId), 5000, 10);
    expect(errorLine).toMatchObject({ requestId: "fast-path-masked-1" });
  });
});

test("the rate limit holds: 429 RATE_LIMITED with Retry-After", async () => {
  const limited = await startAnotherService({ GRAPHQL_RATE_LIMIT: "1", GRAPHQL_RATE_BURST: "2", TRUSTED_NETWORK_FACTOR: "1" });
  try {
    const statuses: number[] = [];
    let refusal: Response | undefined;
    for (let i = 0; i < 10 && !refusal; i++) {
      const res = await fetch(`${limited.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ documentId: PING }) });
      statuses.push(res.status);
      if (res.status === 429) refusal = res;
      else await res.arrayBuffer();
    }
    expect(statuses[0]).toBe(200);
    expect(refusal?.headers.get("retry-after")).toBe("1");
    expect(((await refusal!.json()) as any).errors[0].extensions.code).toBe("RATE_LIMITED");
  } finally {
    await limited.stop();
  }
});
