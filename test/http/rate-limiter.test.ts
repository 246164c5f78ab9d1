import { RateLimiter } from "../../src/http/rateLimiter.ts";

// The per-source limiter of /graphql and its WebSockets, answered
// synchronously: `points` requests per window, the window starting at a
// source's first request (a fixed window per source).

test("a source gets `points` requests per window, other sources their own; a new window starts afresh", async () => {
  const limiter = new RateLimiter(3, 200);
  try {
    expect([1, 2, 3, 4].map(() => limiter.take("a"))).toEqual([true, true, true, false]);
    expect(limiter.take("b")).toBe(true);
    await expect(limiter.consume("a")).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 250));
    expect(limiter.take("a")).toBe(true);
    await expect(limiter.consume("a")).resolves.toBeUndefined();
  } finally {
    limiter.stop();
  }
});
