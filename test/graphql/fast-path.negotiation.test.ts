import { ApolloClient, gql as apolloGql, InMemoryCache } from "@apollo/client";
import { HttpLink } from "@apollo/client/link/http";
import { Client as UrqlClient, fetchExchange } from "@urql/core";
import { GraphQLClient } from "graphql-request";
import { createClient as graphqlHttpClient } from "graphql-http";
import { Kind, parse, print } from "graphql";
import { liveCacheEvents } from "../../src/metrics.ts";
import { request } from "../support/client.ts";
import { operationsOf } from "../support/contract.ts";
import { useTestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";

// Content negotiation on the fast path and in the live cache's key
// (src/http/fastPath.ts contentTypeFor): any Accept that grafserv answers
// with JSON takes the fast path (and the cache), and the answer's
// Content-Type (and status) is the one grafserv chooses for it. The clients'
// own Accept headers are taken from the clients themselves: each sends
// through a fetch that records what went on the wire.

const t = useTestService({ env: { LIVE_CACHE_MAX_ENTRIES: "1000" } });
const KIOSK = operationsOf("kiosk");
/** Served by grafserv only (introspection never takes the fast path): its choice for an Accept. */
const INTROSPECTION = "{ __schema { queryType { name } } }";

const post = (query: string, accept: string | undefined, operationName?: string) =>
  request(`${t.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(accept === undefined ? {} : { accept }) },
    body: JSON.stringify({ query, operationName }),
  });
/** Public reads the fast path served (from the cache, a computation, or one being computed) while `fn` ran. */
async function fastPathReads(fn: () => Promise<unknown>): Promise<number> {
  const before = liveCacheEvents.hits + liveCacheEvents.misses + liveCacheEvents.coalesced;
  await fn();
  return liveCacheEvents.hits + liveCacheEvents.misses + liveCacheEvents.coalesced - before;
}

beforeAll(async () => {
  await waitUntil("the live cache on", async () => {
    const hits = liveCacheEvents.hits;
    await post("{ menuItems { id } }", undefined);
    await post("{ menuItems { id } }", undefined);
    return liveCacheEvents.hits > hits;
  });
});

describe("the Accept headers real clients send", () => {
  interface Sent {
    accept: string | null;
    contentType: string | null;
  }
  let sent: Sent[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    sent.push({ accept: new Headers(init?.headers).get("accept"), contentType: res.headers.get("content-type") });
    return res;
  };
  /** KioskMenu alone (with its fragment), as a client's document holds it. */
  const KIOSK_MENU = print({ ...parse(KIOSK), definitions: parse(KIOSK).definitions.filter((d) => d.kind !== Kind.OPERATION_DEFINITION || d.name?.value === "KioskMenu") });
  const clients: Record<string, () => Promise<unknown>> = {
    "Apollo Client 4": async () => {
      const client = new ApolloClient({ link: new HttpLink({ uri: `${t.url}/graphql`, fetch: recordingFetch }), cache: new InMemoryCache() });
      const r = await client.query({ query: apolloGql(KIOSK_MENU), fetchPolicy: "network-only" });
      expect(r.data).toBeDefined();
      expect(r.error).toBeUndefined();
    },
    urql: async () => {
      const client = new UrqlClient({ url: `${t.url}/graphql`, exchanges: [fetchExchange], fetch: recordingFetch, preferGetMethod: false });
      const r = await client.query(KIOSK_MENU, {}).toPromise();
      expect(r.error).toBeUndefined();
      expect(r.data.menuItems.length).toBeGreaterThan(0);
    },
    "graphql-request": async () => {
      const r = await new GraphQLClient(`${t.url}/graphql`, { fetch: recordingFetch }).request<{ menuItems: unknown[] }>(KIOSK_MENU);
      expect(r.menuItems.length).toBeGreaterThan(0);
    },
    "graphql-http": async () => {
      const client = graphqlHttpClient({ url: `${t.url}/graphql`, fetchFn: recordingFetch });
      const r = await new Promise<{ data?: { menuItems: unknown[] }; errors?: unknown }>((resolve, reject) => {
        let result: { data?: { menuItems: unknown[] } };
        client.subscribe({ query: KIOSK_MENU }, { next: (v) => (result = v as typeof result), error: reject, complete: () => resolve(result) });
      });
      expect(r.errors).toBeUndefined();
      expect(r.data!.menuItems.length).toBeGreaterThan(0);
    },
  };

  test.each(Object.keys(clients))("%s: its Accept takes the fast path and the cache, answered with grafserv's type", async (name) => {
    sent = [];
    const hits = liveCacheEvents.hits;
    expect(
      await fastPathReads(async () => {
        await clients[name]!();
        await clients[name]!();
      }),
    ).toBe(2);
    expect(liveCacheEvents.hits).toBeGreaterThan(hits);
    expect(sent).toHaveLength(2);
    const accept = sent[0]!.accept;
    expect(accept).toMatch(/application\/(graphql-response\+)?json/); // the client's own, from its package
    const grafserv = await post(INTROSPECTION, accept ?? undefined);
    expect(grafserv.status).toBe(200);
    for (const s of sent) expect(s.contentType).toBe(grafserv.headers["content-type"]);
  });
});

describe("Accept lists, q-values, wildcards, parameters (RFC 9110)", () => {
  const JSON_ACCEPTS = [
    undefined,
    "*/*",
    "application/*",
    "application/json",
    "application/graphql-response+json",
    "application/graphql-response+json,application/json;q=0.9",
    "application/json, application/graphql-response+json",
    "application/json;q=1, application/graphql-response+json;q=0.5",
    "application/graphql-response+json;q=0.2, application/json;q=0.8",
    "text/html;q=0.9, */*;q=0.1",
    "text/html, application/json;q=0.5",
    "application/json;charset=utf-8",
    "application/graphql-response+json; charset=utf-8, application/json; charset=utf-8",
    "application/graphql+json, application/json",
    "application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed",
    "application/json;q=0", // (grafserv answers even a q of 0 with JSON; so the fast path does too)
  ];
  test.each(JSON_ACCEPTS.map((a) => [a ?? "(none)", a]))("%s: the fast path answers, with grafserv's type and status", async (_label, accept) => {
    const grafserv = await post(INTROSPECTION, accept);
    let answer!: Awaited<ReturnType<typeof post>>;
    expect(await fastPathReads(async () => void (answer = await post(KIOSK, accept, "KioskMenu")))).toBe(1);
    expect(answer.status).toBe(grafserv.status);
    expect(answer.headers["content-type"]).toBe(grafserv.headers["content-type"]);
    expect(answer.json.data.menuItems.length).toBeGreaterThan(0);
  });

  test.each([["text/html"], ["application/xml, text/plain"], ["application/json;q=2"], ["application"], ['application/json;x="unterminated']])(
    "%s: not JSON for grafserv, so the fast path leaves it to grafserv (same status)",
    async (accept) => {
      const grafserv = await post(INTROSPECTION, accept);
      let answer!: Awaited<ReturnType<typeof post>>;
      expect(await fastPathReads(async () => void (answer = await post(KIOSK, accept, "KioskMenu")))).toBe(0);
      expect(answer.status).toBe(grafserv.status);
      expect(answer.status).not.toBe(200);
    },
  );

  test("the cache keys on the type answered, not the header's text: two headers that choose one type share an entry", async () => {
    const query = `query Shared${Date.now()} { menuItems { id name } }`;
    const first = await post(query, "application/graphql-response+json,application/json;q=0.9");
    const hits = liveCacheEvents.hits;
    const second = await post(query, "application/json;q=0.5, application/graphql-response+json");
    expect(liveCacheEvents.hits).toBe(hits + 1);
    expect(second.text).toBe(first.text);
    const legacy = await post(query, "application/json");
    expect(liveCacheEvents.hits).toBe(hits + 1); // another type: its own entry
    expect(legacy.headers["content-type"]).toMatch(/^application\/json/);
  });
});
