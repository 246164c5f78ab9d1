import { EventEmitter } from "node:events";
import { errorCode } from "../support/client.ts";
import { jobCounts } from "../support/db.ts";
import { report, say } from "../support/figures.ts";
import { effectProblems, orderEffects, type PendingOrder } from "../support/fixtures.ts";
import { LONG, rnd } from "../support/load.ts";
import { type KeyKind, paymentBody, sendCallback } from "../support/paymentProvider.ts";
import { ChildService, useDrillDatabase } from "../support/service.ts";
import { sleep } from "../support/wait.ts";

// Drill 1: crash during payment. The API and the worker run as child
// processes; a provider sends signed callbacks for many PENDING orders and
// retries every delivery that did not get a 200, while the worker is
// SIGKILLed at random moments (every other time while one of the jobs of a
// payment that just committed is locked by it) and the API once, with a
// callback in flight. Afterwards every order is paid once, prepared,
// notified once and its stock taken once, and no job is left; jobs locked by
// a killed worker are measured: how long did their orders stay stuck?

const N = LONG ? 240 : 48;
const DELIVERY_WINDOW_MS = LONG ? 150_000 : 16_000;
/** From the end of the faults: every paid order must be PREPARING by then. */
const SETTLE_LIMIT_MS = 75_000;

const { d, orders } = useDrillDatabase("cafe_drill_1", { orders: N });

interface Delivery {
  order: PendingOrder;
  body: string;
  attempts: number;
  answers: string[];
  final: string | null;
}

interface Orphan {
  jobId: string;
  key: string;
  killedAt: number;
  lockedAt: number;
  doneAt: number | null;
}

test(
  `crash during payment: ${N} callbacks while the worker is SIGKILLed at random moments and the API once`,
  async () => {
    const { rows: stockBefore } = await d.db.query<{ ingredient_id: string; current_stock: number }>(
      "select ingredient_id, current_stock::float8 as current_stock from app_public.stock_items where store_id = app_hidden.default_store_id()",
    );

    let api = await ChildService.start({ name: "api", mode: "api", databaseUrl: d.url, env: { DATABASE_POOL_SIZE: "6" } });
    let worker = await ChildService.start({ name: "worker", mode: "worker", databaseUrl: d.url, waitReady: false });
    await worker.waitReady(40_000, d.db);

    const keyKinds: KeyKind[] = ["event", "idem", "none"];
    const deliveries: Delivery[] = orders.map((order, i) => ({
      order,
      body: paymentBody(order, i % 2 ? "A" : "B", keyKinds[i % 3]!),
      attempts: 0,
      answers: [],
      final: null,
    }));
    const processedEvents = new EventEmitter();
    processedEvents.setMaxListeners(0);

    // The provider: one delivery after another at a steady rate; each one is
    // retried (same body) until it gets a 200.
    let inflight = 0;
    const deliver = async (dl: Delivery) => {
      while (dl.attempts < 120) {
        dl.attempts++;
        inflight++;
        try {
          const r = await sendCallback(api.url, dl.body, { timeoutMs: 10_000 }).finally(() => inflight--);
          dl.answers.push(`${r.status}:${r.json?.status ?? r.json?.error?.code ?? "?"}`);
          if (r.status === 200) {
            dl.final = r.json?.status ?? "?";
            processedEvents.emit("answer");
            return;
          }
        } catch (e) {
          dl.answers.push(errorCode(e));
        }
        await sleep(rnd(150, 400));
      }
    };
    const started = Date.now();
    const interval = DELIVERY_WINDOW_MS / N;
    const running = deliveries.map(async (dl, i) => {
      await sleep(i * interval);
      await deliver(dl);
    });
    let allDone = false;
    const delivered = Promise.all(running).then(() => {
      allDone = true;
    });

    // Jobs locked by a killed worker: when were they done?
    const orphans: Orphan[] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const open = orphans.filter((o) => o.doneAt === null);
        if (open.length) {
          const { rows } = await d.db.query<{ id: string; locked: boolean }>("select id::text, locked_at is not null as locked from graphile_worker.jobs where id = any($1::bigint[])", [
            open.map((o) => o.jobId),
          ]);
          const stillLocked = new Set(rows.filter((r) => r.locked).map((r) => r.id));
          const now = Date.now();
          for (const o of open) if (!stillLocked.has(o.jobId)) o.doneAt = now;
        }
        await sleep(250);
      }
    })();

    // The faults.
    let workerKills = 0;
    let apiRestarts = 0;
    let apiKilledWithInflight = 0;
    const nextAnswer = () => new Promise<void>((resolve) => processedEvents.once("answer", () => resolve()));
    while (!allDone) {
      // Half the kills land just after a payment committed (its jobs are
      // being run), half at a random moment.
      if (workerKills % 2 === 0) {
        // Just after a payment committed: kill while one of its jobs is locked.
        await Promise.race([nextAnswer(), delivered]);
        const until = Date.now() + 300;
        while (Date.now() < until) {
          const { rows } = await d.db.query("select 1 from graphile_worker.jobs where locked_at is not null limit 1");
          if (rows.length) break;
        }
      } else {
        await sleep(rnd(200, 2500));
      }
      if (allDone) break;
      worker.killGroup("SIGKILL");
      const killedAt = Date.now();
      await worker.exited;
      workerKills++;
      const { rows: locked } = await d.db.query<{ id: string; key: string; locked_at: Date }>("select id::text, key, locked_at from graphile_worker.jobs where locked_at is not null");
      for (const j of locked) {
        // A job still locked by an earlier killed worker is the same orphan.
        if (!orphans.some((o) => o.jobId === j.id)) orphans.push({ jobId: j.id, key: j.key, killedAt, lockedAt: j.locked_at.getTime(), doneAt: null });
      }

      if (apiRestarts === 0 && deliveries.filter((x) => x.final).length >= N * 0.4) {
        // The API dies once, with callbacks in flight; it comes back on the same port.
        for (let i = 0; i < 400 && inflight === 0; i++) await sleep(5);
        apiKilledWithInflight = inflight;
        api.killGroup("SIGKILL");
        await api.exited;
        await sleep(300);
        api = await ChildService.start({ name: "api", mode: "api", databaseUrl: d.url, port: api.port, env: { DATABASE_POOL_SIZE: "6" } });
        apiRestarts++;
      }
      await sleep(rnd(0, 400));
      worker = await ChildService.start({ name: "worker", mode: "worker", databaseUrl: d.url, waitReady: false });
      await worker.waitReady(40_000, d.db);
    }
    await delivered;
    const faultsEnded = Date.now();

    // Eventually: every order paid once, PREPARING, notified once, stock
    // taken once, and no job left (a job whose work was done but whose
    // worker died before completing it is released and re-run as a no-op).
    let effects = await orderEffects(
      d.db,
      orders.map((o) => o.id),
    );
    let unsettled = orders.filter((o) => effectProblems(effects.get(o.id), true).length > 0);
    let jobsLeft = (await jobCounts(d.db)).total;
    while ((unsettled.length || jobsLeft) && Date.now() - faultsEnded < SETTLE_LIMIT_MS) {
      await sleep(500);
      effects = await orderEffects(
        d.db,
        orders.map((o) => o.id),
      );
      unsettled = orders.filter((o) => effectProblems(effects.get(o.id), true).length > 0);
      jobsLeft = (await jobCounts(d.db)).total;
    }
    const settleMs = Date.now() - faultsEnded;
    // Give orphans a last look before reporting.
    await sleep(300);
    watching = false;
    await watcher;

    const finals = deliveries.map((x) => x.final);
    const processed = finals.filter((f) => f === "processed").length;
    const duplicate = finals.filter((f) => f === "duplicate").length;
    const failedAnswers = deliveries.flatMap((x) => x.answers.filter((a) => !a.startsWith("200:")));
    const failedKinds: Record<string, number> = {};
    for (const a of failedAnswers) failedKinds[a] = (failedKinds[a] ?? 0) + 1;
    const { rows: log } = await d.db.query("select outcome, count(*)::int as n from app_private.payment_deliveries group by outcome");
    const logged = Object.fromEntries(log.map((r) => [r.outcome, r.n]));
    const { rows: keys } = await d.db.query("select count(*)::int as n from app_private.processed_payment_keys where outcome = 'processed'");
    const stuckMs = orphans.map((o) => (o.doneAt ?? Date.now()) - o.killedAt);
    const jobs = await jobCounts(d.db);
    // How long each paid order waited between PAID and PREPARING (the
    // transitions' own timestamps).
    const { rows: waits } = await d.db.query<{ id: string; wait_s: number | null }>(
      `select order_id as id,
              extract(epoch from (max(created_at) filter (where to_status = 'PREPARING') - max(created_at) filter (where to_status = 'PAID')))::float8 as wait_s
         from app_public.order_events where order_id = any($1::uuid[]) group by order_id`,
      [orders.map((o) => o.id)],
    );
    const slow = waits.filter((w) => w.wait_s === null || w.wait_s > 5).sort((a, b) => (b.wait_s ?? 1e9) - (a.wait_s ?? 1e9));

    // Stock: each ingredient went down by exactly what the paid orders need, once.
    const { rows: stockAfter } = await d.db.query<{ ingredient_id: string; current_stock: number }>(
      "select ingredient_id, current_stock::float8 as current_stock from app_public.stock_items where store_id = app_hidden.default_store_id()",
    );
    const need = new Map<string, number>();
    for (const e of effects.values()) for (const x of e.expected) need.set(x.ingredient, (need.get(x.ingredient) ?? 0) + x.amount);
    const stockProblems = stockBefore
      .map((b) => {
        const after = stockAfter.find((a) => a.ingredient_id === b.ingredient_id)!.current_stock;
        const want = b.current_stock - (need.get(b.ingredient_id) ?? 0);
        return Math.abs(after - want) > 1e-6 ? `${b.ingredient_id}: ${after} instead of ${want}` : null;
      })
      .filter(Boolean);

    report("1 crash-during-payment", {
      orders: N,
      callbacks_sent: deliveries.reduce((s, x) => s + x.attempts, 0),
      callbacks_under_faults_answered_non200: failedAnswers.length,
      non200_kinds: failedKinds,
      final_processed: processed,
      final_duplicate: duplicate,
      logged,
      worker_sigkills: workerKills,
      api_sigkills: apiRestarts,
      callbacks_in_flight_at_api_kill: apiKilledWithInflight,
      restarts_survived: workerKills + apiRestarts,
      orphaned_jobs: orphans.length,
      orphaned_job_max_stuck_s: stuckMs.length ? Math.round(Math.max(...stuckMs) / 100) / 10 : 0,
      orphaned_jobs_never_released: orphans.filter((o) => o.doneAt === null).length,
      orders_paid_to_preparing_over_5s: slow.length,
      max_paid_to_preparing_s: slow.length ? (slow[0]!.wait_s === null ? "never" : slow[0]!.wait_s.toFixed(1)) : "<5",
      settle_after_faults_s: Math.round(settleMs / 100) / 10,
      unsettled_orders: unsettled.length,
      jobs_left: jobs,
      elapsed_s: Math.round((Date.now() - started) / 1000),
    });
    if (orphans.length) {
      say(
        `[drill 1] orphaned jobs (locked by a SIGKILLed worker): ${orphans.map((o) => `${o.key} stuck ${o.doneAt ? ((o.doneAt - o.killedAt) / 1000).toFixed(1) + " s" : "still locked"}`).join("; ")}`,
      );
    }

    // Every delivery got its 200 in the end; exactly one processed per order.
    expect(deliveries.filter((x) => x.final === null).map((x) => ({ order: x.order.id, answers: x.answers.slice(-5) }))).toEqual([]);
    expect(processed + duplicate).toBe(N);
    expect(logged.processed).toBe(N);
    expect(keys[0].n).toBe(N);
    // Nothing but 200s, 503s and connection errors while the faults lasted.
    expect(Object.keys(failedKinds).filter((k) => !/^(503:|ECONNREFUSED|ECONNRESET|TIMEOUT|socket hang up|EPIPE)/.test(k))).toEqual([]);
    // Paid once, PREPARING, notified once, stock taken once, within the limit.
    expect(orders.map((o) => ({ order: o.id, problems: effectProblems(effects.get(o.id), true) })).filter((x) => x.problems.length)).toEqual([]);
    expect(stockProblems).toEqual([]);
    expect(jobs).toEqual({ total: 0, locked: 0, failed: 0 });
  },
  LONG ? 900_000 : 200_000,
);
