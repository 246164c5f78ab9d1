import fs from "node:fs";
import net from "node:net";
import { ACCESS_LOG_FLUSH_MS, logger } from "../../src/logger.ts";
import { REQUEST_ID_MAX_LENGTH, requestIdFrom } from "../../src/requestScope.ts";
import { captureLogLines } from "../support/logs.ts";
import { useTestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";

// One JSON line per request (method, route, status, duration, operation
// name, request id), the request id echoed and carried by the log line of a
// masked error. The log is read where pino writes it: the destination
// streams (the access log's, batched, and the others'), swapped for an
// array while a test runs.

const t = useTestService();
const log = captureLogLines();
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function post(body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${t.url}/graphql`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

const requestLine = (requestId: string) => waitUntil(`the access log line of ${requestId}`, () => log.lines().find((l) => l.msg === "request" && l.requestId === requestId), 2000, 10);

test("one line per request: method, route, status, duration, operation name, request id (the caller's, echoed)", async () => {
  const res = await post({ query: "query MenuProbe { __typename }" }, { "x-request-id": "till-7.order-42" });
  expect(res.status).toBe(200);
  expect(res.headers.get("x-request-id")).toBe("till-7.order-42");
  const line = await requestLine("till-7.order-42");
  expect(line).toMatchObject({ level: 30, method: "POST", route: "/graphql", status: 200, operationName: "MenuProbe", requestId: "till-7.order-42" });
  expect(typeof line.durationMs).toBe("number");
  expect(log.lines().filter((l) => l.requestId === "till-7.order-42" && l.msg === "request")).toHaveLength(1);

  // The operation asked for by name in a document with several.
  const named = await post({ query: "query A { __typename } query B { __typename }", operationName: "B" });
  expect((await requestLine(named.headers.get("x-request-id")!)).operationName).toBe("B");

  // Other routes too; a path outside the known routes is "other", and its
  // 404 a refusal: counted by source and reason (test/http/refusal-log.test.ts).
  const health = await fetch(`${t.url}/healthz`);
  expect(await requestLine(health.headers.get("x-request-id")!)).toMatchObject({ method: "GET", route: "/healthz", status: 200 });
  await fetch(`${t.url}/no/such/path?secret=1`);
  expect(await waitUntil("the refusal's line", () => log.lines().find((l) => l.msg === "refused" && l.route === "other"), 2000, 10)).toMatchObject({ status: 404, reason: "404", refused: 1 });
});

test("without an X-Request-Id the service makes one (a random UUID), different for every request", async () => {
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push((await post({ query: "{ __typename }" })).headers.get("x-request-id")!);
  for (const id of ids) expect(id).toMatch(UUID);
  expect(new Set(ids).size).toBe(3);
  await requestLine(ids[2]!);
});

test("a hostile X-Request-Id is cut to 128 characters of a safe charset (no spaces, quotes, braces, control characters)", async () => {
  const hostile = `evil" } {"admin":true}\t<script>` + "x".repeat(10_000);
  // Raw bytes: fetch would refuse to send some of it.
  const head = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(t.service.api!.port, "127.0.0.1");
    let text = "";
    socket.on("data", (d) => (text += d.toString("latin1")));
    socket.on("end", () => resolve(text.split("\r\n\r\n")[0]!));
    socket.on("error", reject);
    socket.end(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${hostile}\r\nConnection: close\r\n\r\n`);
  });
  const echoed = /^x-request-id: (.*)$/im.exec(head)?.[1];
  expect(echoed).toBe(("evil" + "admin:true" + "script" + "x".repeat(10_000)).slice(0, REQUEST_ID_MAX_LENGTH));
  const line = await requestLine(echoed!);
  expect(line.route).toBe("/healthz");
  // Newlines (which a header cannot carry, but a WebSocket's or a proxy's
  // value might) and a value with nothing safe left.
  expect(requestIdFrom("a\nb\r\nc")).toBe("abc");
  expect(requestIdFrom("\n\n\t  ")).toMatch(UUID);
  expect(requestIdFrom(["first", "second"])).toBe("first");
});

describe("a masked error", () => {
  let coffeeId: string;
  beforeAll(async () => {
    coffeeId = (await t.db.query("select id from app_public.coffees order by name limit 1")).rows[0].id;
    // An unexpected failure in SQL (a DBA's trigger gone wrong), for one coffee.
    await t.db.query(`create or replace function app_private.tg_access_log_test_failure() returns trigger language plpgsql as $$
      begin raise exception 'disk on fire' using errcode = 'XX000'; end $$`);
    await t.db.query(`create trigger _900_access_log_test_failure before update on app_public.coffees
      for each row when (new.id = '${coffeeId}') execute function app_private.tg_access_log_test_failure()`);
  });
  afterAll(async () => {
    await t.db.query("drop trigger if exists _900_access_log_test_failure on app_public.coffees");
    await t.db.query("drop function if exists app_private.tg_access_log_test_failure()");
  });

  test("its log line carries the request's id, as the access log line does", async () => {
    const admin = await t.token("admin");
    const res = await post(
      { query: "mutation Break($id: ID!) { setCoffeeAvailable(id: $id, available: true) { id } }", variables: { id: coffeeId } },
      { authorization: `Bearer ${admin}`, "x-request-id": "masked-probe-1" },
    );
    const body = await res.json();
    expect(body.errors[0].extensions.code).toBe("INTERNAL_SERVER_ERROR");
    const errorId = body.errors[0].extensions.errorId;
    const errorLine = await waitUntil("the masked error's log line", () => log.lines().find((l) => l.errorId === errorId), 2000, 10);
    expect(errorLine).toMatchObject({ level: 50, requestId: "masked-probe-1", msg: "internal error" });
    expect(await requestLine("masked-probe-1")).toMatchObject({ operationName: "Break", status: 200 });
  });
});

describe("written to stdout", () => {
  test(`in batches: many requests, few writes; a lone line within ${ACCESS_LOG_FLUSH_MS} ms`, async () => {
    log.release(); // the real destination this time
    const level = logger.level;
    logger.level = "info";
    const writeSync = fs.writeSync;
    const written: string[] = [];
    (fs as any).writeSync = (fd: number, data: any, ...rest: any[]) => {
      if (fd !== 1) return (writeSync as any)(fd, data, ...rest);
      const text = typeof data === "string" ? data : Buffer.from(data).toString("utf8");
      written.push(text);
      return Buffer.byteLength(text);
    };
    try {
      const accessLines = () =>
        written
          .join("")
          .split("\n")
          .filter((l) => l.includes('"msg":"request"') && l.includes("batch-probe-"));
      const n = 60;
      await Promise.all(Array.from({ length: n }, (_, i) => post({ query: "{ __typename }" }, { "x-request-id": `batch-probe-${i}` })));
      await waitUntil("every access line written", () => accessLines().length === n, 2000, 10);
      expect(written.filter((w) => w.includes("batch-probe-")).length).toBeLessThan(n / 5);
      const started = Date.now();
      await post({ query: "{ __typename }" }, { "x-request-id": "batch-probe-lone" });
      await waitUntil("the lone line", () => accessLines().some((l) => l.includes("batch-probe-lone")), 2000, 5);
      expect(Date.now() - started).toBeLessThan(ACCESS_LOG_FLUSH_MS * 3);
    } finally {
      (fs as any).writeSync = writeSync;
      logger.level = level;
    }
  });
});
