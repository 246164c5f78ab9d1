import http from "node:http";
import { errorCode, gql, login, type RawResponse, readResponse, subscribe, wsClient } from "../support/client.ts";
import { jobCounts } from "../support/db.ts";
import { report } from "../support/figures.ts";
import { effectProblems, orderEffects } from "../support/fixtures.ts";
import { LONG } from "../support/load.ts";
import { CALLBACK_PATH, callbackHeaders, paymentBody, sendCallback } from "../support/paymentProvider.ts";
import { ChildService, useDrillDatabase, withLogsOnFailure } from "../support/service.ts";
import { sleep } from "../support/wait.ts";

// Drill 4: graceful shutdown. The service (API + worker, one child process)
// is under load (GraphQL from several clients on keep-alive and fresh
// connections, payment callbacks, subscriptions, and a few slow uploads
// still sending their bodies) when it gets SIGTERM. Every request started
// before the signal gets a whole answer (no reset), the slow ones included;
// every subscription socket gets a close frame; the process exits 0 within
// the limit; nothing is half-written: no job is left locked, every
// processed payment is PAID with its jobs, and a new worker finishes them.

const ORDERS = LONG ? 120 : 40;
const LOAD_MS = LONG ? 20_000 : 3_000;

const { d, orders } = useDrillDatabase("cafe_drill_4", { orders: ORDERS });
let svc: ChildService | null = null;
let after: ChildService | null = null;

interface Sent {
  kind: string;
  t0: number;
  t1: number;
  outcome: string;
}

/** A POST whose body is sent in two parts, the second `holdMs` later. */
function slowPost(url: string, headers: Record<string, string>, body: Buffer, holdMs: number): { t0: number; done: Promise<RawResponse> } {
  const t0 = Date.now();
  const done = new Promise<RawResponse>((resolve, reject) => {
    const req = http.request(url, { method: "POST", headers: { ...headers, "content-length": String(body.length) }, agent: false });
    req.on("response", (res) => readResponse(res, t0).then(resolve, reject));
    req.on("error", reject);
    const half = Math.floor(body.length / 2);
    req.write(body.subarray(0, half));
    setTimeout(() => req.end(body.subarray(half)), holdMs);
  });
  return { t0, done };
}

test(
  "graceful shutdown: SIGTERM under load finishes in-flight requests, closes sockets with a frame, exits 0, leaves nothing half-written",
  () =>
    withLogsOnFailure(
      () => [svc, after],
      async () => {
        svc = await ChildService.start({ name: "service", mode: "all", databaseUrl: d.url, env: { GRAPHQL_RATE_LIMIT: "0" } });
        const url = svc.url;
        const alice = await login(url, "alice");
        const barista = await login(url, "barista");

        // Subscriptions of three kinds of client.
        const subs = [
          { who: "alice", ...wsClient(url, alice), query: "subscription($id: ID!) { orderStatusChanged(orderId: $id) { status } }", vars: { id: orders[0]!.id } },
          { who: "barista", ...wsClient(url, barista), query: "subscription($id: ID!) { orderUpdated(id: $id) { id status } }", vars: { id: orders[1]!.id } },
          { who: "kiosk", ...wsClient(url, null), query: "subscription { newCoffee { id name } }", vars: {} },
        ].map((s) => ({ ...s, sub: subscribe(s.client, s.query, s.vars) }));
        await sleep(500);

        const sent: Sent[] = [];
        let signalAt = Infinity;
        let stop = false;
        const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 4 });
        const queries: Array<{ q: string; token: string | null }> = [
          { q: "{ menuItems { id name price inventory } featuredCoffee { id } }", token: null },
          { q: "{ orders(status: [PENDING, PAID, PREPARING]) { id status total items { quantity coffee { name } } } }", token: barista },
          { q: "{ customer { name points recentOrders(limit: 3) { id status } } }", token: alice },
          { q: "{ lowStockItems { currentStock alertLevel ingredient { name } } }", token: barista },
        ];
        const graphqlLoop = async (n: number) => {
          let refused = 0;
          for (let i = 0; !stop; i++) {
            const { q, token } = queries[(n + i) % queries.length]!;
            const t0 = Date.now();
            try {
              const r = await gql(url, q, { token, agent: n % 2 ? keepAlive : false, timeoutMs: 30_000 });
              sent.push({ kind: "graphql", t0, t1: Date.now(), outcome: `${r.status}${r.body.errors ? ":" + r.body.errors[0]?.extensions?.code : ""}` });
              refused = 0;
            } catch (e) {
              sent.push({ kind: "graphql", t0, t1: Date.now(), outcome: errorCode(e) });
              if (t0 > signalAt && ++refused >= 3) return;
            }
            await sleep(5);
          }
        };
        let nextOrder = 2;
        const paidAnswers = new Map<string, string>();
        const callbackLoop = async () => {
          let refused = 0;
          while (!stop && nextOrder < orders.length - 3) {
            const o = orders[nextOrder++]!;
            const t0 = Date.now();
            try {
              const r = await sendCallback(url, paymentBody(o, "B", "event", `evt-${o.id}`), { timeoutMs: 30_000 });
              const outcome = `${r.status}:${r.json?.status ?? r.json?.error?.code}`;
              sent.push({ kind: "callback", t0, t1: Date.now(), outcome });
              paidAnswers.set(o.id, outcome);
              refused = 0;
            } catch (e) {
              sent.push({ kind: "callback", t0, t1: Date.now(), outcome: errorCode(e) });
              paidAnswers.set(o.id, errorCode(e));
              if (t0 > signalAt && ++refused >= 3) return;
            }
            await sleep(40);
          }
        };
        const loops = [...[0, 1, 2, 3, 4, 5].map(graphqlLoop), callbackLoop(), callbackLoop()];

        await sleep(LOAD_MS);
        // Slow uploads: half the body before the signal, the rest after it.
        const slowOrders = orders.slice(-3);
        const slowCallbacks = slowOrders.slice(0, 2).map((o) => {
          const body = Buffer.from(paymentBody(o, "A", "idem", `slow-${o.id}`));
          return { order: o, ...slowPost(`${url}${CALLBACK_PATH}`, callbackHeaders(body), body, 1500) };
        });
        const gqlBody = Buffer.from(JSON.stringify({ query: "{ menuItems { id name } }" }));
        const slowGraphql = slowPost(`${url}/graphql`, { "content-type": "application/json", accept: "application/json" }, gqlBody, 1500);
        await sleep(300);
        // Two heavy requests (each keeps the event loop busy for a few hundred
        // milliseconds: 30 full introspections) in flight when the signal comes.
        const heavyQuery = `query { ${Array.from({ length: 30 }, (_, i) => `s${i}: __schema { types { name fields { name type { name ofType { name } } } } }`).join(" ")} }`;
        const heavy = [0, 1].map(() =>
          gql(url, heavyQuery, { timeoutMs: 30_000 }).then(
            (r) => `${r.status}:${r.body.data?.s0 ? "data" : r.body.errors?.[0]?.extensions?.code}`,
            (e) => errorCode(e),
          ),
        );
        await sleep(30);

        signalAt = Date.now();
        svc.signal("SIGTERM");
        const exit = await svc.waitExit(30_000);
        const exitMs = Date.now() - signalAt;
        stop = true;
        await Promise.all(loops);
        keepAlive.destroy();
        const slow = await Promise.all(
          [...slowCallbacks.map((s) => s.done), slowGraphql.done].map((p) =>
            p.then(
              (r) => `${r.status}:${r.json?.status ?? (r.json?.data ? "data" : (r.json?.errors?.[0]?.extensions?.code ?? r.json?.error?.code))}`,
              (e) => errorCode(e),
            ),
          ),
        );
        const heavyAnswers = await Promise.all(heavy);
        await sleep(200);
        const closes = subs.map((s) => ({ who: s.who, closes: s.closes, completed: s.sub.completed, error: s.sub.error ? String((s.sub.error as any)?.code ?? s.sub.error) : null }));

        const before = sent.filter((s) => s.t0 < signalAt);
        const afterSignal = sent.filter((s) => s.t0 >= signalAt);
        const brokenBefore = before.filter((s) => !/^\d{3}/.test(s.outcome));
        const outcomes = (xs: Sent[]) => {
          const m: Record<string, number> = {};
          for (const s of xs) m[`${s.kind}:${s.outcome}`] = (m[`${s.kind}:${s.outcome}`] ?? 0) + 1;
          return m;
        };

        // Nothing half-written.
        const jobs = await jobCounts(d.db);
        const processedIds = [...paidAnswers.entries()].filter(([, a]) => a === "200:processed").map(([id]) => id);
        for (const [i, s] of slowCallbacks.entries()) if (slow[i] === "200:processed") processedIds.push(s.order.id);
        const { rows: keyed } = await d.db.query<{ order_id: string }>("select order_id from app_private.processed_payment_keys where outcome = 'processed'");
        const keyedIds = new Set(keyed.map((k) => k.order_id));
        const { rows: paidRows } = await d.db.query<{ id: string }>("select id from app_public.orders where id = any($1::uuid[]) and status <> 'PENDING'", [orders.map((o) => o.id)]);
        const { rows: jobless } = await d.db.query<{ id: string }>(
          `select o.id from app_public.orders o
            where o.id = any($1::uuid[]) and o.status = 'PAID'
              and not exists (select 1 from graphile_worker.jobs j where j.key = 'start_preparation:' || o.id)`,
          [orders.map((o) => o.id)],
        );
        const halfWritten = [
          ...processedIds.filter((id) => !keyedIds.has(id)).map((id) => `${id}: answered processed, no key`),
          ...paidRows.filter((r) => !keyedIds.has(r.id)).map((r) => `${r.id}: paid without a processed key`),
          ...jobless.map((r) => `${r.id}: PAID with no start_preparation job`),
        ];

        // A new worker finishes what was queued.
        after = await ChildService.start({ name: "worker after", mode: "worker", databaseUrl: d.url, waitReady: false });
        const paidIds = paidRows.map((r) => r.id);
        let effects = await orderEffects(d.db, paidIds);
        const settleStart = Date.now();
        let unsettled = paidIds.filter((id) => effectProblems(effects.get(id), true).length);
        while (unsettled.length && Date.now() - settleStart < 30_000) {
          await sleep(500);
          effects = await orderEffects(d.db, paidIds);
          unsettled = paidIds.filter((id) => effectProblems(effects.get(id), true).length);
        }

        report("4 graceful-shutdown", {
          requests_before_signal: before.length,
          broken_before_signal: brokenBefore.length,
          outcomes_before: outcomes(before),
          requests_after_signal: afterSignal.length,
          outcomes_after: outcomes(afterSignal),
          slow_uploads: slow,
          heavy_in_flight: heavyAnswers,
          ws_closes: closes.map((c) => `${c.who}:${c.closes.map((x) => x.code).join(",") || "none"}`),
          exit: exit,
          exit_after_ms: exitMs,
          jobs_left_locked: jobs.locked,
          jobs_queued_at_exit: jobs.total,
          payments_processed: processedIds.length,
          half_written: halfWritten.length,
          settled_after_restart: `${paidIds.length - unsettled.length}/${paidIds.length}`,
        });

        expect(brokenBefore.map((s) => `${s.kind} started ${s.t0 - signalAt} ms: ${s.outcome}`)).toEqual([]);
        expect(before.filter((s) => /^5/.test(s.outcome)).map((s) => `${s.kind}: ${s.outcome}`)).toEqual([]);
        expect(slow).toEqual(["200:processed", "200:processed", "200:data"]);
        expect(heavyAnswers.map((a) => a.startsWith("200:"))).toEqual([true, true]);
        for (const c of closes) expect({ who: c.who, codes: c.closes.map((x) => x.code) }).toEqual({ who: c.who, codes: [1001] });
        expect(exit).toEqual({ code: 0, signal: null });
        expect(exitMs).toBeLessThan(25_000);
        expect(jobs.locked).toBe(0);
        expect(halfWritten).toEqual([]);
        expect(unsettled.map((id) => ({ id, problems: effectProblems(effects.get(id), true) }))).toEqual([]);
      },
    ),
  LONG ? 300_000 : 120_000,
);
