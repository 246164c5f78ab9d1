// `npm run bench` (full), `-- --quick` (a minute or two), `-- --smoke`
// (seconds, tiny data): starts the service on a fresh database with a
// generated data set, runs the scenarios S1-S9 and S11 (S10 is kept for "an order's life"; and S2 at larger scales),
// prints a Markdown table on stdout (progress goes to stderr) and writes every
// figure to a JSON file; a full run also writes bench/results/latest.md.
// See bench/README.md.
import "./lib/env.ts";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { signToken } from "../src/auth.ts";
import { dropDatabase } from "../src/db/database.ts";
import { parseOptions } from "./lib/options.ts";
import { analyze, closeBenchOrders, generateBaseData, openBenchDatabase, recreateDatabase, redact, tableCounts } from "./lib/db.ts";
import { ROOT, readyByHttp, readyByIpc, startChild, type Child } from "./lib/proc.ts";
import { DEMO, type Ctx, type ScenarioResult } from "./lib/context.ts";
import { machineFacts } from "./lib/machine.ts";
import { addRatios, mainTable, targetsTable, notesSection, scaleTable } from "./lib/report.ts";
import { setPostgresBackend } from "./lib/cpu.ts";
import { s1 } from "./scenarios/s1Http.ts";
import { s2, s2Scale } from "./scenarios/s2Read.ts";
import { s3 } from "./scenarios/s3Write.ts";
import { s4 } from "./scenarios/s4Callbacks.ts";
import { s5 } from "./scenarios/s5Jobs.ts";
import { s6 } from "./scenarios/s6Fanout.ts";
import { s7 } from "./scenarios/s7Cost.ts";
import { s8 } from "./scenarios/s8Cache.ts";
import { s9 } from "./scenarios/s9Rush.ts";
import { s11 } from "./scenarios/s11VariantFlood.ts";

const log = (msg: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const since = (t: number) => `${((Date.now() - t) / 1000).toFixed(1)} s`;

async function main() {
  const opts = parseOptions(process.argv.slice(2));
  const started = new Date();
  const stamp = started.toISOString().replace(/[:.]/g, "-").slice(0, 19);
  const out = opts.out ?? path.join(ROOT, "bench/results", `${stamp}${opts.profile === "full" ? "" : `-${opts.profile}`}.json`);
  const logDir = mkdtempSync(path.join(os.tmpdir(), "cafe-bench-"));
  log(`${opts.profile} run; the processes log to ${logDir} (removed after a run without failures)`);

  const db = await openBenchDatabase(opts.databaseUrl ?? process.env.BENCH_DATABASE_URL, opts.profile === "smoke" ? "cafe_bench_smoke" : "cafe_bench");
  log(`database ${redact(db.url)} (${db.server} server): dropping and creating it`);
  const children: Child[] = [];
  let root: pg.Client | null = null;
  const scenarios: ScenarioResult[] = [];
  let facts: Awaited<ReturnType<typeof machineFacts>> | null = null;
  let counts: Record<string, number> = {};
  const interrupted = () => {
    log("interrupted: stopping the processes under test");
    Promise.allSettled(children.map((c) => c.stop())).then(() => process.exit(130));
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  try {
    let t = Date.now();
    await recreateDatabase(db);
    log(`schema and demo data in ${since(t)}`);
    root = new pg.Client({ connectionString: db.url });
    await root.connect();
    facts = await machineFacts(root, db.server);
    setPostgresBackend((await root.query("select pg_backend_pid() as pid")).rows[0].pid);
    t = Date.now();
    await generateBaseData(root, opts);
    await analyze(root);
    counts = await tableCounts(root);
    log(`generated data in ${since(t)}: ${JSON.stringify(counts)}`);

    const secrets = {
      JWT_SECRET: `bench-jwt-${randomBytes(24).toString("hex")}`,
      WEBHOOK_TOKEN: `bench-webhook-${randomBytes(12).toString("hex")}`,
      SIGNING_SECRET: `bench-signing-${randomBytes(12).toString("hex")}`,
      STRIPE_WEBHOOK_SECRET: `whsec_bench${randomBytes(12).toString("hex")}`,
    };
    const production = { NODE_ENV: "production", GRAPHILE_ENV: "production", DATABASE_POOL_SIZE: String(opts.poolSize), ...secrets };
    const serviceEnv: Record<string, string> = {
      ...production,
      DATABASE_URL: db.url,
      // Given explicitly so production mode accepts the development role
      // password (the roles are cluster-wide: the bench must not change it).
      DATABASE_OWNER_URL: db.urls.owner,
      DATABASE_AUTHENTICATOR_URL: db.urls.authenticator,
      DEMO_DATA: "true",
      HOST: "127.0.0.1",
      LOG_LEVEL: opts.logLevel,
      GRAPHIQL: "false",
      // Every protection stays on, as in production: the rate limiter runs on
      // every request, with a limit no bench load reaches (all the load comes
      // from one address), and the access log goes to the child's log file.
      GRAPHQL_RATE_LIMIT: "1000000",
      GRAPHQL_RATE_BURST: "1000000",
      // The scenarios send their own documents (production's default, staff, would refuse them).
      AD_HOC_QUERIES: "any",
      // S6 opens 1,000 sockets from one address.
      WS_MAX_SOCKETS_PER_SOURCE: "1000000",
      HTTP_MAX_CONNECTIONS_PER_SOURCE: "1000000",
      // S1-S7 measure uncached reads; S8 starts a service with the live cache on.
      LIVE_CACHE_MAX_ENTRIES: "0",
      // The callback route's own pool as large as S4's floor's (--pool-size):
      // S4 compares the work per callback, not two pool sizes.
      CALLBACK_POOL_SIZE: String(opts.poolSize),
      // S4's Stripe row: the webhook route on (its events need no call to
      // Stripe's API; nothing here calls it, so the URL is never used).
      STRIPE_SECRET_KEY: "sk_test_bench",
      STRIPE_TEST_MODE: "true",
      STRIPE_API_URL: "http://127.0.0.1:9",
    };
    const benchEnv = { ...production, BENCH_AUTHENTICATOR_URL: db.urls.authenticator, BENCH_OWNER_URL: db.urls.owner };

    log("starting the service (API only), the stock PostGraphile peer and the floors");
    t = Date.now();
    const cpuProf = (name: string) => (opts.cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(opts.cpuProfDir)}`, `--cpu-prof-name=${name}-${process.pid}.cpuprofile`] : []);
    const start = async (name: string, script: string, more: { args?: string[]; env?: Record<string, string>; capture?: boolean; nodeArgs?: string[] }) => {
      const child = await startChild({ name, script: path.join(ROOT, script), env: benchEnv, logDir, ...more });
      children.push(child);
      return child;
    };
    const service = await start("service", "src/main.ts", { args: ["--api"], env: serviceEnv, capture: true, nodeArgs: cpuProf("service") });
    const stock = await start("stock-postgraphile", "bench/servers/stockPostgraphile.ts", { capture: true, nodeArgs: cpuProf("stock") });
    const floorSql = await start("floor-sql", "bench/servers/floorSql.ts", { capture: true });
    const floorHttp = await start("floor-http", "bench/servers/floorHttp.ts", {});
    await Promise.all([readyByHttp(service, "/healthz"), readyByIpc(stock), readyByIpc(floorSql), readyByIpc(floorHttp)]);
    log(`ready in ${since(t)}`);

    const { rows: customerRows } = await root.query("select id::text from app_private.accounts where email like '%@bench.example' order by email limit 16");
    const { rows: coffeeRows } = await root.query("select id::text from app_public.coffees where available order by id");
    const token = (id: string, role: "customer" | "barista" | "admin") => signToken(secrets.JWT_SECRET, { userId: id, role, signInId: randomUUID() }, 3600).token;
    const ctx: Ctx = {
      ...{ opts, db, root, secrets, serviceEnv, benchEnv, logDir, service, stock, floorSql, floorHttp, shared: {}, log },
      tokens: {
        barista: token(DEMO.barista, "barista"),
        alice: token(DEMO.alice, "customer"),
        admin: token(DEMO.admin, "admin"),
        customers: customerRows.map((r) => ({ id: r.id, token: token(r.id, "customer") })),
      },
      coffeeIds: coffeeRows.map((r) => r.id),
    };

    const wanted = (id: string) => !opts.only || opts.only.has(id) || (id === "S4" && opts.only.has("S5"));
    const s2done = () => scenarios.find((s) => s.id === "S2" && !s.error);
    // S5 leaves paid and PREPARING orders behind: the later scenarios see the base data only.
    const plan: Array<[string, string, () => Promise<ScenarioResult> | null]> = [
      ["S1", "HTTP floor", () => s1(ctx)],
      ["S2", "nested read", () => s2(ctx)],
      ["S3", "write", () => s3(ctx)],
      ["S4", "callback ingest", () => s4(ctx)],
      ["S5", "jobs", () => s5(ctx)],
      ["S6", "fan-out", () => closeBenchOrders(ctx.root).then(() => s6(ctx))],
      ["S7", "cost check", () => closeBenchOrders(ctx.root).then(() => s7(ctx))],
      ["S8", "live cache", () => closeBenchOrders(ctx.root).then(() => s8(ctx))],
      ["S9", "rush hour", () => closeBenchOrders(ctx.root).then(() => s9(ctx))],
      ["S11", "variant flood", () => s11(ctx)],
      ["S2x", "nested read at larger scales", () => (s2done() && opts.scales.length > 1 ? closeBenchOrders(ctx.root).then(() => s2Scale(ctx, s2done()!)) : null)],
    ];
    for (const [id, title, fn] of plan) {
      if (id !== "S2x" && !wanted(id)) continue;
      const t0 = Date.now();
      try {
        const running = fn();
        if (!running) continue;
        log(`${id} ${title}`);
        scenarios.push({ ...(await running), seconds: (Date.now() - t0) / 1000 });
      } catch (e) {
        const cause = (e as Error & { cause?: unknown }).cause;
        log(`${id} failed: ${(e as Error).stack ?? e}${cause ? `\ncaused by: ${(cause as Error).stack ?? cause}` : ""}`);
        scenarios.push({ id, title, rows: [], notes: [], error: String((e as Error).message ?? e), seconds: (Date.now() - t0) / 1000 });
      }
    }
  } finally {
    await Promise.allSettled(children.map((c) => c.stop()));
    await root?.end().catch(() => {});
    if (!opts.keepDatabase) await dropDatabase(db.urls.root, db.name).catch((e) => log(`could not drop ${db.name}: ${e.message}`));
    await db.stopServer().catch(() => {});
  }

  addRatios(scenarios.flatMap((s) => s.rows));
  const finished = new Date();
  const f = facts!;
  const pgs = f.postgresSettings;
  const s2x = scenarios.find((s) => s.id === "S2x");
  const markdown = [
    `## Café API benchmarks: ${opts.profile} run, ${started.toISOString().slice(0, 16).replace("T", " ")} UTC (${((finished.getTime() - started.getTime()) / 1000).toFixed(0)} s)`,
    "",
    `Machine: ${f.cores} cores (${f.cpuModel}), ${f.memoryGb} GB, ${f.os}; Node ${f.node}; PostgreSQL ${f.postgres} (${f.postgresServer} server; shared_buffers ${pgs.shared_buffers}, random_page_cost ${pgs.random_page_cost}, synchronous_commit ${pgs.synchronous_commit}); postgraphile ${f.packages.postgraphile}, grafast ${f.packages.grafast}, graphile-worker ${f.packages["graphile-worker"]}, autocannon ${f.packages.autocannon}; commit ${f.gitCommit.slice(0, 10)}.`,
    `Data at 1x: ${Object.entries(counts)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}.`,
    `Load: from the bench process; every server is a child process (NODE_ENV=production, LOG_LEVEL=${opts.logLevel}); throughput: autocannon, closed loop, ${opts.connections} connections for ${opts.peakSeconds} s; latency at one fixed rate per case (open loop, evenly spaced), ${opts.latencyLoad} x the service's peak, the same for every variant, for ${opts.latencySeconds} s. DATABASE_POOL_SIZE (and the service's CALLBACK_POOL_SIZE) ${opts.poolSize} for the service, the floors and the peer. ×floor: throughput / the floor's, p50 / the floor's. CPU: percent of one core during the closed-loop run, for the process answering, this PostgreSQL cluster, the bench process, and everything else on the machine (other work disturbs the figures).`,
    "",
    mainTable(scenarios.filter((s) => s !== s2x)),
    "",
    "### Targets",
    "",
    targetsTable(scenarios.flatMap((s) => s.rows)),
    "",
    ...(s2x
      ? [
          "### S2 by order count",
          "",
          scaleTable(
            s2x,
            scenarios.find((s) => s.id === "S2"),
          ),
          "",
        ]
      : []),
    "### Notes",
    "",
    notesSection(scenarios),
  ].join("\n");
  const integrity = (scenarios.find((s) => s.id === "S4")?.integrity as Record<"service" | "floor", { lost: number; duplicated: number }>) ?? null;
  const options = { ...opts, only: opts.only && [...opts.only], databaseUrl: opts.databaseUrl && redact(opts.databaseUrl) };
  const result = { version: 1, profile: opts.profile, startedAt: started.toISOString(), finishedAt: finished.toISOString(), options, machine: f };
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ ...result, database: { server: db.server, name: db.name, counts }, scenarios, integrity, markdown }, null, 2) + "\n");
  // The committed summary: the latest full run of every scenario.
  if (opts.profile === "full" && !opts.only && !opts.out) writeFileSync(path.join(ROOT, "bench/results/latest.md"), markdown + "\n");
  process.stdout.write(markdown + "\n");
  log(`results: ${out}`);
  const failed = scenarios.filter((s) => s.error).map((s) => s.id);
  const lostSomething = integrity && (integrity.service.lost || integrity.service.duplicated || integrity.floor.lost || integrity.floor.duplicated);
  if (failed.length) log(`scenarios that failed: ${failed.join(", ")}`);
  if (lostSomething) log(`S4 integrity check failed: ${JSON.stringify(integrity)}`);
  // The processes' logs are kept only when something failed (or with --keep).
  if (!failed.length && !lostSomething && !opts.keepDatabase) rmSync(logDir, { recursive: true, force: true });
  else log(`logs of the processes under test: ${logDir}`);
  process.exitCode = failed.length || lostSomething ? 1 : 0;
}

main().catch((err) => {
  log(`bench failed: ${err?.stack ?? err}`);
  process.exit(1);
});
