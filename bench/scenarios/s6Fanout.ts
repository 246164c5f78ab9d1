// S6 fan-out: one status change delivered to N graphql-ws subscribers of
// orderStatusChanged (the StatusFeed document, as barista), each on its own
// WebSocket: the time until the last one receives it. Floor: a pg LISTEN
// client that, per subscriber, re-reads the row in the same transaction shape
// (BEGIN, set_config of role and claims, the SELECT the service sends per
// delivery, COMMIT) through a pool of the same size. Each N: a probe change
// (PENDING -> PAID) proves every subscription is live, then four measured
// changes (PREPARING, BREWING, READY, COMPLETED) made by the owner (dba).
import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import WebSocket from "ws";
import { createClient, type Client as WsClient } from "graphql-ws";
import { DEMO, type Ctx, type Row, type ScenarioResult } from "../lib/context.ts";
import { ROOT, captureSql, countSql, readCapture, startCapture, stopCapture, type CapturedQuery } from "../lib/proc.ts";
import { sleep, summarize } from "../lib/stats.ts";
import { cpuMeter } from "../lib/cpu.ts";

const STEPS = ["PREPARING", "BREWING", "READY", "COMPLETED"] as const;
const SET_CONFIG = "select set_config(el->>0, el->>1, true) from json_array_elements($1::json) el";

async function newOrder(ctx: Ctx): Promise<string> {
  await ctx.root.query("set session_replication_role = replica");
  const { rows } = await ctx.root.query(
    `with o as (
       insert into app_public.orders (customer_id, barista_id, status, notes, total)
       values ($1, $2, 'PENDING', 'bench s6', 2.50) returning id)
     insert into app_public.order_items (order_id, position, coffee_id, quantity, unit_price)
     select o.id, 1, '40000000-0000-4000-8000-000000000001', 1, 2.50 from o returning order_id::text as id`,
    [DEMO.alice, DEMO.barista],
  );
  await ctx.root.query("set session_replication_role = origin");
  return rows[0].id;
}

async function setStatus(owner: pg.Pool, id: string, status: string): Promise<number> {
  const t0 = performance.now();
  await owner.query("update app_public.orders set status = $2 where id = $1", [id, status]);
  return t0;
}

/** Subscriptions opened ahead of the service's checks while subscribing. */
const IN_FLIGHT = 200;

interface Subscribers {
  clients: WsClient[];
  received: Array<Map<string, number>>;
  errors: string[];
  dispose(): Promise<void>;
}

/**
 * N clients, each on its own WebSocket, subscribed to StatusFeed. Resolves
 * once the service has checked every subscription (it runs
 * app_hidden.assert_can_follow_order once per subscribe, seen through the SQL
 * capture) and had a moment to LISTEN; without that statement in sight, after
 * a generous wait.
 */
async function subscribe(ctx: Ctx, n: number, orderId: string, doc: string): Promise<Subscribers> {
  const url = `ws://127.0.0.1:${ctx.service.port}/graphql`;
  const clients: WsClient[] = [];
  const received: Array<Map<string, number>> = [];
  const errors: string[] = [];
  const disposers: Array<() => void> = [];
  const cursor = await startCapture(ctx.service);
  const checked = () => readCapture(ctx.service, cursor).filter((q) => /assert_can_follow_order/.test(q.text)).length;
  try {
    for (let i = 0; i < n; i++) {
      // At most IN_FLIGHT subscriptions waiting for their check: 10,000 at
      // once would wait for the pool past DATABASE_POOL_WAIT_MS (SERVICE_BUSY).
      if (i >= IN_FLIGHT && i % 100 === 0) {
        const until = Date.now() + 30_000;
        while (checked() < i - IN_FLIGHT && Date.now() < until && errors.length === 0) await sleep(20);
      }
      const client = createClient({
        url,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${ctx.tokens.barista}` },
        retryAttempts: 0,
        lazy: true,
      });
      const got = new Map<string, number>();
      clients.push(client);
      received.push(got);
      disposers.push(
        client.subscribe(
          { query: doc, operationName: "StatusFeed", variables: { orderId } },
          {
            next: (r: any) => {
              const status = r?.data?.orderStatusChanged?.status;
              if (status && !got.has(status)) got.set(status, performance.now());
              if (r?.errors) errors.push(JSON.stringify(r.errors).slice(0, 200));
            },
            error: (e) => errors.push(String((e as any)?.message ?? (e as any)?.reason ?? e).slice(0, 200)),
            complete: () => {},
          },
        ),
      );
      if (i % 50 === 49) await sleep(5);
    }
    const started = Date.now();
    const deadline = started + 60_000 + n * 50;
    while (Date.now() < deadline && errors.length === 0) {
      const done = checked();
      if (done >= n) break;
      if (done === 0 && Date.now() - started > 3000 + 3 * n) break;
      await sleep(20);
    }
  } finally {
    await stopCapture(ctx.service);
  }
  await sleep(100);
  return {
    clients,
    received,
    errors,
    async dispose() {
      for (const d of disposers) d();
      await Promise.all(clients.map((c) => c.dispose()));
    },
  };
}

async function waitAll(subs: Subscribers, status: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (subs.received.every((m) => m.has(status))) return true;
    await sleep(2);
  }
  return false;
}

export async function s6(ctx: Ctx): Promise<ScenarioResult> {
  const doc = readFileSync(path.join(ROOT, "contract/operations/mobile.graphql"), "utf8");
  const owner = new pg.Pool({ connectionString: ctx.db.urls.owner, max: 2 });
  const notes: string[] = [];
  const rows: Row[] = [];
  const extra: Record<string, unknown> = {};
  try {
    // What the service sends to Postgres per delivery (one subscriber, one change).
    const capOrder = await newOrder(ctx);
    const one = await subscribe(ctx, 1, capOrder, doc);
    await setStatus(owner, capOrder, "PAID");
    if (!(await waitAll(one, "PAID", 15_000))) throw new Error(`a subscriber got nothing: ${one.errors.join("; ")}`);
    const cap = await captureSql(ctx.service, async () => {
      await setStatus(owner, capOrder, "PREPARING");
      await waitAll(one, "PREPARING", 10_000);
    });
    await one.dispose();
    const perDelivery: CapturedQuery[] = cap.queries.filter((q) => !/^\s*listen|^\s*unlisten/i.test(q.text));
    const reread = perDelivery.find((q) => !/^\s*(begin|commit)|set_config\(/i.test(q.text));
    const settingsQ = perDelivery.find((q) => /set_config\(/.test(q.text));
    const sql = countSql(perDelivery);
    notes.push(`per delivery the service sends ${sql.roundTrips} queries (${sql.statements} statements): ${reread ? reread.text.replace(/\s+/g, " ").slice(0, 160) : "none"}`);

    const listenerUrl = ctx.db.url;
    for (const n of ctx.opts.s6Subscribers) {
      // Service.
      const orderId = await newOrder(ctx);
      ctx.log(`S6: ${n} subscribers`);
      const tSub = performance.now();
      const subs = await subscribe(ctx, n, orderId, doc);
      await setStatus(owner, orderId, "PAID");
      const live = await waitAll(subs, "PAID", 60_000);
      const setupMs = performance.now() - tSub;
      const lastMs: number[] = [];
      const perSubscriber: number[] = [];
      let incomplete = 0;
      const meter = cpuMeter(ctx.service.proc.pid);
      if (live) {
        for (const step of STEPS) {
          const t0 = await setStatus(owner, orderId, step);
          const ok = await waitAll(subs, step, 30_000);
          if (!ok) incomplete++;
          const times = subs.received
            .map((m) => m.get(step))
            .filter((x): x is number => x !== undefined)
            .map((t) => t - t0);
          perSubscriber.push(...times);
          if (times.length) lastMs.push(Math.max(...times));
          await sleep(20);
        }
      } else {
        incomplete = STEPS.length;
      }
      const serviceCpu = meter();
      const errors = subs.errors.length;
      const firstErrors = subs.errors.slice(0, 2);
      await subs.dispose();

      // Floor: LISTEN, then per subscriber the same re-read in the same transaction shape.
      const floorOrder = await newOrder(ctx);
      const pool = new pg.Pool({ connectionString: ctx.db.urls.authenticator, max: ctx.opts.poolSize });
      const listener = new pg.Client({ connectionString: listenerUrl });
      await listener.connect();
      const settings = settingsQ
        ? String(settingsQ.values[0])
        : JSON.stringify([
            ["role", "cafe_barista"],
            ["jwt.claims.user_id", DEMO.barista],
            ["jwt.claims.role", "barista"],
          ]);
      const text = reread?.text ?? "select name from app_public.baristas where id = $1";
      const values = reread?.values ?? [DEMO.barista];
      let current: { status: string; t0: number; done: number[] } | null = null;
      const rereadOne = async () => {
        const c = await pool.connect();
        try {
          await c.query("begin");
          await c.query(SET_CONFIG, [settings]);
          await c.query(text, values);
          await c.query("commit");
        } finally {
          c.release();
        }
      };
      listener.on("notification", (msg) => {
        const p = JSON.parse(msg.payload ?? "{}");
        const cur = current;
        if (!cur || p.status !== cur.status) return;
        for (let i = 0; i < n; i++) rereadOne().then(() => cur.done.push(performance.now() - cur.t0));
      });
      await listener.query(`listen "order_status:${floorOrder}"`);
      await setStatus(owner, floorOrder, "PAID");
      const floorMeter = cpuMeter();
      const floorLast: number[] = [];
      const floorPer: number[] = [];
      for (const step of STEPS) {
        // t0 before the UPDATE: its NOTIFY can arrive before the UPDATE's own answer.
        current = { status: step, t0: performance.now(), done: [] };
        await setStatus(owner, floorOrder, step);
        const deadline = Date.now() + 30_000;
        while (current.done.length < n && Date.now() < deadline) await sleep(2);
        floorPer.push(...current.done);
        if (current.done.length) floorLast.push(Math.max(...current.done));
        await sleep(20);
      }
      const floorCpu = floorMeter();
      await listener.end();
      await pool.end();

      const svcLast = summarize(lastMs);
      const svcPer = summarize(perSubscriber);
      const flLast = summarize(floorLast);
      const flPer = summarize(floorPer);
      extra[`n${n}`] = { setupMs, service: { last: svcLast, perSubscriber: svcPer }, floor: { last: flLast, perSubscriber: flPer } };
      const caseName = `${n} subscribers`;
      rows.push({
        scenario: "S6",
        case: caseName,
        variant: "service",
        label: "cafe-api graphql-ws orderStatusChanged",
        opsPerSec: svcLast.p50 ? (n * 1000) / svcLast.p50 : null,
        opsUnit: "deliveries/s",
        throughputHow: "N / median time until the last subscriber has it",
        p50: svcLast.p50,
        p99: svcLast.max,
        latencyLoad: `1 change, ${n} subscribers (p50/max of ${lastMs.length} changes: time until the LAST subscriber)`,
        sql: sql,
        cpu: serviceCpu,
        errors: errors + incomplete,
        notes: [
          `per subscriber: p50 ${svcPer.p50?.toFixed(2)} ms, p99 ${svcPer.p99?.toFixed(2)} ms; subscribing ${n} took ${setupMs.toFixed(0)} ms`,
          ...(incomplete ? [`${incomplete} changes did not reach every subscriber`] : []),
          ...firstErrors.map((e) => `error: ${e}`),
        ],
      });
      rows.push({
        scenario: "S6",
        case: caseName,
        variant: "floor",
        label: "pg LISTEN + per-subscriber re-read, same transaction shape",
        opsPerSec: flLast.p50 ? (n * 1000) / flLast.p50 : null,
        opsUnit: "deliveries/s",
        throughputHow: "N / median time until the last re-read is done",
        p50: flLast.p50,
        p99: flLast.max,
        latencyLoad: `1 change, ${n} re-reads (p50/max of ${floorLast.length} changes)`,
        sql: { statements: 1, roundTrips: 4, transactions: 1 },
        cpu: floorCpu,
        errors: STEPS.length - floorLast.length,
        notes: [`per re-read: p50 ${flPer.p50?.toFixed(2)} ms, p99 ${flPer.p99?.toFixed(2)} ms`],
      });
    }
  } finally {
    await owner.end();
  }
  notes.push("clients run in the bench process (one WebSocket each), so the time includes receiving and parsing every message there");
  return { id: "S6", title: "fan-out", rows, notes, ...extra };
}
