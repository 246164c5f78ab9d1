import type { Config } from "../config.ts";

// The request limits of /graphql, its WebSockets and the payment callback:
// `points` requests per window of `durationMs`, the window starting at a
// key's first request (a fixed window per key), answered synchronously on
// the HTTP hot path (no promise, no timer per key). A key may be given a
// larger budget (`factor`): a trusted network's source, an account's.

export class RateLimiter {
  private readonly windows = new Map<string, { used: number; resetAt: number }>();
  private readonly sweeper: NodeJS.Timeout;
  readonly points: number;
  readonly durationMs: number;

  constructor(points: number, durationMs: number) {
    this.points = points;
    this.durationMs = durationMs;
    // Forgets the keys whose window is over (memory stays bounded by the keys of one window).
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [key, w] of this.windows) if (w.resetAt <= now) this.windows.delete(key);
    }, durationMs);
    this.sweeper.unref();
  }

  /** Spends one request of `key`'s window (of `factor` times `points`): false when none is left. */
  take(key: string, factor = 1): boolean {
    const now = Date.now();
    const w = this.windows.get(key);
    if (!w || w.resetAt <= now) {
      this.windows.set(key, { used: 1, resetAt: now + this.durationMs });
      return this.points * factor >= 1;
    }
    return ++w.used <= this.points * factor;
  }

  /** take() as a promise (rejected when refused), for callers that wait anyway. */
  consume(key: string, factor = 1): Promise<void> {
    return this.take(key, factor) ? Promise.resolve() : Promise.reject(new Error("rate limited"));
  }

  stop(): void {
    clearInterval(this.sweeper);
  }
}

/** Who a /graphql request (or WebSocket operation) is charged to. */
export interface Payer {
  source: { key: string; trusted: boolean };
  /** The verified token's sign-in and account (null: anonymous, or before sign-in). */
  viewer: { signInId: string; userId: string } | null;
}

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

  stop(): void {
    this.limiter.stop();
  }
}

/** /graphql's budget: a sustained rate with a burst on top, per payer (GRAPHQL_RATE_LIMIT 0: off). Shared by HTTP and WebSockets. */
export function makeRateLimiter(config: Config): RequestBudget | null {
  return config.GRAPHQL_RATE_LIMIT
    ? new RequestBudget(new RateLimiter(config.GRAPHQL_RATE_BURST, 1000 * Math.max(1, Math.round(config.GRAPHQL_RATE_BURST / config.GRAPHQL_RATE_LIMIT))), {
        trustedFactor: config.TRUSTED_NETWORK_FACTOR,
        accountFactor: config.GRAPHQL_RATE_ACCOUNT_FACTOR,
      })
    : null;
}
