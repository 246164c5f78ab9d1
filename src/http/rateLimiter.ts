// The per-source rate limit of /graphql and its WebSockets (GRAPHQL_RATE_LIMIT
// a second with GRAPHQL_RATE_BURST on top): `points` requests per window of
// `durationMs`, the window starting at a source's first request (a fixed
// window per source), answered synchronously on the HTTP hot path (no promise, no timer per source).

export class RateLimiter {
  private readonly windows = new Map<string, { used: number; resetAt: number }>();
  private readonly sweeper: NodeJS.Timeout;
  readonly points: number;
  readonly durationMs: number;

  constructor(points: number, durationMs: number) {
    this.points = points;
    this.durationMs = durationMs;
    // Forgets the sources whose window is over (memory stays bounded by the sources of one window).
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [key, w] of this.windows) if (w.resetAt <= now) this.windows.delete(key);
    }, durationMs);
    this.sweeper.unref();
  }

  /** Spends one request of `key`'s window: false when none is left. */
  take(key: string): boolean {
    const now = Date.now();
    const w = this.windows.get(key);
    if (!w || w.resetAt <= now) {
      this.windows.set(key, { used: 1, resetAt: now + this.durationMs });
      return this.points >= 1;
    }
    return ++w.used <= this.points;
  }

  /** take() as a promise (rejected when refused), for callers that wait anyway. */
  consume(key: string): Promise<void> {
    return this.take(key) ? Promise.resolve() : Promise.reject(new Error("rate limited"));
  }

  stop(): void {
    clearInterval(this.sweeper);
  }
}
