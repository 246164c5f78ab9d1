import { type DemoUser, errorCode, gql, login, request, subscribe, wsClient } from "../support/client.ts";
import { operationsOf } from "../support/contract.ts";
import { report, say } from "../support/figures.ts";
import { LONG } from "../support/load.ts";
import { sendCallback } from "../support/paymentProvider.ts";
import { ChildService, useDrillDatabase, withLogsOnFailure } from "../support/service.ts";
import { sleep } from "../support/wait.ts";
import http from "node:http";

// Drill 8: soak. Mixed traffic for DURATION: the five clients' contract
// operations (whole files with operationName, as their roles), orders paid
// by signed callbacks (and some resent), the worker preparing them, the
// barista moving them on, subscriptions opened and closed. Memory (the
// service's RSS from /proc and its heap from /metrics) and its database
// connections are sampled and must stay flat; no unexpected errors.

const DURATION_MS = LONG ? 600_000 : 30_000;
const WARMUP_MS = LONG ? 30_000 : 5_000;

const { d } = useDrillDatabase("cafe_drill_8");
let svc: ChildService | null = null;

const FILES = {
  kiosk: operationsOf("kiosk"),
  mobile: operationsOf("mobile"),
  barista: operationsOf("barista"),
  admin: operationsOf("admin"),
  pos: operationsOf("pos"),
};
/** Domain refusals that concurrent clients cause among themselves. */
const EXPECTED_CODES = new Set(["OUT_OF_STOCK", "INVALID_TRANSITION"]);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : 0;
};

test(
  `soak: ${DURATION_MS / 1000} s of mixed traffic keeps memory and connections flat, without unexpected errors`,
  () =>
    withLogsOnFailure(
      () => [svc],
      async () => {
        svc = await ChildService.start({ name: "service", mode: "all", databaseUrl: d.url, env: { GRAPHQL_RATE_LIMIT: "0" } });
        const url = svc.url;
        const tokens: Record<DemoUser, string> = {
          alice: await login(url, "alice"),
          bob: await login(url, "bob"),
          barista: await login(url, "barista"),
          admin: await login(url, "admin"),
        };
        const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
        const counts: Record<string, number> = {};
        const unexpected: string[] = [];
        const count = (k: string) => (counts[k] = (counts[k] ?? 0) + 1);
        let stop = false;

        /** Runs a contract operation; returns its data (null on error), recording what went wrong. */
        const op = async (file: keyof typeof FILES, operationName: string, who: DemoUser | null, variables?: Record<string, unknown>) => {
          try {
            const r = await gql(url, FILES[file], { operationName, variables, token: who ? tokens[who] : null, agent, timeoutMs: 15_000 });
            count(`${file}.${operationName}`);
            const codes = (r.body.errors ?? []).map((e) => e.extensions?.code);
            for (const c of codes) {
              if (EXPECTED_CODES.has(c)) count(`expected:${c}`);
              else unexpected.push(`${file}.${operationName} as ${who}: ${c} ${r.body.errors?.[0]?.message?.slice(0, 100)}`);
            }
            if (r.status !== 200) unexpected.push(`${file}.${operationName}: HTTP ${r.status}`);
            return codes.length ? null : r.body.data;
          } catch (e) {
            unexpected.push(`${file}.${operationName}: ${errorCode(e)}`);
            return null;
          }
        };
        const loop = async (pauseMs: number, body: (i: number) => Promise<unknown>) => {
          for (let i = 0; !stop; i++) {
            await body(i);
            await sleep(pauseMs);
          }
        };

        const toPay: Array<{ id: string; total: number }> = [];
        const paidOrders: string[] = [];
        const latte = "40000000-0000-4000-8000-000000000003";
        const americano = "40000000-0000-4000-8000-000000000017"; // no recipe: never out of stock
        const loops = [
          // Kiosk (anonymous).
          loop(40, async (i) => op("kiosk", i % 2 ? "KioskMenu" : "FeaturedList", null)),
          // Mobile: reads, and now and then an order.
          loop(40, async (i) => {
            const who: DemoUser = i % 2 ? "alice" : "bob";
            const names = ["MobileHome", "CoffeeDetail", "Search", "SearchByName"] as const;
            const name = names[i % names.length]!;
            await op("mobile", name, who, name === "CoffeeDetail" ? { id: latte } : name === "Search" ? { q: "mocha" } : undefined);
            if (i % 25 === 0) {
              const placed = await op("mobile", "PlaceOrder", who, { input: { items: [{ coffeeId: i % 50 ? americano : latte, quantity: 1 }], notes: "soak" } });
              const o = placed?.createOrder;
              if (o) {
                if (i % 200 === 0) await op("mobile", "CancelMine", who, { id: o.id });
                else toPay.push({ id: o.id, total: o.total });
              }
            }
            if (i % 100 === 50) await op("mobile", "UpdateProfile", who, { input: { name: who === "alice" ? "Alice Martin" : "Bob Chen" } });
          }),
          // Barista: the queue, and moving orders on.
          loop(150, async () => {
            const q = await op("barista", "BaristaQueue", "barista");
            await op("barista", "Stock", "barista");
            const next: Record<string, string> = { PREPARING: "BREWING", BREWING: "READY" };
            const o = q?.orders?.find((x: any) => next[x.status]);
            if (o) {
              await op("barista", "OneOrder", "barista", { id: o.id });
              await op("barista", "Advance", "barista", { id: o.id, status: next[o.status] });
            }
            const ready = await gql(url, "{ orders(status: READY) { id } }", { token: tokens.barista, agent }).catch(() => null);
            const r = ready?.body.data?.orders?.[0];
            if (r) await op("barista", "Advance", "barista", { id: r.id, status: "COMPLETED" });
          }),
          // Admin: the dashboard, now and then a new coffee or a new price.
          loop(400, async (i) => {
            await op("admin", "AdminDashboard", "admin");
            if (i % 25 === 0) await op("admin", "AddCoffee", "admin", { name: `Soak ${Date.now()}-${i}`, price: 3.1 });
            if (i % 10 === 5) await op("admin", "Reprice", "admin", { id: americano, newPrice: i % 20 === 5 ? 2.8 : 2.9 });
          }),
          // Point of sale.
          loop(300, async (i) => {
            await op("pos", "PosCustomer", "barista", { id: "00000000-0000-4000-8000-00000000a11c" });
            if (i % 8 === 0) {
              const placed = await op("pos", "PosOrder", "barista", { coffeeId: americano, quantity: 1, notes: "soak till" });
              if (placed?.createOrder) toPay.push({ id: placed.createOrder.id, total: placed.createOrder.total });
            }
          }),
          // The provider pays what was ordered, resending now and then.
          loop(50, async (i) => {
            const o = toPay.shift();
            if (!o) return;
            const { rows } = await d.db.query(
              "select coalesce(json_agg(json_build_object('product', coffee_id, 'quantity', quantity)), '[]') as items from app_public.order_items where order_id = $1",
              [o.id],
            );
            const body = JSON.stringify({ order_id: o.id, status: "paid", amount: Number(o.total).toFixed(2), items: rows[0].items, event_id: `soak-${o.id}` });
            for (let k = 0; k < (i % 10 === 0 ? 2 : 1); k++) {
              const r = await sendCallback(url, body).catch((e) => ({ status: errorCode(e), json: null as any }));
              count(`callback:${r.status}:${r.json?.status ?? r.json?.error?.code ?? ""}`);
              if (r.status !== 200) unexpected.push(`callback for ${o.id}: ${r.status} ${JSON.stringify(r.json)}`);
              else if (k === 0) paidOrders.push(o.id);
            }
          }),
        ];

        // Subscriptions: one that stays (new coffees), and short-lived ones on orders.
        const adminWs = wsClient(url, tokens.admin);
        const newCoffees = subscribe(adminWs.client, FILES.admin, {}, "NewOnMenu");
        let subscriptionEvents = 0;
        let subscriptionsOpened = 1;
        const subs = (async () => {
          while (!stop) {
            const { rows } = await d.db.query(
              "select id, customer_id from app_public.orders where customer_id in ('00000000-0000-4000-8000-00000000a11c', '00000000-0000-4000-8000-000000000b0b') order by time_ordered desc limit 1",
            );
            const o = rows[0];
            if (o) {
              const who: DemoUser = o.customer_id.endsWith("a11c") ? "alice" : "bob";
              const ws = wsClient(url, tokens[who]);
              const a = subscribe(ws.client, FILES.mobile, { id: o.id }, "TrackOrder");
              const b = subscribe(ws.client, FILES.mobile, { orderId: o.id }, "StatusFeed");
              subscriptionsOpened += 2;
              await sleep(2000);
              for (const s of [a, b]) {
                subscriptionEvents += s.results.length;
                for (const r of s.results) if (r.errors) unexpected.push(`subscription: ${JSON.stringify(r.errors).slice(0, 120)}`);
                if (s.error) unexpected.push(`subscription error: ${String((s.error as any)?.message ?? s.error)}`);
                s.dispose();
              }
              await ws.client.dispose();
            }
            await sleep(500);
          }
        })();

        // Samples: RSS, heap (from /metrics), the service's connections.
        const samples: Array<{ t: number; rss: number; heap: number; conns: number }> = [];
        const started = Date.now();
        while (Date.now() - started < DURATION_MS) {
          await sleep(1000);
          const metrics = await request(`${url}/metrics`, { timeoutMs: 5000 }).catch(() => null);
          const heap = Number(/^nodejs_heap_size_used_bytes (\d+(?:\.\d+)?)/m.exec(metrics?.text ?? "")?.[1] ?? NaN) / 1024 / 1024;
          const { rows } = await d.db.query("select count(*)::int as n from pg_stat_activity where datname = $1 and usename <> 'postgres'", [d.name]);
          samples.push({ t: Date.now() - started, rss: svc.rssMb() ?? NaN, heap, conns: rows[0].n });
          if (!svc.alive) break;
        }
        stop = true;
        await Promise.all([...loops, subs]);
        subscriptionEvents += newCoffees.results.length;
        newCoffees.dispose();
        await adminWs.client.dispose();
        agent.destroy();

        // Paid orders are prepared (or moved on by the barista).
        await sleep(3000);
        const { rows: stuck } = await d.db.query("select count(*)::int as n from app_public.orders where id = any($1::uuid[]) and status in ('PENDING', 'PAID')", [paidOrders]);
        const { rows: failedJobs } = await d.db.query("select count(*)::int as n from graphile_worker.jobs where last_error is not null");
        const errorLogs = svc.logsAtLeast(50);

        const after = samples.filter((s) => s.t >= WARMUP_MS);
        const third = Math.max(1, Math.floor(after.length / 3));
        const first = after.slice(0, third);
        const last = after.slice(-third);
        const rssGrowth = median(last.map((s) => s.rss)) - median(first.map((s) => s.rss));
        const heapGrowth = median(last.map((s) => s.heap)) - median(first.map((s) => s.heap));
        const connsFirst = Math.max(...first.map((s) => s.conns));
        const connsLast = Math.max(...last.map((s) => s.conns));
        const requests = Object.entries(counts)
          .filter(([k]) => !k.startsWith("expected:") && !k.startsWith("callback:"))
          .reduce((s, [, n]) => s + n, 0);
        const { rows: conn } = await d.db.query("select count(*)::int as n from pg_stat_activity where datname = $1 and usename <> 'postgres'", [d.name]);

        report("8 soak", {
          duration_s: Math.round((Date.now() - started) / 1000),
          graphql_requests: requests,
          rate_per_s: Math.round(requests / (DURATION_MS / 1000)),
          callbacks: Object.fromEntries(Object.entries(counts).filter(([k]) => k.startsWith("callback:"))),
          expected_refusals: Object.fromEntries(Object.entries(counts).filter(([k]) => k.startsWith("expected:"))),
          orders_paid: paidOrders.length,
          paid_not_prepared: stuck[0].n,
          subscriptions_opened: subscriptionsOpened,
          subscription_events: subscriptionEvents,
          unexpected_errors: unexpected.length,
          service_error_logs: errorLogs.length,
          failed_jobs: failedJobs[0].n,
          rss_mb: { min: Math.round(Math.min(...after.map((s) => s.rss))), max: Math.round(Math.max(...after.map((s) => s.rss))), growth: Math.round(rssGrowth) },
          heap_mb: { first: Math.round(median(first.map((s) => s.heap))), last: Math.round(median(last.map((s) => s.heap))), growth: Math.round(heapGrowth) },
          db_connections: { first_max: connsFirst, last_max: connsLast, overall_max: Math.max(...samples.map((s) => s.conns)), now: conn[0].n },
          process_alive: svc.alive,
        });
        if (unexpected.length) say(`[drill 8] unexpected (first 10):\n  ${[...new Set(unexpected)].slice(0, 10).join("\n  ")}`);

        expect(svc.alive).toBe(true);
        expect([...new Set(unexpected)].slice(0, 10)).toEqual([]);
        expect(errorLogs.map((l) => l.slice(0, 300))).toEqual([]);
        expect(stuck[0].n).toBe(0);
        expect(failedJobs[0].n).toBe(0);
        expect(requests).toBeGreaterThan(DURATION_MS / 100);
        expect(subscriptionEvents).toBeGreaterThan(0);
        // Flat: connections within the pools and not creeping up; memory not growing.
        expect(Math.max(...samples.map((s) => s.conns))).toBeLessThanOrEqual(10 + 1 + 6 + 4);
        expect(connsLast).toBeLessThanOrEqual(connsFirst + 2);
        expect(heapGrowth).toBeLessThan(LONG ? 40 : 60);
        expect(rssGrowth).toBeLessThan(LONG ? 80 : 120);
      },
    ),
  DURATION_MS + 120_000,
);
