// The documentation stays true to the code: the generated pages
// (docs/configuration.md, docs/errors.md: scripts/docs.ts) are what `npm run
// docs` writes now, .env.example lists every variable, the README's front
// page stays short, every relative link in README.md and docs/ leads
// to a file that exists, test/README.md's index names every test file, every
// page opens with what it is for, and the claims docs/architecture.md,
// migrations/CONVENTIONS.md and migrations/README.md make of the code hold.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { FALLBACK_FILE_LIMIT, FILE_RESERVE } from "../../common/openFiles.ts";
import { CONFIG_SCHEMA, loadConfig, POOL_SHARE_DIVISOR, poolShares } from "../../src/config.ts";
import { GENERATED, ROOT, TEST_VARIABLES } from "../../scripts/docs.ts";
import { MESSAGES_PER_REQUEST, WS_OVERDRAFT } from "../../common/webSocketLimits.ts";
import { HIT_HALF_LIFE_MS } from "../../src/http/liveCache.ts";

const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");

test.each(Object.keys(GENERATED))("%s is what `npm run docs` writes (run it after changing its source)", (file) => {
  expect(read(file)).toBe(GENERATED[file]!());
});

test("every variable of the config schema has a description and is in .env.example, and docs/configuration.md names each", () => {
  const example = read(".env.example");
  const page = read("docs/configuration.md");
  const names = [...Object.keys(CONFIG_SCHEMA.shape), ...Object.keys(TEST_VARIABLES)];
  expect(names.filter((n) => !new RegExp(`^${n}=`, "m").test(example))).toEqual([]);
  expect(names.filter((n) => !page.includes(`| \`${n}\` |`))).toEqual([]);
  expect(
    Object.entries(CONFIG_SCHEMA.shape)
      .filter(([, f]) => !f.description)
      .map(([n]) => n),
  ).toEqual([]);
  // and nothing in .env.example that the service does not read
  const listed = [...example.matchAll(/^([A-Z_][A-Z0-9_]*)=/gm)].map((m) => m[1]!);
  expect(listed.filter((n) => !names.includes(n))).toEqual([]);
});

test("the README's front page is at most 10 KB", () => {
  expect(statSync(path.join(ROOT, "README.md")).size).toBeLessThanOrEqual(10 * 1024);
});

test("every relative link in README.md and docs/*.md leads to a file that exists", () => {
  const pages = [
    "README.md",
    ...readdirSync(path.join(ROOT, "docs"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => `docs/${f}`),
  ];
  const broken: string[] = [];
  for (const page of pages) {
    for (const [, target] of read(page).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?:|mailto:|#)/.test(target!)) continue;
      const file = target!.split("#")[0]!;
      if (!existsSync(path.resolve(ROOT, path.dirname(page), decodeURI(file)))) broken.push(`${page}: ${target}`);
    }
  }
  expect(broken).toEqual([]);
  // The README links one page per topic.
  const readme = read("README.md");
  for (const topic of ["clients", "trusted-documents", "subscriptions", "payments", "security", "operations", "configuration", "performance", "schema-evolution", "errors"]) {
    expect(readme).toContain(`](docs/${topic}.md)`);
  }
});

test("test/README.md's index names every test file outside test/drills, and each file it names exists", () => {
  const testFiles = (dir: string): string[] =>
    readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? (["drills", "support"].includes(e.name) ? [] : testFiles(`${dir}/${e.name}`)) : e.name.endsWith(".test.ts") ? [`${dir}/${e.name}`] : [],
    );
  const files = testFiles("test").map((f) => f.slice("test/".length, -".test.ts".length));
  const index = read("test/README.md").split("## Index")[1] ?? "";
  const named = [...index.matchAll(/`([a-z]+\/[\w.-]+)`/g)].map((m) => m[1]!);
  expect(files.filter((f) => !named.includes(f))).toEqual([]);
  expect(named.filter((f) => !files.includes(f))).toEqual([]);
  expect(files.length).toBeGreaterThan(50);
});

/** The first block of a page after its title (and any generated-page comment): a paragraph's text, or what else it is. */
function opening(text: string): string {
  const blocks = text
    .replace(/<!--[\s\S]*?-->/g, "")
    .split(/\n\s*\n/)
    .map((b) => b.trim())
    .filter(Boolean);
  const afterTitle = blocks[0]?.startsWith("# ") ? blocks.slice(1) : blocks;
  const first = afterTitle[0] ?? "";
  if (/^#/.test(first)) return "a heading";
  if (/^(```|~~~)/.test(first)) return "a code block";
  if (/^([-*+]|\d+\.)\s/.test(first)) return "a list";
  if (/^\|/.test(first)) return "a table";
  if (/:$/.test(first)) return "an introduction to what follows";
  return first;
}

test("every page in docs/ and migrations/ opens, under its title, with a sentence saying what the page is for (not a heading, list, code block or table)", () => {
  const pages = [
    ...readdirSync(path.join(ROOT, "docs"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => `docs/${f}`),
    "migrations/README.md",
    "migrations/CONVENTIONS.md",
  ];
  const notProse = pages.map((page) => [page, opening(read(page))]).filter(([, first]) => /^(a heading|a code block|a list|a table|an introduction to what follows)$/.test(first!));
  expect(notProse).toEqual([]);
});

test("the README and docs/development.md name the Node version package.json's engines ask for", () => {
  const wanted = (JSON.parse(read("package.json")) as { engines: { node: string } }).engines.node.replace(/^>=\s*/, "");
  expect(read("README.md")).toContain(`Node.js (>= ${wanted}`);
  expect(read("docs/development.md")).toContain(`Node >= ${wanted}`);
});

test("docs/security.md's figures for a WebSocket message's cost and a socket's overdraft are common/webSocketLimits.ts's", () => {
  const page = read("docs/security.md");
  // Written as figures (1/N of a request, N requests' worth), each one held to the constant; never in words, which nothing would check.
  const costs = [...page.matchAll(/\b1\/(\d+) of (?:a request|one)\b/g)].map((m) => Number(m[1]));
  const overdrafts = [...page.matchAll(/\b(\d+) requests' worth\b/g)].map((m) => Number(m[1]));
  expect({ costs: costs.length >= 3, overdrafts: overdrafts.length >= 2 }).toEqual({ costs: true, overdrafts: true });
  expect({ costs: [...new Set(costs)], overdrafts: [...new Set(overdrafts)] }).toEqual({ costs: [MESSAGES_PER_REQUEST], overdrafts: [WS_OVERDRAFT] });
  const inWords =
    /\b(?:a|one) (?:half|third|quarter|fifth|sixth|seventh|eighth|ninth|tenth|twentieth|hundredth) of (?:a request|one)\b|\b(?:two|three|four|five|six|seven|eight|nine|ten|twenty) requests' worth\b/g;
  expect(page.match(inWords) ?? []).toEqual([]);
});

test("docs/live-cache.md's half-life of an answer's count of served times is src/http/liveCache.ts's HIT_HALF_LIFE_MS", () => {
  const said = /count of served times halves for each (\d+) s\b/.exec(read("docs/live-cache.md"));
  expect(Number(said?.[1]) * 1000).toBe(HIT_HALF_LIFE_MS);
});

test("docs/architecture.md names every module src/config.ts imports (it says config.ts imports only those)", () => {
  const said = /`config\.ts` \(([^)]*\([^)]*\))*[^)]*\)/.exec(read("docs/architecture.md"))?.[0] ?? "";
  const imported = [...read("src/config.ts").matchAll(/^import [^;]*? from "(\.{1,2}\/[^"]+)";/gm)].map((m) => m[1]!);
  const named = imported.map((spec) => (spec.startsWith("../common/") ? "`common/`" : `\`${path.basename(spec)}\``));
  expect(imported.length).toBeGreaterThan(0);
  expect(named.filter((n) => !said.includes(n))).toEqual([]);
});

test("docs/security.md and .env.example give the pool shares src/config.ts computes (POOL_SHARE_DIVISOR, poolShares)", () => {
  const defaults = loadConfig({});
  const { share, trustedShare } = poolShares(defaults);
  const pool = defaults.DATABASE_POOL_SIZE;
  const divisors = (text: string, pattern: RegExp) => [...text.matchAll(pattern)].map((m) => Number(m[1]));
  expect(divisors(read("docs/security.md"), /`DATABASE_POOL_SIZE` \/ (\d+)/g)).toEqual([POOL_SHARE_DIVISOR, POOL_SHARE_DIVISOR]);
  expect(divisors(read(".env.example"), /the pool \/ (\d+)/g)).toEqual([POOL_SHARE_DIVISOR, POOL_SHARE_DIVISOR]);
  const said = read("docs/security.md").replace(/\s+/g, " ");
  expect(said).toContain(`at least 1: ${share} of ${pool})`);
  expect(said).toContain(`but at most ${trustedShare} of ${pool}:`);
});

test("docs/security.md gives the connection cap's open-file figures of common/openFiles.ts", () => {
  const page = read("docs/security.md").replace(/\s+/g, " ");
  expect(page).toContain(`${FILE_RESERVE} files kept for the LISTEN connection`);
  expect(page).toContain(`(${FALLBACK_FILE_LIMIT} less the same where the limit cannot be read)`);
});

/** Every committed migration's SQL. */
const MIGRATIONS = readdirSync(path.join(ROOT, "migrations/committed"))
  .filter((f) => f.endsWith(".sql"))
  .sort();
const migrationSql = MIGRATIONS.map((f) => read(`migrations/committed/${f}`)).join("\n");

test("migrations/CONVENTIONS.md: the files it names exist; its policy names and the helpers a policy calls are the migrations' own", () => {
  const page = read("migrations/CONVENTIONS.md");
  const files = [...page.matchAll(/`((?:common|plugins|src|test|scripts|migrations)\/[\w./-]+\.(?:ts|sql|md))`/g)].map((m) => m[1]!);
  expect(files.length).toBeGreaterThan(0);
  expect(files.filter((f) => !existsSync(path.join(ROOT, f)))).toEqual([]);
  expect(page).toContain("The catalogue is `common/errorCatalogue.ts`");
  const policies = new Set([...migrationSql.matchAll(/create policy (\w+)/gi)].map((m) => m[1]!));
  const helpers = new Set([...migrationSql.matchAll(/create policy [^;]*;/gi)].flatMap((m) => [...m[0].matchAll(/app_public\.(\w+)\(\)/g)].map((h) => h[1]!)).filter((h) => !/^tg_/.test(h)));
  const rls = /named policies:([\s\S]*?)Postgres runs them/.exec(page)![1]!;
  expect([...policies].filter((p) => !rls.includes(`\`${p}\``))).toEqual([]);
  expect([...helpers].filter((h) => !rls.includes(`\`${h}()\``))).toEqual([]);
});

test("migrations/README.md's map: every section of the baseline is a row; every later migration has a row naming each of its numbered sections", () => {
  const page = read("migrations/README.md");
  const rows = page.split("\n").filter((l) => l.startsWith("| "));
  const sections = (sql: string) => [...sql.matchAll(/^-- (\d{3,4}) \S/gm)].map((m) => m[1]!);
  const baseline = [...read(`migrations/committed/${MIGRATIONS[0]}`).matchAll(/^-- (\d{3,4} [^\n]+)$/gm)].map((m) => m[1]!.trim());
  expect(baseline.length).toBeGreaterThan(30);
  expect(baseline.filter((title) => !rows.some((r) => r.startsWith(`| ${title} |`)))).toEqual([]);
  // 000002 (the chain of stores) is described in prose below the map.
  const stores = MIGRATIONS.find((f) => f.startsWith("000002-"))!;
  expect(sections(read(`migrations/committed/${stores}`)).filter((n) => !page.includes(` ${n} `))).toEqual([]);
  const missing: string[] = [];
  for (const file of MIGRATIONS.filter((f) => f > stores)) {
    const number = file.slice(0, 6);
    const firstCells = rows.filter((r) => r.startsWith(`| ${number}: `)).map((r) => r.split(" | ")[0]!);
    if (!firstCells.length) missing.push(`${file}: no row`);
    for (const n of sections(read(`migrations/committed/${file}`))) if (firstCells.length && !firstCells.some((c) => c.includes(n))) missing.push(`${file}: section ${n}`);
  }
  expect(missing).toEqual([]);
});

test("docs/api.md and docs/development.md agree with test/support/browser.ts: no system Chromium needed, the npm package's is the fallback", () => {
  expect(read("test/support/browser.ts")).toContain('import("@sparticuz/chromium")');
  for (const page of ["docs/api.md", "docs/development.md"]) {
    const text = read(page);
    expect({ page, namesFallback: text.includes("`@sparticuz/chromium`"), saysItFails: /without chromium the test fails/i.test(text) }).toEqual({ page, namesFallback: true, saysItFails: false });
  }
});
