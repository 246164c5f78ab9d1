// What tracing costs S1 (the trusted `Ping`, `{ __typename }`), in one run:
// the service with tracing off, the same with tracing on (OTEL_* pointing at
// a local OTLP sink that answers 200 to everything), and, with
// `--without DIR`, a checkout of a commit without the tracing code path
// (its node_modules may be a symlink to this one's). Rounds alternate the
// variants; each is autocannon, 16 connections, closed loop; the figure is
// the median of the rounds' requests/s, reported as ratios to "off". As
// throughput on a small machine moves with the scheduler (the load
// generator shares its cores), each round also reads the server process's
// own CPU time (/proc/PID/stat, user + system) per request answered: the
// steadier figure the "costs nothing measurable" check is made on.
//
//   npm run bench:tracing -- [--rounds 3] [--seconds 4] [--without /tmp/pre-tracing]
//
// Needs a superuser DATABASE_URL (BENCH_DATABASE_URL), else an embedded
// PostgreSQL in .data/bench-tracing-pg on port 54448 (EMBEDDED_PG_PORT).
import { spawn, type ChildProcess } from "node:child_process";
import http from "node:http";
import path from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { loadConfig } from "../src/config.ts";
import { prepareDatabase, resolveDatabaseUrls, startEmbeddedPostgres } from "../src/db/database.ts";
import { trustedBody } from "./lib/context.ts";
import { processCpuTicks } from "./lib/cpu.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const { values } = parseArgs({ options: { rounds: { type: "string", default: "3" }, seconds: { type: "string", default: "4" }, without: { type: "string" } } });
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);

let superuser = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL;
let stopEmbedded = async () => {};
if (!superuser) {
  const embedded = await startEmbeddedPostgres({ EMBEDDED_PG_DIR: path.join(ROOT, ".data", "bench-tracing-pg"), EMBEDDED_PG_PORT: Number(process.env.EMBEDDED_PG_PORT ?? 54448) });
  superuser = embedded.url.replace(/\/postgres$/, "/cafe_bench_tracing");
  stopEmbedded = embedded.stop;
}
const config = loadConfig({ ...process.env, NODE_ENV: "test", DATABASE_URL: superuser, DATABASE_ROLE_PASSWORD: "bench-tracing-role-password" });
const urls = await resolveDatabaseUrls(config, superuser);
await prepareDatabase(urls, config, { demoData: true });

// The OTLP sink: reads and drops every export.
const sink = http.createServer((req, res) => req.resume().on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}")));
await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
const sinkUrl = `http://127.0.0.1:${(sink.address() as { port: number }).port}`;

interface Service {
  name: string;
  proc: ChildProcess;
  port: number;
}

async function start(name: string, root: string, port: number, env: Record<string, string>): Promise<Service> {
  const proc = spawn(process.execPath, [path.join(root, "src", "main.ts"), "--api"], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: "production",
      JWT_SECRET: "bench-tracing-jwt-secret-of-32-characters-at-least",
      WEBHOOK_TOKEN: "bench-tracing-webhook-token",
      SIGNING_SECRET: "bench-tracing-signing-secret",
      HOST: "127.0.0.1",
      PORT: String(port),
      LOG_LEVEL: "info",
      GRAPHQL_RATE_LIMIT: "0",
      METRICS_TOKEN: "bench-tracing-metrics",
      ...(env.DATABASE_URL ? null : { DATABASE_URL: urls.owner, DATABASE_AUTHENTICATOR_URL: urls.authenticator }),
      ...env,
    },
  });
  for (let i = 0; i < 200; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { name, proc, port };
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`${name} did not start`);
}

const body = trustedBody("Ping");
const variants: Service[] = [];
try {
  variants.push(await start("off", ROOT, 55348, {}));
  variants.push(await start("on", ROOT, 55398, { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }));
  // Its own database (its migrations are older), made by its own start-up as
  // a superuser: the bench database's name with `_without`.
  const own = new URL(superuser);
  own.pathname = `${own.pathname}_without`;
  if (values.without)
    variants.push(await start("without", path.resolve(values.without), 55498, { DATABASE_URL: own.toString(), DATABASE_ROLE_PASSWORD: "bench-tracing-role-password", DEMO_DATA: "true" }));
  const results = new Map<string, Round[]>(variants.map((v) => [v.name, []]));
  // Warm-up, then alternating rounds.
  for (const v of variants) await run(v, 1);
  for (let r = 0; r < rounds; r++) {
    for (const v of variants) results.get(v.name)!.push(await run(v, seconds));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const off = results.get("off")!;
  const offRate = median(off.map((x) => x.rate));
  const offCpu = median(off.map((x) => x.cpuMicros));
  console.log(`S1 trusted Ping, ${rounds} rounds x ${seconds} s, 16 connections (medians of rounds):`);
  for (const [name, xs] of results) {
    const rate = median(xs.map((x) => x.rate));
    const cpu = median(xs.map((x) => x.cpuMicros));
    console.log(
      `  ${name.padEnd(8)} ${rate.toFixed(0).padStart(7)} req/s  x${(rate / offRate).toFixed(3)} of off   ${cpu.toFixed(1).padStart(6)} µs CPU/request  x${(cpu / offCpu).toFixed(3)} of off`,
    );
    console.log(`           rounds: ${xs.map((x) => `${x.rate.toFixed(0)}/${x.cpuMicros.toFixed(0)}µs`).join(", ")}`);
  }
  if (results.has("without")) {
    const without = results.get("without")!;
    const cost = offCpu / median(without.map((x) => x.cpuMicros)) - 1;
    const rateCost = 1 - offRate / median(without.map((x) => x.rate));
    console.log(
      `tracing off costs ${(cost * 100).toFixed(1)}% more server CPU per request than the build without it (target < 2%): ${cost < 0.02 ? "met" : "NOT met"}; throughput ${(rateCost * 100).toFixed(1)}% (noisier)`,
    );
  }
} finally {
  for (const v of variants) v.proc.kill("SIGTERM");
  sink.close();
  await stopEmbedded();
}

interface Round {
  /** Requests answered a second. */
  rate: number;
  /** The server process's CPU time (user + system) per request, in microseconds. */
  cpuMicros: number;
}

function run(v: Service, duration: number): Promise<Round> {
  const before = processCpuTicks(v.proc.pid!);
  return new Promise((resolve, reject) => {
    autocannon({ url: `http://127.0.0.1:${v.port}/graphql`, method: "POST", headers: { "content-type": "application/json" }, body, connections: 16, duration }, (err, result) => {
      if (err) return reject(err);
      if (result.non2xx || result.errors) return reject(new Error(`${v.name}: ${result.non2xx} non-2xx, ${result.errors} errors`));
      const ticks = processCpuTicks(v.proc.pid!) - before;
      resolve({ rate: result.requests.average, cpuMicros: (ticks * 10_000) / Math.max(1, result.requests.total) });
    });
  });
}
