// Percentiles of raw samples (ms, full precision), rounding, slopes.

export interface Summary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function summarize(samples: number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]! : NaN);
  return { count: s.length, mean: s.length ? s.reduce((a, b) => a + b, 0) / s.length : NaN, p50: at(50), p90: at(90), p99: at(99), max: at(100) };
}

/** Rounds to a number of significant digits (for reports). */
export function sig(x: number | null | undefined, digits = 3): number | null {
  if (x == null || !Number.isFinite(x)) return null;
  if (x === 0) return 0;
  return Number(x.toFixed(Math.min(6, Math.max(0, digits - 1 - Math.floor(Math.log10(Math.abs(x)))))));
}

export const ratio = (a: number | null | undefined, b: number | null | undefined) => (a != null && b != null && Number.isFinite(a) && b ? a / b : null);

/** Least-squares slope of log(y) against log(x): y grows as x^slope (0: flat, 1: linear). */
export function logLogSlope(points: Array<{ x: number; y: number | null }>): number | null {
  const pts = points.filter((p) => p.y != null && p.y > 0 && p.x > 0).map((p) => [Math.log(p.x), Math.log(p.y!)] as const);
  if (pts.length < 2) return null;
  const mean = (i: 0 | 1) => pts.reduce((a, p) => a + p[i], 0) / pts.length;
  const [mx, my] = [mean(0), mean(1)];
  const den = pts.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return den === 0 ? null : pts.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0) / den;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
