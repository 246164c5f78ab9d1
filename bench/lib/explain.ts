// EXPLAIN (ANALYZE, BUFFERS) of a captured statement under the same role and
// claims as the request that sent it, summarised: which indexes, which
// sequential scans (and on which tables), which function scans (whose inner
// plans EXPLAIN does not show).
import pg from "pg";

export interface PlanSummary {
  executionMs: number;
  planningMs: number;
  indexes: string[];
  seqScans: Array<{ relation: string; rows: number; loops: number }>;
  functionScans: string[];
  nodeTypes: string[];
  sharedHitBlocks: number;
  sharedReadBlocks: number;
}

const SET_CONFIG = "select set_config(el->>0, el->>1, true) from json_array_elements($1::json) el";

function summarise(plan: any): PlanSummary {
  const s: PlanSummary = {
    executionMs: plan["Execution Time"],
    planningMs: plan["Planning Time"],
    indexes: [],
    seqScans: [],
    functionScans: [],
    nodeTypes: [],
    sharedHitBlocks: plan.Plan["Shared Hit Blocks"] ?? 0,
    sharedReadBlocks: plan.Plan["Shared Read Blocks"] ?? 0,
  };
  const walk = (n: any) => {
    s.nodeTypes.push(n["Node Type"]);
    if (n["Index Name"]) s.indexes.push(`${n["Index Name"]} (${n["Node Type"]})`);
    if (n["Node Type"] === "Seq Scan") s.seqScans.push({ relation: n["Relation Name"], rows: n["Actual Rows"], loops: n["Actual Loops"] });
    if (n["Node Type"] === "Function Scan") s.functionScans.push(n["Function Name"]);
    for (const p of n.Plans ?? []) walk(p);
  };
  walk(plan.Plan);
  s.indexes = [...new Set(s.indexes)];
  s.nodeTypes = [...new Set(s.nodeTypes)];
  return s;
}

export interface Plans {
  /** The plan for these parameter values (what an unnamed statement gets). */
  custom: PlanSummary;
  /**
   * The generic plan PostgreSQL may switch to for a named prepared statement
   * (PostGraphile names its statements) after five executions, when it does
   * not look costlier than the custom ones.
   */
  generic: PlanSummary | null;
  /** The statement as the service sent it, and its custom plan as EXPLAIN printed it (text). */
  sql: string;
  values: unknown[];
  customPlanText: string;
}

/** EXPLAIN ANALYZE of `text` with `values`, run as the request was (role and claims), custom and generic plans. */
export async function explainStatement(url: string, settings: Array<[string, string]>, text: string, values: unknown[]): Promise<Plans> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query("begin");
    await c.query(SET_CONFIG, [JSON.stringify(settings)]);
    const body = text.replace(/;\s*$/, "");
    const { rows } = await c.query(`explain (analyze, buffers, format json) ${body}`, values);
    const custom = summarise(rows[0]["QUERY PLAN"][0]);
    const textPlan = await c.query(`explain (analyze, buffers) ${body}`, values);
    const customPlanText = textPlan.rows.map((r) => r["QUERY PLAN"]).join("\n");
    let generic: PlanSummary | null = null;
    try {
      await c.query("savepoint g");
      await c.query(`prepare bench_explain as ${body}`);
      await c.query("set local plan_cache_mode = force_generic_plan");
      const literals = values.map((v) =>
        v === null || v === undefined ? "NULL" : c.escapeLiteral(typeof v === "string" ? v : typeof v === "number" ? String(v) : JSON.stringify(v)),
      );
      const g = await c.query(`explain (analyze, buffers, format json) execute bench_explain${literals.length ? `(${literals.join(", ")})` : ""}`);
      generic = summarise(g.rows[0]["QUERY PLAN"][0]);
    } catch {
      await c.query("rollback to savepoint g");
    }
    await c.query("rollback");
    return { custom, generic, sql: body, values, customPlanText };
  } finally {
    await c.end();
  }
}

/** Tables that grow with the data set: a sequential scan on one of them is a finding. */
export const BIG_TABLES = new Set([
  "orders",
  "order_items",
  "customers",
  "reviews",
  "order_events",
  "payment_deliveries",
  "processed_payment_keys",
  "accounts",
  "profiles",
]);

function verdict(p: PlanSummary): string {
  const bad = p.seqScans.filter((s) => BIG_TABLES.has(s.relation));
  const parts = [`${p.executionMs.toFixed(2)} ms`, p.indexes.length ? `indexes: ${p.indexes.join(", ")}` : "no index"];
  if (bad.length) parts.push(`SEQ SCAN on ${bad.map((b) => `${b.relation} (${b.rows} rows x ${b.loops})`).join(", ")}`);
  const small = p.seqScans.filter((s) => !BIG_TABLES.has(s.relation));
  if (small.length) parts.push(`seq scan on small ${[...new Set(small.map((b) => b.relation))].join(", ")}`);
  if (p.functionScans.length) parts.push(`function scans (not inlined): ${[...new Set(p.functionScans)].join(", ")}`);
  return parts.join("; ");
}

export function planVerdict(p: Plans): string {
  const custom = verdict(p.custom);
  if (!p.generic) return custom;
  const generic = verdict(p.generic);
  return `custom plan ${custom} | generic plan ${generic}`;
}
