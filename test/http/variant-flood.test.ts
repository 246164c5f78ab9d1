import { spawn } from "node:child_process";
import http from "node:http";
import path from "node:path";
import { readFileSync } from "node:fs";
import { percentile, report } from "../support/figures.ts";
import { ChildService, ROOT, withLogsOnFailure } from "../support/service.ts";
import { sleep } from "../support/wait.ts";

// Endless "trusted" variants do not grow the server: 50,000 distinct
// documents (whitespace and `# comment` variants of Ping's and KioskMenu's
// trusted texts, plain and in Apollo's `__typename` form, and ad-hoc
// documents), from 8 source addresses, each well under its rate limit. The
// server is its own process (`src/main.ts --api`), so its RSS is its own;
// the flood comes from drill 11's attacker process (test/drills/attacker.ts,
// family trusted-variants), each source bound to its own 127/8 address.
// Every variant is ad hoc (only the manifest's own forms are trusted), and
// AD_HOC_QUERIES=any lets each be parsed, validated, priced and run: the
// worst case. Each source sends 75 a second, under the default rate limit
// (GRAPHQL_RATE_LIMIT 100): 50,000 in about 85 s, nearly all run (a new
// ad-hoc document also costs its source the CPU it took).
//
// Pass: the server's RSS after the flood is at most 64 MB above its RSS
// after a warm-up, and every variant is answered. Two bystanders (a kiosk
// reading the menu, an app's Ping, by document id from addresses of their
// own) are timed quiet and under the flood, and their p95s reported, not
// asserted: a timed bound on 2 shared cores fails on a busy machine (p95 85
// ms against a 71 ms bound, run alone), so it belongs in the bench, not the
// suite (drill 11, test/drills/11-bystanders.test.ts, asserts its own).

// The server runs with the heap flags `npm start` gives it (package.json's
// start:api NODE_OPTIONS, as ops/systemd/cafe-api.service): without a bound,
// V8, sized for the machine's memory, lets the flood's garbage pile up in
// its old space before it collects (not a leak: docs/operations.md, Memory).
// VARIANT_FLOOD_COUNT: how many variants; VARIANT_FLOOD_NODE_OPTIONS: other
// flags (VARIANT_FLOOD_NODE_OPTIONS="" runs it unbounded).
const VARIANTS = Number(process.env.VARIANT_FLOOD_COUNT ?? 50_000);
const SOURCES = Array.from({ length: 8 }, (_, i) => `127.0.2.${i + 1}`);
/** Requests a second from each source: under the default GRAPHQL_RATE_LIMIT (100). */
const PER_SOURCE = 75;
const MAX_RSS_GROWTH_MB = 64;
const QUIET_MS = 4000;
const ATTACKER = path.join(ROOT, "test", "drills", "attacker.ts");

/** The heap flags `npm run start:api` starts the API with. */
const HEAP_FLAGS = (() => {
  const script = (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts["start:api"]!;
  const flags = /NODE_OPTIONS="([^"$]*)/.exec(script)?.[1]?.trim();
  if (!flags) throw new Error(`package.json's start:api sets no NODE_OPTIONS: ${script}`);
  return flags;
})();

const manifest = JSON.parse(readFileSync(path.join(ROOT, "contract", "trusted-documents.json"), "utf8")) as Record<string, string>;
/** A trusted document's id: its shortest form (the plain one, as the kiosk sends it). */
const idOf = (name: string) =>
  Object.keys(manifest)
    .filter((id) => new RegExp(`^\\s*query ${name}\\b`).test(manifest[id]!))
    .sort((a, b) => manifest[a]!.length - manifest[b]!.length)[0]!;

let svc: ChildService | null = null;
afterAll(() => svc?.stop());

/** A bystander's loop from its own address: `documentName` by id, one request after another, until `until()`. */
async function bystander(url: string, localAddress: string, documentName: string, until: () => boolean): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress } as http.AgentOptions);
  const body = JSON.stringify({ documentId: idOf(documentName) });
  const ms: number[] = [];
  try {
    while (!until()) {
      const started = performance.now();
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request(`${url}/graphql`, { method: "POST", agent, headers: { "content-type": "application/json" } }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        });
        req.on("error", reject);
        req.end(body);
      });
      if (status !== 200) throw new Error(`bystander ${documentName}: ${status}`);
      ms.push(performance.now() - started);
      await sleep(20);
    }
  } finally {
    agent.destroy();
  }
  return ms.sort((a, b) => a - b);
}

const p95 = (ms: number[]) => percentile(ms, 95);

test(
  `${VARIANTS} distinct document variants from ${SOURCES.length} sources: every one answered, the server's RSS grows by at most ${MAX_RSS_GROWTH_MB} MB (bystanders' p95 reported)`,
  () =>
    withLogsOnFailure(
      () => [svc],
      async () => {
        svc = await ChildService.startApi({
          AD_HOC_QUERIES: "any",
          // The production defaults (the tests' own environment turns the limit off).
          GRAPHQL_RATE_LIMIT: "100",
          GRAPHQL_RATE_BURST: "200",
          LOG_LEVEL: "warn",
          NODE_OPTIONS: process.env.VARIANT_FLOOD_NODE_OPTIONS ?? HEAP_FLAGS,
        });
        const url = svc.url;
        // Warm-up: plans, caches, the pool; then the baseline.
        let stop = Date.now() + 1500;
        await Promise.all([bystander(url, "127.0.0.11", "KioskMenu", () => Date.now() > stop), bystander(url, "127.0.0.12", "Ping", () => Date.now() > stop)]);
        stop = Date.now() + QUIET_MS;
        const quiet = await Promise.all([bystander(url, "127.0.0.11", "KioskMenu", () => Date.now() > stop), bystander(url, "127.0.0.12", "Ping", () => Date.now() > stop)]);
        const rssBefore = svc.rssMb()!;

        const started = Date.now();
        const attacker = spawn(
          process.execPath,
          [
            ATTACKER,
            "trusted-variants",
            url,
            JSON.stringify({ localAddress: SOURCES[0], sources: SOURCES, durationMs: 600_000, maxRequests: VARIANTS, concurrency: 8, menuEvery: 64, ratePerSecond: PER_SOURCE * SOURCES.length }),
          ],
          {
            cwd: ROOT,
            stdio: ["ignore", "pipe", "inherit"],
            env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_OPTIONS: "" },
          },
        );
        let out = "";
        attacker.stdout!.on("data", (c: Buffer) => (out += c.toString("utf8")));
        let done = false;
        const exited = new Promise<number | null>((resolve) => attacker.once("exit", (code) => ((done = true), resolve(code))));
        await sleep(500);
        const under = await Promise.all([bystander(url, "127.0.0.11", "KioskMenu", () => done), bystander(url, "127.0.0.12", "Ping", () => done)]);
        expect(await exited).toBe(0);
        const summary = JSON.parse(out.trim().split("\n").pop()!) as { sent: number; counts: Record<string, number> };
        await sleep(1000);
        const rssAfter = svc.rssMb()!;

        const kinds = ["menu", "ping"];
        const figures = Object.fromEntries(kinds.map((k, i) => [k, `${Math.round(p95(quiet[i]!))}→${Math.round(p95(under[i]!))}ms(${(p95(under[i]!) / Math.max(p95(quiet[i]!), 0.1)).toFixed(1)}x)`]));
        report("variant flood", {
          variants: summary.sent,
          seconds: Math.round((Date.now() - started) / 1000),
          rss_mb: `${Math.round(rssBefore)}→${Math.round(rssAfter)}`,
          ...figures,
          answers: JSON.stringify(summary.counts),
        });

        expect(summary.sent).toBe(VARIANTS);
        // Every variant was answered: run (200), or, when its source had spent
        // its budget (new documents cost their CPU: GRAPHQL_DOCUMENT_WORK_US),
        // refused (429); nearly all were run.
        expect(Object.keys(summary.counts).filter((k) => k !== "200" && k !== "429 RATE_LIMITED")).toEqual([]);
        expect(summary.counts["200"]! + (summary.counts["429 RATE_LIMITED"] ?? 0)).toBe(VARIANTS);
        expect(summary.counts["200"]).toBeGreaterThanOrEqual(0.9 * VARIANTS);
        expect(rssAfter - rssBefore).toBeLessThanOrEqual(MAX_RSS_GROWTH_MB);
      },
    ),
  900_000,
);
