// S9, the rush hour: the café busy, on more than one process. Two API
// processes and one worker (src/main.ts --api twice, --worker once), the
// APIs' pools through PgBouncer in transaction mode (DATABASE_POOL_MODE=
// transaction, their LISTEN connection straight to PostgreSQL through
// DATABASE_LISTEN_URL; the worker, graphile-worker's LISTEN and session
// locks, on the owner's URL, direct). The clients, split evenly over the two
// APIs (a load balancer's round robin):
// - kiosks polling KioskMenu (by documentId) with Apollo Client 4's Accept,
//   measured as every scenario is: closed loop (throughput), then one fixed
//   rate (latency), first with no orders, then during the rush;
// - customers, each with a graphql-ws connection and a StatusFeed
//   (orderStatusChanged) subscription on their latest order;
// - barista dashboards on QueueLive (orderQueueChanged);
// - orders at a fixed rate, each through its whole life: PlaceOrder as its
//   customer, the provider's signed payment callback, the worker's
//   start_preparation (PREPARING), then the barista's BREWING, READY and
//   COMPLETED (Advance).
// The time of every change is when the bench's own LISTEN on order_queue:<store>
// (straight to PostgreSQL) hears its NOTIFY: deliveries to customers and
// dashboards are timed from there, payment -> PREPARING from the callback's
// answer. The whole rush again with the live cache off, on new processes.
// Also: the cache's hit ratio (GET /metrics), the SQL the three processes
// send per order (bench/lib/childHook.ts capture, a window of the rush
// without kiosks).
import { randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import WebSocket from "ws";
import { createClient, type Client as WsClient } from "graphql-ws";
import { signToken } from "../../src/auth.ts";
import { APOLLO_ACCEPT, base, gqlBody, readyForGraphql, postJson, trustedBody, type Ctx, type Row, type ScenarioResult } from "../lib/context.ts";
import { mergeLoads, runLoad, type LoadResult } from "../lib/load.ts";
import { BACKGROUND, isControl, readCapture, ROOT, readyByHttp, startCapture, startChild, stopCapture, type Child } from "../lib/proc.ts";
import { endTriggerlessLoad } from "../lib/db.ts";
import { pgbouncerBinary, pgbouncerVersion, startPgBouncer, type Bouncer } from "../lib/pgbouncer.ts";
import { signedCallback } from "./s4Callbacks.ts";
import { cpuMeter, processCpuTicks } from "../lib/cpu.ts";
import { sig, sleep, summarize } from "../lib/stats.ts";

const STEPS = ["BREWING", "READY", "COMPLETED"] as const;

interface Customer {
  id: string;
  email: string;
  token: string;
  ws: WsClient;
  /** The subscription on their latest order. */
  unsubscribe?: () => void;
  busy: boolean;
}

/** What one rush measured (one mode: live cache on or off). */
interface RushResult {
  idle: { peak: LoadResult; latency: LoadResult | null; cpu: RushCpu | null };
  busy: { peak: LoadResult; latency: LoadResult | null; cpu: RushCpu | null; ownLatency: { rate: number; result: LoadResult } | null };
  /** CPU of the rush alone (the SQL capture window, no kiosks), and per order. */
  rushCpu: { cpu: RushCpu; msPerOrder: number } | null;
  kioskRate: number;
  cache: { hits: number; stale: number; misses: number; invalidations: number } | null;
  payToPreparing: number[];
  customerDeliveries: number[];
  dashboardDeliveries: number[];
  place: number[];
  pay: number[];
  advance: number[];
  orders: { placed: number; paid: number; preparing: number; completed: number; failed: number; skipped: number; missedDeliveries: number; seconds: number };
  perOrder: { orders: number; statements: number; roundTrips: number; byProcess: Record<string, number> } | null;
  /** PostgreSQL's own time per order over the same window, by statement (pg_stat_statements, when the server loads it). */
  pgTime: PgTime | null;
  errors: string[];
}

interface PgTime {
  /** Planning and execution, ms per order, every top-level statement. */
  msPerOrder: number;
  top: Array<{ query: string; callsPerOrder: number; msPerOrder: number; planShare: number }>;
}

/**
 * PostgreSQL's time by statement over a window, from pg_stat_statements
 * when the bench's server preloads it (`shared_preload_libraries`; the
 * machine's PostgreSQL does not: see bench/README.md, S9); null otherwise.
 * Top-level statements only (a function's own statements are in its time).
 */
async function pgStatements(root: pg.Client) {
  const loaded = await root.query<{ on: boolean }>("select current_setting('shared_preload_libraries') ~ 'pg_stat_statements' as on");
  if (!loaded.rows[0]!.on) return null;
  await root.query("create extension if not exists pg_stat_statements");
  return {
    reset: () => root.query("select pg_stat_statements_reset()"),
    async read(orders: number): Promise<PgTime> {
      const { rows } = await root.query<{ query: string; calls: string; exec: number; plan: number }>(
        `select regexp_replace(query, '\\s+', ' ', 'g') as query, calls, total_exec_time as exec, total_plan_time as plan
           from pg_stat_statements where toplevel and dbid = (select oid from pg_database where datname = current_database())`,
      );
      const ms = (r: (typeof rows)[number]) => r.exec + r.plan;
      const top = rows
        .sort((a, b) => ms(b) - ms(a))
        .slice(0, 12)
        .map((r) => ({ query: r.query.slice(0, 120), callsPerOrder: Number(r.calls) / orders, msPerOrder: ms(r) / orders, planShare: ms(r) ? r.plan / ms(r) : 0 }));
      return { msPerOrder: rows.reduce((a, r) => a + ms(r), 0) / orders, top };
    },
  };
}

async function cacheCounters(baseUrl: string, token: string) {
  const text = await (await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
  const value = (name: string) => Number(new RegExp(`^cafe_live_cache_${name}_total (\\d+)$`, "m").exec(text)?.[1] ?? NaN);
  return { hits: value("hits"), stale: value("stale"), misses: value("misses"), invalidations: value("invalidations") };
}

/** The processes of one rush: two APIs through PgBouncer (or straight, without one), one worker. */
async function startProcesses(ctx: Ctx, bouncer: Bouncer | null, cacheOn: boolean, metricsToken: string) {
  const env: Record<string, string> = {
    ...ctx.serviceEnv,
    LIVE_CACHE_MAX_ENTRIES: cacheOn ? "1000" : "0",
    METRICS_TOKEN: metricsToken,
    ...(bouncer ? { DATABASE_AUTHENTICATOR_URL: bouncer.through(ctx.db.urls.authenticator), DATABASE_LISTEN_URL: ctx.db.urls.authenticator, DATABASE_POOL_MODE: "transaction" } : {}),
  };
  const mode = cacheOn ? "cache-on" : "cache-off";
  // --cpu-prof: a V8 profile of each process of the rush, written when it stops.
  const prof = (name: string) => (ctx.opts.cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(ctx.opts.cpuProfDir)}`, `--cpu-prof-name=s9-${name}-${mode}-${process.pid}.cpuprofile`] : []);
  const start = (name: string, args: string[]) =>
    startChild({ name: `s9-${name}-${mode}`, script: path.join(ROOT, "src/main.ts"), args, env, logDir: ctx.logDir, capture: true, nodeArgs: prof(name) });
  const apis = [await start("api-1", ["--api"]), await start("api-2", ["--api"])];
  const worker = await start("worker", ["--worker"]);
  try {
    // Three processes building their schema at once on two busy cores: given time.
    await Promise.all(apis.map((a) => readyByHttp(a, "/healthz", 240_000).then(() => readyForGraphql(base(a.port)))));
    // The worker has no HTTP port: it is ready once it has registered itself with graphile-worker (its jobs run below).
  } catch (e) {
    await Promise.allSettled([...apis, worker].map((c) => c.stop()));
    throw e;
  }
  return { apis, worker, all: [...apis, worker] };
}

/** Where the machine's CPU went over a stretch of S9, in percent of one core: the two APIs, the worker, PostgreSQL, the bench, the rest (PgBouncer, the machine). */
interface RushCpu {
  apis: number;
  worker: number;
  postgres: number;
  bench: number;
  other: number;
  /** Percent of all cores. */
  machineBusy: number | null;
}

/** Starts measuring S9's processes' CPU; the function returned ends the stretch. */
function rushCpu(procs: { apis: Child[]; worker: Child }): () => RushCpu {
  const t0 = performance.now();
  const ticks = (cs: Child[]) => cs.reduce((sum, c) => sum + (c.proc.pid ? processCpuTicks(c.proc.pid) : 0), 0);
  const [a0, w0] = [ticks(procs.apis), ticks([procs.worker])];
  const rest = cpuMeter();
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    const pct = (t: number) => Math.round((t / 100 / seconds) * 100); // 100 ticks a second (USER_HZ)
    const [apis, worker] = [pct(ticks(procs.apis) - a0), pct(ticks([procs.worker]) - w0)];
    const { postgres, bench, machineBusy, other } = rest();
    return { apis, worker, postgres, bench, machineBusy, other: Math.max(0, (other ?? 0) - apis - worker) };
  };
}

const cpuText = (c: RushCpu) => `APIs ${c.apis} / worker ${c.worker} / PostgreSQL ${c.postgres} / bench ${c.bench} / other ${c.other} (machine ${c.machineBusy ?? "n/a"}% busy)`;

/** The kiosks: closed loop for throughput (its CPU measured when `meter` is given), then (when they can keep up with it) `rate` for latency, spread over the APIs. */
async function kiosks(ctx: Ctx, apis: string[], n: number, rate: number | null, always = false, meter?: () => () => RushCpu) {
  const o = ctx.opts;
  const request = { path: "/graphql", body: trustedBody("KioskMenu"), headers: { accept: APOLLO_ACCEPT } };
  // Each process answers one first (its documents, plans and cache filled), unmeasured.
  for (const url of apis) {
    for (let tries = 0; ; tries++) {
      const r = await postJson(url, "/graphql", request.body, request.headers);
      if (r.status === 200 && !r.json?.errors) break;
      if (tries >= 20) throw new Error(`KioskMenu failed: ${r.status} ${r.text.slice(0, 200)}`);
      await sleep(250);
    }
  }
  const split = (total: number, i: number) => Math.floor(total / apis.length) + (i < total % apis.length ? 1 : 0);
  const side = (f: (url: string, i: number) => Promise<LoadResult>) => Promise.all(apis.map(f)).then(mergeLoads);
  if (o.warmupSeconds > 0) await side((url, i) => runLoad({ baseUrl: url, request, connections: split(n, i), seconds: o.warmupSeconds }));
  const stop = meter?.();
  const peak = await side((url, i) => runLoad({ baseUrl: url, request, connections: split(n, i), seconds: o.peakSeconds, keepSamples: true }));
  const cpu = stop?.() ?? null;
  const fixed = rate ?? Math.max(1, Math.round(o.latencyLoad * peak.opsPerSec));
  const atRate = (r: number) => side((url, i) => runLoad({ baseUrl: url, request, connections: split(n, i), seconds: o.latencySeconds, rate: r / apis.length, keepSamples: true }));
  let timedAt = fixed;
  let latency = peak.opsPerSec >= fixed || always ? await atRate(fixed) : null;
  // With no orders (no rate given): when even these processes, unloaded, were
  // sent less than 90% of the rate, the load generator (on the same 2 cores)
  // could not send it, and the p99 would time its own queue. Timed again at
  // what it did send, and the rush's kiosks at that rate too.
  if (rate === null && latency && latency.opsPerSec < 0.9 * fixed) {
    timedAt = Math.max(1, Math.round(0.9 * latency.opsPerSec));
    latency = await atRate(timedAt);
  }
  // Timed at `timedAt`, more than the same part of this peak (the rush's kiosks, timed at the no-orders rate): timed again at that part of their own peak too, where queueing is not the answer.
  const ownRate = Math.max(1, Math.round(o.latencyLoad * peak.opsPerSec));
  const ownLatency = latency && ownRate < 0.95 * timedAt ? { rate: ownRate, result: await atRate(ownRate) } : null;
  return { peak, latency, rate: timedAt, cpu, ownLatency };
}

/** One rush hour (and its quiet start): the clients, the orders, the kiosks measured before and during. */
async function rush(ctx: Ctx, bouncer: Bouncer | null, cacheOn: boolean, kioskRate: number | null): Promise<RushResult> {
  const o = ctx.opts;
  const metricsToken = `bench-metrics-${randomBytes(12).toString("hex")}`;
  const procs = await startProcesses(ctx, bouncer, cacheOn, metricsToken);
  const apis = procs.apis.map((a) => base(a.port));
  const errors: string[] = [];
  const err = (what: string, e: unknown) => errors.length < 20 && errors.push(`${what}: ${String((e as Error)?.message ?? e).slice(0, 200)}`);
  const listener = new pg.Client({ connectionString: ctx.db.url });
  const customers: Customer[] = [];
  const dashboards: WsClient[] = [];
  try {
    const mobile = readFileSync(path.join(ROOT, "contract/operations/mobile.graphql"), "utf8");
    const queueLive = readFileSync(path.join(ROOT, "documents/barista.graphql"), "utf8");
    // Every change, as PostgreSQL announces it to every API process.
    const heard = new Map<string, number>();
    /** Who waits to hear each change: several may (the order's own life, a customer's delivery, a dashboard's). */
    const waiting = new Map<string, Set<() => void>>();
    await listener.connect();
    listener.on("notification", (m) => {
      const t = performance.now();
      const row = JSON.parse(m.payload ?? "{}") as { id?: string; status?: string };
      const key = `${row.id}:${row.status}`;
      if (!heard.has(key)) heard.set(key, t);
      for (const wake of waiting.get(key) ?? []) wake();
      waiting.delete(key);
    });
    // Each store's queue has its own channel (order_queue:<store id>).
    const { rows: stores } = await ctx.root.query("select id::text from app_public.stores");
    await listener.query(stores.map((st) => `listen "order_queue:${st.id}";`).join(""));
    const heardAt = (id: string, status: string, timeoutMs: number) => {
      const key = `${id}:${status}`;
      if (heard.has(key)) return Promise.resolve(heard.get(key)!);
      return new Promise<number | null>((resolve) => {
        const wake = () => (clearTimeout(timer), resolve(heard.get(key)!));
        const timer = setTimeout(() => (waiting.get(key)?.delete(wake), resolve(null)), timeoutMs);
        if (!waiting.has(key)) waiting.set(key, new Set());
        waiting.get(key)!.add(wake);
      });
    };

    // The quiet start: the kiosks alone.
    ctx.log(`S9 (live cache ${cacheOn ? "on" : "off"}): ${o.s9Kiosks} kiosks, no orders`);
    const before = cacheOn ? await Promise.all(apis.map((a) => cacheCounters(a, metricsToken))) : null;
    const meter = () => rushCpu(procs);
    const idle = await kiosks(ctx, apis, o.s9Kiosks, kioskRate, false, meter);
    kioskRate = idle.rate;

    // The customers (each with their last, completed order, followed) and the dashboards.
    const { rows: people } = await ctx.root.query(
      "select a.id::text, a.email::text from app_private.accounts a join app_public.customers c on c.id = a.id where a.email like '%@bench.example' order by a.email limit $1",
      [o.s9Customers],
    );
    await ctx.root.query("set session_replication_role = replica");
    const { rows: last } = await ctx.root.query(
      `insert into app_public.orders (customer_id, status, notes, total, inventory_taken_at)
       select id, 'COMPLETED', 'bench s9 earlier', 2.50, now() from unnest($1::uuid[]) id returning id::text, customer_id::text`,
      [people.map((p) => p.id)],
    );
    await endTriggerlessLoad(ctx.root);
    const deliveries: number[] = [];
    const dashboardDeliveries: number[] = [];
    let missedDeliveries = 0;
    const follow = (c: Customer, orderId: string, timed: boolean) => {
      c.unsubscribe?.();
      const got = new Set<string>();
      c.unsubscribe = c.ws.subscribe(
        { query: mobile, operationName: "StatusFeed", variables: { orderId } },
        {
          next: (r: any) => {
            const status = r?.data?.orderStatusChanged?.status;
            if (r?.errors) err("StatusFeed", JSON.stringify(r.errors));
            if (!timed || !status || got.has(status)) return;
            got.add(status);
            const t = performance.now();
            const at = heard.get(`${orderId}:${status}`);
            if (at !== undefined) deliveries.push(t - at);
            else void heardAt(orderId, status, 5000).then((h) => (h === null ? missedDeliveries++ : deliveries.push(t - h)));
          },
          error: (e) => err("StatusFeed", e),
          complete: () => {},
        },
      );
    };
    const token = (id: string, role: "customer" | "barista") => signToken(ctx.secrets.JWT_SECRET, { userId: id, role, signInId: randomUUID() }, 3600).token;
    const socket = (i: number, authorization: string) =>
      createClient({ url: apis[i % apis.length]!.replace("http", "ws") + "/graphql", webSocketImpl: WebSocket, connectionParams: { authorization }, retryAttempts: 0, lazy: true });
    for (const [i, p] of people.entries()) {
      const t = token(p.id, "customer");
      const c: Customer = { id: p.id, email: p.email, token: t, ws: socket(i, `Bearer ${t}`), busy: false };
      customers.push(c);
      follow(c, last.find((r) => r.customer_id === p.id)!.id, false);
    }
    for (let i = 0; i < o.s9Baristas; i++) {
      const ws = socket(i, `Bearer ${ctx.tokens.barista}`);
      dashboards.push(ws);
      ws.subscribe(
        { query: queueLive, operationName: "QueueLive" },
        {
          next: (r: any) => {
            const t = performance.now();
            const row = r?.data?.orderQueueChanged;
            if (r?.errors) err("QueueLive", JSON.stringify(r.errors));
            if (!row) return;
            const at = heard.get(`${row.id}:${row.status}`);
            if (at !== undefined) dashboardDeliveries.push(t - at);
            else void heardAt(row.id, row.status, 5000).then((h) => h !== null && dashboardDeliveries.push(t - h));
          },
          error: (e) => err("QueueLive", e),
          complete: () => {},
        },
      );
    }
    await sleep(500);

    // The orders.
    const stats = { placed: 0, paid: 0, preparing: 0, completed: 0, failed: 0, skipped: 0 };
    const place: number[] = [];
    const pay: number[] = [];
    const advance: number[] = [];
    const payToPreparing: number[] = [];
    const barista = `Bearer ${ctx.tokens.barista}`;
    const doc = readFileSync(path.join(ROOT, "contract/operations/mobile.graphql"), "utf8");
    const baristaDoc = readFileSync(path.join(ROOT, "contract/operations/barista.graphql"), "utf8");
    const coffees = ctx.coffeeIds;
    const timed = async <T>(into: number[], f: () => Promise<T>) => {
      const t = performance.now();
      const r = await f();
      into.push(performance.now() - t);
      return r;
    };
    const lifeOf = async (i: number, c: Customer) => {
      const api = (k: number) => apis[(i + k) % apis.length]!;
      try {
        const pick = (k: number) => coffees[(i * 7 + k * 13) % coffees.length]!;
        const input = {
          items: [
            { coffeeId: pick(1), quantity: 1 },
            { coffeeId: pick(2), quantity: 2, specialInstructions: "extra hot" },
          ],
          notes: "bench s9",
        };
        const placed = await timed(place, () => postJson(api(0), "/graphql", gqlBody(doc, "PlaceOrder", { input }), { authorization: `Bearer ${c.token}` }));
        const order = placed.json?.data?.createOrder;
        if (!order) throw new Error(`PlaceOrder: ${placed.text.slice(0, 200)}`);
        stats.placed++;
        follow(c, order.id, true);
        await sleep(o.s9PayDelayMs);
        const { body, headers } = signedCallback(ctx.secrets, { id: order.id, total: String(order.total), email: c.email });
        const paid = await timed(pay, () => postJson(api(1), "/orders/payment-callback", body, headers));
        if (paid.json?.status !== "processed") throw new Error(`payment callback: ${paid.status} ${paid.text.slice(0, 200)}`);
        const answered = performance.now();
        stats.paid++;
        const preparing = await heardAt(order.id, "PREPARING", 30_000);
        if (preparing === null) throw new Error("not PREPARING 30 s after its payment");
        payToPreparing.push(preparing - answered);
        stats.preparing++;
        for (const [k, status] of STEPS.entries()) {
          await sleep(o.s9StepMs);
          const r = await timed(advance, () => postJson(api(2 + k), "/graphql", gqlBody(baristaDoc, "Advance", { id: order.id, status }), { authorization: barista }));
          if (r.json?.data?.updateOrderStatus?.status !== status) throw new Error(`Advance to ${status}: ${r.text.slice(0, 200)}`);
        }
        stats.completed++;
      } catch (e) {
        stats.failed++;
        err("order", e);
      } finally {
        c.busy = false;
      }
    };
    let stopping = false;
    const lives: Promise<void>[] = [];
    const t0 = performance.now();
    const driver = (async () => {
      for (let i = 0; !stopping; i++) {
        const due = t0 + (i * 1000) / o.s9Rate;
        if (due > performance.now()) await sleep(due - performance.now());
        if (stopping) break;
        // The next customer in turn who has no order under way.
        const c = [...customers.slice(i % customers.length), ...customers.slice(0, i % customers.length)].find((x) => !x.busy);
        if (!c) {
          stats.skipped++;
          continue;
        }
        c.busy = true;
        lives.push(lifeOf(i, c));
      }
    })();

    // The rush: the kiosks measured while it runs.
    await sleep(o.s9RampSeconds * 1000);
    ctx.log(`S9 (live cache ${cacheOn ? "on" : "off"}): ${o.s9Kiosks} kiosks during the rush (${o.s9Rate} orders/s, ${customers.length} customers following, ${dashboards.length} dashboards)`);
    const mid = cacheOn ? await Promise.all(apis.map((a) => cacheCounters(a, metricsToken))) : null;
    // The rush's kiosks with the cache on are timed at that rate even when they cannot keep up with it (its p99 is a target).
    const busy = await kiosks(ctx, apis, o.s9Kiosks, kioskRate, cacheOn, meter);
    const after = cacheOn ? await Promise.all(apis.map((a) => cacheCounters(a, metricsToken))) : null;

    // The SQL of the order path: a window of the rush without the kiosks.
    const cursors = await Promise.all(procs.all.map((p) => startCapture(p)));
    const statementStats = await pgStatements(ctx.root);
    await statementStats?.reset();
    const placedBefore = stats.placed;
    const w0 = performance.now();
    const stopCpu = meter();
    await sleep(o.s9CaptureSeconds * 1000);
    const windowCpu = stopCpu();
    const windowOrders = stats.placed - placedBefore;
    const windowSeconds = (performance.now() - w0) / 1000;
    const pgTime = statementStats ? await statementStats.read(windowOrders || o.s9Rate * windowSeconds) : null;
    await Promise.all(procs.all.map((p) => stopCapture(p)));
    const captured = procs.all.map((p, i) => readCapture(p, cursors[i]!).filter((q) => !BACKGROUND.test(q.text) && !/^\s*select 1\s*;?\s*$/i.test(q.text)));
    const ordersInWindow = windowOrders || o.s9Rate * windowSeconds;
    const perOrder = {
      orders: windowOrders,
      statements: captured.flat().filter((q) => !isControl(q)).length / ordersInWindow,
      roundTrips: captured.flat().length / ordersInWindow,
      byProcess: Object.fromEntries(procs.all.map((p, i) => [p.name.replace(/^s9-|-cache-o(n|ff)$/g, ""), sig(captured[i]!.filter((q) => !isControl(q)).length / ordersInWindow, 3)!])),
    };

    stopping = true;
    const seconds = (performance.now() - t0) / 1000;
    await driver;
    await Promise.race([Promise.all(lives), sleep(30_000 + 4 * o.s9StepMs)]);
    await sleep(200);
    const cache =
      before && mid && after
        ? {
            hits: after.reduce((a, x) => a + x.hits, 0) - mid.reduce((a, x) => a + x.hits, 0),
            stale: after.reduce((a, x) => a + x.stale, 0) - mid.reduce((a, x) => a + x.stale, 0),
            misses: after.reduce((a, x) => a + x.misses, 0) - mid.reduce((a, x) => a + x.misses, 0),
            invalidations: after.reduce((a, x) => a + x.invalidations, 0) - mid.reduce((a, x) => a + x.invalidations, 0),
          }
        : null;
    return {
      idle: { peak: idle.peak, latency: idle.latency, cpu: idle.cpu },
      busy: { peak: busy.peak, latency: busy.latency, cpu: busy.cpu, ownLatency: busy.ownLatency },
      rushCpu: {
        cpu: windowCpu,
        // Everything but the bench's own load generator, per order placed in the window.
        msPerOrder: ((windowCpu.apis + windowCpu.worker + windowCpu.postgres + windowCpu.other) * 10 * windowSeconds) / ordersInWindow,
      },
      kioskRate,
      cache,
      payToPreparing,
      customerDeliveries: deliveries,
      dashboardDeliveries,
      place,
      pay,
      advance,
      orders: { ...stats, missedDeliveries, seconds },
      perOrder,
      pgTime,
      errors,
    };
  } finally {
    for (const c of customers) c.unsubscribe?.();
    await Promise.allSettled([...customers.map((c) => c.ws.dispose()), ...dashboards.map((d) => d.dispose())]);
    await listener.end().catch(() => {});
    await Promise.allSettled(procs.all.map((c: Child) => c.stop()));
    await ctx.root.query(
      "set session_replication_role = replica; update app_public.orders set status = 'COMPLETED', inventory_taken_at = coalesce(inventory_taken_at, now()) where notes like 'bench s9%' and status <> 'COMPLETED'",
    );
    await endTriggerlessLoad(ctx.root);
  }
}

const ms = (x: number | null | undefined) => (x == null || !Number.isFinite(x) ? "n/a" : x < 10 ? x.toFixed(2) : x.toFixed(0));

export async function s9(ctx: Ctx): Promise<ScenarioResult> {
  const o = ctx.opts;
  const notes: string[] = [];
  // The rush must not run out of stock (S3 does the same).
  await ctx.root.query("update app_public.stock_items set current_stock = 99999999");
  let bouncer: Bouncer | null = null;
  if (pgbouncerBinary()) bouncer = await startPgBouncer({ urls: [ctx.db.urls.authenticator], poolSize: 2 * o.poolSize, logDir: ctx.logDir });
  else notes.push("PgBouncer is not installed (apt-get install -y pgbouncer): the APIs' pools went straight to PostgreSQL");
  let on: RushResult;
  // The smoke profile runs the rush once (cache on): three processes fewer to start.
  let off: RushResult | null = null;
  try {
    on = await rush(ctx, bouncer, true, null);
    if (o.s9CacheOff) off = await rush(ctx, bouncer, false, on.kioskRate);
  } finally {
    await bouncer?.stop();
  }
  const how = `${o.s9Kiosks} kiosks over 2 API processes`;
  const rows: Row[] = [];
  const kioskCase = `${o.s9Kiosks} kiosks: KioskMenu by documentId, Apollo Client 4's Accept`;
  const kioskRow = (variant: Row["variant"], label: string, k: RushResult["idle"], rate: number): Row => {
    const notes: string[] = [];
    if (!k.latency) notes.push(`no latency run: its peak (${Math.round(k.peak.opsPerSec)} req/s) is below the fixed rate (${rate})`);
    else if (k.latency.opsPerSec < rate * 0.9) notes.push(`kept up with only ${Math.round(k.latency.opsPerSec)} of ${rate} req/s in the latency run`);
    if ((k.latency?.generatorLagMs?.p99 ?? 0) > 20) notes.push(`the load generator sent late (p99 ${k.latency!.generatorLagMs!.p99.toFixed(1)} ms behind schedule)`);
    const bad = k.peak.badSample ?? k.latency?.badSample;
    if (bad) notes.push(`bad answer: ${bad.slice(0, 160)}`);
    return {
      ...{ scenario: "S9", case: kioskCase, variant, label, opsPerSec: k.peak.opsPerSec, opsUnit: "req/s", throughputHow: `closed loop, ${how}` },
      ...{ p50: k.latency?.latency.p50 ?? null, p99: k.latency?.latency.p99 ?? null, latencyLoad: k.latency ? `${rate} req/s fixed` : "none" },
      errors: k.peak.bad + k.peak.errors + k.peak.timeouts + (k.latency ? k.latency.bad + k.latency.errors + k.latency.timeouts : 0),
      notes,
      raw: { peak: { ...k.peak, samples: undefined }, latency: k.latency && { ...k.latency, samples: undefined } },
    };
  };
  rows.push(kioskRow("floor", "no orders, live cache on (the same processes before the rush)", on!.idle, on!.kioskRate));
  rows.push(kioskRow("service", "the rush, live cache on", on!.busy, on!.kioskRate));
  if (off) rows.push(kioskRow("extra", "no orders, live cache off", off.idle, on!.kioskRate), kioskRow("extra", "the rush, live cache off", off.busy, on!.kioskRate));
  const rushLoad = `${o.s9Rate} orders/s, ${o.s9Customers} customers, ${o.s9Baristas} dashboards`;
  /** One row per rush of what a kind of client timed; its throughput: what it timed per second of the rush. */
  const series = (caseName: string, unit: string, pick: (r: RushResult) => number[], more: (r: RushResult) => string[] = () => []) => {
    const modes: Array<[Row["variant"], string, RushResult]> = [
      ["service", "the rush, live cache on", on!],
      ...(off ? [["extra", "the rush, live cache off", off] as [Row["variant"], string, RushResult]] : []),
    ];
    for (const [variant, label, r] of modes) {
      const s = summarize(pick(r));
      rows.push({
        ...{ scenario: "S9", case: caseName, variant, label, opsPerSec: s.count / r.orders.seconds, opsUnit: unit, throughputHow: `during the rush (${r.orders.seconds.toFixed(0)} s)` },
        ...{ p50: s.count ? s.p50 : null, p99: s.count ? s.p99 : null, latencyLoad: s.count ? rushLoad : "none" },
        errors: r.orders.failed,
        notes: [...(s.count ? [] : ["no latency run: nothing was timed"]), ...more(r)],
        raw: { summary: s },
      });
    }
  };
  const missed = (r: RushResult) => (r.orders.missedDeliveries ? [`${r.orders.missedDeliveries} deliveries with no NOTIFY heard within 5 s`] : []);
  const clients: Array<[string, string, (r: RushResult) => number[], ((r: RushResult) => string[])?]> = [
    ["payment -> PREPARING (callback answered -> the worker's NOTIFY)", "orders/s", (r) => r.payToPreparing],
    [`${o.s9Customers} customers: orderStatusChanged (NOTIFY -> their subscription)`, "deliveries/s", (r) => r.customerDeliveries, missed],
    [`${o.s9Baristas} barista dashboards: orderQueueChanged (NOTIFY -> dashboard)`, "deliveries/s", (r) => r.dashboardDeliveries],
    ["customers' PlaceOrder (createOrder, 2 lines)", "req/s", (r) => r.place],
    ["the provider's signed payment callback", "req/s", (r) => r.pay],
    ["the barista's Advance (BREWING, READY, COMPLETED)", "req/s", (r) => r.advance],
  ];
  for (const [caseName, unit, pick, more] of clients) series(caseName, unit, pick, more);

  const ratio = (a: number | null | undefined, b: number | null | undefined) => (a != null && b ? sig(a / b, 2) : "n/a");
  notes.push(
    `processes: 2 x src/main.ts --api (DATABASE_POOL_SIZE ${o.poolSize} each${bouncer ? `, through PgBouncer ${pgbouncerVersion()} in transaction mode, ${2 * o.poolSize} server connections; LISTEN straight to PostgreSQL (DATABASE_LISTEN_URL)` : ""}) and 1 x --worker (the owner's URL, direct); clients split evenly over the two APIs`,
    `orders: one every ${(1000 / o.s9Rate).toFixed(0)} ms, each: PlaceOrder as its customer, ${o.s9PayDelayMs} ms later the signed payment callback, the worker's PREPARING, then BREWING, READY, COMPLETED by the barista ${o.s9StepMs} ms apart; times of changes are when the bench's LISTEN order_queue:<store> (direct) hears them`,
  );
  for (const [name, r] of [["live cache on", on!], ...(off ? [["live cache off", off] as const] : [])] as const) {
    const c = r.cache;
    notes.push(
      `${name}: ${r.orders.placed} orders placed in ${r.orders.seconds.toFixed(0)} s, ${r.orders.paid} paid, ${r.orders.preparing} PREPARING, ${r.orders.completed} COMPLETED, ${r.orders.failed} failed, ${r.orders.skipped} ticks with no free customer; kiosks during the rush / with no orders: ${ratio(r.busy.peak.opsPerSec, r.idle.peak.opsPerSec)}x req/s` +
        (c
          ? `; the cache during the rush's kiosk runs: ${c.hits} hits, ${c.stale} stale answers (while one request recomputed), ${c.misses} misses (answered from memory: ${c.hits + c.stale + c.misses ? sig((c.hits + c.stale) / (c.hits + c.stale + c.misses), 4) : "n/a"}), ${c.invalidations} invalidations`
          : ""),
    );
    if (r.perOrder)
      notes.push(
        `${name}: SQL per order (the three processes, ${o.s9CaptureSeconds} s of the rush without kiosks, ${r.perOrder.orders} orders placed in it): ${sig(r.perOrder.statements, 3)} statements, ${sig(r.perOrder.roundTrips, 3)} round trips; statements by process: ${JSON.stringify(r.perOrder.byProcess)}`,
      );
    if (r.pgTime)
      notes.push(
        `${name}: PostgreSQL's time per order over the same window (pg_stat_statements, top-level statements, planning and execution): ${sig(r.pgTime.msPerOrder, 3)} ms; the largest: ${r.pgTime.top
          .map((q) => `${sig(q.msPerOrder, 2)} ms in ${sig(q.callsPerOrder, 2)} calls (${Math.round(100 * q.planShare)}% planning) \`${q.query}\``)
          .join("; ")}`,
      );
    if (r.idle.cpu && r.busy.cpu && r.rushCpu) {
      const cores = os.cpus().length;
      const left = 1 - (r.rushCpu.cpu.apis + r.rushCpu.cpu.worker + r.rushCpu.cpu.postgres + r.rushCpu.cpu.other) / (100 * cores);
      notes.push(
        `${name}: CPU, % of one core: kiosks with no orders: ${cpuText(r.idle.cpu)}; kiosks during the rush: ${cpuText(r.busy.cpu)}; the rush alone (${o.s9CaptureSeconds} s without kiosks): ${cpuText(r.rushCpu.cpu)}, ${sig(r.rushCpu.msPerOrder, 3)} ms of CPU per order (the bench's own excluded); what the rush leaves of ${cores} cores: ${sig(left, 2)}`,
      );
    }
    if (r.busy.ownLatency) {
      const l = r.busy.ownLatency.result.latency;
      notes.push(`${name}: kiosks during the rush timed at ${r.busy.ownLatency.rate} req/s (half their peak during the rush, as every scenario's latency): p50 ${ms(l.p50)} ms, p99 ${ms(l.p99)} ms`);
    }
    if (r.errors.length) notes.push(`${name}: errors: ${r.errors.slice(0, 3).join(" | ")}`);
  }
  notes.push(
    `payment -> PREPARING p99: cache on ${ms(summarize(on!.payToPreparing).p99)} ms, off ${off ? ms(summarize(off.payToPreparing).p99) : "not run"} ms (target <= 1000); kiosk p99 during the rush (cache on): ${ms(on!.busy.latency?.latency.p99)} ms at ${on!.kioskRate} req/s (target <= 50)`,
  );
  const summary = (r: RushResult) => ({
    kiosks: {
      idle: r.idle.peak.opsPerSec,
      busy: r.busy.peak.opsPerSec,
      p50: r.busy.latency?.latency.p50 ?? null,
      p99: r.busy.latency?.latency.p99 ?? null,
      rate: r.kioskRate,
      atOwnShare: r.busy.ownLatency && { rate: r.busy.ownLatency.rate, p50: r.busy.ownLatency.result.latency.p50, p99: r.busy.ownLatency.result.latency.p99 },
    },
    cpu: { idleKiosks: r.idle.cpu, rushKiosks: r.busy.cpu, rushAlone: r.rushCpu },
    payToPreparing: summarize(r.payToPreparing),
    customers: summarize(r.customerDeliveries),
    dashboards: summarize(r.dashboardDeliveries),
    cache: r.cache,
    perOrder: r.perOrder,
    pgTime: r.pgTime,
    orders: r.orders,
  });
  return { id: "S9", title: "rush hour", rows, notes, rush: { cacheOn: summary(on!), cacheOff: off && summary(off), throughPgBouncer: Boolean(bouncer) } };
}
