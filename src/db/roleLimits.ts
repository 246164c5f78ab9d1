import type pg from "pg";
import { asSystem } from "./asSystem.ts";
import { logger } from "../logger.ts";
import type { ReconnectingPgSubscriber } from "../subscriber.ts";
import { loadAfterListen, reloadRetrying } from "./loadAfterListen.ts";
import { ROLE_LIMITS_TOPIC } from "../../common/topics.ts";

// The request roles' time limits (statement_timeout, lock_timeout), as the
// DBA keeps them in app_private.role_limits. PostGraphile enters a request's
// role with SET LOCAL ROLE, where ALTER ROLE ... SET does not apply, so the
// limits travel with the request's pgSettings (set_config(..., true) at the
// start of its transaction). Each API process keeps the table in memory:
// loaded at start-up, again after its LISTEN connection comes back, and on
// every change (the table's trigger NOTIFYs 'role_limits_changed').

export interface RoleLimit {
  /** Milliseconds, as set_config wants them. */
  statement_timeout: string;
  lock_timeout: string;
}

/**
 * Used only for a role the table has no row for (its trigger refuses
 * deletes; a role added to the code before the table): the strictest
 * defaults, never "no limit".
 */
export const FALLBACK_ROLE_LIMIT: RoleLimit = { statement_timeout: "3000", lock_timeout: "1000" };

export class RoleLimits {
  private limits = new Map<string, RoleLimit>();
  private readonly stream: AsyncIterableIterator<string>;
  private readonly pool: pg.Pool;
  /** Settles once the first load is done (rejects if it failed). */
  readonly ready: Promise<void>;

  constructor(subscriber: ReconnectingPgSubscriber, pool: pg.Pool) {
    this.pool = pool;
    // LISTEN first, then load: a change between the two is not missed.
    this.stream = subscriber.subscribe(ROLE_LIMITS_TOPIC);
    // Serving without the limits would run requests without any.
    this.ready = loadAfterListen(subscriber, "role limits", () => this.load(), { required: true });
    void this.follow();
  }

  /** The settings that put a request role's limits on its transaction. */
  readonly settingsFor = (role: string): RoleLimit => this.limits.get(role) ?? FALLBACK_ROLE_LIMIT;

  private async load() {
    const { rows } = await asSystem(this.pool, (client) => client.query<{ role: string } & RoleLimit>("select role, statement_timeout, lock_timeout from app_private.role_limit_settings()"));
    this.limits = new Map(rows.map((r) => [r.role, { statement_timeout: r.statement_timeout, lock_timeout: r.lock_timeout }]));
    logger.debug({ roleLimits: Object.fromEntries(this.limits) }, "loaded role limits");
  }

  private async follow() {
    for await (const _ of this.stream) await reloadRetrying("role limits", () => this.load());
  }

  stop(): void {
    void this.stream.return?.();
  }
}
