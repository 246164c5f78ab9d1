import type pg from "pg";
import { logger } from "../logger.ts";

// How many rows each app_public table holds, as PostgreSQL estimates it
// (pg_class.reltuples, kept by ANALYZE and autovacuum; the statistics'
// live-row count for a table never analyzed). The query cost prices what a
// `totalCount` scans by these (plugins/QueryCostPlugin/). Read at start-up and
// every REFRESH_MS; pg_class is readable by every role, the authenticator
// included.

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
      `select n.nspname || '.' || c.relname as name,
              greatest(c.reltuples, coalesce(s.n_live_tup, 0), 0)::bigint::text as n
         from pg_class c
         join pg_namespace n on n.oid = c.relnamespace
         left join pg_stat_all_tables s on s.relid = c.oid
        where n.nspname = 'app_public' and c.relkind in ('r', 'p')`,
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
