import type pg from "pg";
import { asSystem } from "./asSystem.ts";
import { logger } from "../logger.ts";
import type { ReconnectingPgSubscriber } from "../subscriber.ts";
import { loadAfterListen } from "./loadAfterListen.ts";
import { SIGN_IN_REVOKED_TOPIC } from "../../common/topics.ts";

// Revoked sign-ins, on every API process. Postgres decides what is revoked
// (app_private.revoke_sign_ins: logout, a reused refresh token, a password
// change, an account disabled, deleted or given another role) and announces
// each revoked sign-in on one channel. Each process keeps the recent ones in
// memory, so checking a token costs a Map lookup and no SQL:
//   - at start-up, and after its LISTEN connection comes back, it loads the
//     ones revoked within the access-token lifetime;
//   - it forgets one once every access token of that sign-in has expired
//     (none is issued after the revocation: its refresh tokens are revoked).

/** Margin for clock differences between Postgres and this process. */
const CLOCK_MARGIN_MS = 60_000;
/** Longest a mutation waits for its LISTEN connection (e.g. while it reconnects). */
const CATCH_UP_TIMEOUT_MS = 2_000;

export class RevokedSignIns {
  /** Sign-in id -> when it was revoked (ms since the epoch, Postgres's clock). */
  private readonly revoked = new Map<string, number>();
  private readonly listeners = new Map<string, Set<() => void>>();
  private readonly stream: AsyncIterableIterator<string>;
  private readonly pruner: NodeJS.Timeout;
  private readonly lifetimeMs: number;
  private readonly pool: pg.Pool;
  private readonly subscriber: ReconnectingPgSubscriber;
  /** Settles once the first load is done (rejects if it failed). */
  readonly ready: Promise<void>;

  constructor(subscriber: ReconnectingPgSubscriber, pool: pg.Pool, tokenLifetimeSeconds: number) {
    this.pool = pool;
    this.subscriber = subscriber;
    this.lifetimeMs = tokenLifetimeSeconds * 1000 + CLOCK_MARGIN_MS;
    // LISTEN first, then load: a revocation between the two is not missed.
    this.stream = subscriber.subscribe(SIGN_IN_REVOKED_TOPIC);
    // Serving without the list would accept revoked tokens: the first load must work.
    this.ready = loadAfterListen(subscriber, "revoked sign-ins", () => this.load(), { required: true });
    void this.follow();
    this.pruner = setInterval(() => this.prune(), 60_000);
    this.pruner.unref();
  }

  /** Whether the sign-in's tokens are refused. */
  readonly has = (signInId: string): boolean => this.revoked.has(signInId);

  /**
   * Resolves once this process knows of every revocation committed before
   * the call: a mutation that revoked sign-ins awaits it before answering,
   * so the client's next request to this process is refused. (Other
   * processes learn of it when their LISTEN connection delivers it:
   * milliseconds, not guaranteed before that next request.)
   */
  async caughtUp(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, CATCH_UP_TIMEOUT_MS)));
    await Promise.race([this.subscriber.flush().catch(() => {}), timeout]);
    clearTimeout(timer);
    // The notification's handler runs in microtasks queued before this.
    await new Promise((resolve) => setImmediate(resolve));
  }

  /** Calls `fn` once if the sign-in gets revoked; returns a function that cancels it. */
  onRevoked(signInId: string, fn: () => void): () => void {
    let set = this.listeners.get(signInId);
    if (!set) this.listeners.set(signInId, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0 && this.listeners.get(signInId) === set) this.listeners.delete(signInId);
    };
  }

  /** How many revoked sign-ins this process remembers. */
  get size(): number {
    return this.revoked.size;
  }

  private add(signInId: string, atMs: number) {
    this.revoked.set(signInId, atMs);
    const fns = this.listeners.get(signInId);
    if (!fns) return;
    this.listeners.delete(signInId);
    for (const fn of fns) fn();
  }

  private async load() {
    const seconds = Math.ceil(this.lifetimeMs / 1000);
    const { rows } = await asSystem(this.pool, (client) =>
      client.query<{ sign_in_id: string; revoked_at_ms: string }>("select sign_in_id, revoked_at_ms from app_hidden.recent_revoked_sign_ins($1)", [seconds]),
    );
    for (const row of rows) this.add(row.sign_in_id, Number(row.revoked_at_ms));
    logger.debug({ revokedSignIns: rows.length }, "loaded revoked sign-ins");
  }

  private async follow() {
    for await (const payload of this.stream) {
      try {
        const { sid, at } = JSON.parse(payload) as { sid: string; at: number };
        this.add(sid, Number(at));
      } catch {
        logger.warn({ payload }, "unreadable sign-in revocation");
      }
    }
  }

  private prune() {
    const before = Date.now() - this.lifetimeMs;
    for (const [id, at] of this.revoked) if (at < before) this.revoked.delete(id);
  }

  stop(): void {
    clearInterval(this.pruner);
    void this.stream.return?.();
    this.listeners.clear();
  }
}
