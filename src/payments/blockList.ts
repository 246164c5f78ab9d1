import type pg from "pg";
import { boundedCache, textBytes } from "../../common/boundedCache.ts";
import { MEMORY_BOUNDS } from "../config.ts";
import type { ReconnectingPgSubscriber } from "../subscriber.ts";
import { PAYMENT_SOURCE_BLOCKED_TOPIC } from "../../common/topics.ts";
import { asSystem } from "../db/asSystem.ts";
import { loadAfterListen } from "../db/loadAfterListen.ts";
import { logger } from "../logger.ts";

// The payment callback's block list (app_private.blocked_sources), kept in
// memory so that a blocked source's deliveries are refused before any I/O:
// loaded at start and after the LISTEN connection comes back (notifications
// may have been missed), then kept up to date by each change's notification
// (tg_blocked_sources__notify: other processes' decisions, a DBA's unblock)
// and by this process's own decisions (log_delivery's answer), at once.
// Held in a bounded cache (MEMORY_BOUNDS.blockedSources, in /metrics as
// cache="blocked_sources"): a source dropped from it is still blocked in
// the database, and its next refused delivery learns it again.

export class BlockedSources {
  private readonly until = boundedCache<string, number>("blocked_sources", { ...MEMORY_BOUNDS.blockedSources, bytesOf: (_at, source) => textBytes(source) + 32 });
  private readonly stream: AsyncIterableIterator<string>;
  /** Resolved once the list is first loaded. */
  readonly ready: Promise<void>;

  constructor(pool: pg.Pool, subscriber: ReconnectingPgSubscriber) {
    const stream = (this.stream = subscriber.subscribe(PAYMENT_SOURCE_BLOCKED_TOPIC));
    void (async () => {
      for await (const payload of stream) {
        try {
          const { source, blocked_until } = JSON.parse(payload) as { source: string; blocked_until: string | null };
          this.set(source, blocked_until);
        } catch {
          logger.warn({ payload }, "payment callback: unreadable block-list notification");
        }
      }
    })();
    const load = async () => {
      const rows = await asSystem(pool, async (c) => (await c.query("select source, blocked_until from app_private.blocked_source_list()")).rows);
      this.until.clear();
      for (const r of rows) this.set(r.source, r.blocked_until);
    };
    // Without it the route still answers (every source unblocked until the
    // next notification): a warning, not a refusal to start.
    this.ready = loadAfterListen(subscriber, "the payment callback's block list", load, { required: false });
  }

  /** Records a block (or its end: null). */
  set(source: string, blockedUntil: string | Date | null): void {
    const at = blockedUntil === null ? 0 : new Date(blockedUntil).getTime();
    if (at > Date.now()) this.until.set(source, at);
    else this.until.delete(source);
  }

  isBlocked(source: string): boolean {
    const at = this.until.get(source);
    if (at === undefined) return false;
    if (at > Date.now()) return true;
    this.until.delete(source);
    return false;
  }

  async stop(): Promise<void> {
    await this.stream.return?.();
  }
}
