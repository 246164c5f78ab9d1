import WebSocket from "ws";
import { listening, startTestService, type TestService } from "../support/service.ts";
import { sleep, waitUntil } from "../support/wait.ts";

// What a WebSocket client may not do to the others: hold LISTEN topics from
// a dead peer, run more operations than HTTP would let it, open sockets
// without bound, or connect from a foreign page. Raw graphql-ws messages
// over a real `ws` socket, so the test controls pings, ids and timing.

// Long enough that a stalled event loop (the client and the server share this
// process, on a machine that may be busy) is small beside it.
const PING_MS = 1500;
const ALLOWED_ORIGIN = "https://dashboard.example";

let t: TestService;
/**
 * The same, with the per-source rate limit on (1/s, burst 10: a fixed window
 * of 10 requests per 10 s, long beside a busy machine's stalls, so that the
 * burst cannot straddle two windows) and no CORS_ORIGINS.
 */
let limited: TestService;
const sockets: WebSocket[] = [];

beforeAll(async () => {
  t = await startTestService({
    env: { WS_PING_INTERVAL_MS: String(PING_MS), WS_MAX_SUBSCRIPTIONS_PER_SOCKET: "3", WS_MAX_SOCKETS_PER_SOURCE: "4", CORS_ORIGINS: ALLOWED_ORIGIN },
  });
  limited = await startTestService({ env: { GRAPHQL_RATE_LIMIT: "1", GRAPHQL_RATE_BURST: "10" } });
});
afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  // The server counts a socket until it sees it close.
  await sleep(100);
});
afterAll(async () => {
  await t?.stop();
  await limited?.stop();
});

interface Upgrade {
  status: number;
  /** When the socket opened. */
  at?: number;
  body?: any;
  ws?: WebSocket;
}

/** Opens a graphql-ws socket; a refused upgrade gives its status and JSON body. */
function upgrade(url: string, options: WebSocket.ClientOptions = {}): Promise<Upgrade> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, "graphql-transport-ws", options);
    sockets.push(ws);
    ws.once("open", () => resolve({ status: 101, ws, at: Date.now() }));
    ws.once("unexpected-response", (_req, res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    ws.once("error", reject);
  });
}

/** A graphql-ws session: acknowledged, with every message it receives. */
async function session(target: TestService, options: WebSocket.ClientOptions = {}) {
  const { ws, status, body, at } = await upgrade(target.wsUrl, options);
  if (!ws) throw new Error(`upgrade refused: ${status} ${JSON.stringify(body)}`);
  const messages: any[] = [];
  ws.on("message", (data) => messages.push(JSON.parse(data.toString())));
  ws.send(JSON.stringify({ type: "connection_init", payload: {} }));
  await waitUntil("connection_ack", () => messages.some((m) => m.type === "connection_ack"), 5000, 10);
  const closed = new Promise<{ code: number; at: number }>((resolve) => ws.once("close", (code) => resolve({ code, at: Date.now() })));
  return {
    ws,
    openedAt: at!,
    messages,
    closed,
    subscribe(id: string, query: string) {
      ws.send(JSON.stringify({ id, type: "subscribe", payload: { query } }));
    },
    complete(id: string) {
      ws.send(JSON.stringify({ id, type: "complete" }));
    },
    /** The first error or data message for `id`. */
    answerOf(id: string) {
      return waitUntil(`an answer to ${id}`, () => messages.find((m) => m.id === id && (m.type === "error" || m.type === "next")), 5000, 10);
    },
  };
}

const NEW_COFFEE = "subscription { newCoffee { id } }";

describe("dead peers", () => {
  test("a socket that stops answering pings is closed within two ping intervals; its subscription ends and its LISTEN topic is unlistened", async () => {
    const subscriber = t.service.api!.subscriber;
    const s = await session(t, { autoPong: false });
    s.subscribe("1", NEW_COFFEE);
    await listening(t, ["coffee:new"]);
    const { at } = await s.closed;
    const after = at - s.openedAt;
    expect(after).toBeGreaterThanOrEqual(PING_MS);
    expect(after).toBeLessThan(2 * PING_MS + 700); // two intervals, and some scheduling slack
    await waitUntil("UNLISTEN coffee:new", () => !subscriber.listeningTopics.includes("coffee:new"), 2000, 10);
  });

  test("a socket that answers pings stays open", async () => {
    const s = await session(t);
    s.subscribe("1", NEW_COFFEE);
    await listening(t, ["coffee:new"]);
    await sleep(4 * PING_MS);
    expect(s.ws.readyState).toBe(WebSocket.OPEN);
    expect(t.service.api!.subscriber.listeningTopics).toContain("coffee:new");
  });
});

describe("operations and sockets", () => {
  test("every operation on a socket spends the per-source rate limit HTTP spends too: 30 at once meet RATE_LIMITED, and so does HTTP after them", async () => {
    const s = await session(limited);
    const ids = Array.from({ length: 30 }, (_, i) => `q${i}`);
    for (const id of ids) s.subscribe(id, "{ __typename }");
    const answers = await Promise.all(ids.map((id) => s.answerOf(id)));
    const codes = answers.map((m) => (m.type === "next" ? "answered" : m.payload[0]?.extensions?.code));
    const answered = codes.filter((c) => c === "answered").length;
    // The burst is 10; the upgrade spent one.
    expect(answered).toBeLessThanOrEqual(10);
    expect(codes.filter((c) => c === "RATE_LIMITED").length).toBe(30 - answered);
    expect(s.ws.readyState).toBe(WebSocket.OPEN);
    // One limiter per source for both: HTTP from the same source is refused now too.
    const http = await limited.gql("{ __typename }");
    expect({ status: http.status, code: http.body.errors?.[0]?.extensions?.code }).toEqual({ status: 429, code: "RATE_LIMITED" });
  });

  test("at most WS_MAX_SUBSCRIPTIONS_PER_SOCKET operations at once on a socket (TOO_MANY_SUBSCRIPTIONS); completing one frees its place", async () => {
    const s = await session(t);
    for (const id of ["a", "b", "c"]) s.subscribe(id, NEW_COFFEE);
    await listening(t, ["coffee:new"]);
    s.subscribe("d", NEW_COFFEE);
    const refused = await s.answerOf("d");
    expect(refused.type).toBe("error");
    expect(refused.payload[0].extensions.code).toBe("TOO_MANY_SUBSCRIPTIONS");
    s.subscribe("q1", "{ __typename }");
    expect((await s.answerOf("q1")).payload[0].extensions.code).toBe("TOO_MANY_SUBSCRIPTIONS");
    s.complete("a");
    await sleep(50);
    s.subscribe("q2", "{ __typename }");
    expect(await s.answerOf("q2")).toMatchObject({ type: "next", payload: { data: { __typename: "Query" } } });
    expect(s.messages.filter((m) => ["a", "b", "c"].includes(m.id) && m.type === "error")).toEqual([]);
  });

  test("at most WS_MAX_SOCKETS_PER_SOURCE sockets per source: the next upgrade is a 429 TOO_MANY_CONNECTIONS; closing one makes room", async () => {
    const open = await Promise.all(Array.from({ length: 4 }, () => upgrade(t.wsUrl)));
    expect(open.map((u) => u.status)).toEqual([101, 101, 101, 101]);
    const refused = await upgrade(t.wsUrl);
    expect(refused.status).toBe(429);
    expect(refused.body.errors[0].extensions.code).toBe("TOO_MANY_CONNECTIONS");
    open[0]!.ws!.close();
    await sleep(200);
    expect((await upgrade(t.wsUrl)).status).toBe(101);
  });
});

describe("Origin", () => {
  test("with CORS_ORIGINS set, an upgrade from another Origin is refused (403 ORIGIN_NOT_ALLOWED); a listed Origin, the server's own or none (not a browser) is accepted", async () => {
    const foreign = await upgrade(t.wsUrl, { origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect(foreign.body.errors[0].extensions.code).toBe("ORIGIN_NOT_ALLOWED");
    expect((await upgrade(t.wsUrl, { origin: "null" })).status).toBe(403);
    expect((await upgrade(t.wsUrl, { origin: ALLOWED_ORIGIN })).status).toBe(101);
    expect((await upgrade(t.wsUrl)).status).toBe(101);
    // This server's own pages (Ruru) are not foreign.
    expect((await upgrade(t.wsUrl, { origin: t.url })).status).toBe(101);
  });

  test("without CORS_ORIGINS, any Origin may open a socket (as before)", async () => {
    // A service of its own: `limited` has no CORS_ORIGINS either, but the rate limit test spent this source's window there.
    const open = await startTestService();
    try {
      expect((await upgrade(open.wsUrl, { origin: "https://elsewhere.example" })).status).toBe(101);
    } finally {
      await open.stop();
    }
  });
});
