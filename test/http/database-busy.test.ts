import { randomUUID } from "node:crypto";
import type pg from "pg";
import { SATURATION_LOG_INTERVAL_MS } from "../../src/db/pool.ts";
import { DatabaseHealth, isDatabaseBusy, isDatabaseUnavailable } from "../../src/db/dbHealth.ts";
import { codes } from "../support/client.ts";
import { paymentBody, sendCallback } from "../support/paymentProvider.ts";
import { freePort } from "../support/ports.ts";
import { captureLogLines } from "../support/logs.ts";
import { useTestService } from "../support/service.ts";
import { sleep, waitUntil } from "../support/wait.ts";

// Busy is not down. A full pool makes requests wait
// DATABASE_POOL_WAIT_MS, then answer 503 SERVICE_BUSY with Retry-After; the
// database is not marked down for it: /readyz answers ready (the health
// probe has its own connection), and a request that needs no SQL (the
// trusted Ping, `{ __typename }`) answers 200. While the database is down
// (the probe cannot reach it), the same request still answers, and one
// that needs SQL answers 503 SERVICE_UNAVAILABLE at once. A saturated pool
// writes one warning line per interval, with counts, and 5xx answers are
// logged at warn (503) in the access log.

const t = useTestService({ env: { DATABASE_POOL_SIZE: "2", DATABASE_POOL_WAIT_MS: "1000" } });

const log = captureLogLines();

const post = (body: unknown) => fetch(`${t.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const MENU = "{ menuItems { id } }";

/** Takes every connection of the API's pool (DATABASE_POOL_SIZE = 2) until released. */
async function fillPool(): Promise<() => void> {
  const pool = t.service.api!.pool;
  const held: pg.PoolClient[] = [];
  // A new connection may take longer than the short wait this file sets: try again.
  for (let attempt = 0; held.length < 2 && attempt < 20; attempt++) {
    const client = await pool.connect().catch(() => null);
    if (client) held.push(client);
  }
  const release = () => held.splice(0).forEach((c) => c.release());
  if (held.length < 2) {
    release();
    throw new Error("could not take every connection of the pool");
  }
  return release;
}

test("pool-wait timeouts and max_connections are busy; refused or cut connections are down; statement timeouts are neither", () => {
  const busy = [new Error("timeout exceeded when trying to connect"), Object.assign(new Error("sorry, too many clients already"), { code: "53300" })];
  expect(busy.map(isDatabaseBusy)).toEqual([true, true]);
  expect(busy.map(isDatabaseUnavailable)).toEqual([false, false]);
  const down = [Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }), new Error("Connection terminated due to connection timeout")];
  expect(down.map(isDatabaseBusy)).toEqual([false, false]);
  expect(down.map(isDatabaseUnavailable)).toEqual([true, true]);
  const statement = Object.assign(new Error("canceling statement due to statement timeout"), { code: "57014" });
  expect([isDatabaseBusy(statement), isDatabaseUnavailable(statement)]).toEqual([false, false]);
});

test("a full pool: SQL requests answer 503 SERVICE_BUSY with Retry-After; Ping, { __typename } and /readyz still answer; nothing is marked down", async () => {
  const release = await fillPool();
  try {
    // Longer than a health probe interval (2 s): a probe sharing the pool would have timed out by now.
    await sleep(2500);
    const busy = await post({ query: MENU });
    expect(busy.status).toBe(503);
    expect(busy.headers.get("retry-after")).toBe("1");
    expect(codes({ body: await busy.json() } as never)).toEqual(["SERVICE_BUSY"]);

    const ping = await post({ query: "query Ping { __typename }" });
    expect(ping.status).toBe(200);
    expect(await ping.json()).toMatchObject({ data: { __typename: "Query" } });
    const ready = await fetch(`${t.url}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: "ready", database: "up" }]);
    expect(t.service.api!.health.up).toBe(true);

    // The payment callback has its own pool (CALLBACK_POOL_SIZE): a full
    // API pool does not stop payments. An unknown order reaches the
    // database's rules and is refused by them, not by a busy pool.
    const order = { id: randomUUID(), email: "nobody@example.com", total: "1.00", lines: [] };
    const callback = await sendCallback(t.url, paymentBody(order, "A", "event"));
    expect([callback.status, callback.body?.error?.code]).toEqual([422, "ORDER_NOT_FOUND"]);
    expect(t.service.api!.health.up).toBe(true);
  } finally {
    release();
  }
  // Back to normal at once: nothing was marked down.
  const after = await post({ query: MENU });
  expect(after.status).toBe(200);

  // The access log: the busy 503s counted (src/http/refusalLog.ts), at warn, not info.
  const busyLines = log.lines().filter((l) => l.msg === "refused" && l.status === 503);
  expect(busyLines.length).toBeGreaterThanOrEqual(1);
  expect(busyLines.every((l) => l.level === 40)).toBe(true);
  // No line per refused request beyond the access log (no "unhandled rejection", no "internal error").
  expect(log.lines().filter((l) => l.level >= 50)).toEqual([]);
  // At most one saturation line per interval (10 s), with counts: the
  // refusals above fall in one interval or across one boundary.
  await waitUntil("the pool saturation warning", () => log.lines().find((l) => /pool saturated/.test(l.msg)), 12_000, 100);
  await sleep(SATURATION_LOG_INTERVAL_MS + 500);
  const saturation = log.lines().filter((l) => /pool saturated/.test(l.msg));
  expect(saturation.length).toBeLessThanOrEqual(2);
  for (const line of saturation) expect(line).toMatchObject({ level: 40, poolSize: 2, intervalMs: SATURATION_LOG_INTERVAL_MS });
  expect(saturation.reduce((n, l) => n + l.refusedBusy, 0)).toBeGreaterThanOrEqual(1);
}, 45_000);

test("while the database is down, a request that needs no SQL answers 200 and one that needs SQL answers 503 SERVICE_UNAVAILABLE at once", async () => {
  const health = t.service.api!.health;
  // The probe, pointed at an address where no database listens, finds it down.
  const real = (health as any).connectionString;
  await health.probe(); // a probe of the timer's in flight is over
  (health as any).connectionString = `postgres://nobody:x@127.0.0.1:${await freePort()}/none`;
  (health as any).drop();
  try {
    expect(await health.probe()).toBe(false);
    const started = Date.now();
    const [ping, menu] = await Promise.all([post({ query: "query Ping { __typename }" }), post({ query: MENU })]);
    expect(ping.status).toBe(200);
    expect(menu.status).toBe(503);
    expect(menu.headers.get("retry-after")).toBe("2");
    expect(codes({ body: await menu.json() } as never)).toEqual(["SERVICE_UNAVAILABLE"]);
    expect(Date.now() - started).toBeLessThan(1000);
  } finally {
    (health as any).connectionString = real;
    (health as any).drop();
  }
  expect(await health.probe()).toBe(true);
  expect((await post({ query: MENU })).status).toBe(200);
});

test("the probe says down only when it cannot connect, and up again once it can", async () => {
  const port = await freePort();
  const nowhere = new DatabaseHealth(`postgres://nobody:x@127.0.0.1:${port}/none`, { intervalMs: 60_000, timeoutMs: 1000 });
  try {
    expect(await nowhere.probe()).toBe(false);
    expect(nowhere.up).toBe(false);
  } finally {
    await nowhere.stop();
  }
  const real = new DatabaseHealth(t.urls.authenticator, { intervalMs: 60_000 });
  try {
    real.up = false;
    expect(await real.probe()).toBe(true);
  } finally {
    await real.stop();
  }
});
