import { readdirSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { connectionCap, installConnectionLimit } from "../../src/http/connectionLimit.ts";
import { makeClientAddress } from "../../src/http/clientAddress.ts";
import { ChildService, startTestService, withLogsOnFailure } from "../support/service.ts";
import { say } from "../support/figures.ts";
import { sleep } from "../support/wait.ts";

// A process-wide cap on connections (HTTP_MAX_CONNECTIONS, derived from the
// open-file limit less the pools' connections and a reserve: src/http/
// connectionLimit.ts): a flood of slow connections from many sources never
// takes the files the database and health probes need, and /healthz
// answers through it. The API runs as its own process with an open-file
// limit of 400 (`ulimit -n`); the flood comes from 8 loopback addresses,
// 100 slow connections each (HTTP_MAX_CONNECTIONS_PER_SOURCE's default),
// twice what the process may open (an attack: 210 addresses x 100 at a
// 20,000-file limit; /healthz failed 12 of 12).

const FILE_LIMIT = 400;
const FLOOD_SOURCES = 8;
const PER_SOURCE = 100;

let api: ChildService | null = null;
const flood: net.Socket[] = [];

afterAll(async () => {
  for (const s of flood) s.destroy();
  api?.killGroup("SIGKILL");
  await api?.waitExit(5000).catch(() => {});
});

/** How many files a process has open (Linux). */
const openFiles = (pid: number | undefined) => {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return "?";
  }
};

/** One slow connection from `localAddress`: half a request line, then nothing. Resolves when connected, or with null when refused/cut. */
function slowConnection(port: number, localAddress: string): Promise<net.Socket | null> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: "127.0.0.1", localAddress });
    s.on("error", () => resolve(null));
    s.once("close", () => resolve(null));
    s.once("connect", () => {
      s.write("GET /healthz HTTP/1.1\r\nHost: x\r\n");
      resolve(s);
    });
  });
}

/** GET /healthz from `localAddress`, a fresh connection; its status, or the error's code. */
function probe(port: number, localAddress: string, headers: Record<string, string> = {}): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.get({ port, host: "127.0.0.1", localAddress, path: "/healthz", headers, agent: false, timeout: 5000 }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("timeout", () => req.destroy(new Error("TIMEOUT")));
    req.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

test(`${FLOOD_SOURCES} sources x ${PER_SOURCE} slow connections against an open-file limit of ${FILE_LIMIT}: /healthz and /readyz from another address answer 12 of 12 through the flood`, async () => {
  api = await ChildService.startApi({ HTTP_HEADERS_TIMEOUT_MS: "60000", HTTP_REQUEST_TIMEOUT_MS: "120000" }, { fileLimit: FILE_LIMIT });
  const port = api.port;
  await withLogsOnFailure(
    () => [api],
    async () => {
      expect(await probe(port, "127.0.0.1")).toBe(200);
      for (let a = 0; a < FLOOD_SOURCES; a++) {
        const opened = await Promise.all(Array.from({ length: PER_SOURCE }, () => slowConnection(port, `127.0.1.${a + 1}`)));
        for (const s of opened) if (s) flood.push(s);
      }
      await sleep(500);
      const held = flood.filter((s) => !s.destroyed).length;
      const answers: Array<number | string> = [];
      for (let i = 0; i < 12; i++) {
        answers.push(await probe(port, "127.0.0.50"));
        await sleep(100);
      }
      say(`[connection cap] flood opened ${FLOOD_SOURCES * PER_SOURCE}, held ${held} after 0.5 s; /healthz probes: ${answers.join(" ")}; the service's open files: ${openFiles(api!.innerPid())}`);
      expect(answers).toEqual(Array(12).fill(200));
      // The database is still reached: the flood took none of its files.
      const ready = await new Promise<number | string>((resolve) => {
        http
          .get({ port, host: "127.0.0.1", localAddress: "127.0.0.51", path: "/readyz", agent: false, timeout: 5000 }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          })
          .on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
      });
      expect(ready).toBe(200);
    },
  );
}, 120_000);

test("at HTTP_MAX_CONNECTIONS (20) a newcomer closes the oldest connection of the source holding the most; one more from that source is refused 503 SERVICE_BUSY", async () => {
  const t = await startTestService({ env: { HTTP_MAX_CONNECTIONS: "20" } });
  const port = Number(new URL(t.url).port);
  const held: net.Socket[] = [];
  try {
    const open = async (address: string, n: number) => {
      const opened = await Promise.all(Array.from({ length: n }, () => slowConnection(port, address)));
      held.push(...opened.filter((s): s is net.Socket => s !== null));
      return opened;
    };
    const big = await open("127.0.2.1", 15);
    await open("127.0.2.2", 5);
    await sleep(200);
    expect(big.every((s) => s && !s.destroyed)).toBe(true);
    // The biggest holder asks for one more: it would hold more than anyone, so it is refused.
    const refused = await new Promise<string>((resolve) => {
      const s = net.connect({ port, host: "127.0.0.1", localAddress: "127.0.2.1" });
      let answer = "";
      s.on("data", (c: Buffer) => (answer += c.toString("utf8")));
      s.on("close", () => resolve(answer));
      s.on("error", () => {});
    });
    expect(refused).toMatch(/^HTTP\/1\.1 503 /);
    expect(refused).toContain('"code":"SERVICE_BUSY"');
    expect(big.every((s) => s && !s.destroyed)).toBe(true);
    // Another source's newcomer: the biggest holder's oldest connection makes way.
    expect(await probe(port, "127.0.2.3")).toBe(200);
    await sleep(200);
    expect(big.map((s) => s!.destroyed)).toEqual([true, ...Array(14).fill(false)]);
  } finally {
    for (const s of held) s.destroy();
    await t.stop();
  }
}, 60_000);

test("behind TRUST_PROXY, at HTTP_MAX_CONNECTIONS (30), a flood of slow connections through the proxy never shuts out /healthz: through the proxy or from another address", async () => {
  // Proxies were held with an infinite factor: their level was always 0, so
  // nothing could make way and every newcomer was refused 503.
  const t = await startTestService({ env: { TRUST_PROXY: "loopback", HTTP_MAX_CONNECTIONS: "30" } });
  const port = Number(new URL(t.url).port);
  const held: net.Socket[] = [];
  try {
    const proxy = "127.0.3.1";
    for (let i = 0; i < 60; i++) {
      const s = await slowConnection(port, proxy);
      if (s) {
        s.write(`X-Forwarded-For: 203.0.113.${i + 1}\r\n`);
        held.push(s);
      }
    }
    await sleep(200);
    const answers: Array<number | string> = [];
    for (let i = 0; i < 6; i++) {
      answers.push(await probe(port, proxy, { "x-forwarded-for": "198.51.100.7" }));
      answers.push(await probe(port, "127.0.3.2", { "x-forwarded-for": "198.51.100.8" }));
    }
    const open = held.filter((s) => !s.destroyed).length;
    say(`[connection cap behind a proxy] 60 slow connections through ${proxy}, ${open} still open; /healthz through the proxy and from another: ${answers.join(" ")}`);
    expect(answers).toEqual(Array(12).fill(200));
    expect(open).toBeLessThanOrEqual(30);
  } finally {
    for (const s of held) s.destroy();
    await t.stop();
  }
}, 60_000);

test("a source that connects and leaves is forgotten: 40 trusted sources and 40 proxies, 3 connections each, open and close; no holder stays behind", async () => {
  // A holder whose factor is above 1 (a trusted network, a proxy) kept its
  // place at level 0 after its last connection closed: one leaked per visit (D2).
  const server = http.createServer((_req, res) => res.end("ok"));
  const limit = installConnectionLimit(server, makeClientAddress("127.0.6.0/24", "127.0.5.0/24"), { perSource: 5, trustedFactor: 10, cap: 1000 });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  try {
    for (const subnet of [5, 6]) {
      for (let a = 1; a <= 40; a++) {
        const sockets = (await Promise.all(Array.from({ length: 3 }, () => slowConnection(port, `127.0.${subnet}.${a}`)))).filter((s): s is net.Socket => s !== null);
        expect(sockets).toHaveLength(3);
        for (const s of sockets) s.destroy();
      }
    }
    for (let i = 0; i < 50 && limit.total > 0; i++) await sleep(50);
    say(`[connection cap] after 80 sources came and went: ${JSON.stringify(limit.holders)}, total ${limit.total}`);
    expect(limit.total).toBe(0);
    expect(limit.holders).toEqual({ sources: 0, levelled: 0 });
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}, 60_000);

test("where the open-file limit cannot be read, HTTP_MAX_CONNECTIONS as set is the cap; 0 falls back to 1024 less the headroom", () => {
  const config = { HTTP_MAX_CONNECTIONS: 5000, DATABASE_POOL_SIZE: 10, DATABASE_SUBSCRIPTION_POOL_SIZE: 2, CALLBACK_POOL_SIZE: 2, WORKER_CONCURRENCY: 4 };
  expect(connectionCap(config, null)).toBe(5000);
  expect(connectionCap({ ...config, HTTP_MAX_CONNECTIONS: 0 }, null)).toBe(1024 - 10 - 2 - 2 - 4 - 128);
  // A limit that is read still bounds a value set above it.
  expect(connectionCap(config, 2000)).toBe(2000 - 10 - 2 - 2 - 4 - 128);
  expect(connectionCap({ ...config, HTTP_MAX_CONNECTIONS: 100 }, 2000)).toBe(100);
});
