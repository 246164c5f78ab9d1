import { boundedCache, textBytes, type BoundedCache, type CacheBounds } from "../../common/boundedCache.ts";
import { MEMORY_BOUNDS, type Config } from "../config.ts";
import type { KeyCount, ShareCounts } from "../db/rateUsage.ts";
import { requestScope, type Payer } from "../requestScope.ts";

// The request limits of /graphql, its WebSockets and the payment callback:
// `points` requests per window of `durationMs`, the window starting at a
// key's first request (a fixed window per key), answered synchronously on
// the HTTP hot path (no promise, no timer per key). A key may be given a
// larger budget (`factor`): a trusted network's source, an account's.
//
// Over several API processes (`share`, src/db/rateUsage.ts), each one still
// answers from memory. Every `syncMs`, in the background, it sends the
// counts of the keys it was asked for since, with how many requests it was
// asked for (refused ones included: its demand), and the database grants
// it, per key, a ceiling: its count plus its part of what nobody has spent
// yet, in proportion to its demand (app_hidden.share_rate_usage). The
// ceilings of all processes never add up to more than the budget, so N
// processes spend one budget between them, not N, however a client spreads
// its requests; room a process holds and does not use while another waits
// is given back at its next sync. A key this process has no ceiling for yet
// gets a small allowance (UNKNOWN_KEY_PERCENT of the budget, split among the
// live processes), which the others hold in reserve for it
// (docs/security.md, Limits over several processes). One process alone
// behaves as without sharing.
//
// The windows are a bounded cache (MEMORY_BOUNDS.rateLimitWindows, in
// /metrics as cache="rate_limit_windows"): a flood of distinct keys drops
// the least recently used windows, never grows the process.

/** What a process may spend on a key before its first sync of it, in percent of the budget (split among the live processes). */
export const UNKNOWN_KEY_PERCENT = 10;

interface Window {
  used: number;
  /** Requests asked for since the last sync (refused ones included). */
  demand: number;
  resetAt: number;
  budget: number;
  /** How far this process may go (granted at the last sync), or null before its first sync of the key. */
  ceiling: number | null;
}

export class RateLimiter {
  private readonly windows: BoundedCache<string, Window>;
  private readonly sweeper: NodeJS.Timeout;
  private readonly syncer: NodeJS.Timeout | null = null;
  /** Keys asked for since the last sync. */
  private asked = new Set<string>();
  /** Live API processes (this one included), as of the last sync. */
  private live = 1;
  /** The sync under way. */
  private running: Promise<void> | null = null;
  private readonly share: ShareCounts | null;
  private readonly onSyncError: ((err: unknown) => void) | undefined;
  readonly points: number;
  readonly durationMs: number;

  /** `share` without `syncMs`: syncs only when syncNow() is called. */
  constructor(points: number, durationMs: number, options: { share?: ShareCounts; syncMs?: number; onSyncError?: (err: unknown) => void; bounds?: CacheBounds } = {}) {
    this.points = points;
    this.durationMs = durationMs;
    // A window: its key, four numbers and the object around them.
    this.windows = boundedCache("rate_limit_windows", { ...(options.bounds ?? MEMORY_BOUNDS.rateLimitWindows), bytesOf: (_w, key) => textBytes(key) + 96 });
    // Forgets the keys whose window is over.
    this.sweeper = setInterval(() => {
      const now = Date.now();
      const over: string[] = [];
      for (const [key, w] of this.windows.entries()) if (w.resetAt <= now) over.push(key);
      for (const key of over) this.windows.delete(key);
    }, durationMs);
    this.sweeper.unref();
    const { share, syncMs, onSyncError } = options;
    this.share = share ?? null;
    this.onSyncError = onSyncError;
    if (share && syncMs) {
      // At once, then every syncMs (skipped while one runs): until its first sync a process does not know the others.
      void this.syncNow();
      this.syncer = setInterval(() => {
        if (!this.running) void this.syncNow();
      }, syncMs);
      this.syncer.unref();
    }
  }

  /** `key`'s current window (a new one when it had none, or its last one is over). */
  private windowOf(key: string, factor: number): Window {
    const now = Date.now();
    let w = this.windows.get(key);
    if (!w || w.resetAt <= now) {
      w = { used: 0, demand: 0, resetAt: now + this.durationMs, budget: this.points * factor, ceiling: null };
      this.windows.set(key, w);
    }
    return w;
  }

  /** Spends one request of `key`'s window (of `factor` times `points`): false when none is left. */
  take(key: string, factor = 1): boolean {
    const w = this.windowOf(key, factor);
    // A refused key is asked about again too: the others may have left it room.
    if (this.share) {
      this.asked.add(key);
      w.demand++;
    }
    const limit = w.ceiling ?? (this.live > 1 ? Math.max(1, Math.floor((w.budget * UNKNOWN_KEY_PERCENT) / 100 / this.live)) : w.budget);
    if (w.used >= limit || w.used >= w.budget) return false;
    w.used++;
    return true;
  }

  /** Spends `units` more of `key`'s window, past its limit if need be (the next take() is then refused until it resets). */
  spend(key: string, units: number, factor = 1): void {
    const w = this.windowOf(key, factor);
    w.used += units;
    if (this.share) {
      this.asked.add(key);
      w.demand += units;
    }
  }

  /** take() as a promise (rejected when refused), for callers that wait anyway. */
  consume(key: string, factor = 1): Promise<void> {
    return this.take(key, factor) ? Promise.resolve() : Promise.reject(new Error("rate limited"));
  }

  /**
   * Sends the counts of the keys asked for since the last sync; takes in
   * their ceilings (and lower ones for keys whose room it gives back). One
   * sync at a time: called while one runs, it runs after it.
   */
  async syncNow(): Promise<void> {
    if (!this.share) return;
    while (this.running) await this.running;
    this.running = this.sync(this.share)
      .catch((err: unknown) => this.onSyncError?.(err))
      .finally(() => (this.running = null));
    return this.running;
  }

  private async sync(share: ShareCounts): Promise<void> {
    const now = Date.now();
    const counts: KeyCount[] = [];
    for (const key of this.asked) {
      const w = this.windows.peek(key);
      if (!w || w.resetAt <= now) continue;
      counts.push({ key, used: w.used, demand: w.demand, budget: w.budget, windowEndMs: w.resetAt });
      w.demand = 0;
    }
    this.asked = new Set();
    const { ceilings, live } = await share(counts, now, UNKNOWN_KEY_PERCENT);
    this.live = live;
    for (const [key, { ceiling, windowEndMs }] of ceilings) {
      // A window that ended meanwhile is not this one.
      const w = this.windows.peek(key);
      if (w && w.resetAt === windowEndMs) w.ceiling = ceiling;
    }
  }

  stop(): void {
    clearInterval(this.sweeper);
    if (this.syncer) clearInterval(this.syncer);
    this.windows.clear();
  }
}

export type { Payer };

/**
 * The budget of /graphql (GRAPHQL_RATE_LIMIT a second, GRAPHQL_RATE_BURST on
 * top), keyed on who pays: a request with a valid token spends its sign-in's
 * budget and its account's (`accountFactor` times larger: all its sign-ins
 * together), never its address's (a café's Wi-Fi is many customers behind
 * one address); an anonymous one spends its source's, `trustedFactor` times
 * larger inside TRUSTED_NETWORKS.
 */
export class RequestBudget {
  readonly limiter: RateLimiter;
  private readonly trustedFactor: number;
  private readonly accountFactor: number;

  constructor(limiter: RateLimiter, { trustedFactor, accountFactor }: { trustedFactor: number; accountFactor: number }) {
    this.limiter = limiter;
    this.trustedFactor = trustedFactor;
    this.accountFactor = accountFactor;
  }

  /** Spends one request: false when the payer has none left. */
  take({ source, viewer }: Payer): boolean {
    if (viewer) return this.limiter.take(`sign-in:${viewer.signInId}`) && this.limiter.take(`account:${viewer.userId}`, this.accountFactor);
    return this.limiter.take(`source:${source.key}`, source.trusted ? this.trustedFactor : 1);
  }

  /**
   * Charges the request this code runs for (its scope's payer, once the
   * rate limit step has charged it: else nobody) `requests` more, a
   * fraction rounded up with that chance, so small pieces of work add up
   * to what they cost.
   */
  charge(requests: number): void {
    const payer = requestScope.getStore()?.payer;
    if (!payer || !(requests > 0)) return;
    const units = Math.floor(requests) + (Math.random() < requests % 1 ? 1 : 0);
    if (units === 0) return;
    const { source, viewer } = payer;
    if (viewer) {
      this.limiter.spend(`sign-in:${viewer.signInId}`, units);
      this.limiter.spend(`account:${viewer.userId}`, units, this.accountFactor);
    } else this.limiter.spend(`source:${source.key}`, units, source.trusted ? this.trustedFactor : 1);
  }

  stop(): void {
    this.limiter.stop();
  }
}

/**
 * /graphql's budget: a sustained rate with a burst on top, per payer
 * (GRAPHQL_RATE_LIMIT 0: off). Shared by HTTP and WebSockets, and with the
 * other API processes through `share` every RATE_LIMIT_SYNC_MS.
 */
export function makeRateLimiter(config: Config, share?: ShareCounts, onSyncError?: (err: unknown) => void): RequestBudget | null {
  const durationMs = 1000 * Math.max(1, Math.round(config.GRAPHQL_RATE_BURST / config.GRAPHQL_RATE_LIMIT));
  return config.GRAPHQL_RATE_LIMIT
    ? new RequestBudget(new RateLimiter(config.GRAPHQL_RATE_BURST, durationMs, { share: config.RATE_LIMIT_SYNC_MS ? share : undefined, syncMs: config.RATE_LIMIT_SYNC_MS, onSyncError }), {
        trustedFactor: config.TRUSTED_NETWORK_FACTOR,
        accountFactor: config.GRAPHQL_RATE_ACCOUNT_FACTOR,
      })
    : null;
}
