import { readdirSync } from "node:fs";
import http from "node:http";
import net from "node:net";
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
// twice what the process may open (issue 40, H4: 210 addresses x 100 at a
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
function probe(port: number, localAddress: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.get({ port, host: "127.0.0.1", localAddress, path: "/healthz", agent: false, timeout: 5000 }, (res) => {
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
