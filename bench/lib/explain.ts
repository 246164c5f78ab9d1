// EXPLAIN ANALYZE of a captured statement under the same role and claims as
// the request that sent it, for the custom plan and for the generic plan
// PostgreSQL may switch a named prepared statement (PostGraphile names its
// statements) to after five executions; summarised as which indexes, which
// sequential scans (a finding on a table that grows) and which function scans.
import pg from "pg";

export interface PlanSummary {
  executionMs: number;
  indexes: string[];
  seqScans: Array<{ relation: string; rows: number; loops: number }>;
  functionScans: string[];
}
export interface Plans {
  custom: PlanSummary;
  generic: PlanSummary | null;
}

function summarise(plan: any): PlanSummary {
  const s: PlanSummary = { executionMs: plan["Execution Time"], indexes: [], seqScans: [], functionScans: [] };
  const walk = (n: any) => {
    if (n["Index Name"]) s.indexes.push(`${n["Index Name"]} (${n["Node Type"]})`);
    if (n["Node Type"] === "Seq Scan") s.seqScans.push({ relation: n["Relation Name"], rows: n["Actual Rows"], loops: n["Actual Loops"] });
    if (n["Node Type"] === "Function Scan") s.functionScans.push(n["Function Name"]);
    for (const p of n.Plans ?? []) walk(p);
  };
  walk(plan.Plan);
  return { ...s, indexes: [...new Set(s.indexes)], functionScans: [...new Set(s.functionScans)] };
}

export async function explainStatement(url: string, settings: Array<[string, string]>, text: string, values: unknown[]): Promise<Plans> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query("begin");
    await c.query("select set_config(el->>0, el->>1, true) from json_array_elements($1::json) el", [JSON.stringify(settings)]);
    const body = text.replace(/;\s*$/, "");
    const custom = summarise((await c.query(`explain (analyze, format json) ${body}`, values)).rows[0]["QUERY PLAN"][0]);
    let generic: PlanSummary | null = null;
    try {
      await c.query("savepoint g");
      await c.query(`prepare bench_explain as ${body}`);
      await c.query("set local plan_cache_mode = force_generic_plan");
      const literals = values.map((v) => (v == null ? "NULL" : c.escapeLiteral(typeof v === "string" ? v : typeof v === "number" ? String(v) : JSON.stringify(v))));
      const g = await c.query(`explain (analyze, format json) execute bench_explain${literals.length ? `(${literals.join(", ")})` : ""}`);
      generic = summarise(g.rows[0]["QUERY PLAN"][0]);
    } catch {
      await c.query("rollback to savepoint g");
    }
    await c.query("rollback");
    return { custom, generic };
  } finally {
    await c.end();
  }
}

/** Tables that grow with the data set: a sequential scan on one of them is a finding. */
const BIG_TABLES = new Set(["orders", "order_items", "customers", "reviews", "order_events", "payment_deliveries", "processed_payment_keys", "accounts", "profiles"]);

function verdict(p: PlanSummary): string {
  const [big, small] = [p.seqScans.filter((s) => BIG_TABLES.has(s.relation)), p.seqScans.filter((s) => !BIG_TABLES.has(s.relation))];
  const parts = [`${p.executionMs.toFixed(2)} ms`, p.indexes.length ? `indexes: ${p.indexes.join(", ")}` : "no index"];
  if (big.length) parts.push(`SEQ SCAN on ${big.map((b) => `${b.relation} (${b.rows} rows x ${b.loops})`).join(", ")}`);
  if (small.length) parts.push(`seq scan on small ${[...new Set(small.map((b) => b.relation))].join(", ")}`);
  if (p.functionScans.length) parts.push(`function scans (not inlined): ${p.functionScans.join(", ")}`);
  return parts.join("; ");
}

export const planVerdict = (p: Plans) => (p.generic ? `custom plan ${verdict(p.custom)} | generic plan ${verdict(p.generic)}` : verdict(p.custom));
