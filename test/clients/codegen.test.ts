import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { generate } from "@graphql-codegen/cli";
import { Kind, parse, type OperationDefinitionNode } from "graphql";
import { CLIENTS, codegenConfig } from "../../codegen.ts";
import { DEMO, errorsOf, settled, subscribe, type GraphQLResponse } from "../support/client.ts";
import { ROOT, startTestService, type TestService } from "../support/service.ts";
import { FeaturedListDocument, KioskMenuDocument } from "../../generated/kiosk/graphql.ts";
import { LoginDocument } from "../../generated/mobile/graphql.ts";
import { tempDir } from "../support/tempDirs.ts";

// GraphQL Codegen (codegen.ts, `npm run codegen`), run here as a client
// developer runs it: its client preset's persisted documents into a
// temporary folder. Every id it computes must be in the manifest the
// server trusts (contract/trusted-documents.json) with the very text it
// emits, and a server that takes trusted documents only must run them: by
// `documentId` (POST and GET), and by Apollo's persisted-query extension.
// The committed generated/<client>/ must be what Codegen makes now.

const manifest: Record<string, string> = JSON.parse(readFileSync(path.join(ROOT, "contract/trusted-documents.json"), "utf8"));
const GATE = ["PERSISTED_DOCUMENT_NOT_FOUND", "PERSISTED_QUERY_NOT_FOUND", "TRUSTED_DOCUMENT_REQUIRED"];

let out: string;
/** client -> id -> text, as Codegen wrote them. */
const emitted: Record<string, Record<string, string>> = {};
let t: TestService;

beforeAll(async () => {
  out = tempDir("codegen");
  await generate({ ...codegenConfig(out), cwd: ROOT, silent: true }, true);
  for (const client of CLIENTS) emitted[client] = JSON.parse(readFileSync(path.join(out, client, "persisted-documents.json"), "utf8"));
  // Trusted documents only, for everyone (the strictest production setting).
  t = await startTestService({ env: { AD_HOC_QUERIES: "none" } });
}, 120_000);

afterAll(async () => {
  if (out) rmSync(out, { recursive: true, force: true });
  await t?.stop();
});

async function post(body: Record<string, unknown>): Promise<GraphQLResponse> {
  const res = await fetch(`${t.url}/graphql`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}
async function get(params: Record<string, string>): Promise<GraphQLResponse> {
  const res = await fetch(`${t.url}/graphql?${new URLSearchParams(params)}`, { headers: { accept: "application/json" } });
  return { status: res.status, body: await res.json() };
}
const codes = (r: GraphQLResponse): Array<string | undefined> => (r.body.errors ?? []).map((e: { extensions?: { code?: string } }) => e.extensions?.code);

test("Codegen writes typed documents for each of the five clients, each operation with its sha256 id", () => {
  for (const client of CLIENTS) {
    expect(readdirSync(path.join(out, client)).sort()).toEqual(["gql.ts", "graphql.ts", "index.ts", "persisted-documents.json"]);
    const ids = Object.keys(emitted[client]!);
    expect(ids.length).toBeGreaterThan(5); // its own operations, and sign-in etc. (documents/accounts.graphql)
    for (const id of ids) expect(id).toMatch(/^sha256:[0-9a-f]{64}$/);
  }
  const operations = (client: string) =>
    Object.values(emitted[client]!).map((text) => (parse(text).definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION) as OperationDefinitionNode).name!.value);
  expect(operations("kiosk")).toEqual(expect.arrayContaining(["KioskMenu", "FeaturedList", "Login", "RefreshToken", "Ping"]));
  expect(operations("barista")).toEqual(expect.arrayContaining(["BaristaQueue", "QueueLive"]));
  expect(operations("admin")).toEqual(expect.arrayContaining(["AdminDashboard", "SalesReport", "AuditLog"]));
  expect(operations("kiosk")).not.toContain("SalesReport");
});

test("every id Codegen computes is in the manifest the server trusts, with the text Codegen emits", () => {
  const missing: string[] = [];
  let n = 0;
  for (const client of CLIENTS) {
    for (const [id, text] of Object.entries(emitted[client]!)) {
      n++;
      if (manifest[id] !== text) missing.push(`${client}: ${id} ${text.slice(0, 60)}`);
    }
  }
  expect(missing).toEqual([]);
  expect(n).toBeGreaterThan(40);
});

test("the committed generated/<client>/ is what Codegen makes now (`npm run codegen`)", () => {
  for (const client of CLIENTS) {
    for (const file of readdirSync(path.join(out, client))) {
      expect({ file: `${client}/${file}`, text: readFileSync(path.join(ROOT, "generated", client, file), "utf8") }).toEqual({
        file: `${client}/${file}`,
        text: readFileSync(path.join(out, client, file), "utf8"),
      });
    }
  }
});

test("each client's generated/<client>/ imports and runs under the project's own launcher (`node scripts/node.mjs`: Node's type stripping, no tsx)", () => {
  const script = path.join(out, "import-generated.ts");
  const imports = CLIENTS.map(
    (client, i) =>
      `import * as index${i} from ${JSON.stringify(pathToFileURL(path.join(ROOT, "generated", client, "index.ts")).href)};\n` +
      `import * as types${i} from ${JSON.stringify(pathToFileURL(path.join(ROOT, "generated", client, "graphql.ts")).href)};\n` +
      `counts.push([${JSON.stringify(client)}, typeof index${i}.graphql, Object.values(types${i}).filter((v) => (v as { kind?: string })?.kind === "Document").length]);`,
  );
  writeFileSync(script, `const counts: unknown[] = [];\n${imports.join("\n")}\nprocess.stdout.write(JSON.stringify(counts) + "\\n");\n`);
  const r = spawnSync(process.execPath, [path.join(ROOT, "scripts/node.mjs"), script], { cwd: ROOT, encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" }, timeout: 60_000 });
  expect({ status: r.status, stderr: r.stderr.replace(/^Node\.js .*\n/m, "") }).toEqual({ status: 0, stderr: "" });
  const counts = JSON.parse(r.stdout.trim().split("\n").pop()!) as Array<[string, string, number]>;
  expect(counts.map(([client, graphql]) => [client, graphql])).toEqual(CLIENTS.map((c) => [c, "function"]));
  for (const [client, , documents] of counts) expect({ client, documents: documents > 0 }).toEqual({ client, documents: true });
});

test("a server that takes trusted documents only accepts every Codegen id: by documentId over HTTP, subscriptions by their text over graphql-ws", async () => {
  const refused: string[] = [];
  const all = new Map(CLIENTS.flatMap((client) => Object.entries(emitted[client]!)));
  let subscriptions = 0;
  for (const [id, text] of all) {
    const kind = (parse(text).definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION) as OperationDefinitionNode).operation;
    if (kind === "subscription") {
      // graphql-ws sends a `query` text: the exact text Codegen emits.
      subscriptions++;
      const sub = subscribe(t.ws(null), text, { id: "00000000-0000-4000-8000-000000000000" });
      await settled(sub, 1, 300);
      const seen = errorsOf(sub).map((e) => e.extensions?.code);
      sub.dispose();
      if (seen.some((c) => GATE.includes(c))) refused.push(`${id} ${text.slice(0, 60)}: ${seen}`);
      continue;
    }
    // No variables: a query without any runs; the others stop at their variables, past the trusted-documents gate.
    const r = await post({ documentId: id });
    if (codes(r).some((c) => GATE.includes(c ?? ""))) refused.push(`${id} ${text.slice(0, 60)}: ${JSON.stringify(r.body.errors)}`);
  }
  expect(refused).toEqual([]);
  expect(subscriptions).toBeGreaterThan(0);
  expect(codes(await post({ documentId: `sha256:${"0".repeat(64)}` }))).toEqual(["PERSISTED_DOCUMENT_NOT_FOUND"]);
  expect(codes(await post({ query: "{ __typename }" }))).toEqual(["TRUSTED_DOCUMENT_REQUIRED"]);
});

test("the generated documents' own hashes run: documentId over POST and GET, and Apollo's persisted-query extension (bare hex or prefixed)", async () => {
  const featured = FeaturedListDocument as unknown as { __meta__: { hash: string } };
  const hash = featured.__meta__.hash;
  expect(manifest[hash]).toBeDefined();
  const byPost = await post({ documentId: hash });
  expect({ status: byPost.status, codes: codes(byPost) }).toEqual({ status: 200, codes: [] });
  expect(byPost.body.data.coffees.length).toBeGreaterThan(0);
  const byGet = await get({ documentId: hash });
  expect(byGet.body).toEqual(byPost.body);
  for (const sha256Hash of [hash.slice("sha256:".length), hash]) {
    const apollo = await get({ extensions: JSON.stringify({ persistedQuery: { version: 1, sha256Hash } }) });
    expect(apollo.body).toEqual(byPost.body);
  }
  // A mutation with variables: sign in with the generated LoginDocument's hash.
  const login = await post({ documentId: (LoginDocument as unknown as { __meta__: { hash: string } }).__meta__.hash, variables: { email: DEMO.alice.email, password: DEMO.password } });
  expect(codes(login)).toEqual([]);
  expect(login.body.data.login.token).toEqual(expect.any(String));
  // A document with a fragment.
  const kiosk = await post({ documentId: (KioskMenuDocument as unknown as { __meta__: { hash: string } }).__meta__.hash });
  expect(codes(kiosk)).toEqual([]);
  expect(kiosk.body.data.menuItems.length).toBeGreaterThan(0);
});

test("graphql's print() of each generated document (what Apollo's PersistedQueryLink hashes, and the text graphql-ws sends) is trusted too", async () => {
  const { print } = await import("graphql");
  const texts = new Set(Object.values(manifest));
  const untrusted: string[] = [];
  let n = 0;
  for (const client of CLIENTS) {
    const module: Record<string, unknown> = await import(`../../generated/${client}/graphql.ts`);
    for (const [name, doc] of Object.entries(module).filter(([name]) => name.endsWith("Document"))) {
      n++;
      const text = print(doc as Parameters<typeof print>[0]);
      if (!texts.has(text)) untrusted.push(`${client}: ${name}`);
    }
  }
  expect(untrusted).toEqual([]);
  expect(n).toBeGreaterThan(40);
});
