import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { ApolloClient, ApolloLink, gql, InMemoryCache } from "@apollo/client";
import { HttpLink } from "@apollo/client/link/http";
import { PersistedQueryLink } from "@apollo/client/link/persisted-queries";
import { firstValueFrom } from "rxjs";
import { DEMO, type GraphQLResponse } from "../support/client.ts";
import { ROOT, startAnotherService, startTestService, type TestService } from "../support/service.ts";
import { printedDocuments } from "../../scripts/operations.ts";

// Apollo Client (v4) as a client developer sets it up: PersistedQueryLink
// (automatic persisted queries, SHA-256 from node:crypto) in front of
// HttpLink with Node's fetch, and an InMemoryCache, which adds `__typename`
// to every selection set. Against servers that take trusted documents only
// (AD_HOC_QUERIES=none, and `staff` for non-staff callers), and one that
// takes anything (`any`, a development server). Every request goes over
// real HTTP; `sent` records what Apollo put on the wire.

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const manifest: Record<string, string> = JSON.parse(readFileSync(path.join(ROOT, "contract/trusted-documents.json"), "utf8"));
const source = (operation: string) => printedDocuments(ROOT).find((d) => d.operation === operation)!.text;

const services = {} as Record<"none" | "staff" | "any", TestService>;
beforeAll(async () => {
  services.any = await startTestService();
  services.staff = await startAnotherService({ AD_HOC_QUERIES: "staff" });
  services.none = await startAnotherService({ AD_HOC_QUERIES: "none" });
}, 120_000);
afterAll(async () => {
  for (const t of Object.values(services)) await t?.stop();
});

interface Sent {
  method: string;
  query?: string;
  extensions?: { persistedQuery?: { version: number; sha256Hash: string } };
  status: number;
  body: GraphQLResponse["body"];
}

/** An Apollo Client on `t`, with the persisted-query link; `sent` lists each HTTP exchange. */
function apollo(t: TestService, options: { useGETForHashedQueries?: boolean; token?: string } = {}) {
  const sent: Sent[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const res = await fetch(input, init);
    const body = await res.clone().json();
    const request =
      init?.method === "GET" || !init?.body
        ? Object.fromEntries([...url.searchParams].map(([k, v]) => [k, k === "variables" || k === "extensions" ? JSON.parse(v) : v]))
        : JSON.parse(String(init.body));
    sent.push({ method: init?.method ?? "GET", query: request.query, extensions: request.extensions, status: res.status, body });
    return res;
  };
  const link = ApolloLink.from([
    new PersistedQueryLink({ sha256, useGETForHashedQueries: options.useGETForHashedQueries ?? false }),
    new HttpLink({ uri: `${t.url}/graphql`, fetch: recordingFetch, headers: options.token ? { authorization: `Bearer ${options.token}` } : {} }),
  ]);
  const client = new ApolloClient({ link, cache: new InMemoryCache() });
  return { client, link, sent };
}

const FEATURED = gql(source("FeaturedList"));
const KIOSK = gql(source("KioskMenu")); // with a fragment

test("by hash alone (the link's own request, no cache): the first request runs, POST and GET", async () => {
  for (const useGETForHashedQueries of [false, true]) {
    const { client, link, sent } = apollo(services.none, { useGETForHashedQueries });
    const result = await firstValueFrom(ApolloLink.execute(link, { query: KIOSK }, { client }));
    expect(result.errors).toBeUndefined();
    expect((result.data as { menuItems: unknown[] }).menuItems.length).toBeGreaterThan(0);
    // One request, without the text: Apollo hashes print() of the document, which the manifest has.
    expect(sent.map((s) => ({ method: s.method, query: s.query, status: s.status }))).toEqual([{ method: useGETForHashedQueries ? "GET" : "POST", query: undefined, status: 200 }]);
    expect(`sha256:${sent[0]!.extensions!.persistedQuery!.sha256Hash}`).toBe(Object.keys(manifest).find((id) => manifest[id] === source("KioskMenu")));
  }
});

test("ApolloClient with InMemoryCache (`__typename` added): the first request goes by hash alone and is answered (its form is in the manifest)", async () => {
  for (const [useGETForHashedQueries, query, list] of [
    [false, KIOSK, "menuItems"],
    [true, FEATURED, "coffees"],
  ] as const) {
    const { client, sent } = apollo(services.none, { useGETForHashedQueries });
    const first = await client.query({ query, fetchPolicy: "network-only" });
    expect(first.error).toBeUndefined();
    expect((first.data as Record<string, Array<{ __typename: string }>>)[list]![0]!.__typename).toEqual(expect.any(String));
    // One round trip: no PERSISTED_QUERY_NOT_FOUND, no text.
    expect(sent.map((s) => ({ method: s.method, text: Boolean(s.query), status: s.status, errors: s.body.errors }))).toEqual([
      { method: useGETForHashedQueries ? "GET" : "POST", text: false, status: 200, errors: undefined },
    ]);
    // The hash Apollo sent is that of a manifest text with the __typename fields its cache added.
    const text = manifest[`sha256:${sent[0]!.extensions!.persistedQuery!.sha256Hash}`];
    expect(text).toContain("__typename");
    expect(text).not.toBe(source(list === "menuItems" ? "KioskMenu" : "FeaturedList"));
  }
});

test("the exact-text path with `__typename` added (no persisted-query link): trusted under `none`; a changed text is not", async () => {
  const withTypename = (await import("@apollo/client/utilities")).addTypenameToDocument(FEATURED);
  const { print } = await import("graphql");
  const text = print(withTypename);
  expect(text).toContain("__typename");
  const post = (t: TestService, query: string) =>
    fetch(`${t.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) }).then(async (r) => ({ status: r.status, body: await r.json() }));
  const ok = await post(services.none, text);
  expect(ok.body.errors).toBeUndefined();
  expect(ok.body.data.coffees[0].__typename).toBe("Coffee");
  // Only the manifest's exact texts are trusted: any other variant is ad hoc.
  for (const changed of [
    text.replace("__typename", "t: __typename"),
    text.replace("coffees(", "__typename\n  coffees("),
    text.replace("__typename", "__typename\n    description"),
    `${text}\n`,
    `# a comment\n${text}`,
    text.replace(/\n {2}/g, "\n   "),
  ]) {
    expect((await post(services.none, changed)).body.errors?.[0]?.extensions?.code).toBe("TRUSTED_DOCUMENT_REQUIRED");
  }
});

test("registering a new document by hash and text: refused under `none` and, for non-staff, under `staff`; allowed under `any`", async () => {
  const text = "query Mine { coffees { id name } }";
  const body = { query: text, extensions: { persistedQuery: { version: 1, sha256Hash: sha256(text) } } };
  const post = async (t: TestService, token?: string): Promise<GraphQLResponse> => {
    const r = await fetch(`${t.url}/graphql`, { method: "POST", headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
    return { status: r.status, body: await r.json() };
  };
  const code = (r: GraphQLResponse) => r.body.errors?.[0]?.extensions?.code ?? null;
  expect(code(await post(services.none))).toBe("TRUSTED_DOCUMENT_REQUIRED");
  expect(code(await post(services.none, await services.any.token("admin")))).toBe("TRUSTED_DOCUMENT_REQUIRED");
  expect(code(await post(services.staff))).toBe("TRUSTED_DOCUMENT_REQUIRED");
  expect(code(await post(services.staff, await services.any.token("alice")))).toBe("TRUSTED_DOCUMENT_REQUIRED");
  expect(code(await post(services.staff, await services.any.token("barista")))).toBeNull();
  expect(code(await post(services.any))).toBeNull();
  // Nothing was registered: the hash alone is still unknown, everywhere.
  for (const t of Object.values(services)) {
    const r = await fetch(`${t.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ extensions: body.extensions }) });
    expect(((await r.json()) as GraphQLResponse["body"]).errors![0]!.extensions!.code).toBe("PERSISTED_QUERY_NOT_FOUND");
  }
  // (Tokens from the `any` service: the same secret and database.)
  // A hash that is not the text's, a bad version, a hash with a documentId: BAD_USER_INPUT.
  for (const bad of [
    { query: source("FeaturedList"), extensions: { persistedQuery: { version: 1, sha256Hash: sha256("other") } } },
    { extensions: { persistedQuery: { version: 2, sha256Hash: sha256(text) } } },
    { extensions: { persistedQuery: { version: 1, sha256Hash: "abc" } } },
    { documentId: `sha256:${sha256(source("FeaturedList"))}`, extensions: { persistedQuery: { version: 1, sha256Hash: sha256(source("FeaturedList")) } } },
  ]) {
    const r = await fetch(`${services.none.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(bad) });
    expect({ status: r.status, code: ((await r.json()) as GraphQLResponse["body"]).errors![0]!.extensions!.code }).toEqual({ status: 400, code: "BAD_USER_INPUT" });
  }
});

test("a mutation through Apollo with Authorization (sign in, then read as that customer)", async () => {
  const { client } = apollo(services.none);
  const login = await client.mutate({ mutation: gql(source("Login")), variables: { email: DEMO.alice.email, password: DEMO.password } });
  const token = (login.data as { login: { token: string } }).login.token;
  expect(token).toEqual(expect.any(String));
  const signedIn = apollo(services.none, { token });
  const home = await signedIn.client.query({ query: gql(source("MobileHome")), fetchPolicy: "network-only" });
  expect(home.error).toBeUndefined();
  expect((home.data as { customer: { name: string } }).customer.name).toBeTruthy();
});
