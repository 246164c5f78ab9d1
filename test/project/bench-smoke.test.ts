import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { tempDir } from "../support/tempDirs.ts";

// `npm run bench -- --smoke` end to end (bench/README.md): a few seconds of
// every scenario on tiny data. Asserts that every scenario produced numbers
// and that S4's callback ingest lost and duplicated nothing; never asserts a
// time (a slow or busy machine must not fail it).
//
// The bench gets its own database (<test database>_bench_smoke, e.g.
// cafe_test_bench_smoke) on the server the tests use (CAFE_TEST_DATABASE_URL,
// prepared by globalSetup), creates it, and drops it at the end: the shared
// test database is not touched, and two test runs on different test
// databases do not share a bench database either.

const ROOT = path.resolve(__dirname, "../..");
const SCENARIOS = ["S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9", "S11", "S2x"];

function benchDatabaseUrl(): string | undefined {
  const shared = process.env.CAFE_TEST_DATABASE_URL;
  if (!shared) return undefined;
  const url = new URL(shared);
  const testDatabase = decodeURIComponent(url.pathname.slice(1)) || "cafe_test";
  url.pathname = `/${testDatabase}_bench_smoke`.slice(0, 64);
  return url.toString();
}

function run(args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", ["run", "--silent", "bench", "--", ...args], { cwd: ROOT, env: { ...process.env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGINT");
      reject(new Error(`npm run bench -- --smoke did not finish in ${timeoutMs} ms\n${stderr.slice(-3000)}`));
    }, timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const finite = (x: unknown) => typeof x === "number" && Number.isFinite(x);

describe("npm run bench -- --smoke", () => {
  const out = path.join(tempDir("bench-smoke"), "result.json");
  let result: any;
  let stdout = "";
  let stderr = "";

  beforeAll(async () => {
    const url = benchDatabaseUrl();
    const r = await run(["--smoke", "--out", out, ...(url ? ["--database-url", url] : [])], 480_000);
    stdout = r.stdout;
    stderr = r.stderr;
    if (!existsSync(out)) throw new Error(`no results file (exit ${r.code})\n${stderr.slice(-3000)}`);
    result = JSON.parse(readFileSync(out, "utf8"));
    if (r.code !== 0) throw new Error(`the bench exited ${r.code}\n${stderr.slice(-3000)}`);
  }, 510_000);

  afterAll(() => {
    rmSync(out, { force: true });
  });

  test("records the machine and prints the Markdown table", () => {
    expect(result.profile).toBe("smoke");
    expect(result.machine.cores).toBeGreaterThan(0);
    expect(result.machine.node).toMatch(/^v\d+/);
    expect(result.machine.postgres).toMatch(/^\d+/);
    expect(stdout).toContain("| Scenario | Case | Variant |");
  });

  test.each(SCENARIOS)("%s produced numbers", (id) => {
    const s = result.scenarios.find((x: any) => x.id === id);
    expect(s).toBeDefined();
    expect(s.error).toBeUndefined();
    expect(s.rows.length).toBeGreaterThan(0);
    // S9's rows are clients of one rush: the kiosks (their floor: the same kiosks before the rush), the order path's steps.
    const compared = id === "S9" ? s.rows.filter((r: any) => /kiosks/.test(r.case)) : s.rows;
    for (const row of compared) {
      const where = `${id} ${row.case} ${row.variant}`;
      expect([where, finite(row.opsPerSec) && row.opsPerSec > 0]).toEqual([where, true]);
      // A variant slower than the fixed rate gets no latency run, and says so.
      const latency = row.latencyLoad === "none" ? (row.notes ?? []).some((n: string) => n.startsWith("no latency run")) : finite(row.p50) && finite(row.p99);
      expect([where, latency]).toEqual([where, true]);
    }
    // The service itself always has its latency measured.
    for (const row of compared.filter((r: any) => r.variant === "service")) expect([`${id} ${row.case}`, row.latencyLoad]).not.toEqual([`${id} ${row.case}`, "none"]);
    if (id !== "S2x") {
      const floor = compared.find((r: any) => r.variant === "floor");
      expect(floor).toBeDefined();
      for (const row of compared.filter((r: any) => r.variant !== "floor")) expect(finite(row.ratioOps)).toBe(true);
    }
  });

  test("S9's orders went through payment to PREPARING, and the rush's figures are there", () => {
    const s9 = result.scenarios.find((x: any) => x.id === "S9");
    // (The smoke profile runs the rush with the cache on only.)
    for (const mode of ["cacheOn"]) {
      const r = s9.rush[mode];
      expect([mode, r.orders.placed > 0, r.orders.preparing > 0]).toEqual([mode, true, true]);
      expect([mode, finite(r.payToPreparing.p99)]).toEqual([mode, true]);
      expect([mode, finite(r.perOrder?.statements)]).toEqual([mode, true]);
    }
    expect(s9.rush.cacheOn.cache).not.toBeNull();
    const pay = s9.rows.find((r: any) => /^payment/.test(r.case) && r.variant === "service");
    expect(finite(pay.p99)).toBe(true);
  });

  test("S4 lost and duplicated nothing", () => {
    for (const variant of ["service", "floor"]) {
      const i = result.integrity[variant];
      expect(i.accepted).toBeGreaterThan(0);
      expect(i.lost).toBe(0);
      expect(i.duplicated).toBe(0);
      expect(i.acceptedNotPaid).toBe(0);
      expect(i.acceptedWithoutOneKey).toBe(0);
    }
  });
});
