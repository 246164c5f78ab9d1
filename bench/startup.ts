// `npm run bench:startup [-- runs]`: start-up time and memory of the service
// run by Node's own type stripping (`node src/main.ts`, what `npm start`
// does) against the same under tsx (`node --import tsx src/main.ts`, what it
// did before). Runs alternate (A B A B ...) so both see the same machine.
// Each run starts API and worker on DATABASE_URL (a superuser URL; required:
// the embedded server's own start-up would swamp the figure), waits for
// /healthz, reads the process's memory from /proc, and stops it.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { freePort } from "./lib/proc.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const runs = Number(process.argv[2] ?? 7);
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error("Set DATABASE_URL to a superuser URL, e.g. postgres://postgres@127.0.0.1:5432/cafe_startup");
  process.exit(2);
}

const variants = {
  "node (type stripping)": [] as string[],
  "node --import tsx": ["--import", "tsx"],
};

function memoryKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
}

async function once(flags: string[]): Promise<{ ms: number; rssMb: number; peakMb: number }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...flags, "src/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn", DEMO_DATA: "false" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`);
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
      if (ok) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const ms = performance.now() - started;
    return { ms, rssMb: memoryKb(child.pid!, "VmRSS") / 1024, peakMb: memoryKb(child.pid!, "VmHWM") / 1024 };
  } finally {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const results: Record<string, Array<{ ms: number; rssMb: number; peakMb: number }>> = {};
await once([]); // the database is migrated once, outside the figures
for (let i = 0; i < runs; i++) {
  for (const [name, flags] of Object.entries(variants)) (results[name] ??= []).push(await once(flags));
}
console.log(`node ${process.version}, ${runs} runs each, medians:`);
for (const [name, rs] of Object.entries(results)) {
  console.log(
    `  ${name.padEnd(24)} ready in ${median(rs.map((r) => r.ms)).toFixed(0)} ms, RSS ${median(rs.map((r) => r.rssMb)).toFixed(0)} MB (peak ${median(rs.map((r) => r.peakMb)).toFixed(0)} MB)`,
  );
}
