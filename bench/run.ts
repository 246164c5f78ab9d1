// `npm run bench` (full), `npm run bench -- --quick` (a minute or two),
// `npm run bench -- --smoke` (seconds, tiny data): starts the service on a
// fresh database with a generated data set, runs the scenarios S1-S8 (and S2
// at larger scales), writes bench/results/<date>.json and prints a Markdown
// table on stdout (progress goes to stderr). See bench/README.md.
import "./lib/env.ts";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { signToken } from "../src/auth.ts";
import { parseOptions, type Options } from "./lib/options.ts";
import { analyze, closeBenchOrders, generateBaseData, openBenchDatabase, recreateDatabase, redact, tableCounts, type BenchDatabase } from "./lib/db.ts";
import { ROOT, readyByHttp, readyByIpc, startChild, type Child } from "./lib/proc.ts";
import { DEMO, type Ctx, type ScenarioResult } from "./lib/context.ts";
import { machineFacts } from "./lib/machine.ts";
import { addRatios, mainTable, notesSection } from "./lib/report.ts";
import { sig } from "./lib/stats.ts";
import { useRateGenerator } from "./lib/load.ts";
import { setPostgresBackend } from "./lib/cpu.ts";
import { s1 } from "./scenarios/s1Http.ts";
import { s2, s2Scale } from "./scenarios/s2Read.ts";
import { s3 } from "./scenarios/s3Write.ts";
import { s4 } from "./scenarios/s4Callbacks.ts";
import { s5 } from "./scenarios/s5Jobs.ts";
import { s6 } from "./scenarios/s6Fanout.ts";
import { s7 } from "./scenarios/s7Cost.ts";
import { s8 } from "./scenarios/s8Cache.ts";

const log = (msg: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

function scaleTable(s: ScenarioResult | undefined, first: ScenarioResult | undefined): string {
  if (!s) return "";
  const lines = ["| Orders | Case | Variant | req/s | p50 ms | p99 ms |", "|---:|---|---|---:|---:|---:|"];
  const points = (s.points as Array<{ orders: number }> | undefined) ?? [];
  const rows = [...(first?.rows ?? []).filter((r) => r.variant !== "peer"), ...s.rows];
  for (const r of rows) {
    const scale = /@(\d+)x$/.exec(r.case)?.[1];
    const orders = scale ? points.find((p) => (p as any).scale === Number(scale))?.orders : points[0]?.orders;
    lines.push(`| ${orders ?? "?"} | ${r.case.replace(/ @\d+x$/, "")} | ${r.variant} | ${sig(r.opsPerSec)} | ${r.p50?.toFixed(2)} | ${r.p99?.toFixed(2)} |`);
  }
  const slopes = s.slopes as Record<string, { slope: number | null }> | undefined;
  if (slopes) {
    lines.push("", "| Grows with the order count as orders^slope (log-log fit; 0 flat, 1 linear) | slope |", "|---|---:|");
    for (const [k, v] of Object.entries(slopes)) lines.push(`| ${k} | ${sig(v.slope, 2) ?? "n/a"} |`);
  }
  return lines.join("\n");
}

async function main() {
  const opts: Options = parseOptions(process.argv.slice(2));
  useRateGenerator(opts.rateGenerator);
  const started = new Date();
  const stamp = started.toISOString().replace(/[:.]/g, "-").slice(0, 19);
  const out = opts.out ?? path.join(ROOT, "bench/results", `${stamp}${opts.profile === "full" ? "" : `-${opts.profile}`}.json`);
  const logDir = mkdtempSync(path.join(os.tmpdir(), "cafe-bench-"));
  log(`${opts.profile} run; the processes log to ${logDir} (removed after a run without failures)`);

  const db: BenchDatabase = await openBenchDatabase(
    opts.databaseUrl ?? process.env.BENCH_DATABASE_URL,
    opts.profile === "smoke" ? "cafe_bench_smoke" : "cafe_bench",
  );
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
    log(`schema and demo data in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    root = new pg.Client({ connectionString: db.url });
    await root.connect();
    facts = await machineFacts(root, db.server);
    setPostgresBackend((await root.query("select pg_backend_pid() as pid")).rows[0].pid);
    t = Date.now();
    await generateBaseData(root, opts);
    await analyze(root);
    counts = await tableCounts(root);
    log(`generated data in ${((Date.now() - t) / 1000).toFixed(1)} s: ${JSON.stringify(counts)}`);

    const secrets = {
      JWT_SECRET: `bench-jwt-${randomBytes(24).toString("hex")}`,
      WEBHOOK_TOKEN: `bench-webhook-${randomBytes(12).toString("hex")}`,
      SIGNING_SECRET: `bench-signing-${randomBytes(12).toString("hex")}`,
    };
    const serviceEnv: Record<string, string> = {
      NODE_ENV: "production",
      GRAPHILE_ENV: "production",
      DATABASE_URL: db.url,
      // Given explicitly so production mode accepts the development role
      // password (the roles are cluster-wide: the bench must not change it).
      DATABASE_OWNER_URL: db.urls.owner,
      DATABASE_AUTHENTICATOR_URL: db.urls.authenticator,
      DATABASE_POOL_SIZE: String(opts.poolSize),
      ...secrets,
      DEMO_DATA: "true",
      HOST: "127.0.0.1",
      LOG_LEVEL: opts.logLevel,
      GRAPHIQL: "false",
      // Every protection stays on, as in production: the rate limiter runs
      // on every request, with a limit no bench load reaches (all the load
      // comes from one address), and the access log is written at info level
      // to stdout, which goes to the child's log file.
      GRAPHQL_RATE_LIMIT: "1000000",
      GRAPHQL_RATE_BURST: "1000000",
      // The scenarios send their own documents (production's default, staff,
      // would refuse them for anonymous callers and customers).
      AD_HOC_QUERIES: "any",
      // S6 opens 1,000 sockets from one address.
      WS_MAX_SOCKETS_PER_SOURCE: "1000000",
      HTTP_MAX_CONNECTIONS_PER_SOURCE: "1000000",
      // S1-S7 measure uncached reads; S8 starts a service with the live cache on.
      LIVE_CACHE_MAX_ENTRIES: "0",
    };
    const benchEnv: Record<string, string> = {
      NODE_ENV: "production",
      GRAPHILE_ENV: "production",
      ...secrets,
      BENCH_AUTHENTICATOR_URL: db.urls.authenticator,
      BENCH_OWNER_URL: db.urls.owner,
      DATABASE_POOL_SIZE: String(opts.poolSize),
    };

    log("starting the service (API only), the stock PostGraphile peer and the floors");
    t = Date.now();
    const cpuProf = (name: string) => (opts.cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(opts.cpuProfDir)}`, `--cpu-prof-name=${name}-${process.pid}.cpuprofile`] : []);
    const service = await startChild({ name: "service", script: path.join(ROOT, "src/main.ts"), args: ["--api"], env: serviceEnv, logDir, capture: true, nodeArgs: cpuProf("service") });
    children.push(service);
    const stock = await startChild({
      name: "stock-postgraphile",
      script: path.join(ROOT, "bench/servers/stockPostgraphile.ts"),
      env: benchEnv,
      nodeArgs: cpuProf("stock"),
      logDir,
      capture: true,
    });
    children.push(stock);
    const floorSql = await startChild({ name: "floor-sql", script: path.join(ROOT, "bench/servers/floorSql.ts"), env: benchEnv, logDir, capture: true });
    children.push(floorSql);
    const floorHttp = await startChild({ name: "floor-http", script: path.join(ROOT, "bench/servers/floorHttp.ts"), env: benchEnv, logDir });
    children.push(floorHttp);
    await Promise.all([readyByHttp(service, "/healthz"), readyByIpc(stock), readyByIpc(floorSql), readyByIpc(floorHttp)]);
    log(`ready in ${((Date.now() - t) / 1000).toFixed(1)} s`);

    const { rows: customerRows } = await root.query("select id::text from app_private.accounts where email like '%@bench.example' order by email limit 16");
    const { rows: coffeeRows } = await root.query("select id::text from app_public.coffees where available order by id");
    const token = (id: string, role: "customer" | "barista" | "admin") => signToken(secrets.JWT_SECRET, { userId: id, role, signInId: randomUUID() }, 3600).token;
    const ctx: Ctx = {
      opts,
      db,
      root,
      secrets,
      serviceEnv,
      benchEnv,
      logDir,
      service,
      stock,
      floorSql,
      floorHttp,
      tokens: {
        barista: token(DEMO.barista, "barista"),
        alice: token(DEMO.alice, "customer"),
        admin: token(DEMO.admin, "admin"),
        customers: customerRows.map((r) => ({ id: r.id, token: token(r.id, "customer") })),
      },
      coffeeIds: coffeeRows.map((r) => r.id),
      shared: {},
      log,
    };

    const wanted = (id: string) => !opts.only || opts.only.has(id);
    const plan: Array<[string, string, () => Promise<ScenarioResult>]> = [
      ["S1", "HTTP floor", () => s1(ctx)],
      ["S2", "nested read", () => s2(ctx)],
      ["S3", "write", () => s3(ctx)],
      ["S4", "callback ingest", () => s4(ctx)],
      ["S5", "jobs", () => s5(ctx)],
      // S5 leaves paid and PREPARING orders behind: the later scenarios see the base data only.
      ["S6", "fan-out", async () => (await closeBenchOrders(ctx.root), s6(ctx))],
      ["S7", "cost check", async () => (await closeBenchOrders(ctx.root), s7(ctx))],
      ["S8", "live cache", async () => (await closeBenchOrders(ctx.root), s8(ctx))],
    ];
    for (const [id, title, fn] of plan) {
      if (!wanted(id) && !(id === "S4" && wanted("S5"))) continue;
      const t0 = Date.now();
      log(`${id} ${title}`);
      try {
        const r = await fn();
        r.seconds = (Date.now() - t0) / 1000;
        scenarios.push(r);
      } catch (e) {
        log(`${id} failed: ${(e as Error).stack ?? e}`);
        scenarios.push({ id, title, rows: [], notes: [], error: String((e as Error).message ?? e), seconds: (Date.now() - t0) / 1000 });
      }
    }
    const s2first = scenarios.find((s) => s.id === "S2" && !s.error);
    if (s2first && opts.scales.some((s) => s > 1)) {
      const t0 = Date.now();
      log("S2 at larger scales");
      await closeBenchOrders(root);
      try {
        const r = await s2Scale(ctx, s2first);
        r.seconds = (Date.now() - t0) / 1000;
        scenarios.push(r);
      } catch (e) {
        log(`S2x failed: ${(e as Error).stack ?? e}`);
        scenarios.push({ id: "S2x", title: "nested read at larger scales", rows: [], notes: [], error: String((e as Error).message ?? e) });
      }
    }
  } finally {
    await Promise.allSettled(children.map((c) => c.stop()));
    if (root) await root.end().catch(() => {});
    if (!opts.keepDatabase) {
      const { dropDatabase } = await import("../src/db/database.ts");
      await dropDatabase(db.urls.root, db.name).catch((e) => log(`could not drop ${db.name}: ${e.message}`));
    }
    await db.stopServer().catch(() => {});
  }

  const allRows = scenarios.flatMap((s) => s.rows);
  addRatios(allRows);
  const finished = new Date();
  const f = facts!;
  const header = [
    `## Café API benchmarks: ${opts.profile} run, ${started.toISOString().slice(0, 16).replace("T", " ")} UTC (${((finished.getTime() - started.getTime()) / 1000).toFixed(0)} s)`,
    "",
    `Machine: ${f.cores} cores (${f.cpuModel}), ${f.memoryGb} GB, ${f.os}; Node ${f.node}; PostgreSQL ${f.postgres} (${f.postgresServer} server; shared_buffers ${f.postgresSettings.shared_buffers}, random_page_cost ${f.postgresSettings.random_page_cost}, synchronous_commit ${f.postgresSettings.synchronous_commit}); postgraphile ${f.packages.postgraphile}, grafast ${f.packages.grafast}, graphile-worker ${f.packages["graphile-worker"]}, autocannon ${f.packages.autocannon}; commit ${f.gitCommit.slice(0, 10)}.`,
    `Data at 1x: ${Object.entries(counts)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}.`,
    `Load: autocannon in the bench process; every server is a child process (NODE_ENV=production, LOG_LEVEL=${opts.logLevel}); throughput closed loop with ${opts.connections} connections for ${opts.peakSeconds} s; latency at one fixed rate per case (${opts.rateGenerator === "paced" ? "open loop, evenly spaced, latency from each request's due time" : "autocannon overallRate"}), ${opts.latencyLoad} x the service's peak, the same for every variant, for ${opts.latencySeconds} s. DATABASE_POOL_SIZE ${opts.poolSize} for the service, the floors and the peer. ×floor: throughput / the floor's, p50 / the floor's. CPU: percent of one core during the closed-loop run, for the process answering, this PostgreSQL cluster, the bench process, and everything else on the machine (other work disturbs the figures).`,
  ].join("\n");
  const markdown = [
    header,
    "",
    mainTable(scenarios.filter((s) => s.id !== "S2x")),
    "",
    ...(scenarios.some((s) => s.id === "S2x")
      ? [
          "### S2 by order count",
          "",
          scaleTable(
            scenarios.find((s) => s.id === "S2x"),
            scenarios.find((s) => s.id === "S2"),
          ),
          "",
        ]
      : []),
    "### Notes",
    "",
    notesSection(scenarios),
  ].join("\n");
  const integrity = (scenarios.find((s) => s.id === "S4") as any)?.integrity ?? null;
  const result = {
    version: 1,
    profile: opts.profile,
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    options: { ...opts, only: opts.only ? [...opts.only] : undefined, databaseUrl: opts.databaseUrl ? redact(opts.databaseUrl) : undefined },
    machine: f,
    database: { server: db.server, name: db.name, counts },
    scenarios,
    integrity,
    markdown,
  };
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(result, null, 2) + "\n");
  process.stdout.write(markdown + "\n");
  log(`results: ${out}`);
  const failed = scenarios.filter((s) => s.error).map((s) => s.id);
  const lostSomething = integrity && (integrity.service.lost || integrity.service.duplicated || integrity.floor.lost || integrity.floor.duplicated);
  if (failed.length) log(`scenarios that failed: ${failed.join(", ")}`);
  // The processes' logs are kept only when something failed (or with --keep).
  if (!failed.length && !lostSomething && !opts.keepDatabase) rmSync(logDir, { recursive: true, force: true });
  else log(`logs of the processes under test: ${logDir}`);
  if (lostSomething) log(`S4 integrity check failed: ${JSON.stringify(integrity)}`);
  process.exitCode = failed.length || lostSomething ? 1 : 0;
}

main().catch((err) => {
  log(`bench failed: ${err?.stack ?? err}`);
  process.exit(1);
});
