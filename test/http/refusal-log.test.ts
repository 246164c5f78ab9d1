import { RefusalLog, refusals } from "../../src/http/refusalLog.ts";
import { captureLogLines } from "../support/logs.ts";
import { useTestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";

// Refusals are counted, not each logged (src/http/refusalLog.ts): one line
// per source and reason per interval, with the count; successes keep their
// access-log lines. First the mechanism on a clock of its own, then a
// flood of refused requests against the service, from several sources
// (X-Forwarded-For, TRUST_PROXY=true), each refused for two reasons.

describe("the refusal log", () => {
  const make = (options: { maxEntries?: number } = {}) => {
    let now = 1_000_000;
    const lines: any[] = [];
    const log = new RefusalLog({ intervalMs: 60_000, now: () => now, write: (l) => lines.push(l), bounds: { maxEntries: options.maxEntries ?? 100, maxBytes: 1_000_000 } });
    return { log, lines, advance: (ms: number) => (now += ms) };
  };

  test("a flood writes the first refusal of each source and reason at once, then one line per interval with the count", () => {
    const { log, lines, advance } = make();
    for (let i = 0; i < 10_000; i++) {
      log.note(`10.0.0.${i % 4}`, i % 2 ? "RATE_LIMITED" : "TOO_MANY_CONNECTIONS", { status: 429 });
      if (i % 100 === 0) advance(100); // 10 s in all: within one interval
    }
    log.flush();
    // Each source is refused for one reason (i % 4 fixes i % 2): 4 sources and reasons, a line each.
    expect(lines).toHaveLength(4);
    expect(lines.every((l) => l.refused === 1)).toBe(true);
    advance(60_000);
    log.flush();
    expect(lines).toHaveLength(8);
    expect(lines.slice(4).reduce((n, l) => n + l.refused, 0)).toBe(10_000 - 4);
    expect(lines.slice(4).every((l) => l.status === 429 && l.sinceMs > 0)).toBe(true);
    // Nothing more counted: nothing more written.
    advance(60_000);
    log.flush();
    expect(lines).toHaveLength(8);
    log.stop();
  });

  test("no two lines of one source and reason are closer than the interval, however the refusals come", () => {
    const { log, lines, advance } = make();
    for (let s = 0; s < 600; s++) {
      log.note("10.0.0.1", "RATE_LIMITED");
      advance(1000);
      if (s % 7 === 0) log.flush();
    }
    log.flush(true);
    expect(lines.length).toBeLessThanOrEqual(600 / 60 + 1);
    expect(lines.reduce((n, l) => n + l.refused, 0)).toBe(600);
    log.stop();
  });

  test("bounded: the counts of sources beyond its bound are written as one line of others", () => {
    const { log, lines, advance } = make({ maxEntries: 10 });
    for (let i = 0; i < 1000; i++) {
      log.note(`10.0.${i >> 8}.${i & 255}`, "RATE_LIMITED");
      log.note(`10.0.${i >> 8}.${i & 255}`, "RATE_LIMITED");
    }
    expect(lines).toHaveLength(1000); // each source's first refusal, at once; its second is counted
    advance(60_000);
    const before = lines.length;
    log.flush();
    const written = lines.slice(before);
    // Sources still held write their own line; the others' counts are in one line.
    expect(written.length).toBeLessThanOrEqual(11);
    expect(written.find((l) => l.source === "(others)")?.refused).toBeGreaterThan(0);
    expect(written.reduce((n, l) => n + l.refused, 0)).toBe(1000);
    log.stop();
  });
});

describe("in the service", () => {
  const t = useTestService({ env: { TRUST_PROXY: "true" } });
  const log = captureLogLines();
  const SOURCES = ["203.0.113.1", "203.0.113.2", "203.0.113.3"];

  test("a flood of refused requests writes at most one line per source and reason, with the count; successes keep their lines", async () => {
    const send = (source: string, body: unknown) =>
      fetch(`${t.url}/graphql`, { method: "POST", headers: { "content-type": "application/json", "x-forwarded-for": source }, body: JSON.stringify(body) });
    const PER = 40;
    const answers: number[] = [];
    for (const source of SOURCES) {
      for (let i = 0; i < PER; i++) {
        // Two reasons: a body that is not a GraphQL request, a path that is nothing.
        answers.push((await send(source, { nothing: i })).status);
        answers.push((await fetch(`${t.url}/no/such/path/${i}`, { headers: { "x-forwarded-for": source } })).status);
      }
    }
    expect(answers.every((s) => s >= 400 && s < 500)).toBe(true);
    const ok = await send(SOURCES[0]!, { query: "query Fine { __typename }" });
    expect(ok.status).toBe(200);
    const fine = await waitUntil("the success's access line", () => log.lines().find((l) => l.msg === "request" && l.operationName === "Fine"), 2000, 10);
    expect(fine.status).toBe(200);

    const refusedLines = () => log.lines().filter((l) => l.msg === "refused" && SOURCES.includes(l.source));
    // No refused request wrote a line of its own.
    expect(log.lines().filter((l) => l.msg === "request" && l.status >= 400)).toEqual([]);
    const first = refusedLines();
    const keys = new Set(first.map((l) => `${l.source} ${l.reason}`));
    expect(keys.size).toBe(first.length); // one line per source and reason
    expect(first.length).toBe(SOURCES.length * 2);
    expect(first.every((l) => l.refused === 1)).toBe(true);
    expect(first.map((l) => `${l.route} ${l.reason}`).sort()).toEqual([...SOURCES.map(() => "/graphql 400"), ...SOURCES.map(() => "other 404")].sort());

    // What is counted since is written at the end of the interval (here: at once, as at shutdown).
    refusals.flush(true);
    const all = refusedLines();
    expect(all.length).toBe(SOURCES.length * 2 * 2);
    for (const source of SOURCES) expect(all.filter((l) => l.source === source).reduce((n, l) => n + l.refused, 0)).toBe(PER * 2);
  });
});
