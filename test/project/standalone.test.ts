import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

// The repository stands alone: no file sends its reader to something outside
// it (a design document, a sibling folder, another tracker's issue numbers,
// the build machine's paths). The one exception is test/clients/contract.test.ts,
// which compares contract/ with a master copy next to the checkout when there
// is one (and is skipped elsewhere).

const ROOT = path.resolve(__dirname, "../..");
const ALLOWED = new Set(["test/clients/contract.test.ts"]);

// Written so that this file does not match itself.
const OUTSIDE: Array<[string, RegExp]> = [
  ["a design document", /\bDESIGN\.md\b|\bV5-NOTES\b|\bdesign\s+card/i],
  ["a sibling folder", /\.\.\/(\.\.\/)*shared\b/],
  ["a seed folder", /(^|[\s"'`(])seed\//m],
  ["an outside tracker's issue", /\b(issue|ticket)s?\s*#?\d+/i],
  ["the build machine's paths", /\/work\/(shared|tools|main|wt)\b/],
];

/** Tracked (and new, not ignored) files; every file but node_modules and dot-folders without git. */
function projectFiles(): string[] {
  try {
    return execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, encoding: "utf8" })
      .split("\0")
      .filter((f) => f && !f.startsWith("node_modules"));
  } catch {
    const walk = (dir: string): string[] =>
      readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
        const rel = path.posix.join(dir, e.name);
        if (e.isDirectory()) return e.name === "node_modules" || e.name.startsWith(".") ? [] : walk(rel);
        return e.isFile() ? [rel] : [];
      });
    return walk("");
  }
}

function citations(text: string): string[] {
  return OUTSIDE.flatMap(([what, re]) => {
    const m = text.match(re);
    return m ? [`${what}: "${m[0].trim()}"`] : [];
  });
}

test("the checks find each kind of citation", () => {
  const dots = "..";
  expect(citations(`see ${"DESIGN"}.md "Errors"`)).toHaveLength(1);
  expect(citations(`path.resolve(__dirname, "${dots}/${dots}/shared/contract")`)).toHaveLength(1);
  expect(citations(`found by the benchmarks (${"issue"} 9)`)).toHaveLength(1);
  expect(citations(`loaded from ${"seed"}/cafe.sql`)).toHaveLength(1);
  expect(citations(`the ${"design"} card says`)).toHaveLength(1);
  expect(citations(`run node /work/${"tools"}/rehash.mjs`)).toHaveLength(1);
  expect(citations(`reason: "delivery #42"; bench/README.md; the shared_buffers setting`)).toEqual([]);
});

test("no file of the project cites anything outside the repository (but test/clients/contract.test.ts)", () => {
  const files = projectFiles();
  expect(files).toContain("README.md");
  expect(files).toContain("src/main.ts");
  const found: string[] = [];
  for (const file of files) {
    if (ALLOWED.has(file) || !statSync(path.join(ROOT, file), { throwIfNoEntry: false })?.isFile()) continue;
    const text = readFileSync(path.join(ROOT, file), "utf8");
    if (text.includes("\0")) continue;
    for (const c of citations(text)) found.push(`${file}: ${c}`);
  }
  expect(found).toEqual([]);
});
