// Figures a test reports: one line per drill, fixed-width tables, percentiles.

/**
 * Prints one line a drill reports: written straight to the output, as one
 * line (console.log in Jest adds a header, the origin and blank lines).
 */
export function report(drill: string, figures: Record<string, unknown>): void {
  const line = Object.entries(figures)
    .map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : String(v)}`)
    .join(" ");
  process.stderr.write(`[drill ${drill}] ${line}\n`);
}

/** A fixed-width text table. */
export function table(header: string[], rows: Array<Array<string | number>>): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 || i === 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...cells.slice(1).map(line)].join("\n");
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/**
 * Prints a figure a passing test reports (a line, or a table), written
 * straight to the output as it is: console.log in Jest adds a header, the
 * file and line it came from, and blank lines around every call.
 */
export function say(text: string): void {
  process.stderr.write(`${text}\n`);
}
