import net from "node:net";
import { useTestService } from "../support/service.ts";
import { LINGER_MAX_BYTES } from "../../src/http/bodyLimit.ts";

// 30 tries of 5 MB a route: seconds on a quiet machine, far more on a busy one.
jest.setTimeout(240_000);

// A body over a route's limit is answered 413 and the client can read that
// answer, every time, however much it still sends: the server answers,
// keeps reading (and discarding) the rest up to a bound, then closes.
// Raw sockets, so nothing between the test and the server hides a reset.

const t = useTestService();
let port: number;

beforeAll(async () => {
  port = t.service.api!.port;
  // A source blocked by another suite's auth failures would get 429 first.
  await t.db.query("delete from app_private.blocked_sources");
});
const FIVE_MB = 5 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, "x");

interface Outcome {
  /** What the server sent back. */
  response: string;
  /** The client's socket error, if any (EPIPE, ECONNRESET). */
  error?: string;
  bytesSent: number;
  /** The server closed its side (FIN) or the connection. */
  closedByServer: boolean;
}

/** POSTs `size` bytes on a fresh connection, with a Content-Length or chunked, and reads what comes back until the connection closes. */
function postLarge(path: string, size: number, options: { chunked?: boolean; headers?: Record<string, string> } = {}): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    // Half-open: it keeps sending after the server has answered and closed its side.
    const socket = net.connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    const parts: Buffer[] = [];
    let error: string | undefined;
    let bytesSent = 0;
    let closedByServer = false;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within 20 s; got: ${Buffer.concat(parts).toString("latin1").slice(0, 200)}`));
    }, 20_000);
    socket.on("data", (d) => parts.push(d));
    // Like an HTTP client: once the answer is complete (the server's FIN)
    // and the request sent, close.
    let allSent = false;
    socket.on("end", () => {
      closedByServer = true;
      if (allSent) socket.end();
    });
    socket.on("error", (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ response: Buffer.concat(parts).toString("latin1"), error, bytesSent, closedByServer: closedByServer || error !== undefined });
    });
    const head = [
      `POST ${path} HTTP/1.1`,
      "Host: 127.0.0.1",
      "Content-Type: application/json",
      options.chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${size}`,
      ...Object.entries(options.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
      "",
      "",
    ].join("\r\n");
    socket.write(head);
    const writeNext = () => {
      while (bytesSent < size && !socket.destroyed) {
        const chunk = CHUNK.subarray(0, Math.min(CHUNK.length, size - bytesSent));
        bytesSent += chunk.length;
        const ok = socket.write(options.chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]) : chunk);
        if (!ok) return void socket.once("drain", writeNext);
      }
      if (socket.destroyed) return;
      if (options.chunked) socket.write("0\r\n\r\n");
      allSent = true;
      if (closedByServer) socket.end();
    };
    writeNext();
  });
}

function expect413(outcome: Outcome) {
  const [head = "", body = ""] = outcome.response.split("\r\n\r\n");
  return {
    status: head.split("\r\n")[0],
    connectionClose: /\r\nconnection: close\r\n/i.test(`${head}\r\n`),
    code: /"code":"(\w+)"/.exec(body)?.[1],
    error: outcome.error,
    closedByServer: outcome.closedByServer,
  };
}

const READ_413 = { status: "HTTP/1.1 413 Payload Too Large", connectionClose: true, code: "PAYLOAD_TOO_LARGE", error: undefined, closedByServer: true };

describe.each([
  ["/graphql", {}],
  ["/orders/payment-callback", { authorization: "Bearer x", "x-signature": "sha256=00" }],
  ["/healthz", {}],
  ["/no-such-route", {}],
])("%s", (path, headers) => {
  test("5 MB with a Content-Length, 30 times on fresh connections: 30 readable 413s, the whole body sent, then the connection closes", async () => {
    const outcomes = [];
    for (let i = 0; i < 30; i++) {
      const outcome = await postLarge(path, FIVE_MB, { headers });
      expect(outcome.bytesSent).toBe(FIVE_MB);
      outcomes.push(expect413(outcome));
    }
    expect(outcomes).toStrictEqual(Array.from({ length: 30 }, () => READ_413));
  });
});

describe.each([["/graphql"], ["/orders/payment-callback"]])("%s, chunked (no Content-Length: the route counts)", (path) => {
  test("5 MB chunked, 10 times: 10 readable 413s, then the connection closes", async () => {
    const outcomes = [];
    for (let i = 0; i < 10; i++) outcomes.push(expect413(await postLarge(path, FIVE_MB, { chunked: true })));
    expect(outcomes).toStrictEqual(Array.from({ length: 10 }, () => READ_413));
  });
});

test("a client that keeps sending past the bound is cut off after the 413 (the server reads at most LINGER_MAX_BYTES more)", async () => {
  const outcome = await postLarge("/graphql", 8 * LINGER_MAX_BYTES);
  expect(outcome.response).toMatch(/^HTTP\/1\.1 413 /);
  expect(outcome.closedByServer).toBe(true);
  expect(outcome.bytesSent).toBeLessThan(8 * LINGER_MAX_BYTES);
});

test("a body within the limit on a keep-alive connection is still answered normally", async () => {
  const res = await fetch(`${t.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: "{ __typename }" }) });
  expect(res.status).toBe(200);
  expect(res.headers.get("connection")).not.toBe("close");
});
