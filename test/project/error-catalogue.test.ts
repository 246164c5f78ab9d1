// The error catalogue (common/errorCatalogue.ts) is the one list of error
// codes, and true to what the code does: every SQLSTATE the migrations raise
// is on it, every code on it has a producer (SQL that raises it, code of
// ours that names it, or the library it is marked as coming from), and
// every code our TypeScript answers with is on it. docs/errors.md is checked
// by test/docs.test.ts.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { CloseCode } from "graphql-ws";
import { CALLBACK_ERRORS, ERROR_CATALOGUE, INTERNAL_SQLSTATES, ROUTE_ERRORS, UNUSED_SQLSTATES, WS_CLOSE_CODES, type ErrorEntry } from "../../common/errorCatalogue.ts";

const ROOT = path.resolve(__dirname, "../..");
const CATALOGUE_FILE = "common/errorCatalogue.ts";
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");

/** The SQL the database is built from: every committed migration and current.sql. */
const SQL_FILES = [
  ...readdirSync(path.join(ROOT, "migrations/committed"))
    .filter((f) => f.endsWith(".sql"))
    .map((f) => `migrations/committed/${f}`),
  "migrations/current.sql",
].filter((f) => existsSync(path.join(ROOT, f)));

/** PostgreSQL's SQLSTATE classes (Appendix A of its manual); any other class is one of ours. */
const POSTGRES_CLASSES = new Set("00 01 02 03 08 09 0A 0B 0F 0L 0P 0Z 20 21 22 23 24 25 26 27 28 2B 2D 2F 34 38 39 3B 3D 3F 40 42 44 53 54 55 57 58 72 F0 HV P0 XX".split(" "));
const isOurs = (state: string) => !POSTGRES_CLASSES.has(state.slice(0, 2));

/**
 * One file's SQL with its comments removed and the ranges of its string
 * literals ('...', with '' inside); dollar quotes are treated as code (they
 * hold the function bodies).
 */
function lexSql(text: string): { code: string; strings: Array<[number, number]> } {
  let code = "";
  const strings: Array<[number, number]> = [];
  for (let i = 0; i < text.length;) {
    if (text.startsWith("--", i)) {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (text.startsWith("/*", i)) {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (text[i] === "'") {
      let j = i + 1;
      while (j < text.length && !(text[j] === "'" && text[j + 1] !== "'")) j += text[j] === "'" ? 2 : 1;
      strings.push([code.length, code.length + j + 1 - i]);
      code += text.slice(i, j + 1);
      i = j + 1;
    } else code += text[i++];
  }
  return { code, strings };
}

interface Raise {
  file: string;
  statement: string;
  /** Its SQLSTATE (errcode = '...' or SQLSTATE '...'); undefined: none given, so P0001. */
  sqlstate?: string;
}

/** Every RAISE of an error in the SQL (not notices, not a bare re-raise). */
function raises(): Raise[] {
  const found: Raise[] = [];
  for (const file of SQL_FILES) {
    const { code, strings } = lexSql(read(file));
    const inString = (at: number) => strings.some(([from, to]) => at >= from && at < to);
    for (const m of code.matchAll(/\braise\b/gi)) {
      if (inString(m.index)) continue;
      let end = m.index;
      while (end < code.length && (code[end] !== ";" || inString(end))) end++;
      const statement = code.slice(m.index, end).replace(/\s+/g, " ").trim();
      if (/^raise (debug|log|info|notice|warning)\b/i.test(statement) || /^raise$/i.test(statement)) continue;
      const sqlstate = /\berrcode\s*=\s*'([^']*)'/i.exec(statement)?.[1] ?? /^raise (?:exception )?sqlstate '([^']*)'/i.exec(statement)?.[1];
      found.push({ file, statement, sqlstate });
    }
  }
  return found;
}

/** Our TypeScript (src/ and plugins/, but the catalogue), without its comments. */
function ourTypeScript(): string {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith(".ts") && rel !== CATALOGUE_FILE) files.push(rel);
    }
  };
  walk("src");
  walk("plugins");
  return files
    .map((f) =>
      read(f)
        .replace(/\/\*[\s\S]*?\*\//g, "")
        .replace(/^\s*\/\/.*$/gm, ""),
    )
    .join("\n");
}

const RAISES = raises();
const RAISED = new Set(RAISES.map((r) => r.sqlstate).filter((s): s is string => s !== undefined));
const ENTRIES = Object.entries(ERROR_CATALOGUE as Record<string, ErrorEntry>);
const LISTED_SQLSTATES = new Set([...ENTRIES.flatMap(([, e]) => e.sqlstates ?? []), ...Object.keys(INTERNAL_SQLSTATES)]);
const TS = ourTypeScript();
const named = (code: string) => TS.includes(`"${code}"`);

test("the SQL raises errors, each with a SQLSTATE (a RAISE without one is P0001, masked as INTERNAL_SERVER_ERROR)", () => {
  expect(RAISES.length).toBeGreaterThan(10);
  expect(RAISES.filter((r) => r.sqlstate === undefined).map((r) => `${r.file}: ${r.statement}`)).toEqual([]);
  // A five-character SQLSTATE, not a condition name: the catalogue lists SQLSTATEs.
  expect([...RAISED].filter((s) => !/^[0-9A-Z]{5}$/.test(s))).toEqual([]);
});

test("every SQLSTATE the SQL raises is in the catalogue (a code's sqlstates, or INTERNAL_SQLSTATES)", () => {
  const unlisted = RAISES.filter((r) => r.sqlstate && !LISTED_SQLSTATES.has(r.sqlstate)).map((r) => `${r.file}: ${r.sqlstate}: ${r.statement}`);
  expect(unlisted).toEqual([]);
});

test("every SQLSTATE of ours in the catalogue is raised by the SQL; the unused numbers are neither listed nor raised", () => {
  expect([...LISTED_SQLSTATES].filter((s) => isOurs(s) && !RAISED.has(s))).toEqual([]);
  expect(UNUSED_SQLSTATES.filter((s) => LISTED_SQLSTATES.has(s) || RAISED.has(s))).toEqual([]);
  // ...and each SQLSTATE means one thing.
  const all = ENTRIES.flatMap(([, e]) => e.sqlstates ?? []).concat(Object.keys(INTERNAL_SQLSTATES));
  expect(all.filter((s, i) => all.indexOf(s) !== i)).toEqual([]);
});

test("a raise's DETAIL reaches the client only for a code marked `details`, and each such code is raised with one", () => {
  const withDetail = RAISES.filter((r) => /\bdetail\s*=/i.test(r.statement));
  const detailed = ENTRIES.filter(([, e]) => e.details);
  expect(withDetail.filter((r) => !detailed.some(([, e]) => e.sqlstates?.includes(r.sqlstate!))).map((r) => `${r.file}: ${r.statement}`)).toEqual([]);
  expect(detailed.filter(([, e]) => !withDetail.some((r) => e.sqlstates?.includes(r.sqlstate!))).map(([code]) => code)).toEqual([]);
});

test("every code of the GraphQL catalogue has a producer: code of ours that names it, SQL that raises it, PostgreSQL itself, or the library it is marked with", () => {
  const unproduced = ENTRIES.filter(([code, e]) => !named(code) && !(e.sqlstates ?? []).some((s) => RAISED.has(s) || !isOurs(s)) && e.by === undefined).map(([code]) => code);
  expect(unproduced).toEqual([]);
});

test("a code marked as made by a library names a module that is installed and a dependency", () => {
  const pkg = JSON.parse(read("package.json")) as { dependencies: Record<string, string> };
  const require = createRequire(path.join(ROOT, "package.json"));
  for (const [code, e] of ENTRIES) {
    if (e.by === undefined) continue;
    const name = e.by.split("/")[0]!;
    expect({ code, dependency: name in pkg.dependencies }).toEqual({ code, dependency: true });
    expect(() => require.resolve(e.by!)).not.toThrow();
  }
});

test("the payment callback: every code the SQL answers is on the list with the same status, every database code is answered by it, every route code by the route", () => {
  const callback = CALLBACK_ERRORS as Record<string, { status: number; by: "route" | "database" }>;
  const answered = SQL_FILES.flatMap((f) => [...lexSql(read(f)).code.matchAll(/\brow\((\d{3}), null, '([A-Z_]+)'/g)].map((m) => ({ code: m[2]!, status: Number(m[1]) })));
  expect(answered.length).toBeGreaterThan(0);
  expect(answered.filter(({ code, status }) => callback[code]?.status !== status)).toEqual([]);
  const fromSql = new Set(answered.map((a) => a.code));
  expect(
    Object.entries(callback)
      .filter(([code, e]) => e.by === "database" && !fromSql.has(code))
      .map(([code]) => code),
  ).toEqual([]);
  const route = read("src/payments/generic.ts");
  expect(
    Object.entries(callback)
      .filter(([code, e]) => e.by === "route" && !route.includes(`"${code}"`))
      .map(([code]) => code),
  ).toEqual([]);
  // A code both lists have answers with the same status.
  const graphql = ERROR_CATALOGUE as Record<string, ErrorEntry>;
  expect(
    Object.entries(callback)
      .filter(([code, e]) => graphql[code] && graphql[code].status !== e.status)
      .map(([code]) => code),
  ).toEqual([]);
});

test("every `code:` our TypeScript answers with is on one of the lists, and the other routes' codes are answered", () => {
  const listed = new Set([...Object.keys(ERROR_CATALOGUE), ...Object.keys(CALLBACK_ERRORS), ...Object.keys(ROUTE_ERRORS)]);
  const used = new Set([...TS.matchAll(/\bcode:\s*"([A-Z][A-Z0-9_]+)"/g)].map((m) => m[1]!));
  expect([...used].filter((code) => !listed.has(code))).toEqual([]);
  expect(Object.keys(ROUTE_ERRORS).filter((code) => !named(code))).toEqual([]);
});

test("the WebSocket close codes are graphql-ws's numbers, and every one the server closes with is listed", () => {
  const listed = WS_CLOSE_CODES as Record<string, { name: string; by: "ours" | "graphql-ws" }>;
  const library = CloseCode as unknown as Record<string, number>;
  expect(Object.entries(listed).filter(([n, e]) => e.name in library && library[e.name] !== Number(n))).toEqual([]);
  expect(Object.entries(listed).filter(([n, e]) => !(e.name in library) && Number(n) >= 4000)).toEqual([]); // 4xxx: graphql-ws's
  const socket = read("src/http/websocket.ts");
  const used = [...[...socket.matchAll(/\bCloseCode\.(\w+)/g)].map((m) => library[m[1]!]), ...[...socket.matchAll(/\.close\((\d{4})\b/g)].map((m) => Number(m[1]))];
  expect(used.length).toBeGreaterThan(0);
  expect(used.filter((n) => n === undefined || listed[String(n)]?.by !== "ours")).toEqual([]);
  expect(Object.keys(listed).filter((n) => listed[n]!.by === "ours" && !used.includes(Number(n)))).toEqual([]);
});
