// The Markdown printed at the end of a run (also stored in the JSON).
import type { Row, ScenarioResult } from "./context.ts";
import { ratio, sig } from "./stats.ts";

/** Each row's ratios to the floor of its (scenario, case). */
export function addRatios(rows: Row[]): void {
  for (const row of rows) {
    const floor = rows.find((r) => r.scenario === row.scenario && r.case === row.case && r.variant === "floor");
    if (!floor) continue;
    row.ratioOps = ratio(row.opsPerSec, floor.opsPerSec);
    row.ratioP50 = ratio(row.p50, floor.p50);
  }
}

const f = (x: number | null | undefined, d = 3) => String(sig(x, d) ?? "n/a");
const ms = (x: number | null | undefined) => (x == null || !Number.isFinite(x) ? "n/a" : x.toFixed(x < 10 ? 2 : x < 100 ? 1 : 0));
const esc = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

export function mainTable(scenarios: ScenarioResult[]): string {
  const lines = [
    "| Scenario | Case | Variant | Throughput | p50 ms | p99 ms | Latency load | ×floor ops/s | ×floor p50 | SQL stmts / round trips | CPU % server / pg / bench / other | Errors |",
    "|---|---|---|---:|---:|---:|---|---:|---:|---|---|---:|",
  ];
  for (const s of scenarios) {
    if (s.error && s.rows.length === 0) lines.push(`| ${s.id} | ${esc(s.title)} | – | failed: ${esc(s.error.slice(0, 120))} | | | | | | | | |`);
    for (const r of s.rows) {
      const floor = r.variant === "floor";
      const cpu = r.cpu ? `${r.cpu.server ?? "–"} / ${r.cpu.postgres} / ${r.cpu.bench} / ${r.cpu.other ?? "–"}` : "";
      lines.push(
        `| ${r.scenario} | ${esc(r.case)} | ${r.variant}: ${esc(r.label)} | ${f(r.opsPerSec)} ${r.opsUnit} | ${ms(r.p50)} | ${ms(r.p99)} | ${esc(r.latencyLoad)} | ${floor ? "1" : f(r.ratioOps, 2)} | ${floor ? "1" : f(r.ratioP50, 2)} | ${r.sql ? `${r.sql.statements} / ${r.sql.roundTrips}` : ""} | ${cpu} | ${r.errors ?? 0} |`,
      );
    }
  }
  return lines.join("\n");
}

/** S2 at every scale (the 1x rows from S2 itself, without the peer) and the growth slopes. */
export function scaleTable(s: ScenarioResult, first: ScenarioResult | undefined): string {
  const lines = ["| Orders | Case | Variant | req/s | p50 ms | p99 ms |", "|---:|---|---|---:|---:|---:|"];
  const points = (s.points as Array<{ scale: number; orders: number }>) ?? [];
  for (const r of [...(first?.rows ?? []).filter((r) => r.variant !== "peer"), ...s.rows]) {
    const scale = Number(/@(\d+)x$/.exec(r.case)?.[1] ?? 1);
    lines.push(`| ${points.find((p) => p.scale === scale)?.orders ?? "?"} | ${r.case.replace(/ @\d+x$/, "")} | ${r.variant} | ${sig(r.opsPerSec)} | ${ms(r.p50)} | ${ms(r.p99)} |`);
  }
  lines.push("", "| Grows with the order count as orders^slope (log-log fit; 0 flat, 1 linear) | slope |", "|---|---:|");
  for (const [k, v] of Object.entries((s.slopes as Record<string, { slope: number | null }>) ?? {})) lines.push(`| ${k} | ${f(v.slope, 2)} |`);
  return lines.join("\n");
}

export function notesSection(scenarios: ScenarioResult[]): string {
  const out: string[] = [];
  for (const s of scenarios) {
    const all = [...s.notes, ...s.rows.flatMap((r) => (r.notes ?? []).map((n) => `${r.case} / ${r.variant}: ${n}`)), ...(s.error ? [`error: ${s.error}`] : [])];
    if (all.length) out.push(`**${s.id} ${s.title}**`, ...all.map((n) => `- ${n}`), "");
  }
  return out.join("\n");
}
