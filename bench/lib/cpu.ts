// CPU accounting from /proc (Linux): how busy the process under test, the
// PostgreSQL server (all its processes) and the bench itself were during a
// run, in percent of one core. Tells which side limits a throughput figure.
import { readFileSync, readdirSync } from "node:fs";
import os from "node:os";

const TICK = 100; // USER_HZ on Linux
let postmaster: number | null = null;

/** Counts only the processes of the cluster whose backend this is (others may run on the machine). */
export function setPostgresBackend(backendPid: number): void {
  try {
    const stat = readFileSync(`/proc/${backendPid}/stat`, "utf8");
    postmaster = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    postmaster = null; // not on this machine
  }
}

function procTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(f[11]) + Number(f[12]); // utime + stime
  } catch {
    return null;
  }
}

/** CPU ticks of every postgres process, by pid. */
function postgresTicks(): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const d of readdirSync("/proc")) {
      if (!/^\d+$/.test(d)) continue;
      try {
        const stat = readFileSync(`/proc/${d}/stat`, "utf8");
        const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        if (comm !== "postgres") continue;
        const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        if (postmaster !== null && Number(d) !== postmaster && Number(f[1]) !== postmaster) continue;
        out.set(d, Number(f[11]) + Number(f[12]));
      } catch {
        // gone
      }
    }
  } catch {
    // no /proc
  }
  if (postmaster !== null) {
    try {
      const stat = readFileSync(`/proc/${postmaster}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // the postmaster's own utime+stime are in `out` already; add its reaped children's
      let total = Number(f[13]) + Number(f[14]);
      for (const t of out.values()) total += t;
      out.set("total", total);
    } catch {
      // postmaster gone
    }
  }
  return out;
}

/**
 * CPU used between two snapshots. With the postmaster known, its children's
 * reaped time (cutime + cstime) is part of the total, so short-lived
 * processes (parallel workers, closed connections) are counted; otherwise
 * what processes alive at the end used.
 */
function postgresDelta(before: Map<string, number>, after: Map<string, number>): number {
  if (postmaster !== null && before.has("total") && after.has("total")) return Math.max(0, after.get("total")! - before.get("total")!);
  let sum = 0;
  for (const [pid, t] of after) sum += t - (before.get(pid) ?? 0);
  return Math.max(0, sum);
}

function machine(): { busy: number; total: number } | null {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    const idle = (line[3] ?? 0) + (line[4] ?? 0);
    const total = line.reduce((a, b) => a + b, 0);
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

export interface CpuShare {
  /** Percent of one core. */
  server: number | null;
  postgres: number;
  bench: number;
  /** Percent of all cores. */
  machineBusy: number | null;
  /** Everything else on the machine, percent of one core (other processes disturb the figures). */
  other: number | null;
}

export function cpuMeter(serverPid?: number) {
  const t0 = performance.now();
  const s0 = serverPid ? procTicks(serverPid) : null;
  const p0 = postgresTicks();
  const b0 = process.cpuUsage();
  const m0 = machine();
  return (): CpuShare => {
    const seconds = (performance.now() - t0) / 1000;
    const s1 = serverPid ? procTicks(serverPid) : null;
    const p1 = postgresTicks();
    const b1 = process.cpuUsage(b0);
    const m1 = machine();
    const pct = (ticks: number) => (ticks / TICK / seconds) * 100;
    const server = s0 !== null && s1 !== null ? Math.round(pct(s1 - s0)) : null;
    const postgres = Math.round(pct(postgresDelta(p0, p1)));
    const bench = Math.round(((b1.user + b1.system) / 1e6 / seconds) * 100);
    const machineBusy = m0 && m1 && m1.total > m0.total ? Math.round(((m1.busy - m0.busy) / (m1.total - m0.total)) * 100) : null;
    const other = machineBusy === null ? null : Math.max(0, Math.round(machineBusy * os.cpus().length - (server ?? 0) - postgres - bench));
    return { server, postgres, bench, machineBusy, other };
  };
}
