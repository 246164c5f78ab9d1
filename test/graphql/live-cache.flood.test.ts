import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { liveCacheEvents } from "../../src/metrics.ts";
import { report } from "../support/figures.ts";
import { ROOT, useTestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";

// An attack: anonymous callers emptied the live cache. KioskMenu
// by documentId with a random unused variable was a new key (and a new
// entry) every time; Search with random text, each a legitimate new key,
// pushed the menu's answer out. Now a request's variables the operation
// does not define are no part of its key, and a key offered for the first
// time never pushes out an answer served from the cache (only a key offered
// more times than an answer was served may).

const MAX_ENTRIES = 20;
const t = useTestService({ env: { LIVE_CACHE_MAX_ENTRIES: String(MAX_ENTRIES) } });

const manifest = JSON.parse(readFileSync(path.join(ROOT, "contract", "trusted-documents.json"), "utf8")) as Record<string, string>;
const idOf = (pattern: RegExp) => Object.keys(manifest).find((id) => pattern.test(manifest[id]!))!;
const KIOSK_MENU = idOf(/^\s*query KioskMenu\b/);
const SEARCH = idOf(/^\s*query Search\(\$q: String!\)/);

/** An anonymous request by document id; its status. */
async function read(documentId: string, variables?: Record<string, unknown>): Promise<number> {
  const res = await fetch(`${t.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ documentId, variables }) });
  await res.text();
  return res.status;
}

/** One sample of /metrics. */
async function sample(name: string): Promise<number> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? NaN : Number(line.slice(name.length + 1));
}
const entries = () => sample('cafe_cache_entries{cache="live_cache"}');

beforeAll(async () => {
  // On once the service has checked the database's policies.
  await waitUntil("the live cache on", async () => {
    const hits = liveCacheEvents.hits;
    await read(KIOSK_MENU);
    await read(KIOSK_MENU);
    return liveCacheEvents.hits > hits;
  });
});

test("a variable the operation does not define is no part of the key: 200 KioskMenu reads, each with a random unused variable, are one entry and 200 hits", async () => {
  await read(KIOSK_MENU);
  const before = { entries: await entries(), hits: liveCacheEvents.hits, misses: liveCacheEvents.misses };
  const statuses = new Set<number>();
  for (let i = 0; i < 200; i++) statuses.add(await read(KIOSK_MENU, { [`v${randomBytes(4).toString("hex")}`]: randomBytes(8).toString("hex") }));
  const after = { entries: await entries(), hits: liveCacheEvents.hits, misses: liveCacheEvents.misses };
  report("unused variables", { entries: `${before.entries}→${after.entries}`, hits: after.hits - before.hits, misses: after.misses - before.misses });
  expect([...statuses]).toEqual([200]);
  expect({ entries: after.entries, hits: after.hits - before.hits, misses: after.misses - before.misses }).toEqual({ entries: before.entries, hits: 200, misses: 0 });
});

test(`a flood of ${5 * MAX_ENTRIES} random search texts does not push out the menu (LIVE_CACHE_MAX_ENTRIES ${MAX_ENTRIES})`, async () => {
  await read(KIOSK_MENU);
  await read(KIOSK_MENU); // served from the cache: the kiosks' answer
  const evictions = await sample('cafe_cache_evictions_total{cache="live_cache"}');
  for (let i = 0; i < 5 * MAX_ENTRIES; i++) expect(await read(SEARCH, { q: randomBytes(6).toString("hex") })).toBe(200);
  const hits = liveCacheEvents.hits;
  expect(await read(KIOSK_MENU)).toBe(200);
  const menuHit = liveCacheEvents.hits - hits === 1;
  report("random searches", { entries: await entries(), evictions: (await sample('cafe_cache_evictions_total{cache="live_cache"}')) - evictions, menu_still_held: menuHit });
  expect(menuHit).toBe(true);
});
