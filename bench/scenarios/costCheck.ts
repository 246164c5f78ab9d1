// S7, run as a child process (production mode, like the service): builds the
// service's schema in-process from src/preset.ts, then
//  1. computes every contract operation's cost with plugins/QueryCostPlugin/'s
//     queryCost() and times it (microseconds per call);
//  2. times the document rules the plugin adds to grafserv's validation
//     (depth, aliases, tokens: run once per distinct document, then cached);
//  3. executes the largest query operation through Grafast in-process, with
//     the service's middleware and with the same middleware minus the
//     QueryCostPlugin, alternating, and reports both.
// Results go back over IPC.
import "../lib/env.ts";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { grafast } from "postgraphile/grafast";
import { parse, validate, specifiedRules, Kind, type OperationDefinitionNode, type DocumentNode } from "postgraphile/graphql";
import { Middleware, orderedApply } from "graphile-config";
import { postgraphile } from "postgraphile";
import { loadConfig } from "../../src/config.ts";
import { makePreset } from "../../src/preset.ts";
import { VIEWER } from "../../src/http/viewer.ts";
import { queryCost } from "../../plugins/QueryCostPlugin/index.ts";
import type { Viewer } from "../../common/services.ts";
import { summarize, type Summary } from "../lib/stats.ts";
import { DEMO } from "../lib/context.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const viewer = (role: Viewer["role"], userId: string): Viewer => ({ role, userId, signInId: "00000000-0000-4000-8000-000000000000", exp: 4e9 });
/** Who sends each contract file's operations. */
const VIEWER_OF: Record<string, Viewer | null> = {
  admin: viewer("admin", DEMO.admin),
  barista: viewer("barista", DEMO.barista),
  pos: viewer("barista", DEMO.barista),
  mobile: viewer("customer", DEMO.alice),
  kiosk: null,
};
const SAMPLE_VARIABLES: Record<string, Record<string, unknown>> = {
  CoffeeDetail: { id: "40000000-0000-4000-8000-000000000003" },
  OneOrder: { id: "00000000-0000-4000-8000-0000000a0002" },
  PosCustomer: { id: DEMO.alice },
  Search: { q: "latte" },
  TrackOrder: { id: "00000000-0000-4000-8000-0000000a0002" },
  StatusFeed: { orderId: "00000000-0000-4000-8000-0000000a0002" },
  Advance: { id: "00000000-0000-4000-8000-0000000a0002", status: "BREWING" },
  PlaceOrder: { input: { items: [{ coffeeId: "40000000-0000-4000-8000-000000000003", quantity: 1 }] } },
  CancelMine: { id: "00000000-0000-4000-8000-0000000a0001" },
  UpdateProfile: { input: { name: "x" } },
  AddCoffee: { name: "x", price: 1 },
  Reprice: { id: "40000000-0000-4000-8000-000000000003", newPrice: 3 },
  PosOrder: { coffeeId: "40000000-0000-4000-8000-000000000003", quantity: 1 },
};

function timeIt(fn: () => unknown, iterations: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t = process.hrtime.bigint();
    fn();
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return out;
}

async function main() {
  const iterations = Number(process.env.BENCH_ITERATIONS ?? 200);
  const config = loadConfig(process.env);
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_AUTHENTICATOR_URL, max: 4 });
  const preset = makePreset({
    config,
    pool,
    viewerFromConnectionParams: () => null,
    clientAddress: () => "127.0.0.1",
  });
  const pgl = postgraphile(preset);
  const { schema, resolvedPreset } = await pgl.getSchemaResult();

  // 1. Every operation's cost, and the time queryCost() takes.
  type Operation = { file: string; name: string; kind: string; source: string; document: DocumentNode; cost: number | null; costMs: Summary | null; error?: string };
  const operations: Operation[] = [];
  const dir = path.join(ROOT, "contract/operations");
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".graphql"))) {
    const source = readFileSync(path.join(dir, file), "utf8");
    const document = parse(source);
    for (const def of document.definitions) {
      if (def.kind !== Kind.OPERATION_DEFINITION || !def.name) continue;
      const name = def.name.value;
      const vars = SAMPLE_VARIABLES[name] ?? {};
      let cost: number | null = null;
      let costMs = null;
      let error: string | undefined;
      try {
        cost = queryCost(schema, document, vars, name, config.DEFAULT_LIST_SIZE);
        costMs = summarize(timeIt(() => queryCost(schema, document, vars, name, config.DEFAULT_LIST_SIZE), iterations));
      } catch (e) {
        error = (e as Error).message;
      }
      operations.push({ file: file.replace(".graphql", ""), name, kind: (def as OperationDefinitionNode).operation, source, document, cost, costMs, error });
    }
  }
  const queries = operations.filter((o) => o.kind === "query" && o.cost !== null);
  const largest = queries.reduce((a, b) => ((b.cost ?? 0) > (a.cost ?? 0) ? b : a));

  // 2. The document rules (cached per document by grafserv).
  const rules: any[] = [];
  for (const p of resolvedPreset.plugins ?? []) {
    const setPreset = (p as any).grafserv?.middleware?.setPreset;
    if (setPreset) {
      const event = { validationRules: [] as any[], resolvedPreset };
      try {
        setPreset(() => undefined, event);
      } catch {
        // other plugins' setPreset may need more
      }
      rules.push(...event.validationRules);
    }
  }
  const rulesMs = summarize(timeIt(() => validate(schema, largest.document, rules), Math.min(iterations, 200)));
  const specMs = summarize(timeIt(() => validate(schema, largest.document, specifiedRules), Math.min(iterations, 200)));

  // 3. The largest query, executed with and without the cost check.
  const middlewareOf = (plugins: readonly GraphileConfig.Plugin[]) => {
    let mw: Middleware<any> | null = null;
    orderedApply(
      plugins,
      (p) => p.grafast?.middleware,
      (name, fn) => (mw ??= new Middleware()).register(name as any, fn as any),
    );
    return mw;
  };
  const withCheck = middlewareOf(resolvedPreset.plugins ?? []);
  const withoutCheck = middlewareOf((resolvedPreset.plugins ?? []).filter((p) => p.name !== "QueryCostPlugin"));
  const asViewer = VIEWER_OF[largest.file] ?? null;
  const run = async (middleware: Middleware<any> | null) => {
    const req: any = { headers: {}, socket: { remoteAddress: "127.0.0.1" }, connection: { remoteAddress: "127.0.0.1" }, [VIEWER]: asViewer };
    const t = process.hrtime.bigint();
    const result: any = await grafast({
      schema,
      source: largest.source,
      operationName: largest.name,
      variableValues: SAMPLE_VARIABLES[largest.name] ?? {},
      resolvedPreset,
      requestContext: { node: { req, res: {} } } as any,
      middleware,
    } as any);
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    if (result?.errors?.length) throw new Error(`${largest.name} failed: ${JSON.stringify(result.errors).slice(0, 300)}`);
    return { ms, hasCost: Boolean(result?.extensions?.cost) };
  };
  // Warm-up, then alternating runs; extensions.cost in one and not the other proves the switch.
  for (let i = 0; i < Math.min(20, iterations); i++) await run(withCheck).then(() => run(withoutCheck));
  const runs: Array<[Awaited<ReturnType<typeof run>>, Awaited<ReturnType<typeof run>>]> = [];
  const n = Math.max(10, Math.round(iterations / 4));
  for (let i = 0; i < n; i++) runs.push([await run(withCheck), await run(withoutCheck)]);
  process.send?.({
    type: "result",
    result: {
      operations: operations.map(({ file, name, kind, cost, costMs, error }) => ({ file, name, kind, cost, costMs, error })),
      largest: { file: largest.file, name: largest.name, cost: largest.cost, viewer: asViewer?.role ?? "anonymous" },
      queryCostMs: largest.costMs,
      documentRulesMs: rulesMs,
      documentRules: rules.length,
      specifiedRulesMs: specMs,
      execution: {
        withCheck: summarize(runs.map(([x]) => x.ms)),
        withoutCheck: summarize(runs.map(([, y]) => y.ms)),
        iterations: n,
        costInExtensionsWith: runs.some(([x]) => x.hasCost),
        costInExtensionsWithout: runs.some(([, y]) => y.hasCost),
      },
    },
  });
  await pgl.release();
  await pool.end();
}

main().catch((err) => {
  process.send?.({ type: "error", error: String(err?.stack ?? err) });
  process.exitCode = 1;
});
