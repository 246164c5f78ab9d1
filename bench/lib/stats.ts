// Small statistics helpers: percentiles of raw samples (milliseconds, full
// precision: autocannon's own histogram has 1 ms resolution, too coarse for
// floors that answer in a fraction of a millisecond), rounding, slopes.

export interface Summary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]!;
}

export function summarize(samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    count: sorted.length,
    mean: sorted.length ? sum / sorted.length : NaN,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : NaN,
  };
}

/** Rounds to a number of significant digits (for reports). */
export function sig(x: number | null | undefined, digits = 3): number | null {
  if (x === null || x === undefined || !Number.isFinite(x)) return null;
  if (x === 0) return 0;
  const d = Math.max(0, digits - 1 - Math.floor(Math.log10(Math.abs(x))));
  return Number(x.toFixed(Math.min(d, 6)));
}

export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a == null || b == null || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return null;
  return a / b;
}

/** Least-squares slope of log(y) against log(x): y grows as x^slope (0: flat, 1: linear). */
export function logLogSlope(points: Array<{ x: number; y: number | null }>): number | null {
  const pts = points.filter((p) => p.y != null && p.y > 0 && p.x > 0) as Array<{ x: number; y: number }>;
  if (pts.length < 2) return null;
  const xs = pts.map((p) => Math.log(p.x));
  const ys = pts.map((p) => Math.log(p.y));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? null : num / den;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
