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

/**
 * Issue targets, each a ratio measured side by side in this run: "ad hoc" is
 * the service's row, "trusted" its documentId row (variant extra), "stock"
 * the peer. S6 compares the time until the last subscriber has the change
 * (p50 of the changes); the others compare throughput.
 */
const TARGETS: Array<{
  what: string;
  scenario: string;
  case: RegExp;
  variant: Row["variant"];
  /** Which row of that variant (several extras), by its label. */
  label?: RegExp;
  against: Row["variant"] | null;
  againstLabel?: RegExp;
  /** ops, p50: a ratio to `against`; p99: the row's own p99 in ms, at most `goal`. */
  by: "ops" | "p50" | "p99";
  goal: number;
}> = [
  { what: "S1 ad hoc / stock", scenario: "S1", case: /./, variant: "service", against: "peer", by: "ops", goal: 1.0 },
  { what: "S1 trusted / stock", scenario: "S1", case: /./, variant: "extra", against: "peer", by: "ops", goal: 1.5 },
  { what: "S2 CoffeeDetail ad hoc / stock", scenario: "S2", case: /^CoffeeDetail as alice$/, variant: "service", against: "peer", by: "ops", goal: 1.1 },
  { what: "S2 CoffeeDetail trusted / stock", scenario: "S2", case: /^CoffeeDetail as alice$/, variant: "extra", against: "peer", by: "ops", goal: 1.5 },
  { what: "S2 CoffeeDetail trusted / floor", scenario: "S2", case: /^CoffeeDetail as alice$/, variant: "extra", against: "floor", by: "ops", goal: 0.8 },
  { what: "S2 BaristaQueue ad hoc / stock", scenario: "S2", case: /^BaristaQueue as barista$/, variant: "service", against: "peer", by: "ops", goal: 1.3 },
  { what: "S2 BaristaQueue trusted / floor", scenario: "S2", case: /^BaristaQueue as barista$/, variant: "extra", against: "floor", by: "ops", goal: 0.8 },
  { what: "S3 createOrder / floor", scenario: "S3", case: /./, variant: "service", against: "floor", by: "ops", goal: 0.9 },
  { what: "S4 callbacks / floor", scenario: "S4", case: /./, variant: "service", against: "floor", by: "ops", goal: 0.9 },
  { what: "S6 1,000 subscribers: time to the last / floor's (at most)", scenario: "S6", case: /^1000 subscribers$/, variant: "service", against: "floor", by: "p50", goal: 0.5 },
  { what: "S6 10,000 subscribers: time to the last / floor's (at most)", scenario: "S6", case: /^10000 subscribers$/, variant: "service", against: "floor", by: "p50", goal: 0.5 },
  { what: "S8 kiosk menu, live cache / stock", scenario: "S8", case: /./, variant: "service", against: "peer", by: "ops", goal: 3 },
  { what: "S8 kiosk menu, Apollo Client 4's Accept / no Accept", scenario: "S8", case: /./, variant: "extra", label: /Apollo/, against: "service", by: "ops", goal: 0.9 },
  { what: "S8 kiosk menu uncached (live cache off) / stock", scenario: "S8", case: /./, variant: "extra", label: /cache off/, against: "peer", by: "ops", goal: 10 },
  { what: "S9 kiosks' throughput, rush / no orders", scenario: "S9", case: /kiosks/, variant: "service", against: "floor", by: "ops", goal: 0.8 },
  { what: "S9 kiosk p99 during the rush, ms (at most)", scenario: "S9", case: /kiosks/, variant: "service", against: null, by: "p99", goal: 50 },
  { what: "S9 payment -> PREPARING p99 during the rush, ms (at most)", scenario: "S9", case: /^payment/, variant: "service", against: null, by: "p99", goal: 1000 },
  { what: "S11 kiosk p50 under a variant flood / quiet (at most)", scenario: "S11", case: /./, variant: "service", against: "floor", by: "p50", goal: 3 },
];

export function targetsTable(rows: Row[]): string {
  const lines = ["| target | measured | goal | met |", "|---|---:|---:|---|"];
  for (const t of TARGETS) {
    const pick = (variant: Row["variant"] | null, label?: RegExp) =>
      variant && rows.find((r) => r.scenario === t.scenario && t.case.test(r.case) && r.variant === variant && (!label || label.test(r.label)));
    const [a, b] = [pick(t.variant, t.label), pick(t.against, t.againstLabel)];
    const value = t.by === "ops" ? ratio(a?.opsPerSec, b?.opsPerSec) : t.by === "p50" ? ratio(a?.p50, b?.p50) : (a?.p99 ?? null);
    const met = value == null ? "not measured" : (t.by === "ops" ? value >= t.goal : value <= t.goal) ? "yes" : "no";
    lines.push(`| ${t.what} | ${f(value, 2)} | ${t.goal} | ${met} |`);
  }
  return lines.join("\n");
}
