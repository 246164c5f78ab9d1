// Load: how long the drills run, randomness, and bounded concurrency.

/** DRILLS_LONG=1: the long forms (minutes); default: the short forms for CI. */
export const LONG = process.env.DRILLS_LONG === "1";

export const rnd = (min: number, max: number) => min + Math.random() * (max - min);
export function shuffle<T>(xs: T[]): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** Runs `fn` over `items` with at most `concurrency` at once. */
export async function mapLimit<T, R>(items: T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await fn(items[i]!, i);
      }
    }),
  );
  return results;
}
