import net from "node:net";
import fc from "fast-check";
import { sourceKey } from "../../src/http/clientAddress.ts";
import { startTestService, type TestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";

// Fair share at the HTTP edge: one definition of "source" (an
// IPv6 /64 is one, an IPv4-mapped address is its IPv4 address) for every
// limiter; a signed-in request spends its sign-in's budget, not its
// address's; TRUSTED_NETWORKS raises the per-source budget; slow clients
// are cut at their configured timeouts (to within a second); at most
// HTTP_MAX_CONNECTIONS_PER_SOURCE connections per source. The service
// trusts the loopback proxy, so each test is its own source
// (X-Forwarded-For). The payment callback's own limits:
// test/http/payment-callback.before-io.test.ts.

const HEADERS_TIMEOUT_MS = 2000;
const REQUEST_TIMEOUT_MS = 3000;

let t: TestService;
/** Without a trusted proxy and with the default connection cap (100). */
let plain: TestService;

beforeAll(async () => {
  t = await startTestService({
    env: {
      TRUST_PROXY: "loopback",
      // 4 requests per 4 s window per payer.
      GRAPHQL_RATE_LIMIT: "1",
      GRAPHQL_RATE_BURST: "4",
      TRUSTED_NETWORKS: "203.0.113.0/24",
      TRUSTED_NETWORK_FACTOR: "3",
      HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    },
  });
  plain = await startTestService();
  // Warm up (the first request builds what later ones reuse), so that a budget's window does not run out meanwhile.
  await post("192.0.2.1", "{ __typename }");
});
afterAll(async () => {
  await t?.stop();
  await plain?.stop();
});

/** A /graphql POST from `source` (X-Forwarded-For). */
async function post(source: string, query: string, options: { token?: string; variables?: Record<string, unknown> } = {}) {
  const r = await fetch(`${t.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": source, ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) },
    body: JSON.stringify({ query, variables: options.variables }),
  });
  const body = (await r.json()) as any;
  return { status: r.status, code: body.errors?.[0]?.extensions?.code as string | undefined, body };
}

const statuses = async (n: number, send: () => Promise<{ status: number }>) => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await send()).status);
  return out;
};

async function signIn(source: string, email: string): Promise<string> {
  const r = await post(source, "mutation($e: String!, $p: String!) { login(email: $e, password: $p) { token } }", { variables: { e: email, p: "coffee" } });
  const token = r.body.data?.login?.token;
  if (!token) throw new Error(`login failed: ${JSON.stringify(r.body)}`);
  return token;
}

describe("one definition of source", () => {
  test("the TypeScript source is exactly app_private.source_key's, for any IPv4, IPv6 and IPv4-mapped address", async () => {
    const samples = fc.sample(
      fc.oneof(
        fc.ipV4(),
        fc.ipV6(),
        fc.ipV4().map((a) => `::ffff:${a}`),
      ),
      400,
    );
    samples.push("::1", "::", "2001:db8::1", "::ffff:127.0.0.1", "fe80::1:2:3:4", "0:0:1::5", "2001:db8:0:0:1::1");
    const { rows } = await t.db.query("select x, app_private.source_key(x) as key from unnest($1::text[]) with ordinality u(x, i) order by i", [samples]);
    expect(samples.map((a) => ({ a, key: sourceKey(a) }))).toEqual(rows.map((r) => ({ a: r.x, key: r.key })));
    // The key of a key is itself (the SQL applies source_key again to what the API passes).
    expect(samples.filter((a) => sourceKey(sourceKey(a)) !== sourceKey(a))).toEqual([]);
  });

  test("IPv6: two addresses of one /64 share one request budget; another /64 has its own; an IPv4-mapped address is its IPv4 address", async () => {
    expect(await statuses(4, () => post("2001:db8:1:2::a", "{ __typename }"))).toEqual([200, 200, 200, 200]);
    const other = await post("2001:db8:1:2:ffff:ffff:ffff:b", "{ __typename }");
    expect({ status: other.status, code: other.code }).toEqual({ status: 429, code: "RATE_LIMITED" });
    expect((await post("2001:db8:1:3::a", "{ __typename }")).status).toBe(200);

    expect(await statuses(4, () => post("198.51.100.77", "{ __typename }"))).toEqual([200, 200, 200, 200]);
    expect((await post("::ffff:198.51.100.77", "{ __typename }")).status).toBe(429);
  });
});

describe("who pays", () => {
  test("two signed-in accounts from one address each get their own budget, and so does the address's anonymous traffic; a sign-in's budget follows it to another address", async () => {
    const alice = await signIn("198.51.100.10", "alice@example.com");
    const bob = await signIn("198.51.100.11", "bob@example.com");
    const shared = "198.51.100.12";
    const me = "{ __typename }";
    expect(await statuses(4, () => post(shared, me, { token: alice }))).toEqual([200, 200, 200, 200]);
    expect((await post(shared, me, { token: alice })).code).toBe("RATE_LIMITED");
    expect(await statuses(4, () => post(shared, me, { token: bob }))).toEqual([200, 200, 200, 200]);
    expect(await statuses(4, () => post(shared, "{ __typename }"))).toEqual([200, 200, 200, 200]);
    // Alice's sign-in is spent wherever she goes.
    expect((await post("198.51.100.13", me, { token: alice })).code).toBe("RATE_LIMITED");
  });

  test("a bad token's 401 spends its source's budget (so it is no way around it)", async () => {
    const source = "198.51.100.14";
    expect(await statuses(5, () => post(source, "{ __typename }", { token: "not.a.token" }))).toEqual([401, 401, 401, 401, 429]);
  });

  test("TRUSTED_NETWORKS: an anonymous source inside it gets TRUSTED_NETWORK_FACTOR times the budget; one outside does not", async () => {
    expect(await statuses(13, () => post("203.0.113.5", "{ __typename }"))).toEqual([...Array(12).fill(200), 429]);
    expect(await statuses(5, () => post("198.51.100.15", "{ __typename }"))).toEqual([200, 200, 200, 200, 429]);
  });
});

describe("slow clients", () => {
  /** Connects, sends `head` at once and then one byte of `drip` every 300 ms; resolves when the server closes, with what it answered and when (ms after connecting). */
  function slowClient(port: number, head: string, drip: string): Promise<{ ms: number; answer: string }> {
    return new Promise((resolve) => {
      const started = Date.now();
      let answer = "";
      const socket = net.connect(port, "127.0.0.1", () => socket.write(head));
      let i = 0;
      const timer = setInterval(() => {
        if (!socket.destroyed && socket.writable) socket.write(drip[i++ % drip.length]!);
      }, 300);
      socket.on("data", (d) => (answer += d.toString()));
      socket.on("error", () => {});
      socket.on("close", () => {
        clearInterval(timer);
        resolve({ ms: Date.now() - started, answer });
      });
      setTimeout(() => socket.destroy(), 10_000).unref();
    });
  }

  test(`a client sending its headers slowly is cut within a second of HTTP_HEADERS_TIMEOUT_MS (${HEADERS_TIMEOUT_MS} ms), with a 408`, async () => {
    const port = t.service.api!.port;
    const r = await slowClient(port, "GET /healthz HTTP/1.1\r\nHost: x\r\n", "x-slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n".replace("\r\n", ""));
    expect(r.answer).toMatch(/^HTTP\/1\.1 408/);
    expect(r.ms).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
    expect(r.ms).toBeLessThan(HEADERS_TIMEOUT_MS + 1000);
  });

  test(`a client sending its body slowly is cut within a second of HTTP_REQUEST_TIMEOUT_MS (${REQUEST_TIMEOUT_MS} ms)`, async () => {
    const port = t.service.api!.port;
    const r = await slowClient(port, "POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nX-Forwarded-For: 198.51.100.30\r\n\r\n", " ");
    expect(r.ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(r.ms).toBeLessThan(REQUEST_TIMEOUT_MS + 1000);
  });
});

describe("connections per source", () => {
  test("the 101st open connection from one source is answered 429 and closed; closing one makes room", async () => {
    const port = plain.service.api!.port;
    const open: net.Socket[] = [];
    try {
      for (let i = 0; i < 100; i++) {
        open.push(
          await new Promise<net.Socket>((resolve, reject) => {
            const s = net.connect(port, "127.0.0.1", () => resolve(s));
            s.on("error", reject);
          }),
        );
      }
      const server = plain.service.api!.server;
      const connections = () => new Promise<number>((resolve) => server.getConnections((_e, n) => resolve(n)));
      await waitUntil("100 connections", async () => (await connections()) >= 100, 5000, 20);
      const answerOf = () =>
        new Promise<string>((resolve) => {
          let text = "";
          const s = net.connect(port, "127.0.0.1", () => s.write("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
          s.on("data", (d) => (text += d.toString()));
          s.on("error", () => resolve(text));
          s.on("close", () => resolve(text));
        });
      const refused = await answerOf();
      expect(refused).toMatch(/^HTTP\/1\.1 429/);
      expect(refused).toContain('"TOO_MANY_CONNECTIONS"');
      open.pop()!.destroy();
      await waitUntil("99 connections", async () => (await connections()) <= 99, 5000, 20);
      expect(await answerOf()).toMatch(/^HTTP\/1\.1 200/);
    } finally {
      for (const s of open) s.destroy();
    }
  });
});
