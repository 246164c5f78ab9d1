// S7 cost check: how long the cost/depth check takes on the largest contract
// operation, against the same request with the check disabled. The limits
// come from env (MAX_QUERY_COST etc.), and a high limit does not switch the
// check off (the cost is still computed on every request), so it is measured
// in-process (bench/scenarios/costCheck.ts, a child process in production
// mode): queryCost() alone, the document rules, and the operation executed
// through Grafast with the service's middleware vs the same middleware
// without QueryCostPlugin.
import path from "node:path";
import type { Ctx, Row, ScenarioResult } from "../lib/context.ts";
import { ROOT, startChild, waitForMessage } from "../lib/proc.ts";

export async function s7(ctx: Ctx): Promise<ScenarioResult> {
  const child = await startChild({
    name: "cost-check",
    script: path.join(ROOT, "bench/scenarios/costCheck.ts"),
    env: { ...ctx.serviceEnv, BENCH_ITERATIONS: String(ctx.opts.s7Iterations) },
    logDir: ctx.logDir,
  });
  const r: any = await waitForMessage(child, (m) => m?.type === "result" || m?.type === "error", 180_000)
    .then((m: any) => (m.type === "error" ? Promise.reject(new Error(m.error)) : m.result))
    .finally(() => child.stop());
  const ex = r.execution;
  const caseName = `${r.largest.name} (${r.largest.file}, cost ${r.largest.cost}, as ${r.largest.viewer}), in-process Grafast`;
  const row = (variant: "service" | "floor", label: string, t: { mean: number; p50: number; p99: number }, latencyLoad: string, notes: string[]): Row => ({
    ...{ scenario: "S7", case: caseName, variant, label, opsPerSec: 1000 / t.mean, opsUnit: "req/s", throughputHow: "sequential, 1 / mean time" },
    ...{ p50: t.p50, p99: t.p99, latencyLoad, errors: 0, notes },
  });
  const rows = [
    row("service", "with the cost check (service middleware)", ex.withCheck, `sequential, ${ex.iterations} runs alternating with the floor`, [
      `queryCost() alone: p50 ${r.queryCostMs.p50.toFixed(3)} ms, p99 ${r.queryCostMs.p99.toFixed(3)} ms per request`,
    ]),
    row("floor", "same middleware without QueryCostPlugin", ex.withoutCheck, `sequential, ${ex.iterations} runs`, []),
  ];
  const costTable = (r.operations as any[]).map((o) => `${o.name}=${o.cost ?? "err"}${o.costMs ? ` (${(o.costMs.p50 * 1000).toFixed(0)} µs)` : ""}`).join(", ");
  return {
    id: "S7",
    title: "cost check",
    rows,
    notes: [
      `queryCost() on ${r.largest.name}: p50 ${(r.queryCostMs.p50 * 1000).toFixed(0)} µs, p99 ${(r.queryCostMs.p99 * 1000).toFixed(0)} µs: ${((r.queryCostMs.p50 / ex.withCheck.p50) * 100).toFixed(1)}% of the request's p50 in-process`,
      `document rules (depth, aliases, tokens: ${r.documentRules} rules): p50 ${(r.documentRulesMs.p50 * 1000).toFixed(0)} µs once per distinct document (grafserv caches validation), vs GraphQL's specified rules ${(r.specifiedRulesMs.p50 * 1000).toFixed(0)} µs`,
      `every contract operation's cost (queryCost p50): ${costTable}`,
      `extensions.cost present with the check: ${ex.costInExtensionsWith}, without: ${ex.costInExtensionsWithout} (proves the A/B switched the plugin)`,
    ],
    detail: r,
  };
}
