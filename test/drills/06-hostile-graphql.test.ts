import pg from "pg";
import { serverAudits } from "graphql-http";
import { errorCode, login, type RawResponse, request, subscribe } from "../support/client.ts";
import { type DrillDb, freshDatabase, isBackgroundStatement } from "../support/db.ts";
import { report, say } from "../support/figures.ts";
import { ChildService, killAllChildren, startTestService, type TestService, withLogsOnFailure } from "../support/service.ts";

// Drill 6: hostile GraphQL. Alias and fragment bombs, cyclic fragments,
// deep nesting, deeply nested list values, huge and deep variables,
// introspection abuse, costly selections, over HTTP (POST and GET) and
// WebSocket: each is refused with its code before any SQL runs (statements
// counted by patching pg.Client.prototype.query in this process), and
// every error of a refusal carries extensions.code (README "API"). Every
// document is first tried on a child process with a timeout, so that one
// which would hang the server fails the drill instead of hanging jest.
// Then the graphql-http audit suite: every MUST passes (SHOULDs reported).

interface Hostile {
  name: string;
  body: unknown;
  /** Send the body with Transfer-Encoding: chunked (no Content-Length). */
  chunked?: boolean;
  /** Acceptable extensions.code values (any error when empty). */
  codes: string[];
  as?: "barista";
  method?: "GET";
}

const FRAG_LEVELS = 20;
const fragmentBomb = (() => {
  let f = "";
  for (let i = 0; i < FRAG_LEVELS; i++)
    f += `fragment F${i} on Query { ${Array(10)
      .fill(i === FRAG_LEVELS - 1 ? "menuItems { id }" : `...F${i + 1}`)
      .join(" ")} }\n`;
  return `query { ...F0 }\n${f}`;
})();
// Wide rather than deep: 4 levels of 12 spreads, 20,736 expansions, each a list field.
const fragmentFanout = (() => {
  let f = "";
  for (let i = 0; i < 4; i++) f += `fragment W${i} on Query { ${Array.from({ length: 12 }, (_, k) => (i === 3 ? `a${k}: menuItems { id }` : `...W${i + 1}`)).join(" ")} }\n`;
  return `query { ...W0 }\n${f}`;
})();
const nest = (levels: number, inner: string) => {
  let q = inner;
  for (let i = 0; i < levels; i++) q = `customer { recentOrders { ${q} } }`;
  return `query { orders { ${q} } }`;
};
const aliases = (n: number, sel = "menuItems { id }") => `query { ${Array.from({ length: n }, (_, i) => `a${i}: ${sel}`).join(" ")} }`;
const schemaAliases = (n: number) =>
  `query { ${Array.from({ length: n }, (_, i) => `s${i}: __schema { types { name fields { name args { name type { name ofType { name ofType { name } } } } type { name ofType { name ofType { name ofType { name } } } } } } }`).join(" ")} }`;

const HOSTILE: Hostile[] = [
  { name: "alias bomb (200 aliases)", body: { query: aliases(200) }, codes: ["TOO_MANY_ALIASES"] },
  { name: "aliases one over the limit (31)", body: { query: aliases(31) }, codes: ["TOO_MANY_ALIASES"] },
  { name: "fragment bomb (10^20 expansions)", body: { query: fragmentBomb }, codes: ["QUERY_TOO_DEEP", "QUERY_TOO_COMPLEX", "TOO_MANY_ALIASES"] },
  { name: "fragment fan-out (20,736 list fields)", body: { query: fragmentFanout }, codes: ["QUERY_TOO_COMPLEX", "TOO_MANY_ALIASES", "QUERY_TOO_DEEP"] },
  { name: "cyclic fragments", body: { query: "query { ...A } fragment A on Query { ...B menuItems { id } } fragment B on Query { ...A }" }, codes: [] },
  {
    name: "cyclic fragments through lists",
    body: { query: "query { coffees { ...A } } fragment A on Coffee { name reviews { ...B } } fragment B on Review { rating ...C } fragment C on Review { ...B }" },
    codes: [],
  },
  { name: "deep nesting (depth 23)", body: { query: nest(10, "id") }, codes: ["QUERY_TOO_DEEP"] },
  { name: "deep nesting (depth 101)", body: { query: nest(50, "id") }, codes: ["QUERY_TOO_DEEP"] },
  { name: "deeply nested list literal", body: { query: `query { orders(status: ${"[".repeat(2000)}PENDING${"]".repeat(2000)}) { id } }` }, codes: [] },
  {
    name: "deeply nested list variable",
    body: { query: "mutation($i: CreateOrderInput!) { createOrder(input: $i) { id } }", variables: { i: { items: JSON.parse(`${"[".repeat(3000)}${"]".repeat(3000)}`) } } },
    codes: [],
    as: "barista",
  },
  {
    name: "deeply nested object variable",
    body: { query: "query($s: [OrderStatus!]) { orders(status: $s) { id } }", variables: { s: JSON.parse(`${'{"a":'.repeat(3000)}1${"}".repeat(3000)}`) } },
    codes: [],
  },
  { name: "huge variables (5 MB)", body: { query: "query($q: String) { searchCoffees(query: $q) { id } }", variables: { q: "y".repeat(5_000_000) } }, codes: ["QUERY_TOO_LARGE", "PAYLOAD_TOO_LARGE"] },
  {
    name: "huge variables (5 MB), chunked",
    body: { query: "query($q: String) { searchCoffees(query: $q) { id } }", variables: { q: "y".repeat(5_000_000) } },
    codes: ["QUERY_TOO_LARGE", "PAYLOAD_TOO_LARGE"],
    chunked: true,
  },
  {
    name: "many variables (20,000 unused)",
    body: { query: "query { menuItems { id } }", variables: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`v${i}`, i])) },
    codes: ["QUERY_TOO_LARGE", "PAYLOAD_TOO_LARGE"],
  },
  { name: "too many tokens", body: { query: `query { menuItems { ${Array(6000).fill("id").join(" ")} } }` }, codes: ["TOO_MANY_TOKENS", "QUERY_TOO_LARGE"] },
  { name: "document too long", body: { query: `query { menuItems { id } } # ${"x".repeat(60_000)}` }, codes: ["QUERY_TOO_LARGE"] },
  { name: "3,000 copies of one field", body: { query: `query { menuItems { ${Array(3000).fill("id").join(" ")} } }` }, codes: [] },
  { name: "directive bomb", body: { query: `query { menuItems ${Array(600).fill("@include(if: true)").join(" ")} { id } }` }, codes: [] },
  { name: "deep introspection", body: { query: "query { __schema { types { fields { type { fields { type { fields { type { fields { type { fields { name } } } } } } } } } } } }" }, codes: [] },
  { name: "introspection: 31 full __schema aliases", body: { query: schemaAliases(31) }, codes: ["TOO_MANY_ALIASES"] },
  { name: "introspection: 30 full __schema aliases", body: { query: schemaAliases(30) }, codes: ["INTROSPECTION_LIMIT"] },
  { name: "introspection: two __schema", body: { query: schemaAliases(2) }, codes: ["INTROSPECTION_LIMIT"] },
  { name: "too costly for anonymous", body: { query: "query { coffees { reviews(limit: 1000) { rating comment } } }" }, codes: ["QUERY_TOO_COMPLEX"] },
  {
    name: "too costly for staff",
    body: { query: `query { ${Array.from({ length: 6 }, (_, i) => `s${i}: searchCoffees(query: "a", first: 500) { reviews(limit: 1000) { rating } }`).join(" ")} }` },
    codes: ["QUERY_TOO_COMPLEX"],
    as: "barista",
  },
  { name: "alias bomb over GET", body: { query: aliases(200) }, codes: ["TOO_MANY_ALIASES"], method: "GET" },
  { name: "mutation over GET", body: { query: 'mutation { login(email: "alice@example.com", password: "coffee") { token } }' }, codes: [], method: "GET" },
  { name: "batched array of 100 operations", body: Array.from({ length: 100 }, () => ({ query: "{ menuItems { id } }" })), codes: [] },
];

let t: TestService;
let d: DrillDb;
let probe: ChildService | null = null;
let baristaToken = "";

beforeAll(async () => {
  t = await startTestService({ env: { GRAPHQL_RATE_LIMIT: "0" } });
  baristaToken = await t.token("barista");
}, 60_000);

afterAll(async () => {
  await killAllChildren();
  await d?.close();
  await t?.stop();
});

/** SQL statements this process sends (its periodic background statements aside). */
const sql = { counting: false, statements: [] as string[] };
const originalQuery = pg.Client.prototype.query;
beforeAll(() => {
  (pg.Client.prototype as any).query = function (this: pg.Client, ...args: any[]) {
    const text = typeof args[0] === "string" ? args[0] : args[0]?.text;
    if (sql.counting && text !== undefined && !isBackgroundStatement(String(text))) sql.statements.push(String(text).slice(0, 120));
    return (originalQuery as any).apply(this, args);
  };
});
afterAll(() => {
  pg.Client.prototype.query = originalQuery;
});

async function send(base: string, h: Hostile, token: string | null, timeoutMs: number) {
  const headers: Record<string, string> = { accept: "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) };
  if (h.method === "GET") {
    const b = h.body as { query: string; variables?: unknown };
    const qs = new URLSearchParams({ query: b.query, ...(b.variables ? { variables: JSON.stringify(b.variables) } : {}) });
    return request(`${base}/graphql?${qs}`, { method: "GET", headers, timeoutMs });
  }
  return request(`${base}/graphql`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json", ...(h.chunked ? { "transfer-encoding": "chunked" } : {}) },
    body: JSON.stringify(h.body),
    timeoutMs,
  });
}

const codesOf = (json: any): string[] => (Array.isArray(json) ? json.flatMap(codesOf) : (json?.errors ?? []).map((e: any) => e.extensions?.code ?? `(no code) ${String(e.message).slice(0, 60)}`));
const NO_CODE = "(no code) ";

test(
  "hostile GraphQL documents are refused with their codes before any SQL runs, promptly, over HTTP and WebSocket",
  () =>
    withLogsOnFailure(
      () => [probe],
      async () => {
        // 1. On a child first: nothing may take long there.
        d = await freshDatabase("cafe_drill_6");
        probe = await ChildService.start({ name: "probe", mode: "api", databaseUrl: d.url, env: { GRAPHQL_RATE_LIMIT: "0" } });
        const probeToken = await login(probe.url, "barista");
        const slowOnChild: string[] = [];
        for (const h of HOSTILE) {
          // Only slowness counts here (a CPU-bound document would hang this process too);
          // other failures are looked at in-process below.
          const r = await send(probe.url, h, h.as ? probeToken : null, 10_000).catch((e) => ({ status: -1, ms: errorCode(e) === "TIMEOUT" ? 10_000 : 0, error: errorCode(e) }));
          if (r.ms > 3000) slowOnChild.push(`${h.name}: ${(r as any).error ?? `${r.ms} ms`}`);
        }
        const amplification = await send(probe.url, { name: "30 __schema aliases", body: { query: schemaAliases(30) }, codes: [] }, null, 20_000);
        probe.killGroup("SIGTERM");

        // 2. In this process, counting SQL statements.
        const results: Array<{ name: string; status: number; codes: string[]; statements: number; ms: number; problems: string[] }> = [];
        for (const h of HOSTILE) {
          if (slowOnChild.some((s) => s.startsWith(`${h.name}:`))) continue;
          sql.statements = [];
          sql.counting = true;
          const r = await send(t.url, h, h.as ? baristaToken : null, 10_000).catch((e): RawResponse => ({ status: -1, headers: {}, text: `no answer: ${errorCode(e)}`, json: undefined, ms: 0 }));
          sql.counting = false;
          const codes = codesOf(r.json);
          const problems: string[] = [];
          const json = r.json;
          const hasData = Array.isArray(json) ? json.some((j) => j?.data) : json?.data && Object.values(json.data).some((v) => v !== null);
          if (r.status === -1) problems.push(`${r.text} (the refusal never reached the client)`);
          else if (r.status === 200 && !codes.length) problems.push("accepted");
          if (hasData) problems.push("returned data");
          if (r.status >= 500) problems.push(`HTTP ${r.status}`);
          if (h.codes.length && !codes.some((c) => h.codes.includes(c)))
            problems.push(`codes ${JSON.stringify(codes.slice(0, 3))} instead of one of ${h.codes.join("/")} (HTTP ${r.status}: ${r.text.slice(0, 120)})`);
          // GraphQL errors carry extensions.code (README "API").
          if (codes.some((c) => c.startsWith(NO_CODE))) problems.push(`an error without extensions.code: ${codes.find((c) => c.startsWith(NO_CODE))!.slice(NO_CODE.length)}`);
          if (sql.statements.length) problems.push(`${sql.statements.length} SQL statements ran: ${sql.statements.slice(0, 3).join(" | ")}`);
          if (r.ms > 2000) problems.push(`${r.ms} ms`);
          results.push({ name: h.name, status: r.status, codes: [...new Set(codes)].slice(0, 3), statements: sql.statements.length, ms: r.ms, problems });
        }

        // The counter does count: an ordinary query runs SQL.
        sql.statements = [];
        sql.counting = true;
        const normal = await t.gql("{ menuItems { id } }");
        sql.counting = false;
        const normalStatements = sql.statements.length;

        // 3. Over the WebSocket: the same limits.
        const ws = t.ws(null);
        const wsResults: Record<string, string[]> = {};
        for (const [name, query] of [
          ["alias bomb", `subscription { ${Array.from({ length: 60 }, (_, i) => `a${i}: newCoffee { id }`).join(" ")} }`],
          ["deep", `subscription { orderUpdated(id: "00000000-0000-4000-8000-0000000a0001") { ${nest(8, "id").slice("query { orders { ".length, -" } }".length)} } }`],
          ["too long", `subscription { newCoffee { id } } # ${"x".repeat(60_000)}`],
          ["fragment bomb", fragmentBomb.replace("query { ...F0 }", "query Q { ...F0 }")],
        ] as const) {
          sql.statements = [];
          sql.counting = true;
          const s = subscribe(ws, query);
          await s.waitFor(1, 3000);
          sql.counting = false;
          const err = s.error as any;
          const codes = Array.isArray(err)
            ? err.map((e: any) => e.extensions?.code ?? `(no code) ${e.message?.slice(0, 50)}`)
            : err
              ? [String(err.message ?? err).slice(0, 60)]
              : s.results.flatMap((r) => codesOf(r));
          wsResults[name] = [...codes.slice(0, 2), ...(sql.statements.length ? [`${sql.statements.length} SQL`] : [])];
          s.dispose();
        }

        // 4. The graphql-http audit suite.
        const audits = serverAudits({ url: `${t.url}/graphql`, fetchFn: fetch });
        const auditResults = [];
        for (const a of audits) auditResults.push(await a.fn());
        const mustFailed = auditResults.filter((r) => r.name.startsWith("MUST") && r.status !== "ok");
        const shouldFailed = auditResults.filter((r) => !r.name.startsWith("MUST") && r.status !== "ok");

        report("6 hostile-graphql", {
          fuzz_cases: HOSTILE.length + Object.keys(wsResults).length,
          refused_cleanly: results.filter((r) => !r.problems.length).length,
          with_problems: results.filter((r) => r.problems.length).length,
          slow_on_child: slowOnChild.length,
          normal_query_statements: normalStatements,
          introspection_30_schema_aliases: `${amplification.status} ${Math.round(amplification.text.length / 1024)} KiB in ${amplification.ms} ms from a ${schemaAliases(30).length} B document`,
          websocket: wsResults,
          audits: auditResults.length,
          must_failed: mustFailed.length,
          should_failed: shouldFailed.map((r) => `${r.name} (${r.status === "ok" ? "" : (r as any).reason})`),
        });
        for (const r of results)
          say(
            `[drill 6]   ${r.problems.length ? "PROBLEM" : "ok     "} ${r.name}: HTTP ${r.status} ${r.codes.join(",")} (${r.statements} SQL, ${r.ms} ms)${r.problems.length ? " <- " + r.problems.join("; ") : ""}`,
          );

        expect({
          slowOnChild,
          refusalProblems: results.filter((r) => r.problems.length).map((r) => `${r.name}: ${r.problems.join("; ")}`),
          normalQueryWorks: !normal.body.errors && normalStatements > 0,
          websocketWithoutRefusalOrWithSql: Object.entries(wsResults).filter(([, codes]) => codes.length === 0 || codes.some((c) => c.endsWith(" SQL"))),
          websocketCodes: [wsResults["alias bomb"]?.includes("TOO_MANY_ALIASES"), wsResults["too long"]?.includes("QUERY_TOO_LARGE"), wsResults.deep?.includes("QUERY_TOO_DEEP")],
          mustAuditsFailed: mustFailed.map((r) => `${r.name}: ${(r as any).reason}`),
          // Introspection stays cheap: the worst allowed request well under a couple of seconds.
          introspectionWorstCaseFast: amplification.ms < 2000,
        }).toEqual({
          slowOnChild: [],
          refusalProblems: [],
          normalQueryWorks: true,
          websocketWithoutRefusalOrWithSql: [],
          websocketCodes: [true, true, true],
          mustAuditsFailed: [],
          introspectionWorstCaseFast: true,
        });
      },
    ),
  120_000,
);
