import type pg from "pg";
import { logger } from "../logger.ts";

// How many rows each app_public table holds, as PostgreSQL's planner
// estimates it (its estimate_rel_size, written out here): the table's
// pages now (pg_relation_size) times its rows per page, from the last
// ANALYZE or VACUUM (pg_class.reltuples / relpages) or, for a table never
// analyzed, from its columns' widths as the planner guesses them; at least
// the statistics' live-row count. So a table loaded in bulk and never
// analyzed, or whose statistics were lost (a crash, a restored dump), is
// priced by its size on disk, not as empty. The query cost prices what a
// `totalCount` scans by these (plugins/QueryCostPlugin/). Read at start-up
// and every REFRESH_MS; pg_class, pg_attribute and pg_relation_size are
// readable by every role, the authenticator included.

const REFRESH_MS = 60_000;

export class TableSizes {
  private sizes = new Map<string, number>();
  private gen = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly pool: pg.Pool;
  readonly ready: Promise<void>;

  constructor(pool: pg.Pool) {
    this.pool = pool;
    this.ready = this.refresh().catch((err) => logger.warn({ err: (err as Error).message }, "reading table sizes failed"));
    this.timer = setInterval(() => void this.refresh().catch((err) => logger.warn({ err: (err as Error).message }, "reading table sizes failed")), REFRESH_MS);
    this.timer.unref();
  }

  /** Estimated rows of "schema.table" (0 when unknown). */
  readonly rows = (table: string): number => this.sizes.get(table) ?? 0;
  /** Changes whenever an estimate does (costs priced with older ones are priced again). */
  readonly generation = (): number => this.gen;

  async refresh(): Promise<void> {
    const { rows } = await this.pool.query<{ name: string; n: string }>(
      `with t as (
         select c.oid, n.nspname || '.' || c.relname as name, c.reltuples, c.relpages,
                -- (a table never vacuumed counts at least 10 pages, as the planner counts it)
                case when c.relpages = 0 and not c.relhassubclass
                     then greatest(pg_relation_size(c.oid) / current_setting('block_size')::int, 10)
                     else pg_relation_size(c.oid) / current_setting('block_size')::int end as pages,
                current_setting('block_size')::int as block,
                -- the planner's tuple width: 24 bytes of header, 4 of line pointer, each column's length (32 for a variable one)
                24 + 4 + (select coalesce(sum(case when a.attlen > 0 then a.attlen else 32 end), 0)
                            from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped) as width
           from pg_class c
           join pg_namespace n on n.oid = c.relnamespace
          where n.nspname = 'app_public' and c.relkind in ('r', 'p'))
       select t.name,
              greatest(case when t.relpages > 0 and t.reltuples >= 0 then t.reltuples / t.relpages * t.pages
                            else t.pages * floor((t.block - 24) / t.width) end,
                       coalesce(s.n_live_tup, 0), 0)::bigint::text as n
         from t left join pg_stat_all_tables s on s.relid = t.oid`,
    );
    const next = new Map(rows.map((r) => [r.name, Number(r.n)]));
    const changed = next.size !== this.sizes.size || [...next].some(([k, v]) => this.sizes.get(k) !== v);
    this.sizes = next;
    if (changed) this.gen += 1;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
