// `node scripts/node.mjs --import tsx bench/profile.ts [--seconds 5] [--cases S1,CoffeeDetail]`:
// where a request's CPU goes, the service against stock PostGraphile V5.
// On a fresh bench database (the quick data set), each process is started
// alone under `node --cpu-prof`, warmed up, loaded closed-loop (16
// connections) for --seconds and stopped; only the samples taken during the
// load count. Prints, per case, microseconds of CPU per request of the two
// processes by package or file (self time), and the heaviest functions.
import "./lib/env.ts";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { signToken } from "../src/auth.ts";
import { parseOptions } from "./lib/options.ts";
import { analyze, generateBaseData, openBenchDatabase, recreateDatabase } from "./lib/db.ts";
import { ROOT, readyByHttp, readyByIpc, startChild } from "./lib/proc.ts";
import { DEMO, gqlBody } from "./lib/context.ts";
import { measure } from "./lib/load.ts";
import { sleep } from "./lib/stats.ts";
import { stockDocuments } from "./scenarios/s2Read.ts";

const argv = process.argv.slice(2);
const arg = (name: string, dflt: string) => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] ? argv[i + 1]! : dflt;
};
const seconds = Number(arg("--seconds", "5"));
const cases = arg("--cases", "S1,CoffeeDetail").split(",");
const log = (m: string) => process.stderr.write(`[profile] ${m}\n`);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives: a package, a project file, or Node/V8. */
function bucketOf(frame: ProfileNode["callFrame"]): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith("(") ? functionName : `(native) ${functionName || "anonymous"}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) {
    // grafast/grafserv/postgraphile files by folder, to see which layer.
    if (/^(grafast|grafserv|postgraphile|@dataplan\/pg|pg)$/.test(pkg[1]!)) {
      const sub = new RegExp(`${pkg[1]}/dist/([^/]+)`).exec(url)?.[1] ?? "";
      return `${pkg[1]}/${sub.replace(/\.js$/, "")}`;
    }
    return pkg[1]!;
  }
  if (url.startsWith("node:")) return url.replace(/^node:internal\//, "node:").replace(/\/.*$/, "");
  return path.relative(ROOT, url.replace(/^file:\/\//, ""));
}

/** Self time (µs) by bucket and by function, for samples between two offsets from the profile's end. */
function account(file: string, fromEnd: number, toEnd: number) {
  const p: CpuProfile = JSON.parse(readFileSync(file, "utf8"));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const times: number[] = [];
  let t = p.startTime;
  for (const d of p.timeDeltas) times.push((t += d));
  const end = times[times.length - 1]!;
  const lo = end - fromEnd;
  const hi = end - toEnd;
  const buckets = new Map<string, number>();
  const fns = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    if (times[i]! < lo || times[i]! > hi) continue;
    const dt = (times[i + 1] ?? times[i]!) - times[i]!;
    const frame = byId.get(p.samples[i]!)!.callFrame;
    if (frame.functionName === "(idle)") continue;
    total += dt;
    const b = bucketOf(frame);
    buckets.set(b, (buckets.get(b) ?? 0) + dt);
    const f = `${frame.functionName || "(anonymous)"} ${frame.url ? `${bucketOf(frame)}:${frame.lineNumber + 1}` : ""}`;
    fns.set(f, (fns.get(f) ?? 0) + dt);
  }
  return { total, buckets, fns };
}

async function main() {
  const opts = parseOptions(["--quick"]);
  const db = await openBenchDatabase(process.env.BENCH_DATABASE_URL, "cafe_bench_profile");
  log(`database ${db.name}: creating it`);
  await recreateDatabase(db);
  const root = new pg.Client({ connectionString: db.url });
  await root.connect();
  await generateBaseData(root, opts);
  await analyze(root);
  const { rows: coffeeRows } = await root.query("select id::text from app_public.coffees where available order by id");
  await root.end();
  const coffeeIds = coffeeRows.map((r) => r.id as string);

  const secrets = {
    JWT_SECRET: `bench-jwt-${randomBytes(24).toString("hex")}`,
    WEBHOOK_TOKEN: `bench-webhook-${randomBytes(12).toString("hex")}`,
    SIGNING_SECRET: `bench-signing-${randomBytes(12).toString("hex")}`,
  };
  // As bench/run.ts starts them.
  const serviceEnv = {
    NODE_ENV: "production",
    GRAPHILE_ENV: "production",
    DATABASE_URL: db.url,
    DATABASE_OWNER_URL: db.urls.owner,
    DATABASE_AUTHENTICATOR_URL: db.urls.authenticator,
    DATABASE_POOL_SIZE: "10",
    ...secrets,
    DEMO_DATA: "true",
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    GRAPHIQL: "false",
    GRAPHQL_RATE_LIMIT: "1000000",
    GRAPHQL_RATE_BURST: "1000000",
    AD_HOC_QUERIES: "any",
    WS_MAX_SOCKETS_PER_SOURCE: "1000000",
    SHUTDOWN_GRACE_MS: "0",
  };
  const benchEnv = { NODE_ENV: "production", GRAPHILE_ENV: "production", ...secrets, BENCH_AUTHENTICATOR_URL: db.urls.authenticator, DATABASE_POOL_SIZE: "10" };
  const alice = { authorization: `Bearer ${signToken(secrets.JWT_SECRET, { userId: DEMO.alice, role: "customer", signInId: randomUUID() }, 3600).token}` };
  const manifest: Record<string, string> = JSON.parse(readFileSync(path.join(ROOT, "contract/trusted-documents.json"), "utf8"));
  const idOf = (op: string) => Object.entries(manifest).find(([, text]) => new RegExp(`^query ${op}\\b`).test(text))?.[0];
  const mobile = readFileSync(path.join(ROOT, "contract/operations/mobile.graphql"), "utf8");
  let n = 0;
  const coffee = () => coffeeIds[n++ % coffeeIds.length];
  let stockCoffee = "";
  let stockQueue = "";
  const baristaOps = readFileSync(path.join(ROOT, "contract/operations/barista.graphql"), "utf8");
  const barista = { authorization: `Bearer ${signToken(secrets.JWT_SECRET, { userId: DEMO.barista, role: "barista", signInId: randomUUID() }, 3600).token}` };
  const requests: Record<string, { service: () => { body: string; headers?: Record<string, string> }; stock: () => { body: string; headers?: Record<string, string> } }> = {
    S1: { service: () => ({ body: gqlBody("{ __typename }") }), stock: () => ({ body: gqlBody("{ __typename }") }) },
    S1trusted: {
      service: () => ({ body: JSON.stringify({ documentId: idOf("Ping") }) }),
      stock: () => ({ body: gqlBody("{ __typename }") }),
    },
    CoffeeDetail: {
      service: () => ({ body: gqlBody(mobile, "CoffeeDetail", { id: coffee() }), headers: alice }),
      stock: () => ({ body: gqlBody(stockCoffee, undefined, { id: coffee() }), headers: alice }),
    },
    BaristaQueue: {
      service: () => ({ body: gqlBody(baristaOps, "BaristaQueue"), headers: barista }),
      stock: () => ({ body: gqlBody(stockQueue), headers: barista }),
    },
    BaristaQueueTrusted: {
      service: () => ({ body: JSON.stringify({ documentId: idOf("BaristaQueue") }), headers: barista }),
      stock: () => ({ body: gqlBody(stockQueue), headers: barista }),
    },
    CoffeeDetailTrusted: {
      service: () => ({ body: JSON.stringify({ documentId: idOf("CoffeeDetail"), variables: { id: coffee() } }), headers: alice }),
      stock: () => ({ body: gqlBody(stockCoffee, undefined, { id: coffee() }), headers: alice }),
    },
  };

  const dir = mkdtempSync(path.join(os.tmpdir(), "cafe-profile-"));
  log(`profiles in ${dir}`);
  for (const c of cases) {
    const spec = requests[c];
    if (!spec) throw new Error(`no case ${c}`);
    const results: Record<string, ReturnType<typeof account> & { requests: number }> = {};
    for (const who of ["service", "stock"] as const) {
      const name = `${c}-${who}`;
      const child = await startChild({
        name,
        script: path.join(ROOT, who === "service" ? "src/main.ts" : "bench/servers/stockPostgraphile.ts"),
        args: who === "service" ? ["--api"] : [],
        env: who === "service" ? serviceEnv : benchEnv,
        logDir: dir,
        nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name}.cpuprofile`],
      });
      await (who === "service" ? readyByHttp(child, "/healthz") : readyByIpc(child));
      if (who === "stock" && !stockCoffee) ({ coffee: stockCoffee, queue: stockQueue } = await stockDocuments(`http://127.0.0.1:${child.port}`, alice));
      const request = {
        path: "/graphql",
        setup: () => {
          const r = spec[who]();
          return { body: r.body, headers: r.headers };
        },
      };
      const baseUrl = `http://127.0.0.1:${child.port}`;
      await measure({ baseUrl, request, connections: 16, seconds: 2, warmupSeconds: 0 });
      await sleep(200);
      const loadStart = performance.now();
      const r = await measure({ baseUrl, request, connections: 16, seconds, warmupSeconds: 0 });
      const loadEnd = performance.now();
      if (r.bad || r.errors) throw new Error(`${name}: ${r.bad} bad answers (${r.badSample}), ${r.errors} errors`);
      await child.stop();
      const exited = performance.now();
      const file = path.join(dir, readdirSync(dir).find((f) => f === `${name}.cpuprofile`)!);
      // A little inside the load window on both sides.
      results[who] = { ...account(file, (exited - loadStart) * 1000 - 100_000, (exited - loadEnd) * 1000 + 100_000), requests: r.opsPerSec * (seconds - 0.2) };
      log(`${name}: ${Math.round(r.opsPerSec)} req/s, ${Math.round(results[who].total / results[who].requests)} µs CPU per request`);
    }
    const s = results.service!;
    const k = results.stock!;
    const per = (x: typeof s, b: string) => (x.buckets.get(b) ?? 0) / x.requests;
    const names = [...new Set([...s.buckets.keys(), ...k.buckets.keys()])].sort((a, b) => per(s, b) + per(k, b) - per(s, a) - per(k, a));
    console.log(`\n## ${c}: µs of CPU per request (self time, sampled while loaded)\n`);
    console.log(`| where | service | stock | difference |\n|---|---:|---:|---:|`);
    console.log(`| **total** | ${(s.total / s.requests).toFixed(0)} | ${(k.total / k.requests).toFixed(0)} | ${((s.total / s.requests) - (k.total / k.requests)).toFixed(0)} |`);
    for (const b of names) {
      const a = per(s, b);
      const z = per(k, b);
      if (a < 2 && z < 2) continue;
      console.log(`| ${b} | ${a.toFixed(1)} | ${z.toFixed(1)} | ${(a - z).toFixed(1)} |`);
    }
    for (const [who, x] of [["service", s], ["stock", k]] as const) {
      console.log(`\nHeaviest functions, ${who} (µs per request):\n`);
      for (const [f, t] of [...x.fns].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`- ${(t / x.requests).toFixed(1)} ${f}`);
    }
  }
  const { dropDatabase } = await import("../src/db/database.ts");
  await dropDatabase(db.urls.root, db.name).catch(() => {});
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
