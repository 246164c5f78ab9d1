import WebSocket from "ws";
import { signToken } from "../../src/auth.ts";
import { DEMO } from "../support/client.ts";
import { startTestService, type TestService } from "../support/service.ts";
import { sleep, waitUntil } from "../support/wait.ts";
import { MESSAGES_PER_REQUEST, WS_OVERDRAFT } from "../../common/webSocketLimits.ts";

// What a socket's messages cost: every message spends its payer's budget
// (the limiter HTTP spends), pings included, and a socket over it is closed;
// an operation's new document is charged its CPU as over HTTP. Raw
// graphql-ws messages over a real `ws` socket.

let t: TestService;
const sockets: WebSocket[] = [];
/** One window of 200 requests for 20 s: longer than any flood below, so the budget cannot refill during one. */
const BURST = 200;

beforeAll(async () => {
  t = await startTestService({ env: { RATE_LIMIT_SYNC_MS: "0", GRAPHQL_RATE_LIMIT: "10", GRAPHQL_RATE_BURST: String(BURST), TRUSTED_NETWORK_FACTOR: "1" } });
});
afterEach(() => {
  for (const ws of sockets.splice(0)) ws.terminate();
});
afterAll(async () => {
  await t?.stop();
});

/** An acknowledged graphql-ws session on `target` (connection_init with `payload`), with what it receives and how it closes. */
async function session(target: TestService, payload: Record<string, unknown> = {}) {
  const ws = new WebSocket(target.wsUrl, "graphql-transport-ws");
  sockets.push(ws);
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once("error", reject);
  });
  const messages: any[] = [];
  ws.on("message", (data) => messages.push(JSON.parse(data.toString())));
  const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
  ws.send(JSON.stringify({ type: "connection_init", payload }));
  await waitUntil("connection_ack", () => messages.some((m) => m.type === "connection_ack"), 5000, 10);
  return { ws, messages, closed };
}

test("a ping flood on one anonymous socket is answered until its source's budget and overdraft are spent, then the socket is closed 4429", async () => {
  // (A token of hers made here: signing in would spend the source's budget.)
  const alice = signToken(t.config.JWT_SECRET, { userId: DEMO.alice.id, role: "customer", signInId: "00000000-0000-4000-8000-0000000c0400" }, 600).token;
  const s = await session(t);
  const FLOOD = 20_000;
  let sent = 0;
  // As fast as the socket takes them, until all are sent or it closes.
  while (sent < FLOOD && s.ws.readyState === WebSocket.OPEN) {
    s.ws.send('{"type":"ping"}');
    if (++sent % 500 === 0) await sleep(1);
  }
  const code = await Promise.race([s.closed, sleep(10_000).then(() => "still open")]);
  const pongs = s.messages.filter((m) => m.type === "pong").length;
  expect(code).toBe(4429);
  // The upgrade and connection_init spent two requests of the source's budget; the pings the rest, and the overdraft.
  expect(pongs).toBeLessThanOrEqual((BURST + WS_OVERDRAFT) * MESSAGES_PER_REQUEST);
  // Generous for a kiosk's client: most of the budget's worth is answered (pings still on their way when it closes are not).
  expect(pongs).toBeGreaterThan((BURST / 2) * MESSAGES_PER_REQUEST);
  // One budget for both transports: the same source's anonymous HTTP is refused now too, a signed-in caller's is not.
  expect((await t.gql("{ __typename }")).status).toBe(429);
  expect((await t.gql("{ __typename }", { token: alice })).status).toBe(200);
});

test("a barista's new documents over a socket are charged their CPU (GRAPHQL_DOCUMENT_WORK_US) to their account and refused RATE_LIMITED after its budget, as over HTTP", async () => {
  // One request per microsecond of CPU: any new document's parse and validation is well over the burst of 20 (a window of 20 s).
  const limited = await startTestService({ env: { RATE_LIMIT_SYNC_MS: "0", GRAPHQL_RATE_LIMIT: "1", GRAPHQL_RATE_BURST: "20", GRAPHQL_DOCUMENT_WORK_US: "1", AD_HOC_QUERIES: "staff" } });
  // Two baristas (accounts with budgets of their own): one over HTTP, one over a socket.
  const tokenOf = (userId: string, signInId: string) => signToken(limited.config.JWT_SECRET, { userId, role: "barista", signInId }, 600).token;
  const overHttpToken = tokenOf(DEMO.barista.id, "00000000-0000-4000-8000-0000000c0401");
  const overSocketToken = tokenOf(DEMO.ribeiraBarista.id, "00000000-0000-4000-8000-0000000c0402");
  try {
    const N = 20;
    // A heavy document not seen before: aliases of a list with a fragment.
    const heavy = (tag: string, i: number) =>
      `query Heavy${tag}${i}x${Date.now()} { ${Array.from({ length: 10 }, (_, a) => `a${a}: allCoffees(first: 1) { nodes { ...F } }`).join(" ")} } fragment F on Coffee { id name price category available }`;
    const tally = (codes: string[]) => ({ served: codes.filter((c) => c === "served").length, refused: codes.filter((c) => c === "RATE_LIMITED").length });

    const overHttp: string[] = [];
    for (let i = 0; i < N; i++) {
      const r = await limited.gql(heavy("Http", i), { token: overHttpToken });
      overHttp.push(r.status === 200 && r.body.data ? "served" : r.body.errors?.[0]?.extensions?.code);
    }
    const s = await session(limited, { authorization: `Bearer ${overSocketToken}` });
    const overSocket: string[] = [];
    for (let i = 0; i < N; i++) {
      const id = `h${i}`;
      s.ws.send(JSON.stringify({ id, type: "subscribe", payload: { query: heavy("Ws", i) } }));
      const answer = await waitUntil(`an answer to ${id}`, () => s.messages.find((m) => m.id === id && (m.type === "next" || m.type === "error")), 5000, 5);
      overSocket.push(answer.type === "next" && answer.payload.data ? "served" : answer.payload[0]?.extensions?.code);
    }
    const figures = { http: tally(overHttp), socket: tally(overSocket) };
    // The first new document spends the rest of the window; the others are refused.
    expect(figures.http).toEqual({ served: 1, refused: N - 1 });
    expect(figures.socket).toEqual(figures.http);
    // A refused operation leaves the socket open (it was told; its few messages are within the overdraft).
    expect(s.ws.readyState).toBe(WebSocket.OPEN);
  } finally {
    await limited.stop();
  }
});

test("a new document's first run is charged its planning over a socket too, as over HTTP: new documents are served about as many times on both before the budget runs out", async () => {
  // One request per 100 µs of CPU, and a budget of 5,000 of them (0.5 s of CPU, in a window of 1,000 s).
  const limited = await startTestService({ env: { RATE_LIMIT_SYNC_MS: "0", GRAPHQL_RATE_LIMIT: "5", GRAPHQL_RATE_BURST: "5000", GRAPHQL_DOCUMENT_WORK_US: "100", AD_HOC_QUERIES: "staff" } });
  const tokenOf = (userId: string, signInId: string) => signToken(limited.config.JWT_SECRET, { userId, role: "barista", signInId }, 600).token;
  try {
    const MAX = 150;
    const heavy = (tag: string, i: number) =>
      `query Plan${tag}${i}x${Date.now()} { ${Array.from({ length: 10 }, (_, a) => `a${a}: allCoffees(first: 1) { nodes { ...F } }`).join(" ")} } fragment F on Coffee { id name price category available }`;
    let overHttp = 0;
    const httpToken = tokenOf(DEMO.barista.id, "00000000-0000-4000-8000-0000000c0403");
    for (; overHttp < MAX; overHttp++) {
      const r = await limited.gql(heavy("Http", overHttp), { token: httpToken });
      if (r.status !== 200) break;
    }
    const s = await session(limited, { authorization: `Bearer ${tokenOf(DEMO.ribeiraBarista.id, "00000000-0000-4000-8000-0000000c0404")}` });
    let overSocket = 0;
    for (; overSocket < MAX; overSocket++) {
      const id = `p${overSocket}`;
      s.ws.send(JSON.stringify({ id, type: "subscribe", payload: { query: heavy("Ws", overSocket) } }));
      const answer = await waitUntil(`an answer to ${id}`, () => s.messages.find((m) => m.id === id && (m.type === "next" || m.type === "error")), 5000, 2);
      if (answer.type !== "next") break;
    }
    // Each costs ~0.1 s planned (5 served of 0.5 s); its parse alone, a small part of that (without the planning charge: 61 served over a socket, 5 over HTTP).
    expect(overHttp).toBeLessThan(MAX);
    expect(overSocket).toBeLessThanOrEqual(3 * overHttp + 3);
  } finally {
    await limited.stop();
  }
});

test("the overdraft is of one spell out of budget: a socket out of budget twice, each time short of WS_OVERDRAFT, stays open", async () => {
  // A window of 4 s with a burst of 20: each spell below fits in one.
  const limited = await startTestService({ env: { RATE_LIMIT_SYNC_MS: "0", GRAPHQL_RATE_LIMIT: "5", GRAPHQL_RATE_BURST: "20", TRUSTED_NETWORK_FACTOR: "1" } });
  try {
    const s = await session(limited);
    let sent = 0;
    const pings = async (n: number) => {
      for (let i = 0; i < n; i++) s.ws.send('{"type":"ping"}');
      sent += n;
      await waitUntil(`${sent} pongs`, () => s.messages.filter((m) => m.type === "pong").length === sent || s.ws.readyState !== WebSocket.OPEN, 5000, 5);
    };
    /** Spends what is left of the source's window over HTTP. */
    const exhaust = async () => {
      for (let i = 0; i < 25; i++) if ((await limited.gql("{ __typename }")).status === 429) return;
      throw new Error("the source's budget did not run out");
    };
    // Out of budget: 70 pings spend 7 requests it does not have, within the overdraft.
    await exhaust();
    await pings(7 * MESSAGES_PER_REQUEST);
    // A new window: the next request's worth is paid for, and the spell is over.
    await sleep(4100);
    await pings(MESSAGES_PER_REQUEST);
    await exhaust();
    await pings(7 * MESSAGES_PER_REQUEST);
    expect(7 + 7).toBeGreaterThan(WS_OVERDRAFT);
    expect(s.ws.readyState).toBe(WebSocket.OPEN);
    expect(s.messages.filter((m) => m.type === "pong")).toHaveLength(sent);
    // Past the overdraft in one spell, it is closed.
    await pings((WS_OVERDRAFT - 6) * MESSAGES_PER_REQUEST);
    expect(await s.closed).toBe(4429);
  } finally {
    await limited.stop();
  }
});
