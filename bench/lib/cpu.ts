// CPU accounting from /proc (Linux), in percent of one core over a run: the
// process under test, this PostgreSQL cluster (its postmaster, its live
// children and the children it has reaped, so short-lived backends count),
// the bench process, and everything else on the machine.
import { readFileSync, readdirSync } from "node:fs";
import os from "node:os";

const TICK = 100; // USER_HZ on Linux
let postmaster: number | null = null;

/** [ppid, utime, stime, cutime, cstime] and the command name, or null when the process is gone. */
function stat(pid: number | string): { comm: string; f: number[] } | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return { comm: s.slice(s.indexOf("(") + 1, s.lastIndexOf(")")), f: [1, 11, 12, 13, 14].map((i) => Number(f[i])) };
  } catch {
    return null;
  }
}

/** A process's own CPU time so far in clock ticks (TICK a second), user + system, its threads included (0 once it is gone). */
export function processCpuTicks(pid: number): number {
  const s = stat(pid);
  return s ? s.f[1]! + s.f[2]! : 0;
}

/** Counts only the cluster whose backend this is (others may run on the machine). */
export function setPostgresBackend(backendPid: number): void {
  postmaster = stat(backendPid)?.f[0] ?? null;
}

function postgresTicks(): number {
  let total = 0;
  for (const d of postmaster === null ? [] : readdirSync("/proc")) {
    const s = /^\d+$/.test(d) ? stat(d) : null;
    if (Number(d) === postmaster) total += s ? s.f[1]! + s.f[2]! + s.f[3]! + s.f[4]! : 0;
    else if (s?.comm === "postgres" && s.f[0] === postmaster) total += s.f[1]! + s.f[2]!;
  }
  return total;
}

function machine(): { busy: number; total: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = line.reduce((a, b) => a + b, 0);
  return { busy: total - line[3]! - line[4]!, total };
}

export interface CpuShare {
  server: number | null;
  postgres: number;
  bench: number;
  /** Percent of all cores. */
  machineBusy: number | null;
  other: number | null;
}

export function cpuMeter(serverPid?: number): () => CpuShare {
  const t0 = performance.now();
  const ticks = (pid?: number) => {
    const s = pid ? stat(pid) : null;
    return s ? s.f[1]! + s.f[2]! : null;
  };
  const [s0, p0, b0, m0] = [ticks(serverPid), postgresTicks(), process.cpuUsage(), machine()];
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    const [s1, p1, b1, m1] = [ticks(serverPid), postgresTicks(), process.cpuUsage(b0), machine()];
    const pct = (t: number) => Math.round((t / TICK / seconds) * 100);
    const server = s0 !== null && s1 !== null ? pct(s1 - s0) : null;
    const postgres = Math.max(0, pct(p1 - p0));
    const bench = Math.round(((b1.user + b1.system) / 1e6 / seconds) * 100);
    const machineBusy = m1.total > m0.total ? Math.round(((m1.busy - m0.busy) / (m1.total - m0.total)) * 100) : null;
    const other = machineBusy === null ? null : Math.max(0, Math.round(machineBusy * os.cpus().length - (server ?? 0) - postgres - bench));
    return { server, postgres, bench, machineBusy, other };
  };
}
