import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Kind, parse, validate, visit, type GraphQLSchema } from "graphql";
import { loadConfig, ConfigError } from "../../src/config.ts";
import { makeTrustedDocumentsPlugin } from "../../plugins/TrustedDocumentsPlugin.ts";
import { main as documentsMain, manifestJson, printedDocuments, updateManifest, type Retired } from "../../scripts/documents.ts";
import { DEMO, errorsOf, type GraphQLResponse, settled, subscribe } from "../support/client.ts";
import { sandbox, SqlRecorder } from "../support/db.ts";
import { makeCoffee } from "../support/fixtures.ts";
import { listening, startAnotherService, startTestService, type TestService } from "../support/service.ts";
import { tempDir } from "../support/tempDirs.ts";

// Trusted documents (README "Trusted documents", plugins/TrustedDocumentsPlugin.ts):
// the committed manifest against its sources, requests by documentId and by
// exact text (POST, GET, graphql-ws), the AD_HOC_QUERIES policy for every
// role over HTTP and WebSocket, the two refusal codes, and no SQL for a
// refusal. Three services run in this process, one per policy.

const ROOT = path.resolve(__dirname, "../..");
const MANIFEST = path.join(ROOT, "contract/trusted-documents.json");
const POLICIES = ["any", "staff", "none"] as const;
type Policy = (typeof POLICIES)[number];
const ROLES = ["anonymous", "alice", "barista", "admin"] as const; // alice: a customer
type Role = (typeof ROLES)[number];
const STAFF = new Set<Role>(["barista", "admin"]);
const adHocAllowed = (policy: Policy, role: Role) => policy === "any" || (policy === "staff" && STAFF.has(role));
const COFFEE_ID = "40000000-0000-4000-8000-000000000003";
const AD_HOC = "{ featuredCoffee { id } }";
const suffix = `${process.pid}-${Date.now().toString(36)}`;

const committed: Record<string, string> = JSON.parse(readFileSync(MANIFEST, "utf8"));
const sha256 = (text: string) => `sha256:${createHash("sha256").update(Buffer.from(text, "utf8")).digest("hex")}`;
/** The manifest's entry for an operation: the text graphql's print() makes of its source now. */
function entry(operation: string): { id: string; text: string } {
  const found = Object.entries(committed).filter(([, text]) => text.includes("\n") && new RegExp(`^(query|mutation|subscription) ${operation}\\b`).test(text));
  const current = printedDocuments(ROOT).find((d) => d.operation === operation);
  const match = found.filter(([, text]) => text === current?.text);
  if (match.length !== 1) throw new Error(`${match.length} manifest entries for ${operation} as its source is now`);
  return { id: match[0]![0], text: match[0]![1] };
}

const services = {} as Record<Policy, TestService>;
const tokens = {} as Record<Role, string | null>;
let sql: SqlRecorder;
let box: Awaited<ReturnType<typeof sandbox>>;

beforeAll(async () => {
  services.any = await startTestService();
  services.staff = await startAnotherService({ AD_HOC_QUERIES: "staff" });
  services.none = await startAnotherService({ AD_HOC_QUERIES: "none" });
  box = await sandbox(services.any);
  // Signing in is a trusted document: it works by id for anonymous callers even under `none`.
  const login = entry("Login");
  tokens.anonymous = null;
  for (const role of ROLES.filter((r) => r !== "anonymous")) {
    const r = await post(services.none, { documentId: login.id, variables: { email: DEMO[role as Exclude<Role, "anonymous">].email, password: DEMO.password } }, null);
    tokens[role] = r.body.data?.login?.token;
    if (!tokens[role]) throw new Error(`login as ${role}: ${JSON.stringify(r.body)}`);
  }
  sql = new SqlRecorder(decodeURIComponent(new URL(services.any.urls.authenticator).username));
  sql.install();
}, 120_000);

afterAll(async () => {
  sql?.uninstall();
  if (box) await box.restore();
  for (const policy of POLICIES) await services[policy]?.stop();
});

async function answer(res: Response): Promise<GraphQLResponse> {
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    throw new Error(`non-JSON answer (${res.status}): ${text.slice(0, 200)}`);
  }
}

const headers = (token: string | null | undefined, json = false) => ({
  accept: "application/json",
  ...(json ? { "content-type": "application/json" } : {}),
  ...(token ? { authorization: `Bearer ${token}` } : {}),
});

async function post(t: TestService, body: Record<string, unknown>, token: string | null | undefined): Promise<GraphQLResponse> {
  return answer(await fetch(`${t.url}/graphql`, { method: "POST", headers: headers(token, true), body: JSON.stringify(body) }));
}

async function get(t: TestService, params: Record<string, string>, token: string | null | undefined): Promise<GraphQLResponse> {
  return answer(await fetch(`${t.url}/graphql?${new URLSearchParams(params)}`, { headers: headers(token) }));
}

const summary = (r: GraphQLResponse) => ({ status: r.status, codes: (r.body.errors ?? []).map((e) => e.extensions?.code) });
const OK = { status: 200, codes: [] };

/** A refusal: one error with `code`, no data, and not one SQL statement. */
async function expectRefusedWithoutSql(send: () => Promise<GraphQLResponse>, code: string, status: number) {
  const { result, statements } = await sql.record(send);
  expect({ ...summary(result), data: result.body.data, statements }).toEqual({ status, codes: [code], data: undefined, statements: [] });
}

describe("the manifest", () => {
  test("contract/trusted-documents.json is what `npm run documents` makes of contract/operations/ and documents/: nothing to add, nothing retired", async () => {
    const update = await updateManifest(ROOT);
    expect(update.added).toEqual([]);
    expect(readFileSync(MANIFEST, "utf8")).toBe(manifestJson(update.manifest));
  }, 60_000);

  test("every operation of contract/operations/*.graphql and documents/*.graphql is in it, keyed by the SHA-256 of its exact text; each entry is one operation and exactly the fragments it uses", () => {
    const names: string[] = [];
    for (const dir of ["contract/operations", "documents"]) {
      for (const file of readdirSync(path.join(ROOT, dir)).filter((f) => f.endsWith(".graphql"))) {
        for (const d of parse(readFileSync(path.join(ROOT, dir, file), "utf8")).definitions) {
          if (d.kind === Kind.OPERATION_DEFINITION) names.push(d.name!.value);
        }
      }
    }
    expect(names).toEqual(expect.arrayContaining(["KioskMenu", "BaristaQueue", "PosOrder", "AdminDashboard", "TrackOrder", "Login", "Register", "RefreshToken", "Logout", "ChangePassword"]));
    for (const name of names) expect(entry(name).id).toBe(sha256(entry(name).text));
    const operations = new Set<string>();
    for (const [id, text] of Object.entries(committed)) {
      expect(id).toBe(sha256(text));
      const doc = parse(text);
      const ops = doc.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
      expect(ops).toHaveLength(1);
      operations.add((ops[0] as { name: { value: string } }).name.value);
      const spread = new Set<string>();
      visit(doc, { FragmentSpread: (s) => void spread.add(s.name.value) });
      expect(
        doc.definitions
          .filter((d) => d.kind === Kind.FRAGMENT_DEFINITION)
          .map((d) => (d as { name: { value: string } }).name.value)
          .sort(),
      ).toEqual([...spread].sort());
    }
    // No entry for an operation that is not in the sources (none has been removed yet).
    expect([...operations].sort()).toEqual([...names].sort());
    expect(entry("KioskMenu").text).toContain("fragment CoffeeCard on Coffee");
    expect(entry("Login").text).toContain("fragment Session on AuthPayload");
  });

  test("ids are the appendix's SHA256 hex document identifiers (its own example)", async () => {
    const { documentId } = await import("../../plugins/TrustedDocumentsPlugin.ts");
    expect(documentId("query ($id: ID!) {\n  user(id: $id) {\n    name\n  }\n}")).toBe("sha256:7dba4bd717b41f10434822356a93c32b1fb4907b983e854300ad839f84cdcd6e");
    expect(documentId("query($id:ID!){user(id:$id){name}}")).toBe("sha256:71f7dc5758652baac68e4a10c50be732b741c892ade2883a99358f52b555286b");
  });

  test("no trusted document introspects the schema (so refusing ad-hoc documents refuses introspection)", () => {
    for (const text of Object.values(committed)) expect(text).not.toMatch(/__schema|__type\b/);
  });

  test("every trusted document validates against the served schema", async () => {
    const r = await services.any.gql((await import("graphql")).getIntrospectionQuery());
    const served: GraphQLSchema = (await import("graphql")).buildClientSchema(r.body.data);
    for (const [id, text] of Object.entries(committed)) expect({ id, errors: validate(served, parse(text)).map((e) => e.message) }).toEqual({ id, errors: [] });
  });

  test("append-only: an edited operation keeps its published ids and adds new ones; an id goes only when retired on the record; a dropped id is refused", async () => {
    const dir = tempDir("trusted");
    const lines: string[] = [];
    const run = (...argv: string[]) => documentsMain(argv, dir, (l) => void lines.push(l));
    try {
      for (const sub of ["contract/operations", "documents", "data/schema.graphql", "contract/trusted-documents.json"]) cpSync(path.join(ROOT, sub), path.join(dir, sub), { recursive: true });
      const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, stdio: "ignore" });
      git("init", "-q");
      git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "empty");
      git("add", "-A");
      git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "published");
      const published: Record<string, string> = JSON.parse(readFileSync(path.join(dir, "contract/trusted-documents.json"), "utf8"));
      // FeaturedList's `roast }` is the first in kiosk.graphql.
      const oldFeatured = Object.keys(published).filter((id) => /query FeaturedList\b/.test(published[id]!));
      expect(oldFeatured).toHaveLength(3); // print()'s, Apollo Client's (`__typename` added) and Codegen's

      // Edit an operation: its three old ids stay, three new ones are added.
      const kiosk = path.join(dir, "contract/operations/kiosk.graphql");
      writeFileSync(kiosk, readFileSync(kiosk, "utf8").replace("roast }", "roast roaster { name } }"));
      expect(await run()).toBe(0);
      let manifest: Record<string, string> = JSON.parse(readFileSync(path.join(dir, "contract/trusted-documents.json"), "utf8"));
      expect(Object.keys(manifest).slice(0, Object.keys(published).length)).toEqual(Object.keys(published));
      const added = Object.keys(manifest).filter((id) => !(id in published));
      expect(added).toHaveLength(3);
      for (const id of added) expect(manifest[id]).toMatch(/roaster/);
      expect(lines.join("\n")).toMatch(/3 earlier ids kept and served \(edited or removed operations: FeaturedList\)/);
      expect(existsSync(path.join(dir, "documents/retired.json"))).toBe(false);

      // Dropping an id by hand is refused (exit 1, naming it); nothing is written.
      const [victim] = oldFeatured;
      const { [victim!]: _gone, ...handEdited } = manifest;
      writeFileSync(path.join(dir, "contract/trusted-documents.json"), manifestJson(handEdited));
      lines.length = 0;
      expect(await run()).toBe(1);
      expect(lines.join("\n")).toContain(`would be dropped without being retired: ${victim}`);
      expect(JSON.parse(readFileSync(path.join(dir, "contract/trusted-documents.json"), "utf8"))).toEqual(handEdited);
      writeFileSync(path.join(dir, "contract/trusted-documents.json"), manifestJson(manifest));

      // Retiring: needs a reason, and an id the sources no longer make.
      lines.length = 0;
      expect(await run("--retire", victim!)).toBe(1);
      expect(await run("--retire", added[0]!, "--reason", "test")).toBe(1);
      expect(lines.join("\n")).toMatch(/needs --reason[\s\S]*what the sources make now/);
      expect(await run("--retire", victim!, "--reason", "FeaturedList 1.x is no longer supported")).toBe(0);
      manifest = JSON.parse(readFileSync(path.join(dir, "contract/trusted-documents.json"), "utf8"));
      expect(victim! in manifest).toBe(false);
      expect(oldFeatured[1]! in manifest).toBe(true);
      const retired: Retired = JSON.parse(readFileSync(path.join(dir, "documents/retired.json"), "utf8"));
      expect(retired[victim!]).toEqual({ operation: "FeaturedList", retiredAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), reason: "FeaturedList 1.x is no longer supported" });
      // The record stands: a later run keeps it retired (and the HEAD check accepts it).
      expect(await run()).toBe(0);
      expect(victim! in JSON.parse(readFileSync(path.join(dir, "contract/trusted-documents.json"), "utf8"))).toBe(false);

      // A trusted document still may not introspect.
      mkdirSync(path.join(dir, "documents"), { recursive: true });
      writeFileSync(path.join(dir, "documents/extra.graphql"), "query Spy { __schema { types { name } } }\n");
      expect(() => printedDocuments(dir)).toThrow(/introspects/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  test("the service refuses to start with a manifest entry whose id is not its text's", () => {
    const options = { adHocQueries: "none" as const, callerIsStaff: () => false, adHocDocuments: { maxEntries: 10, maxBytes: 100_000 }, maxLength: 50_000 };
    expect(() => makeTrustedDocumentsPlugin({ ...options, documents: { [sha256("{ a }")]: "{ b }" } })).toThrow(/does not match its text/);
    expect(() => makeTrustedDocumentsPlugin({ ...options, documents: { [sha256("{ a }")]: "{ a }" } })).not.toThrow();
    const spy = 'query Spy { coffees { __type(name: "Query") { name } } }';
    expect(() => makeTrustedDocumentsPlugin({ ...options, documents: { [sha256(spy)]: spy } })).toThrow(/introspects/);
  });
});

describe("worked out once", () => {
  test("grafserv gets each trusted document parsed and validated (every rule: limits too) once, the same DocumentNode for ever, whatever evicts its LRU", async () => {
    const { postgraphile } = await import("postgraphile");
    const { grafserv } = await import("postgraphile/grafserv/node");
    const { makePreset } = await import("../../src/preset.ts");
    const t = services.staff;
    // A depth limit of 2: FeaturedList (2 levels) passes, CoffeeDetail (3) does not.
    const config = { ...t.config, MAX_QUERY_DEPTH: 2 };
    const pgl = postgraphile(makePreset({ config, pool: t.service.api!.pool, viewerFromConnectionParams: () => null, clientAddress: () => "test" }));
    const serv = pgl.createServ(grafserv);
    try {
      await serv.ready();
      const parseAndValidate = async (text: string) => (await serv.getExecutionConfig({})).parseAndValidate(text);
      const featured = await parseAndValidate(entry("FeaturedList").text);
      expect(featured.errors).toBeUndefined();
      const detail = await parseAndValidate(entry("CoffeeDetail").text);
      expect(detail.errors?.map((e) => e.extensions.code)).toEqual(["QUERY_TOO_DEEP"]);
      const adHoc = "{ __typename }";
      const adHocFirst = (await parseAndValidate(adHoc)).document;
      expect(adHocFirst).toBeDefined();
      // grafserv keeps 500 parsed texts: 600 others push the ad-hoc one out, not the trusted ones.
      for (let i = 0; i < 600; i++) await parseAndValidate(`{ c${i}: __typename }`);
      expect((await parseAndValidate(adHoc)).document).not.toBe(adHocFirst);
      expect((await parseAndValidate(entry("FeaturedList").text)).document).toBe(featured.document);
      expect((await parseAndValidate(entry("CoffeeDetail").text)).errors).toBe(detail.errors);
    } finally {
      await pgl.release(); // and serv; the service's pool stays open
    }
  });
});

describe("AD_HOC_QUERIES", () => {
  const env = { JWT_SECRET: "x".repeat(40), WEBHOOK_TOKEN: "w".repeat(20), SIGNING_SECRET: "s".repeat(20), DATABASE_ROLE_PASSWORD: "p".repeat(12), DATABASE_URL: "postgres://cafe@db.example/cafe" };
  test("defaults to `staff` in production and `any` elsewhere; a bad value stops the process naming it", () => {
    expect(loadConfig({ ...env, NODE_ENV: "production" }).adHocQueries).toBe("staff");
    expect(loadConfig({ NODE_ENV: "development" }).adHocQueries).toBe("any");
    expect(loadConfig({ NODE_ENV: "test" }).adHocQueries).toBe("any");
    expect(loadConfig({ ...env, NODE_ENV: "production", AD_HOC_QUERIES: "any" }).adHocQueries).toBe("any");
    expect(() => loadConfig({ AD_HOC_QUERIES: "admins" })).toThrow(ConfigError);
    expect(() => loadConfig({ AD_HOC_QUERIES: "admins" })).toThrow(/AD_HOC_QUERIES/);
    expect(services.any.config.adHocQueries).toBe("any");
    expect(services.staff.config.adHocQueries).toBe("staff");
    expect(services.none.config.adHocQueries).toBe("none");
  });
});

describe.each(POLICIES)("AD_HOC_QUERIES=%s over HTTP", (policy) => {
  const t = () => services[policy];

  test.each(ROLES)("%s: a trusted document runs by documentId and by its exact text, over POST and GET", async (role) => {
    const featured = entry("FeaturedList");
    const detail = entry("CoffeeDetail");
    const token = tokens[role];
    const variables = { id: COFFEE_ID };
    const answers = {
      postById: await post(t(), { documentId: featured.id }, token),
      postByText: await post(t(), { query: featured.text }, token),
      getById: await get(t(), { documentId: detail.id, variables: JSON.stringify(variables) }, token),
      getByText: await get(t(), { query: detail.text, variables: JSON.stringify(variables) }, token),
      postWithVariables: await post(t(), { documentId: detail.id, variables, operationName: "CoffeeDetail" }, token),
    };
    for (const [how, r] of Object.entries(answers)) expect({ how, ...summary(r) }).toEqual({ how, ...OK });
    expect(answers.postById.body.data.coffees.length).toBeGreaterThan(0);
    expect(answers.postById.body.data).toEqual(answers.postByText.body.data);
    expect(answers.getById.body.data.coffee.id).toBe(COFFEE_ID);
    expect(answers.getById.body.data).toEqual(answers.getByText.body.data);
  });

  test.each(ROLES)(
    `%s: an ad-hoc document is ${policy === "any" ? "run" : policy === "staff" ? "run for staff only, else TRUSTED_DOCUMENT_REQUIRED without SQL" : "TRUSTED_DOCUMENT_REQUIRED without SQL"}`,
    async (role) => {
      const token = tokens[role];
      // A trusted text with one character more is not trusted.
      const almost = `${entry("FeaturedList").text} `;
      for (const send of [() => post(t(), { query: AD_HOC }, token), () => get(t(), { query: AD_HOC }, token), () => post(t(), { query: almost }, token)]) {
        if (adHocAllowed(policy, role)) {
          const r = await send();
          expect(summary(r)).toEqual(OK);
          expect(r.body.data).toBeTruthy();
        } else {
          await expectRefusedWithoutSql(send, "TRUSTED_DOCUMENT_REQUIRED", 403);
        }
      }
    },
  );

  test.each(ROLES)("%s: introspection follows the policy (staff or none: never for anonymous callers and customers)", async (role) => {
    const send = () => post(t(), { query: "{ __schema { queryType { name } } }" }, tokens[role]);
    if (adHocAllowed(policy, role)) {
      const r = await send();
      expect(summary(r)).toEqual(OK);
      expect(r.body.data.__schema.queryType.name).toBe("Query");
    } else {
      await expectRefusedWithoutSql(send, "TRUSTED_DOCUMENT_REQUIRED", 403);
    }
  });

  test("an unknown documentId is PERSISTED_DOCUMENT_NOT_FOUND for everyone, over POST and GET, without SQL", async () => {
    const unknown = sha256("query Unknown { __typename }");
    // The recorder sees what a known id runs.
    expect((await sql.record(() => post(t(), { documentId: entry("FeaturedList").id }, null))).statements.length).toBeGreaterThan(0);
    for (const role of ROLES) {
      await expectRefusedWithoutSql(() => post(t(), { documentId: unknown }, tokens[role]), "PERSISTED_DOCUMENT_NOT_FOUND", 400);
      await expectRefusedWithoutSql(() => get(t(), { documentId: unknown }, tokens[role]), "PERSISTED_DOCUMENT_NOT_FOUND", 400);
    }
    for (const documentId of ["__proto__", "constructor", "", 42, entry("FeaturedList").id.toUpperCase()]) {
      await expectRefusedWithoutSql(() => post(t(), { documentId }, tokens.admin), "PERSISTED_DOCUMENT_NOT_FOUND", 400);
    }
  });

  test("a mutation's documentId over GET is 405 (the appendix), without SQL", async () => {
    const login = entry("Login");
    const { result, statements } = await sql.record(() => get(t(), { documentId: login.id, variables: JSON.stringify({ email: DEMO.alice.email, password: DEMO.password }) }, null));
    expect({ status: result.status, data: result.body.data, statements }).toEqual({ status: 405, data: undefined, statements: [] });
  });

  test("documentId and query together are refused", async () => {
    const featured = entry("FeaturedList");
    await expectRefusedWithoutSql(() => post(t(), { documentId: featured.id, query: featured.text }, tokens.admin), "BAD_USER_INPUT", 400);
  });
});

describe.each(POLICIES)("AD_HOC_QUERIES=%s over graphql-ws", (policy) => {
  const t = () => services[policy];

  test("for every role: trusted texts run, ad-hoc queries and subscriptions follow the policy, refusals run no SQL", async () => {
    const featured = entry("FeaturedList");
    const newOnMenu = entry("NewOnMenu");
    const outcomes: Array<Record<string, unknown>> = [];
    const expected: Array<Record<string, unknown>> = [];
    const subscriptions: Array<{ role: Role; kind: string; sub: ReturnType<typeof subscribe<any>> }> = [];
    for (const role of ROLES) {
      const client = t().ws(tokens[role]);
      // Queries over the socket: settle each before the next.
      for (const [kind, query] of [
        ["trusted query", featured.text],
        ["ad-hoc query", AD_HOC],
      ] as const) {
        const { result: sub, statements } = await sql.record(async () => {
          const s = subscribe(client, query);
          await settled(s);
          return s;
        });
        const allowed = kind === "trusted query" || adHocAllowed(policy, role);
        outcomes.push({ role, kind, codes: errorsOf(sub).map((e) => e.extensions?.code), data: Boolean(sub.results[0]?.data), ...(allowed ? {} : { statements }) });
        expected.push({ role, kind, codes: allowed ? [] : ["TRUSTED_DOCUMENT_REQUIRED"], data: allowed, ...(allowed ? {} : { statements: [] }) });
      }
      subscriptions.push({ role, kind: "trusted subscription", sub: subscribe<any>(client, newOnMenu.text) });
      subscriptions.push({ role, kind: "ad-hoc subscription", sub: subscribe<any>(client, "subscription { newCoffee { id name } }") });
    }
    await listening(t(), ["coffee:new"]);
    // Refused subscriptions have their error by now; accepted ones get the next new coffee.
    for (const { sub } of subscriptions) await settled(sub, 1, 300);
    const name = `Trusted WS ${policy} ${suffix}`;
    await makeCoffee(t(), name, "3.10");
    for (const { role, kind, sub } of subscriptions) {
      const allowed = kind === "trusted subscription" || adHocAllowed(policy, role);
      if (allowed) await settled(sub, 1);
      outcomes.push({ role, kind, codes: errorsOf(sub).map((e) => e.extensions?.code), event: sub.results[0]?.data?.newCoffee?.name ?? null });
      expected.push({ role, kind, codes: allowed ? [] : ["TRUSTED_DOCUMENT_REQUIRED"], event: allowed ? name : null });
      sub.dispose();
    }
    expect(outcomes).toEqual(expected);
  });
});

test("each refusal counts once in cafe_graphql_errors_total, over HTTP and over a socket", async () => {
  const { graphqlErrors } = await import("../../src/metrics.ts");
  const count = async (code: string) => (await graphqlErrors.get()).values.find((v) => v.labels.code === code)?.value ?? 0;
  const t = services.none;
  const before = { required: await count("TRUSTED_DOCUMENT_REQUIRED"), notFound: await count("PERSISTED_DOCUMENT_NOT_FOUND") };
  expect(summary(await post(t, { query: AD_HOC }, null)).codes).toEqual(["TRUSTED_DOCUMENT_REQUIRED"]);
  expect(summary(await post(t, { documentId: sha256("nothing") }, null)).codes).toEqual(["PERSISTED_DOCUMENT_NOT_FOUND"]);
  const sub = subscribe(t.ws(null), AD_HOC);
  await settled(sub);
  expect(errorsOf(sub).map((e) => e.extensions?.code)).toEqual(["TRUSTED_DOCUMENT_REQUIRED"]);
  expect({ required: await count("TRUSTED_DOCUMENT_REQUIRED"), notFound: await count("PERSISTED_DOCUMENT_NOT_FOUND") }).toEqual({
    required: before.required + 2,
    notFound: before.notFound + 1,
  });
});
