// The usual shape of a scenario: every variant (service, floor, peer) at
// peak (closed loop), then every variant at one fixed rate, a fraction of
// the service's own peak, so their latencies are compared at the same load.
import type { Ctx, Row, Variant } from "./context.ts";
import { measure, type RequestSpec, type LoadResult } from "./load.ts";
import { cpuMeter, type CpuShare } from "./cpu.ts";

export interface VariantSpec {
  variant: Variant;
  label: string;
  baseUrl: string;
  request: RequestSpec;
  sql?: Row["sql"];
  notes?: string[];
  /** Called before each measured run (e.g. to reset open orders). */
  before?: () => Promise<void>;
  /** The process answering (for CPU accounting). */
  pid?: number;
}

export async function peakThenLatency(ctx: Ctx, scenario: string, caseName: string, variants: VariantSpec[], opsUnit = "req/s"): Promise<Row[]> {
  const o = ctx.opts;
  const peaks: LoadResult[] = [];
  const cpu: CpuShare[] = [];
  for (const v of variants) {
    await v.before?.();
    ctx.log(`${scenario} ${caseName}: ${v.variant} (${v.label}) closed loop, ${o.connections} connections, ${o.peakSeconds} s`);
    let meter = () => ({ server: null, postgres: 0, bench: 0, machineBusy: null, other: null }) as CpuShare;
    const request = { baseUrl: v.baseUrl, request: v.request, connections: o.connections, seconds: o.peakSeconds, warmupSeconds: o.warmupSeconds };
    peaks.push(await measure({ ...request, onStart: () => (meter = cpuMeter(v.pid)) }));
    cpu.push(meter());
  }
  const serviceIndex = Math.max(
    0,
    variants.findIndex((v) => v.variant === "service"),
  );
  const rate = Math.max(1, Math.round(o.latencyLoad * (peaks[serviceIndex]!.opsPerSec || 1)));
  const rows: Row[] = [];
  for (const [i, v] of variants.entries()) {
    const peak = peaks[i]!;
    // A variant whose peak is below the fixed rate would only queue: no latency run.
    if (peak.opsPerSec < rate) {
      const notes = [...(v.notes ?? []), `no latency run: its peak (${Math.round(peak.opsPerSec)} ${opsUnit}) is below the fixed rate (${rate})`];
      rows.push({
        ...{ scenario, case: caseName, variant: v.variant, label: v.label, opsPerSec: peak.opsPerSec, opsUnit, throughputHow: `closed loop, ${o.connections} connections` },
        ...{ p50: null, p99: null, latencyLoad: "none", sql: v.sql ?? null, cpu: cpu[i] },
        ...{ errors: peak.bad + peak.errors + peak.timeouts, notes, raw: { peak } },
      });
      continue;
    }
    await v.before?.();
    ctx.log(`${scenario} ${caseName}: ${v.variant} at ${rate} ${opsUnit} for ${o.latencySeconds} s`);
    const lat = await measure({ baseUrl: v.baseUrl, request: v.request, connections: o.connections, seconds: o.latencySeconds, rate, warmupSeconds: 0 });
    const notes = [...(v.notes ?? [])];
    if (lat.opsPerSec < rate * 0.9) notes.push(`kept up with only ${Math.round(lat.opsPerSec)} of ${rate} ${opsUnit} in the latency run`);
    if ((lat.generatorLagMs?.p99 ?? 0) > 20) notes.push(`the load generator sent late (p99 ${lat.generatorLagMs!.p99.toFixed(1)} ms behind schedule)`);
    if (peak.badSample || lat.badSample) notes.push(`bad answer: ${(peak.badSample ?? lat.badSample)!.slice(0, 160)}`);
    rows.push({
      ...{ scenario, case: caseName, variant: v.variant, label: v.label, opsPerSec: peak.opsPerSec, opsUnit, throughputHow: `closed loop, ${o.connections} connections` },
      ...{ p50: lat.latency.p50, p99: lat.latency.p99, latencyLoad: `${rate} ${opsUnit} fixed`, sql: v.sql ?? null, cpu: cpu[i] },
      errors: peak.bad + lat.bad + peak.errors + lat.errors + peak.timeouts + lat.timeouts,
      notes,
      raw: { peak, latency: lat },
    });
  }
  return rows;
}
