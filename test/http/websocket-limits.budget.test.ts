import WebSocket from "ws";
import { signToken } from "../../src/auth.ts";
import { DEMO } from "../support/client.ts";
import { startTestService, type TestService } from "../support/service.ts";
import { sleep, waitUntil } from "../support/wait.ts";
import { MESSAGES_PER_REQUEST, WS_OVERDRAFT } from "../../src/http/websocket.ts";

// What a socket's messages cost: every message spends its payer's budget
// (the limiter HTTP spends), pings included, and a socket over it is closed;
// an operation's new document is charged its CPU as over HTTP. Raw
// graphql-ws messages over a real `ws` socket.

let t: TestService;
const sockets: WebSocket[] = [];
/** One window of 200 requests for 20 s: longer than any flood below, so the budget cannot refill during one. */
const BURST = 200;

beforeAll(async () => {
  t = await startTestService({ env: { GRAPHQL_RATE_LIMIT: "10", GRAPHQL_RATE_BURST: String(BURST), TRUSTED_NETWORK_FACTOR: "1" } });
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
  // (Her sign-in spends one request of the source's window.)
  const alice = await t.token("alice");
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
  // The sign-in, the upgrade and connection_init spent three requests of the source's budget; the pings the rest, and the overdraft.
  expect(pongs).toBeLessThanOrEqual((BURST + WS_OVERDRAFT) * MESSAGES_PER_REQUEST);
  expect(pongs).toBeGreaterThan((BURST - 10) * MESSAGES_PER_REQUEST);
  // One budget for both transports: the same source's anonymous HTTP is refused now too, a signed-in caller's is not.
  expect((await t.gql("{ __typename }")).status).toBe(429);
  expect((await t.gql("{ __typename }", { token: alice })).status).toBe(200);
});

test("a barista's new documents over a socket are charged their CPU (GRAPHQL_DOCUMENT_WORK_US) to their account and refused RATE_LIMITED after its budget, as over HTTP", async () => {
  // One request per microsecond of CPU: any new document's parse and validation is well over the burst of 20 (a window of 20 s).
  const limited = await startTestService({ env: { GRAPHQL_RATE_LIMIT: "1", GRAPHQL_RATE_BURST: "20", GRAPHQL_DOCUMENT_WORK_US: "1", AD_HOC_QUERIES: "staff" } });
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
