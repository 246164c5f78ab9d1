import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { dropDatabase, startEmbeddedPostgres, type EmbeddedServer } from "../../src/db/database.ts";
import { errorCode, gql, login, request, subscribe, wsClient } from "../support/client.ts";
import { report } from "../support/figures.ts";
import { createPendingOrders } from "../support/fixtures.ts";
import { LONG } from "../support/load.ts";
import { paymentBody, sendCallback } from "../support/paymentProvider.ts";
import { ChildService, killAllChildren, ROOT, withLogsOnFailure } from "../support/service.ts";
import { sleep } from "../support/wait.ts";

// Drill 2: the database restarts under a running service. A throwaway
// embedded PostgreSQL (started and stopped here, never another server) is
// stopped while the service (API + worker in one child process, as `npm
// start` runs it) has an open subscription and the worker is busy with the
// jobs of payments that just arrived. While it is down: /readyz 503, GraphQL
// and the callback route answer at once with errors, nothing hangs, the
// process stays up. When it is back: queries work, the same subscription (no
// client reconnect) receives status changes made after the restart, and the
// worker runs jobs again, including those interrupted by the outage.

// A port below every system's ephemeral range (Linux 32768-60999, macOS and
// Windows 49152-65535): the server stops and starts again on it while the
// test run holds many connections, and one of their local ports was 54350
// once, so PostgreSQL could not bind it for the whole drill.
const PG = { EMBEDDED_PG_DIR: ".data/drill-pg", EMBEDDED_PG_PORT: 29350 } as const;
const OUTAGE_MS = LONG ? 60_000 : 4_000;
const PROMPT_MS = 5_000;
const BUSY_ORDERS = 6;
/** Jobs interrupted by the outage may wait for the dead-worker release (30 s). */
const JOBS_RESUME_LIMIT_MS = 50_000;

let pgServer: EmbeddedServer | null = null;
let svc: ChildService | null = null;
let crashed: ChildService | null = null;

/** A server on our port left by an earlier run of this drill (killed before it could stop it): stop it, it is ours. */
async function stopLeftover(): Promise<void> {
  const wanted = path.resolve(ROOT, PG.EMBEDDED_PG_DIR);
  const dirs = [wanted, path.join(os.tmpdir(), `cafe-api-pg-${Buffer.from(wanted).toString("hex").slice(-16)}`)];
  for (const dir of dirs) {
    const pidFile = path.join(dir, "postmaster.pid");
    if (!existsSync(pidFile)) continue;
    const [pid, , , port] = readFileSync(pidFile, "utf8").split("\n");
    if (Number(port) !== PG.EMBEDDED_PG_PORT) continue;
    try {
      process.kill(Number(pid), "SIGINT");
    } catch {
      continue;
    }
    for (let i = 0; i < 50 && existsSync(pidFile); i++) await sleep(200);
  }
}

afterAll(async () => {
  await killAllChildren();
  await pgServer?.stop().catch(() => {});
});

const STATUS_FEED = "subscription($id: ID!) { orderStatusChanged(orderId: $id) { orderId status message } }";

test(
  "database restart: 503s at once while it is down, then queries, the open subscription and the worker resume",
  () =>
    withLogsOnFailure(
      () => [crashed, svc],
      async () => {
        const problems: string[] = [];
        await stopLeftover();
        pgServer = await startEmbeddedPostgres(PG);
        const rootUrl = pgServer.url;
        const dbUrl = rootUrl.replace(/\/postgres$/, "/cafe_drill_2");
        await dropDatabase(rootUrl, "cafe_drill_2");

        const env = { GRAPHQL_RATE_LIMIT: "0", DATABASE_POOL_SIZE: "5" };
        svc = await ChildService.start({ name: "service", mode: "all", databaseUrl: dbUrl, env });
        const alice = await login(svc.url, "alice");
        const barista = await login(svc.url, "barista");

        // Orders: X (followed), Y (paid after the restart), and a few paid
        // just before the outage so that the worker is busy when it begins.
        const setup = new pg.Pool({ connectionString: dbUrl, max: 2 });
        setup.on("error", () => {});
        const [x, y, ...busy] = await createPendingOrders(setup, 2 + BUSY_ORDERS);
        await setup.end();
        // createPendingOrders alternates alice and bob: X is alice's (she follows it).
        expect(x!.email).toBe("alice@example.com");

        const { client, closes } = wsClient(svc.url, alice);
        let sub = subscribe(client, STATUS_FEED, { id: x!.id });
        await sleep(500);
        expect((await sendCallback(svc.url, paymentBody(x!, "A", "event", `evt-x-${x!.id}`))).status).toBe(200);
        const statuses = () => sub.results.map((r) => r.data?.orderStatusChanged?.status ?? `error:${JSON.stringify(r.errors)}`);
        const waitStatus = async (status: string, timeoutMs: number) => {
          const deadline = Date.now() + timeoutMs;
          while (!statuses().includes(status) && Date.now() < deadline && !sub.completed && !sub.error) await sub.waitFor(sub.results.length + 1, 500);
          return statuses().includes(status);
        };
        expect(await waitStatus("PREPARING", 15_000)).toBe(true);
        const eventsBefore = statuses().length;

        // Payments the worker is busy with when the database goes away.
        const busyAnswers = await Promise.all(busy.map((o) => sendCallback(svc!.url, paymentBody(o, "B", "event", `evt-busy-${o.id}`)).then((r) => r.status)));
        expect(busyAnswers.every((s) => s === 200)).toBe(true);

        // --- the database goes away ---
        const stoppedAt = Date.now();
        await pgServer.stop();
        pgServer = null;

        const probe = async () => {
          const t0 = Date.now();
          const ready = await request(`${svc!.url}/readyz`, { timeoutMs: 30_000 }).then(
            (r) => ({ status: r.status as number | string, ms: r.ms }),
            (e) => ({ status: errorCode(e), ms: Date.now() - t0 }),
          );
          const t1 = Date.now();
          const query = await gql(svc!.url, "{ menuItems { id name } }", { timeoutMs: 30_000 }).then(
            (r) => ({ status: r.status as number | string, codes: (r.body.errors ?? []).map((e) => e.extensions?.code), data: r.body.data, ms: r.ms }),
            (e) => ({ status: errorCode(e), codes: [] as unknown[], data: undefined, ms: Date.now() - t1 }),
          );
          const t2 = Date.now();
          const callback = await sendCallback(svc!.url, paymentBody(y!, "B", "event", `evt-y-${y!.id}`), { timeoutMs: 30_000 }).then(
            (r) => ({ status: r.status as number | string, code: r.json?.error?.code ?? r.json?.status, ms: r.ms }),
            (e) => ({ status: errorCode(e), code: undefined, ms: Date.now() - t2 }),
          );
          return { ready, query, callback };
        };
        const outageProbes: Array<Awaited<ReturnType<typeof probe>>> = [];
        outageProbes.push(await probe());
        while (Date.now() - stoppedAt < OUTAGE_MS) {
          await sleep(1000);
          outageProbes.push(await probe());
        }
        const slowest = Math.max(...outageProbes.flatMap((p) => [p.ready.ms, p.query.ms, p.callback.ms]));
        const serviceSurvivedOutage = svc.alive;
        const subscriptionSurvivedOutage = !sub.completed && !sub.error && closes.length === 0;
        for (const p of outageProbes) {
          if (p.ready.status !== 503) problems.push(`readyz answered ${p.ready.status} while the database was down`);
          if (!(p.query.status === 503 || p.query.codes.length > 0) || p.query.data?.menuItems) problems.push(`a query answered ${p.query.status} ${p.query.codes} while the database was down`);
          if (p.callback.status !== 503) problems.push(`a callback answered ${p.callback.status} ${p.callback.code} while the database was down`);
        }
        if (slowest >= PROMPT_MS) problems.push(`an answer took ${slowest} ms while the database was down`);
        if (!serviceSurvivedOutage) {
          problems.push(
            `the service process exited (${JSON.stringify(svc.exitInfo)}) when the database went away: ${svc.logs
              .filter((l) => !l.startsWith("{"))
              .slice(0, 6)
              .join(" | ")}`,
          );
        } else if (!subscriptionSurvivedOutage) {
          problems.push(`the subscription ended during the outage (completed ${sub.completed}, error ${String(sub.error)}, closes ${JSON.stringify(closes)})`);
        }

        // --- and comes back on the same folder and port ---
        const restartedAt = Date.now();
        pgServer = await startEmbeddedPostgres(PG);
        let sameSubscription = true;
        if (!svc.alive) {
          // Carry on with a new process to learn what else there is to learn.
          crashed = svc;
          svc = await ChildService.start({ name: "service (restarted by the drill)", mode: "all", databaseUrl: dbUrl, port: crashed.port, env });
          const again = wsClient(svc.url, alice);
          sub = subscribe(again.client, STATUS_FEED, { id: x!.id });
          sameSubscription = false;
          await sleep(500);
        }
        let readyAfterMs = -1;
        while (Date.now() - restartedAt < 30_000) {
          const r = await request(`${svc.url}/readyz`, { timeoutMs: 5000 }).catch(() => null);
          if (r?.status === 200) {
            readyAfterMs = Date.now() - restartedAt;
            break;
          }
          await sleep(200);
        }
        let queryAfterMs = -1;
        while (Date.now() - restartedAt < 30_000) {
          const r = await gql(svc.url, "{ menuItems { id } }", { timeoutMs: 5000 }).catch(() => null);
          if (r && r.status === 200 && !r.body.errors && r.body.data?.menuItems?.length) {
            queryAfterMs = Date.now() - restartedAt;
            break;
          }
          await sleep(200);
        }
        if (readyAfterMs < 0) problems.push("readyz never answered 200 after the restart");
        if (queryAfterMs < 0) problems.push("queries never worked again after the restart");

        // Changes after the restart reach the subscription.
        const changeAt = Date.now();
        const brew = await gql(svc.url, "mutation($id: ID!) { updateOrderStatus(id: $id, status: BREWING) { status } }", { token: barista, variables: { id: x!.id } });
        if (brew.body.errors) problems.push(`updateOrderStatus BREWING after the restart: ${JSON.stringify(brew.body.errors)}`);
        const gotBrewing = await waitStatus("BREWING", 15_000);
        const brewingAfterMs = Date.now() - changeAt;
        // One more, to be sure it is live NOTIFY, not only the catch-up after the reconnect.
        const ready = await gql(svc.url, "mutation($id: ID!) { updateOrderStatus(id: $id, status: READY) { status } }", { token: barista, variables: { id: x!.id } });
        if (ready.body.errors) problems.push(`updateOrderStatus READY after the restart: ${JSON.stringify(ready.body.errors)}`);
        const gotReady = await waitStatus("READY", 10_000);
        if (!gotBrewing || !gotReady) problems.push(`the subscription did not see BREWING and READY after the restart (events: ${statuses().join(",")})`);
        if (!sameSubscription) problems.push("the subscription opened before the outage did not survive it (the drill had to subscribe again)");
        else if (statuses().length <= eventsBefore) problems.push("no event after the restart");

        // The worker resumes: a payment after the restart leads to PREPARING,
        // and the payments interrupted by the outage are prepared too.
        const payAt = Date.now();
        let payY: { status: number | string; code?: string } = { status: "not sent" };
        while (Date.now() - payAt < 20_000) {
          payY = await sendCallback(svc.url, paymentBody(y!, "B", "event", `evt-y-${y!.id}`), { timeoutMs: 10_000 }).then(
            (r) => ({ status: r.status, code: r.json?.status ?? r.json?.error?.code }),
            (e) => ({ status: errorCode(e) }),
          );
          if (payY.status === 200) break;
          await sleep(500);
        }
        if (payY.status !== 200) problems.push(`the payment after the restart answered ${JSON.stringify(payY)}`);
        const check = new pg.Client({ connectionString: dbUrl });
        await check.connect();
        const statusOf = async () => {
          const { rows } = await check.query<{ id: string; status: string }>("select id, status::text from app_public.orders where id = any($1::uuid[])", [[y!.id, ...busy.map((o) => o.id)]]);
          return new Map(rows.map((r) => [r.id, r.status]));
        };
        let states = await statusOf();
        let yPreparingMs = -1;
        while (Date.now() - payAt < JOBS_RESUME_LIMIT_MS) {
          if (yPreparingMs < 0 && states.get(y!.id) === "PREPARING") yPreparingMs = Date.now() - payAt;
          if ([...states.values()].every((s) => s === "PREPARING")) break;
          await sleep(500);
          states = await statusOf();
        }
        const busyPreparedMs = [...states.values()].every((s) => s === "PREPARING") ? Date.now() - payAt : -1;
        const { rows: lockedJobs } = await check.query("select key, locked_by, locked_at from graphile_worker.jobs where locked_at is not null");
        await check.end();
        if (yPreparingMs < 0) problems.push(`the order paid after the restart is ${states.get(y!.id)}, not PREPARING`);
        const notPrepared = busy.filter((o) => states.get(o.id) !== "PREPARING");
        if (notPrepared.length) {
          problems.push(
            `${notPrepared.length} of ${busy.length} orders paid just before the outage are not PREPARING ${JOBS_RESUME_LIMIT_MS / 1000} s after the restart (${notPrepared
              .map((o) => states.get(o.id))
              .join(",")}); jobs still locked: ${lockedJobs.map((j) => j.key).join(", ")}`,
          );
        }
        if (!svc.alive) problems.push(`the service exited after the restart: ${JSON.stringify(svc.exitInfo)}`);

        report("2 database-restart", {
          outage_s: ((restartedAt - stoppedAt) / 1000).toFixed(1),
          outage_probes: outageProbes.length,
          readyz_during: [...new Set(outageProbes.map((p) => p.ready.status))],
          graphql_during: [...new Set(outageProbes.map((p) => `${p.query.status}:${p.query.codes.join(",")}`))],
          callback_during: [...new Set(outageProbes.map((p) => `${p.callback.status}:${p.callback.code}`))],
          slowest_answer_during_ms: slowest,
          service_survived_outage: serviceSurvivedOutage,
          subscription_survived_outage: serviceSurvivedOutage && subscriptionSurvivedOutage,
          ready_after_restart_ms: readyAfterMs,
          query_after_restart_ms: queryAfterMs,
          subscription_events: statuses(),
          brewing_event_after_ms: gotBrewing ? brewingAfterMs : "never",
          payment_after_restart: payY,
          worker_preparing_after_ms: yPreparingMs,
          interrupted_orders_prepared_after_ms: busyPreparedMs,
          restarts_survived: serviceSurvivedOutage ? 1 : 0,
          service_warnings: svc.logsAtLeast(40).length,
        });

        // The service still stops cleanly after all that.
        sub.dispose();
        await client.dispose();
        if (svc.alive) {
          svc.signal("SIGTERM");
          const exit = await svc.waitExit(30_000);
          if (exit.code !== 0) problems.push(`SIGTERM after the drill: exit ${JSON.stringify(exit)}`);
        }
        expect(problems).toEqual([]);
      },
    ),
  LONG ? 300_000 : 150_000,
);
