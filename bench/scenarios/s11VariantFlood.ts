// S11 variant flood: what endless "trusted" variants cost a bystander, on a
// service process of its own with the production rate limit (the bench's
// service lets everything through) and npm start's heap flags, as
// test/http/variant-flood.test.ts runs it. The kiosk's KioskMenu by
// documentId, from 127.0.0.1 at a fixed rate, is timed
// with no flood (the floor row: the baseline) and then while 8 other
// addresses send distinct document variants (test/drills/attacker.ts's
// trusted-variants family: whitespace and `# comment` variants of Ping's and
// KioskMenu's trusted texts, and ad-hoc documents; each parsed, validated,
// priced and run), 75 a second each, under the rate limit (100). The
// ×floor p50 is the flood's cost. test/http/variant-flood.test.ts bounds
// the server's memory under the same flood and only reports the latency (a
// timed bound fails the suite on a busy machine).
import { spawn } from "node:child_process";
import path from "node:path";
import { base, trustedBody, type Ctx, type Row, type ScenarioResult } from "../lib/context.ts";
import { runLoad, type LoadResult } from "../lib/load.ts";
import { readyByHttp, ROOT, startChild } from "../lib/proc.ts";

const ATTACKER = path.join(ROOT, "test", "drills", "attacker.ts");
const SOURCES = Array.from({ length: 8 }, (_, i) => `127.0.2.${i + 1}`);
const PER_SOURCE = 75;
/** The kiosk's requests a second. */
const KIOSK_RATE = 20;

/** The attacker running the flood until stopped (or its deadline); resolves with its summary. */
function flood(url: string, seconds: number): { done: Promise<{ sent: number; counts: Record<string, number> }> } {
  const options = { localAddress: SOURCES[0], sources: SOURCES, durationMs: seconds * 1000, maxRequests: 10_000_000, concurrency: 8, menuEvery: 64, ratePerSecond: PER_SOURCE * SOURCES.length };
  const child = spawn(process.execPath, [ATTACKER, "trusted-variants", url, JSON.stringify(options)], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_OPTIONS: "" },
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString("utf8")));
  child.stderr.on("data", (c: Buffer) => (err += c.toString("utf8")));
  const done = new Promise<{ sent: number; counts: Record<string, number> }>((resolve, reject) =>
    child.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`the attacker exited ${code}: ${err.slice(-500)}`));
      resolve(JSON.parse(out.trim().split("\n").pop()!));
    }),
  );
  return { done };
}

export async function s11(ctx: Ctx): Promise<ScenarioResult> {
  const service = await startChild({
    name: "service-variant-flood",
    script: path.join(ROOT, "src/main.ts"),
    args: ["--api"],
    env: { ...ctx.serviceEnv, GRAPHQL_RATE_LIMIT: "100", GRAPHQL_RATE_BURST: "200" },
    nodeArgs: ["--max-old-space-size=256", "--max-semi-space-size=16"],
    logDir: ctx.logDir,
  });
  try {
    await readyByHttp(service, "/healthz");
    return await measureFlood(ctx, base(service.port));
  } finally {
    await service.stop();
  }
}

async function measureFlood(ctx: Ctx, url: string): Promise<ScenarioResult> {
  const request = { path: "/graphql", body: trustedBody("KioskMenu") };
  // Long enough for a p99 at the kiosk's rate, even in --smoke.
  const seconds = Math.max(2, ctx.opts.latencySeconds);
  const kiosk = () => runLoad({ baseUrl: url, request, connections: 2, seconds, rate: KIOSK_RATE });
  ctx.log(`S11: KioskMenu at ${KIOSK_RATE} req/s for ${seconds} s, quiet`);
  await kiosk();
  const quiet = await kiosk();
  ctx.log(`S11: the same under a flood of distinct variants from ${SOURCES.length} addresses, ${PER_SOURCE} a second each`);
  const attack = flood(url, seconds + 1.5);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const under = await kiosk();
  const summary = await attack.done;
  const row = (variant: Row["variant"], label: string, r: LoadResult, notes: string[]): Row => ({
    ...{ scenario: "S11", case: "KioskMenu by documentId", variant, label, opsPerSec: r.opsPerSec, opsUnit: "req/s", throughputHow: `fixed ${KIOSK_RATE} req/s` },
    ...{ p50: r.latency.p50, p99: r.latency.p99, latencyLoad: `${KIOSK_RATE} req/s fixed`, errors: r.bad + r.errors + r.timeouts, notes, raw: { latency: r } },
  });
  return {
    id: "S11",
    title: "variant flood",
    rows: [
      row("service", "cafe-api, under the flood", under, [`the flood: ${summary.sent} variants sent, answers ${JSON.stringify(summary.counts)}`]),
      row("floor", "cafe-api, no flood (baseline)", quiet, []),
    ],
    notes: [`a bystander kiosk's KioskMenu, quiet and while ${SOURCES.length} addresses send ${PER_SOURCE} distinct document variants a second each (AD_HOC_QUERIES=any: each one run)`],
  };
}
