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

const f = (x: number | null | undefined, d = 3) => (x == null || !Number.isFinite(x) ? "n/a" : String(sig(x, d)));
const ms = (x: number | null | undefined) => (x == null || !Number.isFinite(x) ? "n/a" : x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0));
const esc = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

export function mainTable(scenarios: ScenarioResult[]): string {
  const lines = [
    "| Scenario | Case | Variant | Throughput | p50 ms | p99 ms | Latency load | ×floor ops/s | ×floor p50 | SQL stmts / round trips | CPU % server / pg / bench / other | Errors |",
    "|---|---|---|---:|---:|---:|---|---:|---:|---|---|---:|",
  ];
  for (const s of scenarios) {
    if (s.error && s.rows.length === 0) {
      lines.push(`| ${s.id} | ${esc(s.title)} | – | failed: ${esc(s.error.slice(0, 120))} | | | | | | | | |`);
      continue;
    }
    for (const r of s.rows) {
      lines.push(
        `| ${r.scenario} | ${esc(r.case)} | ${r.variant}: ${esc(r.label)} | ${f(r.opsPerSec)} ${r.opsUnit} | ${ms(r.p50)} | ${ms(r.p99)} | ${esc(r.latencyLoad)} | ${r.variant === "floor" ? "1" : f(r.ratioOps, 2)} | ${r.variant === "floor" ? "1" : f(r.ratioP50, 2)} | ${r.sql ? `${r.sql.statements} / ${r.sql.roundTrips}` : ""} | ${r.cpu ? `${r.cpu.server ?? "–"} / ${r.cpu.postgres} / ${r.cpu.bench} / ${r.cpu.other ?? "–"}` : ""} | ${r.errors ?? 0} |`,
      );
    }
  }
  return lines.join("\n");
}

export function notesSection(scenarios: ScenarioResult[]): string {
  const out: string[] = [];
  for (const s of scenarios) {
    const rowNotes = s.rows.flatMap((r) => (r.notes ?? []).map((n) => `${r.case} / ${r.variant}: ${n}`));
    const all = [...s.notes, ...rowNotes, ...(s.error ? [`error: ${s.error}`] : [])];
    if (all.length === 0) continue;
    out.push(`**${s.id} ${s.title}**`);
    for (const n of all) out.push(`- ${n}`);
    out.push("");
  }
  return out.join("\n");
}
